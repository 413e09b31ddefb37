//! The allocator snapshot view (`.pickle`/`.pkl` from `_dump_snapshot`): a device selector; the
//! active memory over the allocator's events, every allocation a band (click to pick an event,
//! drag to zoom); the segments just after that event (or at the end) with their fragmentation;
//! who holds the memory then, as a table by stack or a flame graph; and the leak suspects:
//! blocks allocated in the trace and never freed, by stack. The file is read by memsight's
//! data-only unpickler in a job; nothing in it is ever executed.

use crate::ingest::msmemscope::{OomDetail, OomDetailKind};
use crate::snapshot::SnapshotError;
use crate::snapshot::oom::{
    ModuleUsage, OomReport, memscope_oom_beside, oom_reports, usage_beside,
};
use crate::ui::palette::{FrameKind, flame_fill};
use std::path::PathBuf;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::flame::NodeLook;
use super::snapshot_bands::{Bands, BandsChart, size_text, stack_lines};
use super::snapshot_compare::{self, SnapshotComparing};
use super::snapshot_holders::{self, HoldersCx, HoldersId, HoldersTab};
use super::snapshot_join;
use crate::analysis::stacks::{Flame, FlameBuilder, FlameFrame};
use crate::model::{Lang, bytes_to_mib, is_library_frame};
use crate::snapshot::fragmentation::{Fragmentation, fragmentation_at};
use crate::snapshot::holder::holder_frame;
use crate::snapshot::phases::{Phase, PhaseHolding, live_by_phase_of, phase_of_events, phases};
use crate::snapshot::pinned::{PinnedSummary, pinned_summary};
use crate::snapshot::pools::{PoolTrack, private_pools};
use crate::snapshot::segments::{AllocatorState, BlockKind, allocator_state, allocator_state_at};
use crate::snapshot::summary::{live_blocks, never_freed, never_freed_events};
use crate::snapshot::{
    AllocatorSnapshot, Frame, SnapshotSummary, StackId, StackTotal, summarize_snapshot,
};
use crate::ui::command::{Command, PickKind};
use crate::ui::format::grouped;
use crate::ui::i18n::{Text, Tr};
use crate::ui::jobs::{Job, JobKey, Jobs, Place, Poll};

/// The job that computes the allocator snapshot view's figures for a device and event (big traces only).
pub const SNAPSHOT_STATE_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("snapshot_state", "the allocator snapshot", "内存快照");

/// Stacks listed per table.
const TOP: usize = 30;

/// Traces up to this many events are summarised in the frame (a few ms); longer ones in a job,
/// the figures shown before staying on screen until the new ones are ready.
pub const SYNC_EVENTS: usize = 100_000;

/// What the view shows for one device whatever the event: its bands and leak suspects.
pub(super) struct DeviceParts {
    device: i64,
    bands: Arc<Bands>,
    pub(super) leaks: Vec<StackTotal>,
    pub(super) leak_blocks: u64,
    /// Where each never-freed block was allocated (event indices, in trace order).
    leak_events: Vec<usize>,
    /// The trace ends in an out-of-memory: its never-freed blocks are what was held at the
    /// OOM, not leak suspects.
    pub(super) at_oom: bool,
    /// The user's annotations as phases, and the innermost phase of each event.
    pub(super) phases: Vec<Phase>,
    phase_of: Vec<Option<usize>>,
    /// Its private pools over the trace (CUDA graphs, `MemPool`).
    pools: Vec<PoolTrack>,
}

/// What the view shows for one device and event, computed when they change.
pub(super) struct Shown {
    pub(super) device: i64,
    pub(super) event: Option<usize>,
    pub(super) parts: Arc<DeviceParts>,
    pub(super) summary: SnapshotSummary,
    segments: AllocatorState,
    /// Why the memory not handed out is not: by cause, at the same event.
    fragmentation: Fragmentation,
    /// The live blocks (address, size, stack) and their flame graph, whose frame ids index
    /// `flame_frames`.
    pub(super) live: Vec<(u64, i64, StackId)>,
    pub(super) flame: Flame,
    pub(super) flame_frames: Vec<Frame>,
    /// The live blocks by the phase that allocated them.
    pub(super) by_phase: Vec<PhaseHolding>,
}

/// A device and an event of it (None: the end state).
type Pick = (i64, Option<usize>);

pub use crate::snapshot::SnapshotProblem;

/// What the reading job hands over: the snapshot, its `oom` events explained and the
/// memUsageInfo rows beside it (an OOM bundle).
type Read = (
    AllocatorSnapshot,
    Vec<OomReport>,
    crate::snapshot::oom::UsageBeside,
    MemScopeOom,
    Option<PinnedSummary>,
);

/// The `OOM_DETAIL` rows of the msMemScope dumps beside the snapshot: (dump, rows) per dump.
type MemScopeOom = Vec<(String, Vec<OomDetail>)>;

/// An opened snapshot and what the user picked in it.
pub struct SnapshotView {
    /// The file.
    path: PathBuf,
    job: Option<Job<Result<Read, SnapshotError>>>,
    /// The snapshot, once read.
    snap: Option<Arc<AllocatorSnapshot>>,
    /// Why it could not be read.
    error: Option<SnapshotProblem>,
    /// Its `oom` events, explained (an OOM snapshot's trace ends with one).
    oom: Vec<OomReport>,
    /// The CANN modules' memory at the OOM (`device_*_memUsageInfo_*.csv` beside it).
    modules: Vec<ModuleUsage>,
    /// What of those files could not be read (a cut file, skipped rows, no header).
    module_notes: Vec<crate::model::Message>,
    /// msMemScope's account of the OOM (a dump with `OOM_DETAIL` rows beside it).
    memscope: MemScopeOom,
    /// Its pinned host memory, when recorded (`record_pinned_host_memory=True`).
    pinned: Option<PinnedSummary>,
    /// The PyTorch trace in the snapshot's folder, or the one the user picked, read to join the
    /// two by time.
    profile: Option<snapshot_join::ProfileJoining>,
    /// The profile the user picked with Join with a profile… (else the one beside it is read).
    profile_picked: Option<PathBuf>,
    /// The join shown before Join with a profile… asked for another, kept until that one is
    /// made: a profile that cannot be joined leaves the view as it was, with a note.
    previous_join: Option<PreviousJoin>,
    /// Why the last profile asked for could not be joined (the view is the previous one).
    join_failed: Option<String>,
    /// The device the snapshot's folder was last searched for a trace for (once per device,
    /// not every frame).
    profile_sought: Option<String>,
    /// The device shown.
    device: i64,
    /// The event picked on the curve (None: the end state).
    event: Option<usize>,
    shown: Option<Arc<Shown>>,
    /// The figures being computed in a job, for (device, event).
    computing: Option<(Pick, Job<Option<Shown>>)>,
    /// The active-memory chart's zoom.
    chart: BandsChart,
    /// The holders view shown (a registered [`snapshot_holders::HoldersTab`]'s id).
    holders_view: HoldersId,
    /// The holders views, in tab order ([`snapshot_holders::HOLDERS_TABS`]).
    holders: Vec<Box<dyn HoldersTab>>,
    /// Another snapshot compared with this one.
    comparing: Option<SnapshotComparing>,
    /// The comparison is on screen (else the snapshot), while comparing.
    showing_comparison: bool,
}

/// What tests read of the view, and the two picks they make as a user's click would: its
/// fields are its own.
impl SnapshotView {
    /// The snapshot, once read.
    pub fn snapshot(&self) -> Option<&Arc<AllocatorSnapshot>> {
        self.snap.as_ref()
    }

    /// Why it could not be read.
    pub fn error(&self) -> Option<&SnapshotProblem> {
        self.error.as_ref()
    }

    /// Its pinned host memory, when recorded.
    pub fn pinned(&self) -> Option<&PinnedSummary> {
        self.pinned.as_ref()
    }

    /// The profile joined with it, when one is read.
    pub fn profile(&self) -> Option<&snapshot_join::ProfileJoining> {
        self.profile.as_ref()
    }

    /// The device shown.
    pub fn device(&self) -> i64 {
        self.device
    }

    /// The event picked on the curve (None: the end state).
    pub fn event(&self) -> Option<usize> {
        self.event
    }

    /// The active-memory chart's zoom and last frame.
    pub fn chart(&self) -> &BandsChart {
        &self.chart
    }

    /// Another snapshot compared with this one.
    pub fn comparing(&self) -> Option<&SnapshotComparing> {
        self.comparing.as_ref()
    }

    /// The comparison, to move its moments as its pickers do.
    pub fn comparing_mut(&mut self) -> Option<&mut SnapshotComparing> {
        self.comparing.as_mut()
    }

    /// Shows `event` of `device` (None: the end state), as a pick on its curve does.
    pub fn show(&mut self, device: i64, event: Option<usize>) {
        self.device = device;
        self.event = event;
    }

    /// Shows the holders view `id`, as a click on its tab does.
    pub fn show_holders(&mut self, id: HoldersId) {
        self.holders_view = id;
    }
}

impl SnapshotView {
    /// Starts reading `path` in a job.
    pub fn open(jobs: &mut Jobs, path: PathBuf) -> SnapshotView {
        let p = path.clone();
        let job = jobs.run(
            JobKey::new(crate::ui::loading::LOAD_JOB),
            Place::Thread,
            move |_| {
                let snap = AllocatorSnapshot::open(&p)?;
                let oom = oom_reports(&snap);
                let pinned = pinned_summary(&snap, 1);
                Ok((snap, oom, usage_beside(&p), memscope_oom_beside(&p), pinned))
            },
        );
        SnapshotView {
            path,
            job: Some(job),
            snap: None,
            error: None,
            oom: Vec::new(),
            modules: Vec::new(),
            module_notes: Vec::new(),
            memscope: Vec::new(),
            pinned: None,
            profile: None,
            profile_sought: None,
            profile_picked: None,
            previous_join: None,
            join_failed: None,
            device: 0,
            event: None,
            shown: None,
            computing: None,
            chart: BandsChart::default(),
            holders_view: snapshot_holders::TABLE,
            holders: snapshot_holders::HOLDERS_TABS
                .iter()
                .map(|make| make())
                .collect(),
            comparing: None,
            showing_comparison: false,
        }
    }

    /// Takes the job's result when it is there; true while still reading.
    pub fn poll(&mut self) -> bool {
        let Some(job) = &self.job else {
            return false;
        };
        match job.poll() {
            Poll::Msg(Ok(read)) => {
                self.landed(read);
                self.job = None;
                false
            }
            Poll::Msg(Err(e)) => {
                self.error = Some(SnapshotProblem::Read(e));
                self.job = None;
                false
            }
            Poll::Failed(e) => {
                self.error = Some(SnapshotProblem::Task(e));
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

    /// Takes what the reading job found: an OOM snapshot opens on its device that ran out, at its
    /// first `oom` event: the state the verdict and its advice are of (the end, after the frees
    /// that followed, suggested fixes for another moment).
    fn landed(&mut self, (snap, oom, modules, memscope, pinned): Read) {
        self.device = oom
            .first()
            .map(|o| o.device)
            .or_else(|| snap.devices().first().copied())
            .unwrap_or(0);
        self.event = oom.first().map(|o| o.event);
        self.snap = Some(Arc::new(snap));
        self.oom = oom;
        self.modules = modules.modules;
        self.module_notes = modules.notes;
        self.memscope = memscope;
        self.pinned = pinned;
    }

    /// Starts reading the one PyTorch trace in the snapshot's folder, once the snapshot is read
    /// and times its events (CUDA snapshots do; torch_npu ones cannot be joined by time).
    fn start_profile(&mut self, jobs: &mut Jobs) {
        let Some(snap) = &self.snap else { return };
        let device = snap.backend.device_label(self.device).to_ascii_lowercase();
        // Read again for another device (the profile's rank of it).
        if self.profile_sought.as_ref() == Some(&device) || !self.joinable() {
            return;
        }
        self.profile_sought = Some(device.clone());
        let trace = self
            .profile_picked
            .clone()
            .or_else(|| crate::ingest::pytorch::trace::trace_beside(&self.path));
        if let Some(trace) = trace {
            self.profile = Some(snapshot_join::ProfileJoining::start(jobs, trace, device));
        }
    }

    /// True when the snapshot's events carry times, so a profile of its run can be joined with
    /// it (CUDA snapshots do; torch_npu ones do not).
    fn joinable(&self) -> bool {
        self.snap
            .as_ref()
            .is_some_and(|s| s.traces.iter().flatten().any(|e| e.time_us.is_some()))
    }

    /// Joins the snapshot with `profile` (Join with a profile…), in place of any other, and
    /// shows By operator.
    fn join_with(&mut self, jobs: &mut Jobs, profile: PathBuf) {
        self.join_failed = None;
        if let Some(joining) = self.profile.take()
            && joining.joined_once()
        {
            self.previous_join = Some(PreviousJoin {
                joining,
                picked: self.profile_picked.clone(),
                sought: self.profile_sought.clone(),
                view: self.holders_view,
            });
        }
        self.profile_picked = Some(profile);
        self.profile_sought = None;
        // Started now, or once the snapshot is read (it may still be, when both were opened
        // together); a snapshot that cannot be joined shows its table instead.
        self.start_profile(jobs);
        self.holders_view = snapshot_join::OPERATORS;
    }

    /// Once the profile asked for is joined, forgets the previous join; when it cannot be,
    /// brings the previous one back (and its view) with the reason.
    fn settle_join(&mut self, t: &Tr) {
        let Some(p) = &self.profile else { return };
        if p.joined_once() {
            self.previous_join = None;
        } else if let Some(why) = p.failed(t)
            && let Some(prev) = self.previous_join.take()
        {
            self.join_failed = Some(why);
            self.profile = Some(prev.joining);
            self.profile_picked = prev.picked;
            self.profile_sought = prev.sought;
            self.holders_view = prev.view;
        }
    }

    /// Waits for the read to finish (tests, headless runs).
    pub fn wait(&mut self) {
        if let Some(job) = self.job.take() {
            match job.wait() {
                Some(Ok(read)) => self.landed(read),
                Some(Err(e)) => self.error = Some(SnapshotProblem::Read(e)),
                None => {}
            }
        }
    }

    /// The active-memory chart's whole x range, once its bands are computed (the bench's
    /// "first curves").
    pub fn chart_extent(&self) -> Option<(f64, f64)> {
        self.shown.as_ref().map(|s| s.parts.bands.full())
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
        let parts = self
            .shown
            .as_ref()
            .filter(|s| s.device == self.device)
            .map(|s| Arc::clone(&s.parts));
        if events <= SYNC_EVENTS {
            self.shown = compute(&snap, self.device, self.event, parts).map(Arc::new);
        } else {
            let (device, event) = want;
            let job = jobs.run(JobKey::new(SNAPSHOT_STATE_JOB), Place::Thread, move |_| {
                compute(&snap, device, event, parts)
            });
            self.computing = Some((want, job));
        }
        self.shown.clone()
    }

    /// Compares it with the snapshot at `path` (read in a job), and shows the comparison.
    pub fn compare_with(&mut self, jobs: &mut Jobs, path: PathBuf) {
        self.comparing = Some(SnapshotComparing::start(jobs, path));
        self.showing_comparison = true;
    }

    /// The whole view; what the user asks of the app goes to `out`.
    pub fn ui(&mut self, ui: &mut egui::Ui, t: &Tr, jobs: &mut Jobs, out: &mut Vec<Command>) {
        if self.poll() {
            ui.horizontal(|ui| {
                crate::ui::spinner::spinner(ui);
                ui.label((t.snapshot_reading)(&self.path.display().to_string()));
            });
            ui.ctx().request_repaint_after(crate::ui::spinner::FRAME);
            return;
        }
        if let Some(e) = &self.error {
            ui.colored_label(
                ui.visuals().error_fg_color,
                (t.snapshot_failed)(&(t.snapshot_error)(e)),
            );
            return;
        }
        let Some(snap) = self.snap.clone() else {
            return;
        };
        self.start_profile(jobs);
        ui.horizontal_wrapped(|ui| {
            ui.strong(t.snapshot_title);
            ui.weak(self.path.display().to_string());
            ui.separator();
            let label = ui.label(t.snapshot_device);
            egui::ComboBox::from_id_salt("snapshot_device")
                .selected_text(snap.backend.device_label(self.device))
                .show_ui(ui, |ui| {
                    for d in snap.devices() {
                        if ui
                            .selectable_label(d == self.device, snap.backend.device_label(d))
                            .clicked()
                        {
                            self.device = d;
                            self.event = None;
                            self.chart = BandsChart::default();
                            self.moment_changed();
                        }
                    }
                })
                .response
                .labelled_by(label.id);
            if self.event.is_some() && ui.button(t.snapshot_end).clicked() {
                self.event = None;
                self.moment_changed();
            }
            ui.separator();
            if self.comparing.is_some() {
                for (on, name) in [false, true].into_iter().zip(snapshot_compare::VIEWS) {
                    if ui
                        .selectable_label(self.showing_comparison == on, name.get(t))
                        .clicked()
                    {
                        self.showing_comparison = on;
                    }
                }
            } else if ui.button(snapshot_compare::COMPARE_WITH.get(t)).clicked() {
                out.push(Command::Pick(PickKind::File(&snapshot_compare::PICK)));
            }
            if self.joinable()
                && ui
                    .button(snapshot_join::JOIN_WITH.get(t))
                    .on_hover_text(snapshot_join::JOIN_HINT.get(t))
                    .clicked()
            {
                out.push(Command::Pick(PickKind::File(&snapshot_join::PICK)));
            }
        });
        if self.showing_comparison
            && let Some(c) = &mut self.comparing
        {
            let a_path = self.path.display().to_string();
            if c.ui(ui, t, jobs, (&snap, &a_path, self.device)) {
                self.comparing = None;
                self.showing_comparison = false;
            }
            return;
        }
        let shown = self.shown(jobs);
        if self.computing.is_some() {
            ui.horizontal(|ui| {
                crate::ui::spinner::spinner(ui);
                ui.weak(t.snapshot_computing);
            });
            ui.ctx().request_repaint_after(crate::ui::spinner::FRAME);
        }
        let Some(shown) = shown else {
            return;
        };
        let mut picked = None;
        if let Some(d) = shown
            .summary
            .devices
            .iter()
            .find(|d| d.device == shown.device)
        {
            let peak_at = d
                .peak_event
                .map_or_else(|| t.snapshot_before_trace.to_string(), |k| format!("#{k}"));
            ui.horizontal_wrapped(|ui| {
                ui.label((t.snapshot_figures)(
                    d.segments,
                    &grouped(bytes_to_mib(d.reserved_bytes), 2),
                    &grouped(bytes_to_mib(d.allocated_bytes), 2),
                    &grouped(bytes_to_mib(d.peak_allocated_bytes), 2),
                    &peak_at,
                    &grouped(d.events.values().sum::<u64>() as f64, 0),
                ));
                if let Some(k) = d.peak_event
                    && shown.event != Some(k)
                    && ui.button(t.snapshot_go_peak).clicked()
                {
                    picked = Some(k);
                }
            });
        }
        if let Some(p) = &self.pinned {
            super::snapshot_pinned::pinned_line(ui, t, p);
        }
        // Why it ran out (an OOM snapshot), with a way to the event and the CANN modules.
        for o in self.oom.iter().filter(|o| o.device == shown.device) {
            ui.horizontal_wrapped(|ui| {
                let mb = |b: i64| grouped(bytes_to_mib(b), 2);
                let text = o.headline(t.lang, &|b| format!("{} MB", mb(b)));
                ui.colored_label(ui.visuals().error_fg_color, text);
                if shown.event != Some(o.event) && ui.button(t.oom_go).clicked() {
                    picked = Some(o.event);
                }
            });
            if let Some(advice) = oom_advice(t, o.advice, snap.backend.alloc_conf()) {
                ui.add(egui::Label::new(egui::RichText::new(advice).strong()).wrap());
            }
        }
        let modules: Vec<&ModuleUsage> = self
            .modules
            .iter()
            .filter(|m| m.device == shown.device)
            .collect();
        if !modules.is_empty() {
            module_table(ui, t, shown.device, &modules);
        }
        for n in &self.module_notes {
            ui.colored_label(ui.visuals().warn_fg_color, n.render(t.lang));
        }
        for (file, rows) in &self.memscope {
            memscope_table(ui, t, file, rows);
        }
        let height = (ui.available_height() * 0.38).clamp(160.0, 420.0);
        if let Some(p) = &mut self.profile {
            p.refresh(jobs, &snap, (shown.device, shown.event));
        }
        self.settle_join(t);
        if let Some(why) = &self.join_failed {
            ui.colored_label(ui.visuals().warn_fg_color, why);
        }
        let bands = &shown.parts.bands;
        let phases = (&shown.parts.phases[..], &shown.parts.phase_of[..]);
        let out = self.chart.ui(
            ui,
            t,
            &snap,
            bands,
            (
                shown.event,
                phases,
                &shown.parts.pools,
                self.profile
                    .as_ref()
                    .map_or(&[][..], snapshot_join::ProfileJoining::event_ops),
            ),
            height,
        );
        super::snapshot_pools::legend(ui, t, &shown.parts.pools);
        picked = picked.or(out.picked);
        let tl = &bands.timeline;
        ui.weak((t.snapshot_bands_legend)(
            tl.banded,
            tl.allocations.len().saturating_sub(tl.banded),
        ));
        let when = shown
            .event
            .map_or_else(|| t.snapshot_when_end.to_string(), t.snapshot_when_event);
        segment_map(ui, t, &when, &shown.segments);
        // At an OOM that was not fragmentation, the largest cause's fix is not why it ran out.
        let not_why = self.oom.iter().any(|o| {
            o.device == shown.device
                && shown.event == Some(o.event)
                && o.verdict != crate::snapshot::oom::OomVerdict::Fragmentation
        });
        fragmentation_lines(ui, t, &shown.fragmentation, not_why);
        let title = match (&shown.summary.at_event, shown.event) {
            (Some(a), Some(_)) => (t.snapshot_at_event)(
                a.event,
                &grouped(bytes_to_mib(a.allocated_bytes), 2),
                a.blocks,
            ),
            _ => t.snapshot_at_end.to_string(),
        };
        let mut cx = HoldersCx {
            t,
            jobs,
            snap: &snap,
            shown: &shown,
            when: &when,
            profile: self.profile.as_mut(),
        };
        // The view shown, or the table when the snapshot no longer offers it.
        let offered: Vec<bool> = self.holders.iter().map(|h| h.offered(&cx)).collect();
        let shown_at = self
            .holders
            .iter()
            .zip(&offered)
            .position(|(h, on)| *on && h.id() == self.holders_view)
            .unwrap_or(0);
        let mut chosen = self.holders[shown_at].id();
        ui.horizontal(|ui| {
            ui.strong(title);
            ui.separator();
            for (h, on) in self.holders.iter().zip(&offered) {
                if *on && ui.selectable_label(h.id() == chosen, h.title(t)).clicked() {
                    chosen = h.id();
                }
            }
        });
        self.holders_view = chosen;
        picked = picked.or(self.holders[shown_at].ui(ui, &mut cx));
        if let Some(k) = picked {
            self.event = Some(k);
            self.moment_changed();
        }
    }

    /// The device or the moment changed: what the holders views picked inside themselves (a
    /// flame graph's frame) no longer holds.
    fn moment_changed(&mut self) {
        for h in &mut self.holders {
            h.moment_changed();
        }
    }
}

/// How a node of the holders' flame graph is drawn: the user's own frames warm, library frames
/// blue-grey, the root and blocks without a stack grey; the hue varies with the text.
pub(super) fn flame_look(t: &Tr, frames: &[Frame], frame: FlameFrame) -> NodeLook {
    let grey = flame_fill(FrameKind::Neutral, 0.0);
    match frame {
        FlameFrame::Frame(i) => {
            let Some(f) = frames.get(i as usize) else {
                return NodeLook {
                    text: String::new(),
                    full: String::new(),
                    fill: grey,
                };
            };
            let text = f.short_text();
            let h = text
                .bytes()
                .fold(0u32, |a, b| a.wrapping_mul(31).wrapping_add(u32::from(b)));
            let jitter = (h % 1000) as f32 / 1000.0;
            let kind = if is_library_frame(&f.filename) {
                FrameKind::Library
            } else {
                FrameKind::User
            };
            let fill = flame_fill(kind, jitter);
            NodeLook {
                full: f.text(),
                text,
                fill,
            }
        }
        FlameFrame::NoStack => NodeLook {
            text: t.no_stack.to_string(),
            full: t.no_stack.to_string(),
            fill: grey,
        },
        FlameFrame::Root | FlameFrame::Operator(_) => NodeLook {
            text: t.all_blocks.to_string(),
            full: t.all_blocks.to_string(),
            fill: grey,
        },
    }
}

/// The blocks `rows` of `live`: address, MB, innermost frame (the whole stack on hover).
pub(super) fn block_list(
    ui: &mut egui::Ui,
    snap: &AllocatorSnapshot,
    live: &[(u64, i64, StackId)],
    rows: &[u32],
) {
    let row_h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    egui::ScrollArea::vertical()
        .id_salt("snapshot_flame_blocks")
        .max_height(row_h * 6.0)
        .auto_shrink([false, true])
        .show_rows(ui, row_h, rows.len(), |ui, range| {
            egui::Grid::new("snapshot_flame_blocks_grid")
                .striped(true)
                .show(ui, |ui| {
                    for &r in &rows[range] {
                        let Some(&(addr, size, stack)) = live.get(r as usize) else {
                            continue;
                        };
                        ui.monospace(format!("{addr:#x}"));
                        ui.label(size_text(size));
                        let frames = snap.frames(stack);
                        let top = holder_frame(frames).map_or_else(String::new, Frame::short_text);
                        ui.label(top).on_hover_ui(|ui| stack_lines(ui, frames));
                        ui.end_row();
                    }
                });
        });
}

/// The icicle of `live` blocks by stack (outermost frame first), with its frames interned.
fn holders_flame(snap: &AllocatorSnapshot, live: &[(u64, i64, StackId)]) -> (Flame, Vec<Frame>) {
    let mut b = FlameBuilder::default();
    let mut frames: Vec<Frame> = Vec::new();
    let mut ids: FxHashMap<Frame, u32> = FxHashMap::default();
    let mut path = Vec::new();
    for (row, &(_, size, stack)) in live.iter().enumerate() {
        path.clear();
        let fs = snap.frames(stack);
        if fs.is_empty() {
            path.push(FlameFrame::NoStack);
        }
        // Frames the unwinder could not place (`??`) would stack dozens of nameless levels
        // over every block: the icicle leaves them out when the stack has others.
        let placed = |f: &&Frame| !(f.filename.is_empty() || f.filename == "??");
        let any_placed = fs.iter().any(|f| placed(&f));
        for f in fs.iter().rev().filter(|f| !any_placed || placed(f)) {
            let id = *ids.entry(f.clone()).or_insert_with(|| {
                frames.push(f.clone());
                frames.len() as u32 - 1
            });
            path.push(FlameFrame::Frame(id));
        }
        b.add(row as u32, &path, size);
    }
    (b.finish(), frames)
}

/// Does `device`'s trace record an out-of-memory (an `oom` event)?
fn ends_in_oom(snap: &AllocatorSnapshot, device: i64) -> bool {
    usize::try_from(device)
        .ok()
        .and_then(|d| snap.traces.get(d))
        .is_some_and(|t| t.iter().any(|e| e.action == crate::snapshot::Action::Oom))
}

/// Events in `device`'s trace.
fn trace_len(snap: &AllocatorSnapshot, device: i64) -> usize {
    snap.traces
        .get(usize::try_from(device).unwrap_or(usize::MAX))
        .map_or(0, Vec::len)
}

/// Everything the view shows for `device` just after `event` (None: the end state); the
/// device's bands and leaks are taken from `parts` when they are that device's.
fn compute(
    snap: &AllocatorSnapshot,
    device: i64,
    event: Option<usize>,
    parts: Option<Arc<DeviceParts>>,
) -> Option<Shown> {
    // The end state of this device is the state just after its last event.
    let at = event.or(trace_len(snap, device).checked_sub(1));
    // The device's bands (the longest part, once per device) beside the event's summary.
    let (parts, summary) = rayon::join(
        || {
            parts.filter(|p| p.device == device).unwrap_or_else(|| {
                let (leaks, leak_blocks) = never_freed(snap, device, TOP);
                let phases = phases(snap, device);
                let phase_of = phase_of_events(snap, device, &phases);
                Arc::new(DeviceParts {
                    phases,
                    phase_of,
                    pools: private_pools(snap, device),
                    device,
                    bands: Arc::new(Bands::new(snap, device)),
                    leaks,
                    leak_blocks,
                    leak_events: never_freed_events(snap, device),
                    at_oom: ends_in_oom(snap, device),
                })
            })
        },
        || match at {
            Some(k) => summarize_snapshot(snap, Some((device, k)), TOP),
            None => summarize_snapshot(snap, None, TOP),
        },
    );
    let summary = summary.ok()?;
    let segments = match event {
        Some(k) => allocator_state_at(snap, device, k),
        None => allocator_state(snap, device),
    };
    let live = live_blocks(snap, device, event);
    let (flame, flame_frames) = holders_flame(snap, &live);
    // For the request of an `oom` event, its stream; else stream 0.
    let fragmentation = {
        let k = at.unwrap_or(0);
        let stream = usize::try_from(device)
            .ok()
            .and_then(|d| snap.traces.get(d)?.get(k))
            .filter(|e| e.action == crate::snapshot::Action::Oom)
            .map_or(0, |e| e.stream);
        fragmentation_at(snap, device, k, stream)
    };
    let by_phase = if parts.phases.is_empty() {
        Vec::new()
    } else {
        live_by_phase_of(snap, device, event, (&parts.phases, &parts.phase_of))
    };
    Some(Shown {
        by_phase,
        device,
        event,
        parts,
        summary,
        segments,
        fragmentation,
        live,
        flame,
        flame_frames,
    })
}

/// The most characters of a holder's `via` frame a table row shows.
const VIA_CHARS: usize = 48;

/// The first `n` characters of `text`, with `…` when it had more.
fn head_of(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// Stacks with their MB and blocks; the innermost frame shown, the whole stack on hover.
pub(super) fn stack_table(
    ui: &mut egui::Ui,
    t: &Tr,
    id: &str,
    stacks: &[StackTotal],
    click_hint: Option<&str>,
) -> Option<usize> {
    if stacks.is_empty() {
        // An empty table says why it is empty.
        ui.weak(t.snapshot_nothing_held);
        return None;
    }
    let mut clicked = None;
    egui::ScrollArea::vertical()
        .id_salt(id)
        .auto_shrink([false, false])
        .show(ui, |ui| {
            egui::Grid::new(id).striped(true).show(ui, |ui| {
                ui.label(t.snapshot_headers[0]);
                ui.label(t.snapshot_headers[1]);
                ui.label(t.snapshot_headers[2]);
                ui.end_row();
                for (i, s) in stacks.iter().enumerate() {
                    ui.label(grouped(bytes_to_mib(s.bytes), 2));
                    ui.label(grouped(s.blocks as f64, 0));
                    let mut top = s
                        .frame
                        .as_ref()
                        .map_or_else(|| t.no_stack.to_string(), Frame::short_text);
                    if let Some(via) = &s.via {
                        // Two rows named by one line: the frame that tells them apart, its
                        // start only when long (a C++ name), so that the row stays in its
                        // column; the whole stack is on hover.
                        top = format!("{top} · {}", head_of(&via.short_text(), VIA_CHARS));
                    }
                    // A clickable row reads as a link; its stack and what a click does on hover.
                    let r = match click_hint {
                        Some(_) => ui.link(top),
                        None => ui.add(egui::Label::new(top).selectable(false)),
                    };
                    let r = r.on_hover_ui(|ui| {
                        stack_lines(ui, &s.frames);
                        if let Some(hint) = click_hint {
                            ui.label(hint);
                        }
                    });
                    if click_hint.is_some() && r.clicked() {
                        clicked = Some(i);
                    }
                    ui.end_row();
                }
            });
        });
    clicked
}

/// The event that allocated the last never-freed block with `row`'s stack.
pub(super) fn last_allocation_of(
    snap: &AllocatorSnapshot,
    parts: &DeviceParts,
    row: &StackTotal,
) -> Option<usize> {
    let trace = usize::try_from(parts.device)
        .ok()
        .and_then(|d| snap.traces.get(d))?;
    parts.leak_events.iter().rev().copied().find(|&k| {
        trace
            .get(k)
            .is_some_and(|e| snap.frames(e.stack) == row.frames.as_slice())
    })
}

/// The colour of a block kind in the segment map.
/// The memUsageInfo rows of a device (largest first), under their file's column names, with a
/// Copy of them as TSV.
fn module_table(ui: &mut egui::Ui, t: &Tr, device: i64, modules: &[&ModuleUsage]) {
    const HEADERS: [&str; 3] = ["moduleName", "curMemSize(MB)", "memPeakSize(MB)"];
    egui::CollapsingHeader::new((t.oom_modules)(device))
        .id_salt("oom_modules")
        .default_open(true)
        .show(ui, |ui| {
            if ui.button(t.copy).clicked() {
                let mut tsv = HEADERS.join("\t");
                tsv.push('\n');
                for m in modules {
                    tsv.push_str(&format!("{}\t{}\t{}\n", m.module, m.current_mb, m.peak_mb));
                }
                ui.ctx().copy_text(tsv);
            }
            egui::Grid::new("oom_module_grid")
                .striped(true)
                .show(ui, |ui| {
                    for h in HEADERS {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for m in modules {
                        ui.label(&m.module);
                        for v in [m.current_mb, m.peak_mb] {
                            ui.with_layout(
                                egui::Layout::right_to_left(egui::Align::Center),
                                |ui| {
                                    ui.label(grouped(v, 2));
                                },
                            );
                        }
                        ui.end_row();
                    }
                });
        });
}

/// msMemScope's `OOM_DETAIL` rows of one dump: each trigger (what failed) and the blocks it
/// listed as held (largest, latest) with their pool, size, address and innermost Python frame;
/// Copy gives them as TSV.
fn memscope_table(ui: &mut egui::Ui, t: &Tr, file: &str, rows: &[OomDetail]) {
    let mb = |b: Option<i64>| b.map_or(String::new(), |b| grouped(bytes_to_mib(b), 2));
    egui::CollapsingHeader::new((t.oom_memscope)(file))
        .id_salt(("oom_memscope", file))
        .default_open(true)
        .show(ui, |ui| {
            if ui.button(t.copy).clicked() {
                let mut tsv = t.oom_memscope_headers.join("\t");
                tsv.push('\n');
                for r in rows.iter().filter(|r| r.kind != OomDetailKind::Trigger) {
                    tsv.push_str(&format!(
                        "{}\t{}\t{}\t0x{:x}\t{}\n",
                        if r.kind == OomDetailKind::Top {
                            "top"
                        } else {
                            "recent"
                        },
                        r.pool.as_deref().unwrap_or(""),
                        r.size_bytes
                            .map_or(String::new(), |b| format!("{:.2}", bytes_to_mib(b))),
                        r.ptr.unwrap_or(0),
                        r.python_stack.join(" <- ")
                    ));
                }
                ui.ctx().copy_text(tsv);
            }
            for r in rows.iter().filter(|r| r.kind == OomDetailKind::Trigger) {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    (t.oom_memscope_trigger)(
                        r.func.as_deref().unwrap_or("?"),
                        &mb(r.request_bytes),
                        r.ret,
                    ),
                );
            }
            egui::Grid::new(("oom_memscope_grid", file))
                .striped(true)
                .show(ui, |ui| {
                    for h in t.oom_memscope_headers {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for r in rows.iter().filter(|r| r.kind != OomDetailKind::Trigger) {
                        ui.label(if r.kind == OomDetailKind::Top {
                            t.oom_memscope_top
                        } else {
                            t.oom_memscope_recent
                        });
                        ui.label(r.pool.as_deref().unwrap_or(""));
                        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                            ui.label(mb(r.size_bytes));
                        });
                        ui.monospace(format!("0x{:x}", r.ptr.unwrap_or(0)));
                        let frame = r.python_stack.first().map_or("", String::as_str);
                        ui.label(frame).on_hover_text(r.python_stack.join("\n"));
                        ui.end_row();
                    }
                });
        });
}

/// Memory not handed out (`free`), before its causes.
pub fn frag_heading(lang: Lang, free: &str) -> String {
    match lang {
        Lang::En => format!("Not handed out: {free}, by cause:"),
        Lang::Zh => format!("已保留未分配：{free}，按原因："),
    }
}
/// The largest request that fits (`size`).
pub fn frag_largest(lang: Lang, size: &str) -> String {
    match lang {
        Lang::En => format!("The largest request that fits without a new segment: {size}"),
        Lang::Zh => format!("无需新内存段即可满足的最大申请：{size}"),
    }
}
/// The fix of the largest cause.
pub fn frag_fix(lang: Lang, fix: &str) -> String {
    match lang {
        Lang::En => format!("Closes the largest cause: {fix}"),
        Lang::Zh => format!("可消除最大原因：{fix}"),
    }
}

/// The fragmentation diagnosis under the segment map: what is not handed out by cause, the
/// largest request that fits, and the fix of the largest cause (nothing when all is handed
/// out).
fn fragmentation_lines(ui: &mut egui::Ui, t: &Tr, f: &Fragmentation, not_why: bool) {
    if f.remedy.is_none() {
        return;
    }
    let mb = |b: i64| format!("{} MB", grouped(bytes_to_mib(b), 2));
    let free = f.reserved_bytes.saturating_sub(f.allocated_bytes);
    ui.label(frag_heading(t.lang, &mb(free)));
    egui::Grid::new("snapshot_fragmentation")
        .num_columns(2)
        .show(ui, |ui| {
            for &(cause, b) in f.causes.iter().filter(|c| c.1 > 0) {
                ui.label(mb(b));
                ui.label(cause.name(t.lang));
                ui.end_row();
            }
        });
    ui.label(frag_largest(t.lang, &mb(f.largest_possible_bytes)));
    let line = frag_fix(t.lang, &f.fix(t.lang));
    if not_why {
        ui.label(format!("{line}{}", FRAG_NOT_WHY.get(t)));
    } else {
        ui.strong(line);
    }
}

/// Said after the largest cause's fix at an OOM that was not fragmentation.
pub const FRAG_NOT_WHY: Text = Text {
    en: " (not why it ran out: see the advice above)",
    zh: "（并非内存不足的原因：见上方建议）",
};

/// What to do about an OOM, in the UI's language, following its verdict
/// ([`crate::snapshot::oom::OomAdvice`]), with how to hold less where that is the advice;
/// `None` when there is nothing to advise.
pub fn oom_advice(t: &Tr, advice: crate::snapshot::oom::OomAdvice, conf: &str) -> Option<String> {
    let size = |b: i64| format!("{} MB", grouped(bytes_to_mib(b), 2));
    let line = advice.line(t.lang, conf, &size);
    if line.is_empty() {
        return None;
    }
    let mut chars = line.chars();
    let line: String = chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    if !advice.holds_less() {
        return Some(line);
    }
    let tab = match t.lang {
        Lang::En => "the What if tab".to_string(),
        Lang::Zh => format!("“{}”页", super::whatif::TITLE.zh),
    };
    let how = crate::snapshot::oom::levers(t.lang, &tab);
    Some(match t.lang {
        Lang::En => format!("{line}. How: {how}."),
        Lang::Zh => format!("{line}。办法：{how}。"),
    })
}

fn kind_color(kind: BlockKind) -> egui::Color32 {
    match kind {
        BlockKind::Allocated => crate::ui::palette::BLOCK_ALLOCATED,
        BlockKind::PendingFree => crate::ui::palette::BLOCK_PENDING_FREE,
        BlockKind::Free => crate::ui::palette::BLOCK_FREE,
    }
}

/// The segments at the picked event (or the end), folded under a heading with the fragmentation figures: one bar
/// per segment, its blocks in address order coloured by kind, the figures on hover.
fn segment_map(ui: &mut egui::Ui, t: &Tr, when: &str, state: &AllocatorState) {
    let mb = |b: i64| grouped(bytes_to_mib(b), 2);
    let heading = (t.snapshot_segments)(
        when,
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

/// A `.pickle`/`.pkl` file opens as a snapshot document ([`crate::ui::documents::OPENERS`]).
pub fn open_document(
    path: &std::path::Path,
    jobs: &mut Jobs,
) -> Option<Box<dyn crate::ui::document::Document>> {
    let is_snapshot = path.is_file() && crate::ingest::is_snapshot_path(path);
    is_snapshot.then(|| Box::new(SnapshotView::open(jobs, path.to_path_buf())) as _)
}

impl crate::ui::document::Document for SnapshotView {
    fn kind(&self) -> &'static str {
        "snapshot"
    }

    fn path(&self) -> Option<&std::path::Path> {
        Some(&self.path)
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut crate::ui::document::DocCx<'_>) {
        let (_, central) = crate::ui::document::panel_frames(ui.style());
        egui::CentralPanel::default().frame(central).show(ui, |ui| {
            SnapshotView::ui(self, ui, cx.t, cx.jobs, cx.out);
            // A snapshot that cannot be read is not a dead end.
            if self.error.is_some() {
                ui.add_space(12.0);
                crate::ui::top_bar::open_controls(ui, cx.t, cx.path_text, cx.out);
            }
        });
    }

    /// Compare with… another snapshot.
    fn handle(&mut self, cmd: &Command, cx: &mut crate::ui::document::DocCx<'_>) -> bool {
        match cmd {
            Command::CompareWith(source) => self.compare_with(cx.jobs, source.path.clone()),
            Command::Picked(id, path) if *id == snapshot_join::PICK.id => {
                self.join_with(cx.jobs, path.clone());
            }
            _ => return false,
        }
        true
    }

    fn compared_with(&self) -> Option<PickKind> {
        Some(PickKind::File(&snapshot_compare::PICK))
    }

    fn chart_extent(&self, _: &crate::ui::state::ViewState) -> Option<(f64, f64)> {
        SnapshotView::chart_extent(self)
    }

    fn set_chart_range(&mut self, range: (f64, f64), _: &mut Vec<Command>) {
        self.chart.range = Some(range);
    }
}

/// A join kept while another is asked for ([`SnapshotView`]'s `previous_join`).
struct PreviousJoin {
    joining: snapshot_join::ProfileJoining,
    picked: Option<PathBuf>,
    sought: Option<String>,
    view: HoldersId,
}

#[cfg(test)]
mod tests {
    use super::head_of;

    #[test]
    fn a_long_name_keeps_its_start_and_says_it_was_cut() {
        assert_eq!(
            head_of("adam.py(178): _init_group", 48),
            "adam.py(178): _init_group"
        );
        assert_eq!(head_of("abcdef", 3), "abc…");
        // Characters, not bytes: a Chinese name is not cut inside a character.
        assert_eq!(head_of("模块名称很长", 2), "模块…");
    }
}
