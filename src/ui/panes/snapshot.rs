//! The allocator snapshot view (`.pickle`/`.pkl` from `_dump_snapshot`): a device selector, the
//! allocated bytes over the allocator's events (click to pick an event), who holds the memory
//! just after that event (or at the end) by stack, and the leak suspects: blocks allocated in
//! the trace and never freed, by stack. The file is read by memsight's data-only unpickler in a
//! job; nothing in it is ever executed.

use std::path::PathBuf;
use std::sync::Arc;

use egui_plot::{Line, Plot, PlotPoints, VLine};

use crate::model::bytes_to_mib;
use crate::snapshot::segments::{AllocatorState, BlockKind, allocator_state};
use crate::snapshot::summary::{allocated_curve, never_freed};
use crate::snapshot::{AllocatorSnapshot, SnapshotSummary, StackTotal, summarize_snapshot};
use crate::ui::format::grouped;
use crate::ui::i18n::Tr;
use crate::ui::jobs::{Job, JobKey, Jobs, Place, Poll};

/// Stacks listed per table.
const TOP: usize = 30;

/// Traces up to this many events are summarised in the frame (a few ms); longer ones in a job,
/// the figures shown before staying on screen until the new ones are ready.
pub const SYNC_EVENTS: usize = 100_000;

/// What the view shows for one device and event, computed when they change.
struct Shown {
    device: i64,
    event: Option<usize>,
    summary: SnapshotSummary,
    curve: Vec<[f64; 2]>,
    leaks: Vec<StackTotal>,
    leak_blocks: u64,
    segments: AllocatorState,
}

/// A device and an event of it (None: the end state).
type Pick = (i64, Option<usize>);

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
    shown: Option<Arc<Shown>>,
    /// The figures being computed in a job, for (device, event).
    computing: Option<(Pick, Job<Option<Shown>>)>,
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
            computing: None,
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

    /// True while the figures for the device and event picked are being computed in a job.
    pub fn is_computing(&self) -> bool {
        self.computing.is_some()
    }

    /// Waits for the figures being computed (tests, headless runs).
    pub fn wait_for_figures(&mut self) {
        if let Some((_, job)) = self.computing.take()
            && let Some(Some(s)) = job.wait()
        {
            self.shown = Some(Arc::new(s));
        }
    }

    /// The figures for the device and event picked: at once for a short trace, else from a job
    /// (the previous figures meanwhile, or `None` before the first).
    fn shown(&mut self, jobs: &mut Jobs) -> Option<Arc<Shown>> {
        let snap = Arc::clone(self.snap.as_ref()?);
        let want = (self.device, self.event);
        if let Some((key, job)) = &self.computing {
            match job.poll() {
                Poll::Msg(Some(s)) if *key == want => {
                    self.shown = Some(Arc::new(s));
                    self.computing = None;
                }
                Poll::Pending if *key == want => return self.shown.clone(),
                // Done, failed, or for another pick: a new one starts below if needed.
                _ => self.computing = None,
            }
        }
        let stale = self
            .shown
            .as_ref()
            .is_none_or(|s| (s.device, s.event) != want);
        if !stale {
            return self.shown.clone();
        }
        let events = trace_len(&snap, self.device);
        if events <= SYNC_EVENTS {
            self.shown = compute(&snap, self.device, self.event).map(Arc::new);
        } else {
            let (device, event) = want;
            let job = jobs.run(JobKey::SnapshotState, Place::Thread, move |_| {
                compute(&snap, device, event)
            });
            self.computing = Some((want, job));
        }
        self.shown.clone()
    }

    /// The whole view.
    pub fn ui(&mut self, ui: &mut egui::Ui, t: &Tr, jobs: &mut Jobs) {
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
        let shown = self.shown(jobs);
        if self.computing.is_some() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.weak(t.snapshot_computing);
            });
            ui.ctx().request_repaint();
        }
        let Some(shown) = shown else {
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
        segment_map(ui, t, &shown.segments);
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

/// Events in `device`'s trace.
fn trace_len(snap: &AllocatorSnapshot, device: i64) -> usize {
    snap.traces
        .get(usize::try_from(device).unwrap_or(usize::MAX))
        .map_or(0, Vec::len)
}

/// Everything the view shows for `device` just after `event` (None: the end state).
fn compute(snap: &AllocatorSnapshot, device: i64, event: Option<usize>) -> Option<Shown> {
    // The end state of this device is the state just after its last event.
    let at = event.or(trace_len(snap, device).checked_sub(1));
    let summary = match at {
        Some(k) => summarize_snapshot(snap, Some((device, k)), TOP),
        None => summarize_snapshot(snap, None, TOP),
    }
    .ok()?;
    let (start, after) = allocated_curve(snap, device);
    let curve: Vec<[f64; 2]> = std::iter::once(start)
        .chain(after)
        .enumerate()
        .map(|(i, v)| [i as f64 - 1.0, bytes_to_mib(v)])
        .collect();
    let (leaks, leak_blocks) = never_freed(snap, device, TOP);
    Some(Shown {
        device,
        event,
        summary,
        curve,
        leaks,
        leak_blocks,
        segments: allocator_state(snap, device),
    })
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

/// The colour of a block kind in the segment map.
fn kind_color(kind: BlockKind) -> egui::Color32 {
    match kind {
        BlockKind::Allocated => egui::Color32::from_rgb(66, 133, 214),
        BlockKind::PendingFree => egui::Color32::from_rgb(230, 150, 50),
        BlockKind::Free => egui::Color32::from_gray(110),
    }
}

/// The segments at the snapshot, folded under a heading with the fragmentation figures: one bar
/// per segment, its blocks in address order coloured by kind, the figures on hover.
fn segment_map(ui: &mut egui::Ui, t: &Tr, state: &AllocatorState) {
    let mb = |b: i64| grouped(bytes_to_mib(b), 2);
    let heading = (t.snapshot_segments)(
        state.segments.len(),
        &mb(state.free),
        &grouped(state.free_share() * 100.0, 1),
        &mb(state.largest_free),
    );
    egui::CollapsingHeader::new(heading)
        .id_salt("snapshot_segments")
        .show(ui, |ui| {
            ui.horizontal(|ui| {
                for (kind, name) in [
                    BlockKind::Allocated,
                    BlockKind::PendingFree,
                    BlockKind::Free,
                ]
                .into_iter()
                .zip(t.snapshot_block_kinds)
                {
                    let (r, _) =
                        ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
                    ui.painter().rect_filled(r, 2.0, kind_color(kind));
                    ui.label(name);
                }
            });
            let row_h = 16.0;
            egui::ScrollArea::vertical()
                .id_salt("snapshot_segment_rows")
                .max_height(row_h * 8.0)
                .show_rows(ui, row_h, state.segments.len(), |ui, rows| {
                    for seg in &state.segments[rows] {
                        segment_bar(ui, t, seg, row_h - 4.0);
                    }
                });
        });
}

/// One segment as a bar across the width: its blocks' runs of one kind, to scale.
fn segment_bar(ui: &mut egui::Ui, t: &Tr, seg: &crate::snapshot::segments::SegmentState, h: f32) {
    // The segment's size on the left, right-aligned, then its bar (each bar is to its own scale).
    let label_w = 84.0;
    let (row, response) = ui.allocate_exact_size(
        egui::vec2(ui.available_width(), h + 4.0),
        egui::Sense::hover(),
    );
    ui.painter().text(
        egui::pos2(row.left() + label_w - 6.0, row.center().y),
        egui::Align2::RIGHT_CENTER,
        format!("{} MB", grouped(bytes_to_mib(seg.total), 2)),
        egui::FontId::proportional(11.0),
        ui.visuals().text_color(),
    );
    let rect = egui::Rect::from_min_max(
        egui::pos2(row.left() + label_w, row.top() + 2.0),
        egui::pos2(row.right(), row.bottom() - 2.0),
    );
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
    let total = seg.total.max(1) as f64;
    let mut x = 0i64;
    let mut runs: Vec<(i64, i64, BlockKind)> = Vec::new();
    for &(size, kind) in &seg.layout {
        match runs.last_mut() {
            Some(last) if last.2 == kind => last.1 += size.max(0),
            _ => runs.push((x, size.max(0), kind)),
        }
        x = x.saturating_add(size.max(0));
    }
    for (start, len, kind) in runs {
        let x0 = rect.left() + (start as f64 / total * f64::from(rect.width())) as f32;
        let x1 = rect.left() + ((start + len) as f64 / total * f64::from(rect.width())) as f32;
        let r = egui::Rect::from_x_y_ranges(x0..=x1.max(x0 + 1.0), rect.y_range());
        painter.rect_filled(r, 0.0, kind_color(kind));
    }
    let mb = |b: i64| grouped(bytes_to_mib(b), 2);
    let kind = if seg.is_expandable {
        format!("{}, {}", seg.segment_type, t.snapshot_expandable)
    } else {
        seg.segment_type.clone()
    };
    response.on_hover_text((t.snapshot_segment_hover)(
        &format!("{:#x}", seg.address),
        &kind,
        &mb(seg.total),
        &mb(seg.allocated),
        &mb(seg.free),
        &mb(seg.largest_free),
        seg.layout.len(),
    ));
}

/// A file name without its folder.
fn short_file(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}
