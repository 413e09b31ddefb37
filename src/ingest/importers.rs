//! The registry of sources beyond the Ascend exports: the [`Importer`]s discovery asks. A new
//! source is one line here; the trait lives apart ([`super::importer`]) so the importers and
//! the registry import it, not each other.

use super::importer::Importer;

/// The importers discovery asks, in order: PyTorch profiler traces
/// ([`super::pytorch::trace`]), msMemScope dumps ([`super::msmemscope`]). Tests prove the seam
/// with an importer of their own too, through
/// [`super::discover_with`] and [`super::load_rank_using`].
pub static IMPORTERS: &[&dyn Importer] = &[
    &super::pytorch::trace::PYTORCH_TRACES,
    &super::msmemscope::MEMSCOPE_DUMPS,
];
