//! A cluster summary opened in the app (`memsight ALL.db`, a `.db` written by
//! `memsight summarize`): its rows read in a job, what is computed across its ranks, a second
//! summary to compare with, and each rank's downsampled curves read from the file when the
//! overview first shows them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::i18n::Tr;
use super::jobs::{Job, JobKey, Jobs, Place, Poll};
use crate::analysis::Spread;
use crate::analysis::cluster::{Growth, StepAcross, findings, match_ranks, steps_across};
use crate::export::cluster_db::{ClusterSummary, Envelope, SummaryError, SummaryFile};

/// A rank's curves as the file holds them (series name, envelope).
pub type Curves = Vec<(String, Envelope)>;

/// At most this many ranks' curves are kept read (each is at most a few tens of KB).
const CURVE_CACHE: usize = 64;

/// A summary file, read, and what the overview computes from it once.
pub struct OpenSummary {
    /// The file, kept open for the curves.
    file: SummaryFile,
    /// Its ranks and notes.
    pub summary: ClusterSummary,
    /// The spread of the ranks' Operator Allocated peaks (rank indices).
    pub spread: Option<Spread>,
    /// Each step across the ranks.
    pub steps: Vec<StepAcross>,
    /// Each rank's growth over its steps.
    pub growth: Vec<Option<Growth>>,
    /// The ranks whose memory grows step after step, most growth first.
    pub leaks: Vec<usize>,
    /// The spread's outliers, highest peak first.
    pub outliers_by_peak: Vec<usize>,
    /// Distinct hosts.
    pub hosts: usize,
    /// Ranks recorded with an error.
    pub failed: usize,
    curves: HashMap<i64, Curves>,
    curve_order: Vec<i64>,
}

impl OpenSummary {
    /// Opens and reads `path`, and computes what the overview shows across its ranks.
    pub fn read(path: &Path) -> Result<OpenSummary, SummaryError> {
        let file = SummaryFile::open(path)?;
        let summary = file.overview()?;
        let mut hosts: Vec<Option<&str>> = summary
            .ranks
            .iter()
            .map(|r| r.identity.host.as_deref())
            .collect();
        hosts.sort_unstable();
        hosts.dedup();
        let found = findings(&summary.ranks);
        Ok(OpenSummary {
            spread: found.spread,
            steps: steps_across(&summary.ranks),
            growth: found.growth,
            leaks: found.leak_suspects,
            outliers_by_peak: found.outliers,
            hosts: hosts.len(),
            failed: found.failed.len(),
            file,
            summary,
            curves: HashMap::new(),
            curve_order: Vec::new(),
        })
    }

    /// Rank `i`'s curves, read from the file the first time (a primary-key lookup: well under a
    /// millisecond); empty when it has none or the file refuses.
    pub fn curves(&mut self, i: usize) -> &[(String, Envelope)] {
        let Some(id) = self.summary.ranks.get(i).map(|r| r.id) else {
            return &[];
        };
        if !self.curves.contains_key(&id) {
            if self.curve_order.len() >= CURVE_CACHE {
                let old = self.curve_order.remove(0);
                self.curves.remove(&old);
            }
            let read = self.file.curves(id).unwrap_or_default();
            self.curves.insert(id, read);
            self.curve_order.push(id);
        }
        self.curves.get(&id).map_or(&[], Vec::as_slice)
    }
}

/// Why a summary could not be read.
#[derive(Debug)]
pub enum SummaryFailure {
    /// The file: not a summary, another schema version, SQLite or the OS refused.
    File(SummaryError),
    /// The reading panicked (its message).
    Panicked(String),
    /// The reading was cancelled.
    Cancelled,
}

impl SummaryFailure {
    /// What to say, in `t`'s language.
    pub fn text(&self, t: &Tr) -> String {
        match self {
            SummaryFailure::File(e) => (t.summary_error)(e),
            SummaryFailure::Panicked(m) => m.clone(),
            SummaryFailure::Cancelled => t.summary_read_cancelled.to_string(),
        }
    }
}

/// A summary read in the background.
struct Reading {
    job: Job<Result<OpenSummary, SummaryError>>,
    started: Instant,
}

impl Reading {
    fn start(jobs: &mut Jobs, key: JobKey, path: &Path) -> Reading {
        let p = path.to_path_buf();
        Reading {
            job: jobs.run(key, Place::Thread, move |_| OpenSummary::read(&p)),
            started: Instant::now(),
        }
    }
}

/// What happened to a reading this frame.
enum Read {
    Pending,
    Done(Box<Result<OpenSummary, SummaryFailure>>, Duration),
}

fn poll(reading: &Option<Reading>) -> Option<Read> {
    let r = reading.as_ref()?;
    Some(match r.job.poll() {
        Poll::Pending => Read::Pending,
        Poll::Msg(m) => Read::Done(
            Box::new(m.map_err(SummaryFailure::File)),
            r.started.elapsed(),
        ),
        Poll::Failed(e) => Read::Done(
            Box::new(Err(SummaryFailure::Panicked(e))),
            r.started.elapsed(),
        ),
        Poll::Finished => Read::Done(
            Box::new(Err(SummaryFailure::Cancelled)),
            r.started.elapsed(),
        ),
    })
}

/// The summary on screen and, in a comparison, the one it is compared with.
pub struct SummaryView {
    /// The file opened.
    pub path: PathBuf,
    reading: Option<Reading>,
    /// The summary, once read.
    pub open: Option<OpenSummary>,
    /// Why it could not be read.
    pub error: Option<SummaryFailure>,
    /// How long reading it took (open, rows, steps, what is computed across ranks).
    pub read_after: Option<Duration>,
    /// The summary compared with ("before"), when one was picked.
    pub baseline: Option<BaselineSummary>,
    /// The rank under the pointer (a bar or a table row) in the last frame: the table is drawn
    /// below the charts that show it.
    pub hovered: Option<usize>,
}

/// The summary compared with.
pub struct BaselineSummary {
    /// Its file.
    pub path: PathBuf,
    reading: Option<Reading>,
    /// It, once read.
    pub open: Option<OpenSummary>,
    /// Why it could not be read.
    pub error: Option<SummaryFailure>,
    /// For each rank on screen, the same rank in the baseline.
    pub matches: Vec<Option<usize>>,
}

impl SummaryView {
    /// Starts reading `path` in a job.
    pub fn open(jobs: &mut Jobs, path: PathBuf) -> SummaryView {
        SummaryView {
            reading: Some(Reading::start(
                jobs,
                JobKey::new(crate::ui::loading::LOAD_JOB),
                &path,
            )),
            path,
            open: None,
            error: None,
            read_after: None,
            baseline: None,
            hovered: None,
        }
    }

    /// Starts reading `path` as the summary to compare with.
    pub fn compare_with(&mut self, jobs: &mut Jobs, path: PathBuf) {
        self.baseline = Some(BaselineSummary {
            reading: Some(Reading::start(
                jobs,
                JobKey::new(crate::ui::baseline::BASELINE_JOB),
                &path,
            )),
            path,
            open: None,
            error: None,
            matches: Vec::new(),
        });
    }

    /// Stops comparing.
    pub fn stop_comparing(&mut self) {
        self.baseline = None;
    }

    /// Takes what the jobs finished; true while one still runs.
    pub fn poll(&mut self) -> bool {
        let mut running = false;
        match poll(&self.reading) {
            Some(Read::Pending) => running = true,
            Some(Read::Done(r, took)) => {
                self.reading = None;
                self.read_after = Some(took);
                match *r {
                    Ok(s) => self.open = Some(s),
                    Err(e) => self.error = Some(e),
                }
            }
            None => {}
        }
        if let Some(b) = &mut self.baseline {
            match poll(&b.reading) {
                Some(Read::Pending) => running = true,
                Some(Read::Done(r, _)) => {
                    b.reading = None;
                    match *r {
                        Ok(s) => b.open = Some(s),
                        Err(e) => b.error = Some(e),
                    }
                }
                None => {}
            }
            if b.matches.is_empty()
                && let (Some(now), Some(before)) = (&self.open, &b.open)
            {
                b.matches = match_ranks(&now.summary.ranks, &before.summary.ranks);
            }
        }
        running
    }

    /// Blocks until both readings are done (tests).
    pub fn wait(&mut self) {
        while self.poll() {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}
