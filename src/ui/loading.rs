//! Loading as a job: discovering a profile (when it is new) and loading one rank, with progress
//! and cancel through the job's control. [`rank_files`] and [`load_view`] are the one loader
//! policy: the rank on screen, a comparison's baseline and the cluster overview read a rank's
//! files the same way (the Data switch's choice, falling back to what the rank has).

use std::path::PathBuf;
use std::sync::Arc;

use super::i18n::Tr;
use super::jobs::{Job, JobKey, Jobs, Place};
use super::session::RankKey;
use crate::analysis::{Column, GroupBy, RankView, SortDir};
use crate::ingest::{
    DiscoverError, LoadControl, LoadError, Profile, discover_controlled, load_rank_with,
};
use crate::model::{RankData, RankInfo, SourceChoice};

/// The job that discovers a profile and loads a rank, or reads a document (one at a time).
pub const LOAD_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("load", "loading a rank", "加载 rank");

/// The rank `info` read from the files `source` names, or from the ones it has when it has no
/// such files (a CSV-only rank under "DB").
pub fn rank_files(info: &RankInfo, source: SourceChoice) -> RankInfo {
    info.with_source(source).unwrap_or_else(|| info.clone())
}

/// Loads rank `info` from the files `source` names into a view whose Overall curves and time
/// extent are built (what the first frame needs), off the UI thread. `first_look` gets a view
/// of memory_record alone as soon as it is read (CSV ranks); the complete view takes over its
/// curves.
pub fn load_view(
    info: &RankInfo,
    source: SourceChoice,
    ctl: &LoadControl,
    first_look: &mut (dyn FnMut(Arc<RankView>) + Send),
) -> Result<RankView, LoadError> {
    let info = rank_files(info, source);
    let mut first: Option<Arc<RankView>> = None;
    let data = load_rank_with(&info, ctl, &mut |data: RankData| {
        let view = Arc::new(RankView::new(data));
        view.series(GroupBy::Overall);
        view.time_extent();
        first_look(Arc::clone(&view));
        first = Some(view);
    })?;
    let view = match first.take() {
        Some(f) => RankView::completing(data, &f),
        None => RankView::new(data),
    };
    view.series(GroupBy::Overall);
    view.time_extent();
    Ok(view)
}

/// What a load job reports.
pub enum LoadMsg {
    /// Discovery finished; the load goes on with rank `rank` (the rank a user means when the one
    /// asked for is the host's: [`rank_to_open`]).
    Discovered {
        /// What was found.
        profile: Arc<Profile>,
        /// The rank the load reads.
        rank: usize,
    },
    /// The rank's memory_record is read and its Overall curves are ready to draw; the other
    /// files are still loading ([`crate::model::RankData::partial`]). `Loaded` follows.
    FirstLook {
        /// The rank and files the load was started for.
        key: RankKey,
        /// The view of what is loaded so far.
        view: Arc<RankView>,
    },
    /// The rank is loaded and its Overall curves are ready to draw.
    Loaded {
        /// The rank and files the load was started for.
        key: RankKey,
        /// The view.
        view: Arc<RankView>,
    },
    /// Nothing could be shown; the message says why.
    Failed(Failure),
    /// The user cancelled.
    Cancelled,
}

/// Why a load showed nothing.
#[derive(Debug)]
pub enum Failure {
    /// Discovery found no profile (said in the UI's language).
    Discover(DiscoverError),
    /// The rank could not be loaded (said in the UI's language).
    Load(LoadError),
    /// The profile has no rank at this index.
    NoRank(usize),
}

impl Failure {
    /// The message, in the UI's language where the catalogue has it.
    pub fn message(&self, t: &Tr) -> String {
        match self {
            Failure::Discover(e) => discover_error(t, e),
            Failure::Load(e) => (t.load_error)(e),
            Failure::NoRank(i) => (t.no_rank)(*i),
        }
    }
}

/// Why discovery found no profile, in `t`'s language.
pub fn discover_error(t: &Tr, e: &DiscoverError) -> String {
    match e {
        DiscoverError::Unreadable { path, reason } => (t.cannot_open)(path, &reason.render(t.lang)),
        DiscoverError::NoMemoryData { path, notes, also } => {
            let extra: String = notes
                .iter()
                .map(|n| format!("; {}", n.render(t.lang)))
                .collect();
            (t.no_memory_data)(path, crate::ingest::MAX_DEPTH, also, &extra)
        }
    }
}

/// A running load and what it loads (for the progress line).
pub struct Loading {
    /// The job.
    pub job: Job<LoadMsg>,
    /// The rank and files it loads: its messages carry it too.
    pub key: RankKey,
    /// What is being loaded.
    pub what: String,
    /// When it started (for the rate).
    pub started: std::time::Instant,
}

impl Loading {
    /// MB read per second so far.
    pub fn mb_per_s(&self) -> u64 {
        let secs = self.started.elapsed().as_secs_f64();
        let mb = self.job.control().progress.bytes_done() as f64 / f64::from(1u32 << 20);
        if secs > 0.05 {
            (mb / secs).round() as u64
        } else {
            0
        }
    }
}

/// The rank a freshly discovered profile opens on: `asked` when it is one the user may mean (a
/// device rank, [`crate::analysis::rank_meant::candidates`]), else the first device rank: a
/// PyTorch trace's CPU pseudo-rank holds a few KB, and opening on it showed a 0 MB chart. Which
/// device rank has the highest peak is known only once the overview has read them all
/// ([`crate::analysis::rank_meant::rank_meant`] then).
pub fn rank_to_open(profile: &Profile, asked: usize) -> usize {
    let devices: Vec<Option<&str>> = profile.ranks.iter().map(|r| r.device.as_deref()).collect();
    let candidates = crate::analysis::rank_meant::candidates(&devices);
    if candidates.contains(&asked) {
        asked
    } else {
        candidates.first().copied().unwrap_or(asked)
    }
}

/// Starts loading `key`'s rank of `profile`, or of `path` discovered first when `profile` is
/// `None`, from `key`'s files, under [`LOAD_JOB`] (which cancels a load
/// already running).
/// Its messages carry `key`: what it loads is cached under the key it was started for.
pub fn start_load(
    jobs: &mut Jobs,
    path: PathBuf,
    profile: Option<Arc<Profile>>,
    mut key: RankKey,
) -> Loading {
    let rank = key.rank;
    let what = profile
        .as_ref()
        .and_then(|p| p.ranks.get(rank))
        .map_or_else(|| path.display().to_string(), |r| r.label());
    let job = jobs.start(JobKey::new(LOAD_JOB), Place::Thread, move |ctl, out| {
        let profile = match profile {
            Some(p) => p,
            // Its progress and Cancel work while a dump read whole to find its ranks is read.
            None => match discover_controlled(&path, &ctl.progress) {
                _ if ctl.progress.is_cancelled() => {
                    out.send(LoadMsg::Cancelled);
                    return;
                }
                Ok(p) => {
                    let p = Arc::new(p);
                    key.rank = rank_to_open(&p, key.rank);
                    out.send(LoadMsg::Discovered {
                        profile: Arc::clone(&p),
                        rank: key.rank,
                    });
                    p
                }
                Err(e) => {
                    out.send(LoadMsg::Failed(Failure::Discover(e)));
                    return;
                }
            },
        };
        let Some(info) = profile.ranks.get(key.rank) else {
            out.send(LoadMsg::Failed(Failure::NoRank(key.rank)));
            return;
        };
        // The curves go on screen as soon as memory_record is read; the table, steps and
        // stacks follow when the rest is.
        let mut show_first = |view| {
            out.send(LoadMsg::FirstLook { key, view });
        };
        match load_view(info, key.source, &ctl.progress, &mut show_first) {
            Ok(view) => {
                let view = Arc::new(view);
                out.send(LoadMsg::Loaded {
                    key,
                    view: Arc::clone(&view),
                });
                // Warm what the user is likely to ask next, still off the UI thread.
                view.sort_cache
                    .order(&view.data, Column::Size, SortDir::Desc);
                view.sort_cache
                    .order(&view.data, Column::Size, SortDir::Asc);
                view.live_index();
            }
            Err(LoadError::Cancelled) => {
                out.send(LoadMsg::Cancelled);
            }
            Err(e) => {
                out.send(LoadMsg::Failed(Failure::Load(e)));
            }
        }
    });
    Loading {
        job,
        key,
        what,
        started: std::time::Instant::now(),
    }
}
