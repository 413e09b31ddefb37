//! The registry of documents ([`super::document::Document`]): which paths and which
//! discoveries open as which whole-window view. A new document is one line here; the trait
//! lives apart ([`super::document`]) so the documents and the registry import it, not each
//! other.

use std::path::Path;

use super::document::{Document, FromDiscovery, Opener};
use super::jobs::Jobs;
use crate::ingest::DiscoverError;

/// The documents opened from a path, asked in order before the path is opened as a profile.
pub static OPENERS: &[Opener] = &[
    super::panes::snapshot::open_document,
    super::panes::summary::open_document,
];

/// The documents a discovery that found no profile may have found instead, asked in order.
pub static FROM_DISCOVERY: &[FromDiscovery] = &[super::panes::oom_cluster::from_discovery];

/// The document `path` is, if any.
pub fn open(path: &Path, jobs: &mut Jobs) -> Option<Box<dyn Document>> {
    OPENERS.iter().find_map(|open| open(path, jobs))
}

/// The document a failed discovery found, if any.
pub fn from_discovery(e: &DiscoverError, jobs: &mut Jobs) -> Option<Box<dyn Document>> {
    FROM_DISCOVERY.iter().find_map(|from| from(e, jobs))
}
