//! The seam for new kinds of input: an [`Importer`] recognises its files by name and first bytes,
//! says which ranks a file holds, and loads one of them into a [`RankData`]. Discovery asks every
//! importer of [`IMPORTERS`](super::importers::IMPORTERS) about the files the built-in Ascend exports (CSV and SQLite, read by
//! `discover` and `load`, which handle their own coexistence rules) do not claim; loading hands a
//! rank whose source is [`DataSource::Imported`] to the importer named there. Every view, the CLI
//! and the overview then work on it unchanged, since they only see `RankData`.
//!
//! Adding a source: one module implementing [`Importer`] and one line in [`IMPORTERS`](super::importers::IMPORTERS) (and its
//! notes as [`crate::model::Message`] variants). rerun's `Importer` list is the model; memsight
//! needs no plugins, so the list is static.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::chunks::LoadControl;
use super::error::LoadError;
use crate::model::{DataSource, Message, RankData, RankInfo};

/// How many bytes of a file [`Importer::recognises`] sees.
pub const HEAD_BYTES: usize = 4096;

/// One kind of input memsight reads besides the Ascend exports.
pub trait Importer: Sync {
    /// Its name: the `source` of its ranks (`inspect --json`), and how a rank finds it again.
    fn name(&self) -> &'static str;

    /// Cheap, by name alone: might this file be one of yours? (Only then is its head read.)
    fn wants(&self, file_name: &str) -> bool;

    /// What it looks for, for the message when a folder holds nothing memsight reads: the
    /// names of the files it asks about ([`Self::wants`]) and what writes them, e.g. `*.json /
    /// *.json.gz (PyTorch profiler traces)`; the same in every language.
    fn looks_for(&self) -> &'static str;

    /// Is this file one of yours, by its first [`HEAD_BYTES`] bytes (fewer for a short file)?
    /// Check content, not only the name.
    fn recognises(&self, path: &Path, head: &[u8]) -> bool;

    /// The ranks the file holds, with [`DataSource::Imported`] sources naming this importer
    /// (`part` tells the ranks of one file apart); reads no more than it must, and may hand
    /// what it had to read anyway to the rank's load in the source's `prefetch`
    /// ([`crate::model::Prefetch`]). Problems worth telling go to `notes`. A long read tells
    /// `control` how far it has come and stops early once it is cancelled (what is found
    /// then does not matter).
    fn ranks(&self, path: &Path, notes: &mut Vec<Message>, control: &LoadControl) -> Vec<RankInfo>;

    /// Loads one of its ranks: tables, steps and call stacks when the file has them. Bad
    /// records are skipped and counted, never a panic; nothing is written anywhere.
    fn load(&self, info: &RankInfo, control: &LoadControl) -> Result<RankData, LoadError>;

    /// [`Self::load`], handing `early` a first look (the curves, say) as soon as it has one,
    /// as the Ascend CSV reader does: the app draws it while the rest loads. The loader marks
    /// it partial and sets its time origin; it must have the same time origin as the whole
    /// rank. By default there is none.
    fn load_with_first_look(
        &self,
        info: &RankInfo,
        control: &LoadControl,
        early: &mut (dyn FnMut(RankData) + Send),
    ) -> Result<RankData, LoadError> {
        let _ = early;
        self.load(info, control)
    }
}

/// The first bytes of `path` (a regular file), for [`Importer::recognises`]; empty when it
/// cannot be read.
pub(super) fn head(path: &Path) -> Vec<u8> {
    let mut buf = Vec::with_capacity(HEAD_BYTES);
    if let Ok(f) = super::safe_fs::open_regular(path) {
        let _ = f.take(HEAD_BYTES as u64).read_to_end(&mut buf);
    }
    buf
}

/// The ranks of `path` from the first importer that recognises it (its long reads told to
/// `control`).
pub(super) fn ranks_of_file(
    importers: &[&dyn Importer],
    path: &Path,
    name: &str,
    notes: &mut Vec<Message>,
    control: &LoadControl,
) -> Option<Vec<RankInfo>> {
    let wanting: Vec<&&dyn Importer> = importers.iter().filter(|i| i.wants(name)).collect();
    if wanting.is_empty() {
        return None;
    }
    let head = head(path);
    wanting
        .into_iter()
        .find(|i| i.recognises(path, &head))
        .map(|i| i.ranks(path, notes, control))
}

/// The importer a rank's source names, among `importers`.
pub(super) fn importer_of<'a>(
    importers: &[&'a dyn Importer],
    info: &RankInfo,
) -> Option<(&'a dyn Importer, PathBuf)> {
    let DataSource::Imported { importer, path, .. } = &info.source else {
        return None;
    };
    importers
        .iter()
        .find(|i| i.name() == *importer)
        .map(|i| (*i, path.clone()))
}
