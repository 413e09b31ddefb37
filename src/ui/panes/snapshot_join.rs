//! The snapshot beside a profile of the same run (issue 45, part 4): when one PyTorch trace
//! sits in the snapshot's folder, or the user picks one with **Join with a profile…**
//! ([`PICK`]), the view reads it in a job and adds **By operator** beside
//! Table, Flame graph and By phase: the live blocks at the picked event (or the end) by the
//! profile's operator and step, joined by time ([`crate::snapshot::join`], what
//! `memsight snapshot --profile` prints).

use std::path::PathBuf;
use std::sync::Arc;

use crate::ingest::pytorch::trace::DeviceRankError;
use crate::model::{RankData, bytes_to_mib};
use crate::snapshot::AllocatorSnapshot;
use crate::snapshot::join::{EventOp, JoinError, ProfileJoin, join_profile};
use crate::ui::command::{Command, FilePick};
use crate::ui::format::grouped;
use crate::ui::i18n::{Lang, Text, Tr};
use crate::ui::jobs::{Job, JobKey, JobKind, Jobs, Place, Poll};
use crate::ui::panes::snapshot_holders::{HoldersCx, HoldersId, HoldersTab};

/// The job that reads the profile beside the snapshot.
pub const PROFILE_JOB: JobKind = JobKind::new(
    "snapshot_profile",
    "the profile beside the snapshot",
    "快照旁的 Profile",
);

/// The button that asks for a profile of the same run to join the snapshot with.
pub const JOIN_WITH: Text = Text {
    en: "Join with a profile…",
    zh: "关联性能数据…",
};

/// What Join with a profile… does.
pub const JOIN_HINT: Text = Text {
    en: "Lists the live blocks by the operator and step of a profile of the same run (a PyTorch \
         trace), joined by time",
    zh: "按时间与同一次运行的性能数据（PyTorch trace）关联，按其算子和步列出存活内存块",
};

/// The file Join with a profile… asks for: a PyTorch trace (`*.pt.trace.json[.gz]`, or any
/// Chrome trace) of the run the snapshot was taken in.
pub static PICK: FilePick = FilePick {
    id: "snapshot_profile",
    title: JOIN_WITH,
    filter: ("PyTorch trace", &["json", "gz"]),
    lists: |p| {
        p.file_name().is_some_and(|n| {
            let n = n.to_string_lossy().to_ascii_lowercase();
            n.ends_with(".json") || n.ends_with(".json.gz")
        })
    },
    then: |path| Command::Picked(PICK.id, path),
};

/// The job that joins the snapshot with the profile at one moment.
pub const JOIN_JOB: JobKind = JobKind::new(
    "snapshot_profile_join",
    "the join of the snapshot with its profile",
    "快照与 Profile 的关联",
);

/// The profile has several ranks, none of the snapshot's device (`{d}`).
pub const NO_RANK_OF: Text = Text {
    en: "the profile has no rank of {d}",
    zh: "性能数据中没有 {d} 的 rank",
};
/// A job that ended without saying how.
const NO_RESULT: Text = Text {
    en: "the job ended without a result",
    zh: "任务结束但没有结果",
};

/// What a snapshot and one other file dropped together mean: the snapshot opened, then joined
/// with the other (a profile of its run). `None` for anything else.
pub fn opened_together(paths: &[PathBuf]) -> Option<[Command; 2]> {
    use crate::ingest::is_snapshot_path;
    let [a, b] = paths else { return None };
    let (snap, profile) = match (is_snapshot_path(a), is_snapshot_path(b)) {
        (true, false) => (a, b),
        (false, true) => (b, a),
        _ => return None,
    };
    Some([
        Command::Open(snap.clone()),
        Command::Picked(PICK.id, profile.clone()),
    ])
}

/// A band's operator in its tooltip, when the snapshot is joined with a profile (`{op}`,
/// `{step}`).
pub const BAND_OP: Text = Text {
    en: "From the profile: {op}, step {step}",
    zh: "来自性能数据：{op}，第 {step} 步",
};
/// The same, outside every step (`{op}`).
pub const BAND_OP_NO_STEP: Text = Text {
    en: "From the profile: {op}",
    zh: "来自性能数据：{op}",
};

/// A band's line from the profile: its operator and step, when its allocation was matched.
pub fn band_op_text(t: &Tr, ops: &[EventOp], allocated_at: Option<usize>) -> Option<String> {
    let (op, step) = ops.get(allocated_at?)?.as_ref()?;
    let op = if op.is_empty() {
        NO_OP.get(t)
    } else {
        op.as_ref()
    };
    Some(match step {
        Some(s) => BAND_OP
            .get(t)
            .replace("{op}", op)
            .replace("{step}", &s.to_string()),
        None => BAND_OP_NO_STEP.get(t).replace("{op}", op),
    })
}

/// The holders view's tab.
pub const VIEW: Text = Text {
    en: "By operator",
    zh: "按算子",
};
/// Reading the profile (`{p}`).
pub const READING: Text = Text {
    en: "Reading the profile {p}…",
    zh: "正在读取性能数据 {p}…",
};
/// Joining the snapshot with the profile read (`{p}`).
pub const JOINING: Text = Text {
    en: "Joining the snapshot with {p} by time…",
    zh: "正在按时间关联快照与 {p}…",
};
/// What was joined (`{p}`, `{m}` matched of `{n}` allocations).
pub const JOINED: Text = Text {
    en: "Joined by time with {p}: {m} of {n} allocations matched. Live blocks by the profile's \
         operator and step:",
    zh: "已按时间与 {p} 关联：{n} 次分配中匹配 {m} 次。存活内存块按性能数据的算子和步：",
};
/// Why not (`{p}`, `{why}`).
pub const FAILED: Text = Text {
    en: "Not joined with {p}: {why}",
    zh: "未与 {p} 关联：{why}",
};
/// The table's headers.
pub const HEADERS: [Text; 4] = [
    Text { en: "MB", zh: "MB" },
    Text {
        en: "Blocks",
        zh: "块数",
    },
    Text {
        en: "Operator (from the profile)",
        zh: "算子（来自性能数据）",
    },
    Text {
        en: "Step",
        zh: "步",
    },
];
/// A group of blocks not matched to the profile.
pub const NOT_MATCHED: Text = Text {
    en: "(not in the profile)",
    zh: "（不在性能数据中）",
};
/// Matched, but the profile names no operator.
pub const NO_OP: Text = Text {
    en: "(no operator)",
    zh: "（无算子）",
};

/// Why a join failed, in `t`'s language.
pub fn why(t: &Tr, e: &JoinError) -> String {
    if t.lang == Lang::En {
        return e.to_string();
    }
    match e {
        JoinError::NoTimes => {
            "快照的事件没有时间（time_us），无法按时间与 Profile 关联；torch_npu 快照不记录时间"
                .into()
        }
        JoinError::NoClock => {
            "Profile 没有记录其时钟起点（PyTorch trace 的 baseTimeNanoseconds），无法与快照对齐"
                .into()
        }
        JoinError::NoOverlap { gap_ns } => {
            let secs = format!("{:.2}", gap_ns.unsigned_abs() as f64 / 1e9);
            let gap = match gap_ns.cmp(&0) {
                std::cmp::Ordering::Less => {
                    format!("快照最后一个事件早于 Profile 第一次分配 {secs} 秒")
                }
                std::cmp::Ordering::Greater => {
                    format!("快照第一个事件晚于 Profile 最后一次分配 {secs} 秒")
                }
                std::cmp::Ordering::Equal => "性能数据中没有分配".into(),
            };
            format!("快照与 Profile 在时间上不重叠（{gap}）：不是同一次运行，或不是同一段")
        }
    }
}

/// The By operator holders view's id.
pub const OPERATORS: HoldersId = "operators";

/// The By operator holders view ([`HoldersTab`]): offered once a profile of the run is joined
/// with the snapshot (beside it, picked, dropped with it or given with `--profile`).
pub struct OperatorsTab;

impl HoldersTab for OperatorsTab {
    fn id(&self) -> HoldersId {
        OPERATORS
    }

    fn title(&self, t: &Tr) -> &'static str {
        VIEW.get(t)
    }

    fn offered(&self, cx: &HoldersCx<'_>) -> bool {
        cx.profile.is_some()
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut HoldersCx<'_>) -> Option<usize> {
        let moment = (cx.shown.device, cx.shown.event);
        if let Some(p) = cx.profile.as_deref_mut() {
            p.ui(ui, (cx.t, cx.jobs), cx.snap, moment);
        }
        None
    }
}

/// A device and an event of it (None: the end state).
type Moment = (i64, Option<usize>);

/// A profile read for joining: its rank of the snapshot's device and its clock's start.
type Loaded = (RankData, Option<i64>);

/// A join in the making, or made.
type Joined = Result<ProfileJoin, JoinError>;

/// Why the profile could not be read.
#[derive(Clone)]
enum ReadProblem {
    /// Ingest said why (said in the UI's language).
    Rank(Arc<DeviceRankError>),
    /// Its job or the join's failed (a panic's words), or ended without a result (`None`).
    Job(JobKind, Option<String>),
}

impl ReadProblem {
    /// Why, in `t`'s language.
    fn text(&self, t: &Tr) -> String {
        match self {
            ReadProblem::Rank(e) => match &**e {
                DeviceRankError::Discover(e) => crate::ui::loading::discover_error(t, e),
                DeviceRankError::NoRankOf(device) => NO_RANK_OF.get(t).replace("{d}", device),
                DeviceRankError::Load(e) => (t.load_error)(e),
            },
            ReadProblem::Job(kind, why) => {
                let why = why.as_deref().unwrap_or(NO_RESULT.get(t));
                (t.job_failed)(JobKey::new(*kind).task_name(t), why)
            }
        }
    }
}

/// Why there is no join to show.
enum Failure {
    /// The profile could not be read.
    Read(ReadProblem),
    /// It was read, but cannot be joined.
    Join(JoinError),
}

/// The profile beside the open snapshot, and its join at the moment shown.
pub struct ProfileJoining {
    /// The trace.
    pub profile: PathBuf,
    /// The device whose rank is read (`cuda:0`).
    pub device: String,
    job: Option<Job<Result<Loaded, DeviceRankError>>>,
    loaded: Option<Arc<Loaded>>,
    read_error: Option<ReadProblem>,
    /// The join being computed in a job, for the moment it is for.
    computing: Option<(Moment, Job<Joined>)>,
    /// The join at (device, event), computed when they change.
    cached: Option<(Moment, Result<Arc<ProfileJoin>, JoinError>)>,
}

impl ProfileJoining {
    /// Starts reading `profile`'s rank of `device` (`cuda:0`) in a job.
    pub fn start(jobs: &mut Jobs, profile: PathBuf, device: String) -> ProfileJoining {
        let (p, d) = (profile.clone(), device.clone());
        let job = jobs.run(JobKey::new(PROFILE_JOB), Place::Thread, move |_| {
            crate::ingest::pytorch::trace::load_device_rank(&p, &d)
        });
        ProfileJoining {
            profile,
            device,
            job: Some(job),
            loaded: None,
            read_error: None,
            computing: None,
            cached: None,
        }
    }

    /// Takes the profile when read; true while still reading.
    fn poll(&mut self) -> bool {
        let Some(job) = &self.job else {
            return false;
        };
        match job.poll() {
            Poll::Pending => return true,
            Poll::Msg(Ok(l)) => self.loaded = Some(Arc::new(l)),
            Poll::Msg(Err(e)) => self.read_error = Some(ReadProblem::Rank(Arc::new(e))),
            Poll::Failed(e) => self.read_error = Some(ReadProblem::Job(PROFILE_JOB, Some(e))),
            Poll::Finished => {}
        }
        self.job = None;
        false
    }

    /// Keeps the join at (device, event) coming, whichever holders view is shown: the bands'
    /// tooltips name operators from it.
    pub fn refresh(
        &mut self,
        jobs: &mut Jobs,
        snap: &Arc<AllocatorSnapshot>,
        (device, event): (i64, Option<usize>),
    ) {
        let _ = self.joined(jobs, snap, device, event);
    }

    /// Why the join cannot be made, in `t`'s language (the By operator view's words), once
    /// known; `None` while it is read or joined, and once joined.
    pub fn failed(&self, t: &Tr) -> Option<String> {
        let why = match (&self.read_error, &self.cached) {
            (Some(e), _) => e.text(t),
            (None, Some((_, Err(e)))) => why(t, e),
            _ => return None,
        };
        let name = self.profile.file_name().map_or_else(
            || self.profile.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        Some(FAILED.get(t).replace("{p}", &name).replace("{why}", &why))
    }

    /// True once a join was made.
    pub fn joined_once(&self) -> bool {
        matches!(&self.cached, Some((_, Ok(_))))
    }

    /// What the profile says of each event of the trace (by index), from the last join made;
    /// empty before one was made.
    pub fn event_ops(&self) -> &[EventOp] {
        match &self.cached {
            Some((_, Ok(j))) => &j.event_ops,
            _ => &[],
        }
    }

    /// Waits for the profile (tests, headless runs).
    pub fn wait(&mut self) {
        if let Some(job) = self.job.take() {
            match job.wait() {
                Some(Ok(l)) => self.loaded = Some(Arc::new(l)),
                Some(Err(e)) => self.read_error = Some(ReadProblem::Rank(Arc::new(e))),
                None => {
                    self.read_error = Some(ReadProblem::Job(PROFILE_JOB, None));
                }
            }
        }
    }

    /// The join at `device` / `event`: None while the profile is read or the join computed
    /// (in a job: a long trace takes a while, and the bands stay responsive meanwhile).
    fn joined(
        &mut self,
        jobs: &mut Jobs,
        snap: &Arc<AllocatorSnapshot>,
        device: i64,
        event: Option<usize>,
    ) -> Option<Result<Arc<ProfileJoin>, Failure>> {
        if self.poll() {
            return None;
        }
        if let Some(e) = &self.read_error {
            return Some(Err(Failure::Read(e.clone())));
        }
        let loaded = Arc::clone(self.loaded.as_ref()?);
        let key = (device, event);
        if self.cached.as_ref().is_none_or(|(k, _)| *k != key) {
            if self.computing.as_ref().is_none_or(|(k, _)| *k != key) {
                let snap = Arc::clone(snap);
                let job = jobs.run(JobKey::scoped(JOIN_JOB, &key), Place::Thread, move |_| {
                    join_profile(&snap, device, event, &loaded.0, loaded.1)
                });
                self.computing = Some((key, job));
            }
            let (_, job) = self.computing.as_ref()?;
            let joined = match job.poll() {
                Poll::Pending => return None,
                Poll::Msg(j) => j.map(Arc::new),
                Poll::Failed(e) => {
                    self.computing = None;
                    return Some(Err(Failure::Read(ReadProblem::Job(JOIN_JOB, Some(e)))));
                }
                Poll::Finished => {
                    self.computing = None;
                    return None;
                }
            };
            self.computing = None;
            self.cached = Some((key, joined));
        }
        let (_, j) = self.cached.as_ref()?;
        Some(j.clone().map_err(Failure::Join))
    }

    /// The By operator view.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        (t, jobs): (&Tr, &mut Jobs),
        snap: &Arc<AllocatorSnapshot>,
        (device, event): (i64, Option<usize>),
    ) {
        let name = self.profile.file_name().map_or_else(
            || self.profile.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let j = match self.joined(jobs, snap, device, event) {
            None => {
                let what = if self.loaded.is_some() {
                    JOINING
                } else {
                    READING
                };
                ui.horizontal(|ui| {
                    crate::ui::spinner::spinner(ui);
                    ui.label(what.get(t).replace("{p}", &name));
                });
                ui.ctx().request_repaint_after(crate::ui::spinner::FRAME);
                return;
            }
            Some(Err(f)) => {
                let why = match f {
                    Failure::Read(e) => e.text(t),
                    Failure::Join(e) => why(t, &e),
                };
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    FAILED.get(t).replace("{p}", &name).replace("{why}", &why),
                );
                return;
            }
            Some(Ok(j)) => j,
        };
        ui.label(
            JOINED
                .get(t)
                .replace("{p}", &name)
                .replace("{m}", &j.matched.to_string())
                .replace("{n}", &j.alloc_events.to_string()),
        )
        .on_hover_text(self.profile.display().to_string());
        if j.live.is_empty() {
            ui.weak(t.snapshot_nothing_held);
            return;
        }
        egui::ScrollArea::vertical()
            .id_salt("snapshot_by_operator")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                egui::Grid::new("snapshot_by_operator")
                    .striped(true)
                    .show(ui, |ui| {
                        for h in HEADERS {
                            ui.label(h.get(t));
                        }
                        ui.end_row();
                        for g in &j.live {
                            ui.label(grouped(bytes_to_mib(g.bytes), 2));
                            ui.label(grouped(g.blocks as f64, 0));
                            ui.label(match &g.op {
                                None => NOT_MATCHED.get(t).to_string(),
                                Some(o) if o.is_empty() => NO_OP.get(t).to_string(),
                                Some(o) => o.clone(),
                            });
                            ui.label(g.step.map_or_else(String::new, |s| s.to_string()));
                            ui.end_row();
                        }
                    });
            });
    }
}
