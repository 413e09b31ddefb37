//! The cluster overview's data: one small summary per rank (the same [`RankSummary`] that
//! `memsight inspect --json` prints), filled in the background rank by rank. Each rank is loaded,
//! summarised and dropped before the next, so memory stays bounded by the largest rank.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::jobs::{Job, JobKey, Jobs, Place, Poll};
use super::loading::rank_files;
use crate::export::summary::{RankSummary, identity, summarize};
use crate::ingest::{LoadError, Profile, load_rank};
use crate::model::SourceChoice;

/// The job that summarises every rank for the cluster overview.
pub const OVERVIEW_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("overview", "the cluster overview", "集群总览");

/// What the overview job reports.
pub enum OverviewMsg {
    /// Rank `index` is summarised (or failed: its identity with a warning saying why).
    Row(usize, Box<RankSummary>),
}

/// The overview of one profile.
pub struct Overview {
    /// One slot per rank of the profile, in discovery order; `None` until summarised.
    pub rows: Vec<Option<RankSummary>>,
    job: Option<Job<OverviewMsg>>,
    started: Instant,
    /// How long the first row and the whole overview took (for the status line and tests).
    pub first_row_after: Option<Duration>,
    /// Time to the last row.
    pub done_after: Option<Duration>,
}

impl Overview {
    /// Starts summarising every rank of `profile`, read from the files `source` names (the Data
    /// switch, as for the rank on screen), under [`OVERVIEW_JOB`].
    pub fn start(jobs: &mut Jobs, profile: Arc<Profile>, source: SourceChoice) -> Overview {
        let n = profile.ranks.len();
        let job = jobs.start(JobKey::new(OVERVIEW_JOB), Place::Thread, move |ctl, out| {
            for (i, info) in profile.ranks.iter().enumerate() {
                if ctl.is_cancelled() {
                    return;
                }
                let summary = match load_rank(&rank_files(info, source), &ctl.progress) {
                    Ok(data) => summarize(&data),
                    Err(LoadError::Cancelled) => return,
                    Err(e) => {
                        let mut s = identity(info);
                        s.warnings
                            .push(crate::model::Message::NotLoaded { cause: e.cause() });
                        s
                    }
                };
                if !out.send(OverviewMsg::Row(i, Box::new(summary))) {
                    return;
                }
            }
        });
        Overview {
            rows: vec![None; n],
            job: Some(job),
            started: Instant::now(),
            first_row_after: None,
            done_after: None,
        }
    }

    /// Takes what the job has sent since the last frame; true when something arrived.
    pub fn poll(&mut self) -> bool {
        let mut got = false;
        while let Some(job) = &self.job {
            match job.poll() {
                Poll::Msg(OverviewMsg::Row(i, s)) => {
                    self.absorb(i, *s);
                    got = true;
                }
                Poll::Pending => break,
                // The app shows the panic (`Jobs::take_failures`); the rows so far stay.
                Poll::Finished | Poll::Failed(_) => self.job = None,
            }
        }
        got
    }

    fn absorb(&mut self, i: usize, s: RankSummary) {
        if let Some(slot) = self.rows.get_mut(i) {
            *slot = Some(s);
        }
        if self.first_row_after.is_none() {
            self.first_row_after = Some(self.started.elapsed());
        }
        if self.done() == self.rows.len() && self.done_after.is_none() {
            self.done_after = Some(self.started.elapsed());
        }
    }

    /// Ranks summarised so far.
    pub fn done(&self) -> usize {
        self.rows.iter().filter(|r| r.is_some()).count()
    }

    /// True while the job runs.
    pub fn is_running(&self) -> bool {
        self.job.is_some()
    }

    /// Stops the job; the rows summarised so far stay.
    pub fn cancel(&mut self) {
        self.job = None; // dropping the handle cancels it
    }

    /// Waits for the job to finish (tests and headless runs).
    pub fn wait(&mut self) {
        while let Some(job) = &self.job {
            match job.wait() {
                Some(OverviewMsg::Row(i, s)) => self.absorb(i, *s),
                None => {
                    self.job = None;
                }
            }
        }
        self.poll();
    }
}
