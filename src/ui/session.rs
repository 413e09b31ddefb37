//! The session: the opened profile and the ranks loaded from it, kept in a bounded
//! least-recently-used cache so that going back to a rank shows it at once and several ranks (or
//! ranks of an earlier profile) can be held together.
//!
//! Views are keyed by [`RankKey`] (which profile, which rank): numbers handed out here, never an
//! address, so a cache entry can never answer for a rank it was not made from.

use crate::model::SourceChoice;
use std::path::PathBuf;
use std::sync::Arc;

use crate::analysis::RankView;
use crate::ingest::Profile;

/// Which opened profile: a number never reused within a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProfileId(u64);

/// A rank of an opened profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RankKey {
    /// The profile.
    pub profile: ProfileId,
    /// Index into its ranks.
    pub rank: usize,
    /// Which of its files were read (a rank with a DB and CSV files can be loaded from both).
    pub source: SourceChoice,
}

/// The default memory bound of the loaded ranks: derived data (curves, pyramids, sort orders)
/// roughly doubles a rank's tables, and a 10M-row rank's tables are ~0.7 GB.
pub const DEFAULT_BUDGET_BYTES: usize = 4 << 30;

/// The default bound on the number of loaded ranks.
pub const DEFAULT_MAX_VIEWS: usize = 16;

struct Loaded {
    key: RankKey,
    view: Arc<RankView>,
    bytes: usize,
    last_used: u64,
}

/// Opened profiles and their loaded ranks.
pub struct Session {
    /// The path of the current profile.
    pub path: Option<PathBuf>,
    /// The current profile, once discovered.
    pub profile: Option<Arc<Profile>>,
    current_profile: ProfileId,
    next_profile: u64,
    loaded: Vec<Loaded>,
    clock: u64,
    /// Loaded ranks are evicted, least recently used first, while their estimated size is
    /// above this (the rank on screen is always kept).
    pub budget_bytes: usize,
    /// At most this many ranks stay loaded (the rank on screen counts).
    pub max_views: usize,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            path: None,
            profile: None,
            current_profile: ProfileId(0),
            next_profile: 1,
            loaded: Vec::new(),
            clock: 0,
            budget_bytes: DEFAULT_BUDGET_BYTES,
            max_views: DEFAULT_MAX_VIEWS,
        }
    }
}

/// What a loaded rank is estimated to cost: its tables, plus as much again for what is derived
/// from them.
fn view_bytes(view: &RankView) -> usize {
    view.data.heap_bytes().saturating_mul(2)
}

impl Session {
    /// What discovery noted about the open profile (nothing before it is discovered).
    pub fn notes(&self) -> &[crate::model::Message] {
        self.profile.as_ref().map_or(&[][..], |p| &p.notes[..])
    }

    /// Starts a new profile at `path` (its ranks from earlier profiles stay cached until
    /// evicted); returns its id.
    pub fn open(&mut self, path: PathBuf) -> ProfileId {
        self.current_profile = ProfileId(self.next_profile);
        self.next_profile += 1;
        self.path = Some(path);
        self.profile = None;
        self.current_profile
    }

    /// The current profile's id.
    pub fn profile_id(&self) -> ProfileId {
        self.current_profile
    }

    /// The key of rank `rank` of the current profile, read from `source`.
    pub fn key(&self, rank: usize, source: SourceChoice) -> RankKey {
        RankKey {
            profile: self.current_profile,
            rank,
            source,
        }
    }

    /// The loaded view of `key`, marked as just used. A first look (a rank whose load did not
    /// finish: [`crate::model::RankData::partial`]) is not loaded: it must be read again.
    pub fn get(&mut self, key: RankKey) -> Option<Arc<RankView>> {
        self.clock += 1;
        let clock = self.clock;
        let hit = self
            .loaded
            .iter_mut()
            .find(|l| l.key == key && !l.view.data.partial)?;
        hit.last_used = clock;
        Some(Arc::clone(&hit.view))
    }

    /// The loaded view of `key`, without marking it used.
    pub fn peek(&self, key: RankKey) -> Option<&Arc<RankView>> {
        self.loaded.iter().find(|l| l.key == key).map(|l| &l.view)
    }

    /// Forgets `key`'s view.
    pub fn remove(&mut self, key: RankKey) {
        self.loaded.retain(|l| l.key != key);
    }

    /// Keeps `view` as `key`'s (replacing any), then evicts least recently used ranks other
    /// than `key` while over the bounds.
    pub fn insert(&mut self, key: RankKey, view: Arc<RankView>) {
        self.clock += 1;
        self.loaded.retain(|l| l.key != key);
        self.loaded.push(Loaded {
            key,
            bytes: view_bytes(&view),
            view,
            last_used: self.clock,
        });
        self.evict(key);
    }

    /// Evicts least recently used ranks other than `keep` while over the bounds.
    fn evict(&mut self, keep: RankKey) {
        loop {
            let bytes: usize = self.loaded.iter().map(|l| l.bytes).sum();
            if bytes <= self.budget_bytes && self.loaded.len() <= self.max_views.max(1) {
                return;
            }
            let Some(oldest) = self
                .loaded
                .iter()
                .enumerate()
                .filter(|(_, l)| l.key != keep)
                .min_by_key(|(_, l)| l.last_used)
                .map(|(i, _)| i)
            else {
                return;
            };
            self.loaded.remove(oldest);
        }
    }

    /// The keys of every loaded rank, most recently used first.
    pub fn loaded_keys(&self) -> Vec<RankKey> {
        let mut l: Vec<&Loaded> = self.loaded.iter().collect();
        l.sort_by_key(|l| std::cmp::Reverse(l.last_used));
        l.into_iter().map(|l| l.key).collect()
    }

    /// The estimated bytes of the loaded ranks.
    pub fn loaded_bytes(&self) -> usize {
        self.loaded.iter().map(|l| l.bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Component, Format, RankData, RankInfo};

    /// A rank of 1,000 memory_record rows.
    fn view() -> Arc<RankView> {
        let mut data = RankData::empty(RankInfo::without_files(
            "0",
            Format::TorchNpu,
            PathBuf::from("r"),
        ));
        data.memory_record_rows = 1000;
        for t in 0..1000 {
            Arc::make_mut(&mut data.records).push(Component::Pta, t, t, t, t, 0);
        }
        Arc::new(RankView::new(data))
    }

    #[test]
    fn the_least_recently_used_rank_goes_first_and_the_new_one_stays() {
        let mut s = Session::default();
        s.open(PathBuf::from("a"));
        let (a, b, c) = (
            s.key(0, SourceChoice::Auto),
            s.key(1, SourceChoice::Auto),
            s.key(2, SourceChoice::Auto),
        );
        s.insert(a, view());
        s.insert(b, view());
        assert!(s.get(a).is_some()); // a is now newer than b
        let one = s.loaded_bytes() / 2;
        s.budget_bytes = one * 2;
        s.insert(c, view());
        assert_eq!(s.loaded_keys(), vec![c, a]);
        // A budget below one rank keeps just the newest.
        s.budget_bytes = 0;
        s.insert(b, view());
        assert_eq!(s.loaded_keys(), vec![b]);
    }

    #[test]
    fn ranks_of_two_profiles_have_different_keys() {
        let mut s = Session::default();
        let p = s.open(PathBuf::from("a"));
        let a0 = s.key(0, SourceChoice::Auto);
        s.insert(a0, view());
        let q = s.open(PathBuf::from("b"));
        assert_ne!(p, q);
        let b0 = s.key(0, SourceChoice::Auto);
        assert_ne!(a0, b0);
        assert!(s.peek(b0).is_none(), "rank 0 of b is not rank 0 of a");
        s.insert(b0, view());
        assert_eq!(s.loaded_keys().len(), 2);
    }
}
