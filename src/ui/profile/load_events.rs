//! A load's messages as they arrive: discovery, the first look, the complete rank (cached under
//! the key its job was started for), failure and cancel; and the waits tests and headless runs
//! use.

use std::sync::Arc;

use super::ProfileDocument;
use crate::ui::command::Command;
use crate::ui::document::{DocCx, DocEvent};
use crate::ui::jobs::Poll;
use crate::ui::loading::LoadMsg;

impl ProfileDocument {
    /// Blocks until the running load finishes (tests, headless runs).
    pub(crate) fn wait_for_load(&mut self, cx: &mut DocCx<'_>) {
        self.hold_load = false;
        while let Some(l) = &self.loading {
            match l.job.wait() {
                Some(m) => self.take_load_msg(m, cx),
                None => self.load_ended(cx),
            }
        }
    }

    /// Blocks until the running load shows its first look (the curves, before the rest of the
    /// rank is read) or ends; then holds its later messages until [`Self::release_load`]. True
    /// when a first look is on screen.
    pub(crate) fn wait_for_first_look(&mut self, cx: &mut DocCx<'_>) -> bool {
        while let Some(l) = &self.loading {
            match l.job.wait() {
                Some(m) => {
                    let first = matches!(m, LoadMsg::FirstLook { .. });
                    self.take_load_msg(m, cx);
                    if first {
                        self.hold_load = true;
                        return true;
                    }
                }
                None => self.load_ended(cx),
            }
        }
        false
    }

    /// Lets the load held by [`Self::wait_for_first_look`] go on.
    pub(crate) fn release_load(&mut self) {
        self.hold_load = false;
    }

    pub(super) fn poll_load(&mut self, cx: &mut DocCx<'_>) {
        if self.hold_load {
            return;
        }
        while let Some(l) = &self.loading {
            match l.job.poll() {
                Poll::Msg(m) => self.take_load_msg(m, cx),
                Poll::Pending => break,
                Poll::Finished | Poll::Failed(_) => self.load_ended(cx),
            }
        }
    }

    /// A load that stopped after its first look leaves no view behind: curves over a table that
    /// says "loading" while nothing loads would lie.
    fn drop_first_look(&mut self) {
        if let Some(key) = self.loading.as_ref().map(|l| l.key)
            && self.session.peek(key).is_some_and(|v| v.data.partial)
        {
            self.session.remove(key);
        }
    }

    /// The load's job ended without saying it loaded a rank.
    fn load_ended(&mut self, cx: &mut DocCx<'_>) {
        self.drop_first_look();
        if let Some(l) = self.loading.take()
            && self.current(cx.state).is_none()
            && self.error.is_none()
        {
            // Cancelled before its thread ran: it never got to say so itself.
            let t = cx.t;
            self.error = Some(match (&l.job.start_error, l.job.failure()) {
                (Some(e), _) => e.clone(),
                (None, Some(why)) => (t.job_failed)(&l.what, why),
                _ if l.job.control().is_cancelled() => t.load_cancelled.into(),
                _ => t.load_stopped.into(),
            });
        }
    }

    fn take_load_msg(&mut self, msg: LoadMsg, cx: &mut DocCx<'_>) {
        match msg {
            LoadMsg::Discovered { profile: p, rank } => {
                // The load went on with the rank a user means (not a CPU pseudo-rank): the
                // view follows it, and the load is not started again for it.
                if rank != cx.state.rank {
                    if let Some(l) = &mut self.loading {
                        l.key.rank = rank;
                    }
                    cx.out.push(Command::SelectRank(rank));
                }
                // Several device ranks: summarise them all in the background and show the
                // overview, unless a comparison was asked for (`memsight --compare A B`): then
                // the rank and its comparison show first. A trace of one device beside its
                // CPU pseudo-rank opens on the device; the overview is one click away.
                if p.ranks.len() > 1 {
                    self.overview = Some(crate::ui::overview::Overview::start(
                        cx.jobs,
                        Arc::clone(&p),
                        cx.state.source,
                    ));
                    let devices: Vec<Option<&str>> =
                        p.ranks.iter().map(|r| r.device.as_deref()).collect();
                    let several = crate::analysis::rank_meant::candidates(&devices).len() > 1;
                    if several && !self.baseline.is_requested() {
                        cx.out.push(Command::ShowOverview(true));
                        self.auto_rank = Some(rank);
                    }
                }
                // A path that proved to be a profile goes into the recent list; one that did not
                // stays out of it.
                if let Some(path) = self.opening.take() {
                    cx.events.push(DocEvent::Opened(path));
                }
                self.session.profile = Some(p);
            }
            LoadMsg::FirstLook { key, view } => {
                // The curves now; the load goes on (the table says so meanwhile). Cached under
                // the key the load was started for, whatever the state says now.
                self.session.insert(key, view);
            }
            LoadMsg::Loaded { key, view } => {
                // Completing a first look on screen: operator_memory may start earlier than
                // memory_record and so move the time origin; the window the user chose moves
                // with it, so it shows the same instants.
                let shift = self
                    .session
                    .peek(key)
                    .filter(|first| first.data.partial)
                    .map_or(0, |first| {
                        first.data.time_origin_ns - view.data.time_origin_ns
                    });
                let on_screen = self.current(cx.state) == Some(key);
                self.session.insert(key, view);
                if shift != 0 && on_screen {
                    cx.out.push(Command::OriginMoved { by_ns: shift });
                }
                self.loading = None;
            }
            LoadMsg::Failed(e) => {
                self.drop_first_look();
                self.loading = None;
                // A folder without a profile may be a document (a job's OOM bundles).
                if let crate::ui::loading::Failure::Discover(found) = &e
                    && let Some(doc) = crate::ui::documents::from_discovery(found, cx.jobs)
                {
                    if let Some(opened) = self.opening.take() {
                        cx.events.push(DocEvent::Opened(opened));
                    }
                    cx.events.push(DocEvent::Replace(doc));
                    return;
                }
                self.error = Some(e.message(cx.t));
            }
            LoadMsg::Cancelled => {
                self.drop_first_look();
                self.loading = None;
                if self.current(cx.state).is_none() {
                    self.error = Some(cx.t.load_cancelled.into());
                }
            }
        }
    }
}
