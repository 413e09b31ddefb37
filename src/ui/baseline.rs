//! The baseline of a comparison: a rank of the open profile or of another one, loaded by a job
//! beside the rank on screen through the same loader as every rank ([`load_view`]: the Data
//! switch's files, curves built off the UI thread), or taken from the session when it has that
//! rank; and the per-operator diff of the two (computed once per pair of views, off the UI
//! thread).

use std::path::PathBuf;
use std::sync::Arc;

use super::jobs::{Job, JobKey, Jobs, Place, Poll};
use super::loading::load_view;
use super::session::RankKey;
use crate::analysis::{OperatorDelta, RankView, ViewId, view_operator_deltas};
use crate::ingest::{Profile, discover};
use crate::model::{RankInfo, SourceChoice};

/// The job that computes a comparison's per-operator diff.
pub const DIFF_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("diff", "the comparison", "对比");

/// The job that loads a comparison's baseline.
pub const BASELINE_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("baseline", "loading the baseline", "加载基线");

/// The file File ▸ Compare with file… asks for: a profiler DB or a PyTorch trace (the folder
/// picker that Compare with folder… shows cannot choose one, and a file name typed into it was
/// ignored).
pub static PICK_FILE: super::command::FilePick = super::command::FilePick {
    id: "baseline_file",
    title: super::i18n::Text {
        en: "Compare with file…",
        zh: "与文件对比…",
    },
    filter: ("Profiler DB, PyTorch trace", &["db", "json", "gz", "csv"]),
    lists: super::file_browser::openable_file,
    then: |path| super::command::Command::CompareWith(BaselineSource { path, rank: 0 }),
};

/// What to compare with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineSource {
    /// The profile's path (the open one for a rank of the same profile).
    pub path: PathBuf,
    /// Rank index in that profile.
    pub rank: usize,
}

/// What [`BaselineSlot::load`] is asked to load.
pub struct BaselineRequest {
    /// Which rank of which profile.
    pub source: BaselineSource,
    /// The open profile, when the baseline is one of its ranks (no discovery then).
    pub profile: Option<Arc<Profile>>,
    /// Which files to read (the Data switch).
    pub files: SourceChoice,
    /// The session's key for that rank, when it is one of the open profile's.
    pub key: Option<RankKey>,
    /// The session's view of that rank, when it has it: no load at all.
    pub cached: Option<Arc<RankView>>,
}

/// A loaded baseline.
pub struct Baseline {
    /// Where it came from.
    pub source: BaselineSource,
    /// Its label (`rank 0 · NPU:0 · node0` and the folder's name).
    pub label: String,
    /// The baseline's view (curves, table, steps as for any rank).
    pub view: Arc<RankView>,
    /// Its key in the session, when it is a rank of the open profile (the app caches it there).
    pub key: Option<RankKey>,
}

/// `rank 0 · NPU:0 · node0 · folder`: the rank's label and the profile folder's name.
fn label(info: &RankInfo, source: &BaselineSource) -> String {
    let folder = source
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{} · {folder}", info.label())
}

/// The pair of views a diff belongs to: (baseline, rank on screen).
type DiffKey = (ViewId, ViewId);

/// The baseline's state: loading, loaded, or failed.
#[derive(Default)]
pub struct BaselineSlot {
    /// The loaded baseline.
    pub loaded: Option<Baseline>,
    /// The load in progress.
    job: Option<Job<Result<Baseline, String>>>,
    /// Why the last load failed.
    pub error: Option<String>,
    /// The per-operator diff (baseline = A, the rank on screen = B) for a pair of views.
    diff: Option<(DiffKey, Arc<Vec<OperatorDelta>>)>,
    diff_job: Option<(DiffKey, Job<Vec<OperatorDelta>>)>,
    /// What was asked for last.
    requested: Option<BaselineSource>,
}

impl BaselineSlot {
    /// True while a comparison is asked for (loading, loaded or failed).
    pub fn is_requested(&self) -> bool {
        self.requested.is_some()
    }

    /// Starts loading the baseline `req` asks for; a view the session had is there at once.
    pub fn load(&mut self, jobs: &mut Jobs, req: BaselineRequest) {
        self.error = None;
        self.loaded = None;
        self.diff = None;
        self.diff_job = None;
        self.job = None;
        self.requested = Some(req.source.clone());
        let BaselineRequest {
            source,
            profile,
            files,
            key,
            cached,
        } = req;
        if let (Some(view), Some(p)) = (cached, &profile)
            && let Some(info) = p.ranks.get(source.rank)
        {
            self.loaded = Some(Baseline {
                label: label(info, &source),
                source,
                view,
                key,
            });
            return;
        }
        let (mut source, mut key) = (source, key);
        let job = jobs.start(JobKey::new(BASELINE_JOB), Place::Thread, move |ctl, out| {
            let profile = match profile {
                Some(p) => p,
                None => match discover(&source.path) {
                    Ok(p) => {
                        // Another profile, picked by its path: its rank a user means (a
                        // trace's CUDA rank, not its CPU pseudo-rank), as when it is opened.
                        source.rank = crate::ui::loading::rank_to_open(&p, source.rank);
                        if let Some(k) = key.as_mut() {
                            k.rank = source.rank;
                        }
                        Arc::new(p)
                    }
                    Err(e) => {
                        out.send(Err(e.to_string()));
                        return;
                    }
                },
            };
            let Some(info) = profile.ranks.get(source.rank) else {
                out.send(Err(format!("no rank at index {}", source.rank)));
                return;
            };
            match load_view(info, files, &ctl.progress, &mut |_| {}) {
                Ok(view) => {
                    out.send(Ok(Baseline {
                        label: label(info, &source),
                        source,
                        view: Arc::new(view),
                        key,
                    }));
                }
                Err(e) => {
                    out.send(Err(e.to_string()));
                }
            }
        });
        self.job = Some(job);
    }

    /// What is compared with (loaded, loading or failed), until the comparison stops.
    pub fn source(&self) -> Option<BaselineSource> {
        self.requested.clone()
    }

    /// Stops comparing.
    pub fn clear(&mut self) {
        *self = BaselineSlot::default();
    }

    /// Takes what the jobs sent; true when something changed.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        if let Some(job) = &self.job {
            match job.poll() {
                Poll::Msg(Ok(b)) => {
                    // The rank it chose (another profile's rank meant) is what was asked.
                    self.requested = Some(b.source.clone());
                    self.loaded = Some(b);
                    self.job = None;
                    changed = true;
                }
                Poll::Msg(Err(e)) => {
                    self.error = Some(e);
                    self.job = None;
                    changed = true;
                }
                Poll::Failed(e) => {
                    self.error = Some(e);
                    self.job = None;
                    changed = true;
                }
                Poll::Finished => self.job = None,
                Poll::Pending => {}
            }
        }
        if let Some((key, job)) = &self.diff_job
            && let Poll::Msg(d) = job.poll()
        {
            self.diff = Some((*key, Arc::new(d)));
            self.diff_job = None;
            changed = true;
        }
        changed
    }

    /// True while the baseline loads.
    pub fn is_loading(&self) -> bool {
        self.job.is_some()
    }

    /// Waits for the baseline's load and then for the diff against `current` (tests).
    pub fn wait(&mut self, jobs: &mut Jobs, current: Option<&Arc<RankView>>) {
        if let Some(job) = self.job.take() {
            match job.wait() {
                Some(Ok(b)) => self.loaded = Some(b),
                Some(Err(e)) => self.error = Some(e),
                None => {}
            }
        }
        if let Some(cur) = current {
            self.diff(jobs, cur);
        }
        if let Some((key, job)) = self.diff_job.take()
            && let Some(d) = job.wait()
        {
            self.diff = Some((key, Arc::new(d)));
        }
    }

    /// The diff of the baseline (A) and `current` (B); starts computing it when it is not there
    /// (`None` meanwhile).
    pub fn diff(
        &mut self,
        jobs: &mut Jobs,
        current: &Arc<RankView>,
    ) -> Option<Arc<Vec<OperatorDelta>>> {
        let base = self.loaded.as_ref()?;
        let key = (base.view.id(), current.id());
        if let Some((k, d)) = &self.diff
            && *k == key
        {
            return Some(Arc::clone(d));
        }
        if self.diff_job.as_ref().is_none_or(|(k, _)| *k != key) {
            let (a, b) = (Arc::clone(&base.view), Arc::clone(current));
            let job = jobs.start(JobKey::new(DIFF_JOB), Place::Thread, move |_, out| {
                out.send(view_operator_deltas(&a, &b));
            });
            self.diff_job = Some((key, job));
        }
        None
    }
}
