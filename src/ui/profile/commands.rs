//! The commands the profile handles after the view state took them: show a rank (from the
//! session or a load started for its key), the Data switch, compare, copy, the overview's and
//! the load's Retry and Cancel.

use std::sync::Arc;

use super::ProfileDocument;
use crate::ui::command::Command;
use crate::ui::document::DocCx;
use crate::ui::panes::align_offset;
use crate::ui::panes::details_table::DetailsPane;

impl ProfileDocument {
    /// Handles `cmd` when it is the profile's; false leaves it to the app.
    pub(super) fn handle_command(&mut self, cmd: &Command, cx: &mut DocCx<'_>) -> bool {
        match cmd {
            Command::SelectRank(_) | Command::Retry => self.show_rank(cx),
            Command::SetSource(_) => {
                if cx.state.source != self.source {
                    self.source = cx.state.source;
                    // The same rank, read from the other files: loaded (or found loaded)
                    // again, and what is beside it (overview, baseline) read from them too.
                    self.show_rank(cx);
                    self.restart_overview(cx);
                    if let Some(source) = self.baseline.source() {
                        self.load_baseline(source, cx);
                    }
                }
            }
            Command::CompareWith(source) => {
                self.load_baseline(source.clone(), cx);
                // A comparison is shown on the rank, not behind the cluster overview.
                cx.out.push(Command::ShowOverview(false));
            }
            Command::CompareRank(rank) => {
                if let Some(path) = self.session.path.clone() {
                    cx.out
                        .push(Command::CompareWith(crate::ui::baseline::BaselineSource {
                            path,
                            rank: *rank,
                        }));
                }
            }
            Command::StopCompare => self.baseline.clear(),
            Command::CopyDiff => {
                if let (Some(view), Some(ctx)) = (self.view(cx.state), cx.ctx)
                    && let Some(diff) = self.baseline.diff(cx.jobs, &view)
                {
                    let rows = crate::ui::panes::diff::diff_rows(&diff, cx.state);
                    ctx.copy_text(crate::ui::panes::diff::diff_tsv(cx.t, &diff, &rows));
                }
            }
            Command::RetryOverview => self.restart_overview(cx),
            Command::CancelOverview => {
                if let Some(o) = &mut self.overview {
                    o.cancel();
                }
            }
            Command::CancelLoad => {
                if let Some(l) = &self.loading {
                    l.job.control().cancel();
                }
            }
            Command::Copy | Command::CopyAll => self.copy(*cmd == Command::CopyAll, cx),
            _ => return false,
        }
        true
    }

    /// Summarises the ranks again, from the state's files, when the overview is there.
    fn restart_overview(&mut self, cx: &mut DocCx<'_>) {
        if let Some(p) = self.session.profile.clone()
            && self.overview.is_some()
        {
            self.overview = Some(crate::ui::overview::Overview::start(
                cx.jobs,
                p,
                cx.state.source,
            ));
        }
    }

    /// Copies the details table's page (or all of its rows) to the clipboard.
    fn copy(&mut self, all: bool, cx: &mut DocCx<'_>) {
        let Some(view) = self.view(cx.state) else {
            return;
        };
        let base = self.baseline.loaded.as_ref().map(|b| {
            let offset = align_offset(&view, &b.view, cx.state.align_step);
            (Arc::clone(&b.view), offset)
        });
        let compare = base.as_ref().map(|(v, o)| (v, *o));
        if let Some(d) = self.panes.get_mut::<DetailsPane>() {
            d.copy(cx.ctx, &view, cx.state, compare, all, cx.t);
        }
    }

    /// Starts loading the baseline `source` with the Data switch's files, from the session
    /// when it is a rank of the open profile that is loaded already.
    pub(crate) fn load_baseline(
        &mut self,
        source: crate::ui::baseline::BaselineSource,
        cx: &mut DocCx<'_>,
    ) {
        let same = self.session.path.as_ref() == Some(&source.path);
        let profile = self.session.profile.clone().filter(|_| same);
        let key = profile
            .as_ref()
            .map(|_| self.session.key(source.rank, cx.state.source));
        let cached = key.and_then(|k| self.session.get(k));
        self.baseline.load(
            cx.jobs,
            crate::ui::baseline::BaselineRequest {
                source,
                profile,
                files: cx.state.source,
                key,
                cached,
            },
        );
    }
}
