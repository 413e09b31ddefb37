//! The allocator snapshot view (`.pickle`/`.pkl` from `_dump_snapshot`): a device selector, the
//! allocated bytes over the allocator's events (click to pick an event), who holds the memory
//! just after that event (or at the end) by stack, and the leak suspects: blocks allocated in
//! the trace and never freed, by stack. The file is read by memsight's data-only unpickler in a
//! job; nothing in it is ever executed.

use std::path::PathBuf;
use std::sync::Arc;

use egui_plot::{Line, Plot, PlotPoints, VLine};

use crate::model::bytes_to_mib;
use crate::snapshot::summary::{allocated_curve, never_freed};
use crate::snapshot::{AllocatorSnapshot, SnapshotSummary, StackTotal, summarize_snapshot};
use crate::ui::format::grouped;
use crate::ui::i18n::Tr;
use crate::ui::jobs::{Job, JobKey, Jobs, Place, Poll};

/// Stacks listed per table.
const TOP: usize = 30;

/// What the view shows for one device and event, computed when they change.
struct Shown {
    device: i64,
    event: Option<usize>,
    summary: SnapshotSummary,
    curve: Vec<[f64; 2]>,
    leaks: Vec<StackTotal>,
    leak_blocks: u64,
}

/// An opened snapshot and what the user picked in it.
pub struct SnapshotView {
    /// The file.
    pub path: PathBuf,
    job: Option<Job<Result<AllocatorSnapshot, String>>>,
    /// The snapshot, once read.
    pub snap: Option<Arc<AllocatorSnapshot>>,
    /// Why it could not be read.
    pub error: Option<String>,
    /// The device shown.
    pub device: i64,
    /// The event picked on the curve (None: the end state).
    pub event: Option<usize>,
    shown: Option<Shown>,
}

impl SnapshotView {
    /// Starts reading `path` in a job.
    pub fn open(jobs: &mut Jobs, path: PathBuf) -> SnapshotView {
        let p = path.clone();
        let job = jobs.run(JobKey::Load, Place::Thread, move |_| {
            AllocatorSnapshot::open(&p).map_err(|e| e.to_string())
        });
        SnapshotView {
            path,
            job: Some(job),
            snap: None,
            error: None,
            device: 0,
            event: None,
            shown: None,
        }
    }

    /// Takes the job's result when it is there; true while still reading.
    pub fn poll(&mut self) -> bool {
        let Some(job) = &self.job else {
            return false;
        };
        match job.poll() {
            Poll::Msg(Ok(s)) => {
                self.device = s.devices().first().copied().unwrap_or(0);
                self.snap = Some(Arc::new(s));
                self.job = None;
                false
            }
            Poll::Msg(Err(e)) => {
                self.error = Some(e);
                self.job = None;
                false
            }
            Poll::Finished => {
                self.job = None;
                false
            }
            Poll::Pending => true,
        }
    }

    /// Waits for the read to finish (tests, headless runs).
    pub fn wait(&mut self) {
        if let Some(job) = self.job.take() {
            match job.wait() {
                Some(Ok(s)) => {
                    self.device = s.devices().first().copied().unwrap_or(0);
                    self.snap = Some(Arc::new(s));
                }
                Some(Err(e)) => self.error = Some(e),
                None => {}
            }
        }
    }

    /// The figures for the device and event picked (recomputed when they change).
    fn shown(&mut self) -> Option<&Shown> {
        let snap = self.snap.as_ref()?;
        let stale = self
            .shown
            .as_ref()
            .is_none_or(|s| s.device != self.device || s.event != self.event);
        if stale {
            let trace_len = snap
                .traces
                .get(usize::try_from(self.device).unwrap_or(usize::MAX))
                .map_or(0, Vec::len);
            // The end state of this device is the state just after its last event.
            let at = self.event.or(trace_len.checked_sub(1));
            let summary = match at {
                Some(k) => summarize_snapshot(snap, Some((self.device, k)), TOP),
                None => summarize_snapshot(snap, None, TOP),
            }
            .ok()?;
            let (start, after) = allocated_curve(snap, self.device);
            let curve: Vec<[f64; 2]> = std::iter::once(start)
                .chain(after)
                .enumerate()
                .map(|(i, v)| [i as f64 - 1.0, bytes_to_mib(v)])
                .collect();
            let (leaks, leak_blocks) = never_freed(snap, self.device, TOP);
            self.shown = Some(Shown {
                device: self.device,
                event: self.event,
                summary,
                curve,
                leaks,
                leak_blocks,
            });
        }
        self.shown.as_ref()
    }

    /// The whole view.
    pub fn ui(&mut self, ui: &mut egui::Ui, t: &Tr) {
        if self.poll() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label((t.snapshot_reading)(&self.path.display().to_string()));
            });
            ui.ctx().request_repaint();
            return;
        }
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, (t.snapshot_failed)(e));
            return;
        }
        let Some(snap) = self.snap.clone() else {
            return;
        };
        ui.horizontal_wrapped(|ui| {
            ui.strong(t.snapshot_title);
            ui.weak(self.path.display().to_string());
            ui.separator();
            let label = ui.label(t.snapshot_device);
            egui::ComboBox::from_id_salt("snapshot_device")
                .selected_text(format!("NPU:{}", self.device))
                .show_ui(ui, |ui| {
                    for d in snap.devices() {
                        if ui
                            .selectable_label(d == self.device, format!("NPU:{d}"))
                            .clicked()
                        {
                            self.device = d;
                            self.event = None;
                        }
                    }
                })
                .response
                .labelled_by(label.id);
            if self.event.is_some() && ui.button(t.snapshot_end).clicked() {
                self.event = None;
            }
        });
        let mut picked = None;
        let Some(shown) = self.shown() else {
            return;
        };
        if let Some(d) = shown
            .summary
            .devices
            .iter()
            .find(|d| d.device == shown.device)
        {
            let peak_at = d
                .peak_event
                .map_or_else(|| t.snapshot_before_trace.to_string(), |k| format!("#{k}"));
            ui.label((t.snapshot_figures)(
                d.segments,
                &grouped(bytes_to_mib(d.reserved_bytes), 2),
                &grouped(bytes_to_mib(d.allocated_bytes), 2),
                &grouped(bytes_to_mib(d.peak_allocated_bytes), 2),
                &peak_at,
                &grouped(d.events.values().sum::<u64>() as f64, 0),
            ));
        }
        let height = (ui.available_height() * 0.35).clamp(140.0, 320.0);
        let marker = shown.event;
        let plot = Plot::new("snapshot_curve")
            .height(height)
            .x_axis_label(t.snapshot_event_axis)
            .y_axis_label("MB")
            .allow_scroll(false)
            .show(ui, |p| {
                p.line(Line::new(
                    t.snapshot_allocated,
                    PlotPoints::new(shown.curve.clone()),
                ));
                if let Some(k) = marker {
                    p.vline(VLine::new(t.snapshot_picked, k as f64));
                }
                p.pointer_coordinate()
            });
        if plot.response.clicked()
            && let Some(c) = plot.inner
        {
            let last = shown.curve.len().saturating_sub(2);
            picked = Some((c.x.round().max(0.0) as usize).min(last));
        }
        let title = match (&shown.summary.at_event, shown.event) {
            (Some(a), Some(_)) => (t.snapshot_at_event)(
                a.event,
                &grouped(bytes_to_mib(a.allocated_bytes), 2),
                a.blocks,
            ),
            _ => t.snapshot_at_end.to_string(),
        };
        let leaks_title = (t.snapshot_leaks)(shown.leak_blocks);
        let (holders, leaks) = (&shown.summary.top_stacks, &shown.leaks);
        ui.columns(2, |cols| {
            cols[0].strong(title);
            stack_table(&mut cols[0], t, "snapshot_holders", holders);
            cols[1].strong(leaks_title);
            stack_table(&mut cols[1], t, "snapshot_leaks", leaks);
        });
        if picked.is_some() {
            self.event = picked;
        }
    }
}

/// Stacks with their MB and blocks; the innermost frame shown, the whole stack on hover.
fn stack_table(ui: &mut egui::Ui, t: &Tr, id: &str, stacks: &[StackTotal]) {
    egui::ScrollArea::vertical()
        .id_salt(id)
        .auto_shrink([false, false])
        .show(ui, |ui| {
            egui::Grid::new(id).striped(true).show(ui, |ui| {
                ui.label(t.snapshot_headers[0]);
                ui.label(t.snapshot_headers[1]);
                ui.label(t.snapshot_headers[2]);
                ui.end_row();
                for s in stacks {
                    ui.label(grouped(bytes_to_mib(s.bytes), 2));
                    ui.label(grouped(s.blocks as f64, 0));
                    let top = s.frames.first().map_or_else(
                        || t.no_stack.to_string(),
                        |f| format!("{}:{} {}", short_file(&f.filename), f.line, f.name),
                    );
                    let r = ui.add(egui::Label::new(top).selectable(false));
                    if !s.frames.is_empty() {
                        r.on_hover_ui(|ui| {
                            for f in &s.frames {
                                ui.weak(format!("{}:{} {}", f.filename, f.line, f.name));
                            }
                        });
                    }
                    ui.end_row();
                }
            });
        });
}

/// A file name without its folder.
fn short_file(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}
