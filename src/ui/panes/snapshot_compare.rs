//! The open allocator snapshot compared with another (Compare with snapshot…, or
//! `memsight A.pickle --compare B.pickle`): where each side is read (its peak, its end or an
//! event), reserved, allocated and what is not handed out by cause with their Δ, the fix of
//! each side's largest cause, and the stacks (by the user's frame), block sizes and pools that
//! grew or shrank, copyable as TSV. The figures are [`crate::snapshot::compare`]'s, computed in
//! a job.

use std::path::PathBuf;
use std::sync::Arc;

use crate::model::{Lang, bytes_to_mib};
use crate::snapshot::compare::{Change, Moment, SnapshotComparison, compare_snapshots};
use crate::snapshot::summary::SummaryError;
use crate::snapshot::{AllocatorSnapshot, Frame, SnapshotError, SnapshotProblem};
use crate::ui::command::Command;
use crate::ui::format::grouped;
use crate::ui::i18n::{Text, Tr};
use crate::ui::jobs::{Job, JobKey, JobKind, Jobs, Place, Poll};

use super::snapshot_bands::size_text;

/// The job that reads the other snapshot and compares the two.
pub const SNAPSHOT_COMPARE_JOB: JobKind =
    JobKind::new("snapshot_compare", "the snapshot comparison", "快照对比");

/// The button that starts a comparison.
pub const COMPARE_WITH: Text = Text {
    en: "Compare with snapshot…",
    zh: "与另一快照对比…",
};
/// The file Compare with snapshot… asks for: an allocator snapshot, compared with the open one.
pub static PICK: crate::ui::command::FilePick = crate::ui::command::FilePick {
    id: "snapshot_compare",
    title: COMPARE_WITH,
    filter: ("allocator snapshot", &["pickle", "pkl"]),
    lists: crate::ingest::is_snapshot_path,
    then: |path| Command::CompareWith(crate::ui::baseline::BaselineSource { path, rank: 0 }),
};
/// The button that ends it.
pub const STOP: Text = Text {
    en: "Stop comparing",
    zh: "停止对比",
};
/// The two views of the document while comparing: the snapshot, the comparison.
pub const VIEWS: [Text; 2] = [
    Text {
        en: "Snapshot",
        zh: "快照",
    },
    Text {
        en: "Comparison",
        zh: "对比",
    },
];
/// What is compared (`{a}`, `{b}`: the files).
pub const HEADING: Text = Text {
    en: "A: {a}    B: {b}",
    zh: "A：{a}    B：{b}",
};
/// The sides are different devices or accelerators (`{a}`, `{b}`: `CUDA:0`, `NPU:3`).
pub const DIFFERENT_DEVICES: Text = Text {
    en: "A is {a} and B is {b}: different devices. Their allocators, limits and free memory differ, so compare what each holds, not why.",
    zh: "A 是 {a}，B 是 {b}：设备不同。两者的分配器、上限和空闲内存各不相同，只宜对比各自占用了什么，不宜对比原因。",
};
/// Reading B (`{b}`).
pub const READING: Text = Text {
    en: "Reading {b} and comparing…",
    zh: "正在读取 {b} 并对比…",
};
/// B could not be read or compared (`{why}`).
pub const FAILED: Text = Text {
    en: "Cannot compare: {why}",
    zh: "无法对比：{why}",
};
/// Where a side is read: its label.
pub const READ_AT: Text = Text {
    en: "{side} at",
    zh: "{side} 取于",
};
/// The moments offered.
pub const MOMENTS: [Text; 3] = [
    Text {
        en: "its allocated peak",
        zh: "已分配峰值",
    },
    Text {
        en: "its end",
        zh: "结束状态",
    },
    Text {
        en: "event",
        zh: "事件",
    },
];
/// The event a peak resolved to (`{k}`).
pub const PEAK_EVENT: Text = Text {
    en: "(event {k})",
    zh: "（事件 {k}）",
};
/// The figure rows.
pub const FIGURES: [Text; 4] = [
    Text {
        en: "Reserved",
        zh: "已保留",
    },
    Text {
        en: "Allocated",
        zh: "已分配",
    },
    Text {
        en: "Not handed out",
        zh: "已保留未分配",
    },
    Text {
        en: "Largest request that fits",
        zh: "可满足的最大申请",
    },
];
/// The figure table's header after its first column: A, B, Δ (MB).
pub const COLUMNS: [Text; 3] = [
    Text {
        en: "A (MB)",
        zh: "A (MB)",
    },
    Text {
        en: "B (MB)",
        zh: "B (MB)",
    },
    Text {
        en: "Δ (MB)",
        zh: "差值 (MB)",
    },
];
/// A side's fix: `side` (A or B) closes its largest cause with `fix`.
pub fn side_fix(lang: Lang, side: &str, fix: &str) -> String {
    match lang {
        Lang::En => format!("{side}: closes its largest cause: {fix}"),
        Lang::Zh => format!("{side}：可消除其最大原因：{fix}"),
    }
}
/// The group tables' titles (`{n}`: how many changed).
pub const GROUPS: [Text; 3] = [
    Text {
        en: "Stacks that grew or shrank, by the user's frame ({n})",
        zh: "增减的调用栈，按用户代码帧（{n}）",
    },
    Text {
        en: "Block sizes that grew or shrank ({n})",
        zh: "增减的块大小（{n}）",
    },
    Text {
        en: "Memory pools ({n}; 0,0 is the allocator's own)",
        zh: "内存池（{n}；0,0 为分配器自身的池）",
    },
];
/// The group tables' key columns: frame, size, pool.
pub const KEYS: [Text; 3] = [
    Text {
        en: "Frame",
        zh: "代码帧",
    },
    Text {
        en: "Size",
        zh: "块大小",
    },
    Text {
        en: "Pool",
        zh: "内存池",
    },
];
/// The group tables' other columns.
pub const GROUP_COLUMNS: [Text; 5] = [
    Text {
        en: "A (MB)",
        zh: "A (MB)",
    },
    Text {
        en: "B (MB)",
        zh: "B (MB)",
    },
    Text {
        en: "Δ (MB)",
        zh: "差值 (MB)",
    },
    Text {
        en: "A blocks",
        zh: "A 块数",
    },
    Text {
        en: "B blocks",
        zh: "B 块数",
    },
];
/// The pools table's other columns.
pub const POOL_COLUMNS: [Text; 5] = [
    Text {
        en: "A reserved (MB)",
        zh: "A 已保留 (MB)",
    },
    Text {
        en: "B reserved (MB)",
        zh: "B 已保留 (MB)",
    },
    Text {
        en: "Δ (MB)",
        zh: "差值 (MB)",
    },
    Text {
        en: "A allocated (MB)",
        zh: "A 已分配 (MB)",
    },
    Text {
        en: "B allocated (MB)",
        zh: "B 已分配 (MB)",
    },
];
/// A block without a stack.
pub const NO_STACK: Text = Text {
    en: "(no stack)",
    zh: "（无调用栈）",
};
/// Nothing changed in a table.
pub const NONE_CHANGED: Text = Text {
    en: "none changed",
    zh: "无变化",
};
/// Copies the tables.
pub const COPY: Text = Text {
    en: "Copy tables (TSV)",
    zh: "复制表格（TSV）",
};

/// Rows shown per group table (the copy has them all).
const SHOWN_ROWS: usize = 50;

/// Which device and moments a comparison is for.
type Key = (i64, Moment, Moment);

/// The other snapshot and the comparison with it.
pub struct SnapshotComparing {
    /// B's file.
    path: PathBuf,
    read: Option<Job<Result<AllocatorSnapshot, SnapshotError>>>,
    /// B, once read.
    other: Option<Arc<AllocatorSnapshot>>,
    /// Why B could not be read.
    error: Option<Problem>,
    /// Why the sides could not be compared at the moments asked (`Key`: those moments).
    failed: Option<(Key, Problem)>,
    /// Where A is read.
    at_a: Moment,
    /// Where B is read.
    at_b: Moment,
    /// The comparison shown, and what it is for.
    shown: Option<(Key, Arc<SnapshotComparison>)>,
    computing: Option<(Key, Job<Result<SnapshotComparison, SummaryError>>)>,
}

impl SnapshotComparing {
    /// B's file.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Asks for B at `at` (as the B moment's picker does).
    pub fn set_at_b(&mut self, at: Moment) {
        self.at_b = at;
    }
}

/// Why there is no comparison.
#[derive(Debug)]
pub enum Problem {
    /// B could not be read (or its reader failed).
    Read(SnapshotProblem),
    /// A side does not hold what was asked: no such device or event.
    Compare(SummaryError),
    /// The comparing job failed unexpectedly: its message.
    Task(String),
}

/// No such device on a side (`{d}`).
pub const NO_DEVICE: Text = Text {
    en: "no device {d} in the snapshot",
    zh: "快照中没有设备 {d}",
};
/// No such event (`{k}`, `{d}`, `{n}`: the device's events).
pub const NO_EVENT: Text = Text {
    en: "event {k} is past the last event of device {d} ({n} events)",
    zh: "事件 {k} 超出设备 {d} 的最后一个事件（共 {n} 个事件）",
};

impl Problem {
    /// The problem in the UI's language.
    pub fn text(&self, t: &Tr) -> String {
        match self {
            Problem::Read(p) => (t.snapshot_error)(p),
            Problem::Compare(SummaryError::NoDevice(d)) => {
                NO_DEVICE.get(t).replace("{d}", &d.to_string())
            }
            Problem::Compare(SummaryError::NoEvent { device, event, len }) => NO_EVENT
                .get(t)
                .replace("{k}", &event.to_string())
                .replace("{d}", &device.to_string())
                .replace("{n}", &len.to_string()),
            Problem::Task(e) => e.clone(),
        }
    }
}

impl SnapshotComparing {
    /// Starts reading `path` in a job.
    pub fn start(jobs: &mut Jobs, path: PathBuf) -> SnapshotComparing {
        let p = path.clone();
        let read = jobs.run(
            JobKey::new(SNAPSHOT_COMPARE_JOB),
            Place::Thread,
            move |_| AllocatorSnapshot::open(&p),
        );
        SnapshotComparing {
            path,
            read: Some(read),
            other: None,
            error: None,
            failed: None,
            at_a: Moment::Peak,
            at_b: Moment::Peak,
            shown: None,
            computing: None,
        }
    }

    /// Takes B when read; true while still reading.
    fn poll_read(&mut self) -> bool {
        let Some(job) = &self.read else {
            return false;
        };
        match job.poll() {
            Poll::Pending => return true,
            Poll::Msg(Ok(s)) => self.other = Some(Arc::new(s)),
            Poll::Msg(Err(e)) => self.error = Some(Problem::Read(SnapshotProblem::Read(e))),
            Poll::Failed(e) => self.error = Some(Problem::Read(SnapshotProblem::Task(e))),
            Poll::Finished => {}
        }
        self.read = None;
        false
    }

    /// The comparison for `key`, or None while it is computed (started here when needed).
    fn comparison(
        &mut self,
        jobs: &mut Jobs,
        a: &Arc<AllocatorSnapshot>,
        key: Key,
    ) -> Option<Arc<SnapshotComparison>> {
        let b = Arc::clone(self.other.as_ref()?);
        if let Some((k, job)) = &self.computing {
            let k = *k;
            match job.poll() {
                Poll::Pending if k == key => return None,
                Poll::Msg(Ok(c)) => self.shown = Some((k, Arc::new(c))),
                Poll::Msg(Err(e)) => self.failed = Some((k, Problem::Compare(e))),
                Poll::Failed(e) => self.failed = Some((k, Problem::Task(e))),
                // For other moments, or gone: a new one starts below if needed.
                Poll::Pending | Poll::Finished => {}
            }
            self.computing = None;
        }
        if let Some((k, c)) = &self.shown
            && *k == key
        {
            return Some(Arc::clone(c));
        }
        let failed = self.failed.as_ref().is_some_and(|(k, _)| *k == key);
        if !failed {
            let a = Arc::clone(a);
            let job = jobs.run(
                JobKey::new(SNAPSHOT_COMPARE_JOB),
                Place::Thread,
                move |_| compare_sides(&a, &b, key),
            );
            self.computing = Some((key, job));
        }
        None
    }

    /// The comparison last computed.
    pub fn shown(&self) -> Option<&SnapshotComparison> {
        self.shown.as_ref().map(|(_, c)| c.as_ref())
    }

    /// Draws the comparison of `a`'s `device` (A: `a_path`) with B; true when the user stops
    /// comparing.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        t: &Tr,
        jobs: &mut Jobs,
        (a, a_path, device): (&Arc<AllocatorSnapshot>, &str, i64),
    ) -> bool {
        let mut stop = false;
        ui.horizontal_wrapped(|ui| {
            ui.strong(
                HEADING
                    .get(t)
                    .replace("{a}", a_path)
                    .replace("{b}", &self.path.display().to_string()),
            );
            stop = ui.button(STOP.get(t)).clicked();
        });
        let reading = self.poll_read();
        let shown = if reading {
            None
        } else {
            self.moment_row(ui, t);
            self.comparison(jobs, a, (device, self.at_a, self.at_b))
        };
        let key = (device, self.at_a, self.at_b);
        let problem = self.error.as_ref().or(self
            .failed
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, p)| p));
        if let Some(e) = problem {
            ui.colored_label(
                ui.visuals().error_fg_color,
                FAILED.get(t).replace("{why}", &e.text(t)),
            );
            return stop;
        }
        let Some(c) = shown.or_else(|| self.shown.as_ref().map(|s| Arc::clone(&s.1))) else {
            ui.horizontal(|ui| {
                crate::ui::spinner::spinner(ui);
                ui.label(
                    READING
                        .get(t)
                        .replace("{b}", &self.path.display().to_string()),
                );
            });
            ui.ctx().request_repaint_after(crate::ui::spinner::FRAME);
            return stop;
        };
        if self.computing.is_some() {
            ui.ctx().request_repaint_after(crate::ui::spinner::FRAME);
        }
        if c.different_devices() {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                DIFFERENT_DEVICES
                    .get(t)
                    .replace("{a}", &c.devices[0])
                    .replace("{b}", &c.devices[1]),
            );
        }
        figures(ui, t, &c);
        ui.add_space(6.0);
        if ui.button(COPY.get(t)).clicked() {
            ui.ctx().copy_text(comparison_tsv(t, &c));
        }
        egui::ScrollArea::vertical()
            .id_salt("snapshot_compare_groups")
            .show(ui, |ui| {
                let stacks: Vec<Vec<String>> = c
                    .stacks
                    .iter()
                    .map(|g| group_row(g, frame_text(t, &g.key)))
                    .collect();
                let sizes: Vec<Vec<String>> = c
                    .sizes
                    .iter()
                    .map(|g| group_row(g, size_text(g.key)))
                    .collect();
                let pools = pool_rows(&c);
                for (i, rows) in [stacks, sizes, pools].iter().enumerate() {
                    let title = GROUPS[i].get(t).replace("{n}", &rows.len().to_string());
                    egui::CollapsingHeader::new(title)
                        .id_salt(("snapshot_compare_group", i))
                        .default_open(i == 0)
                        .show(ui, |ui| group_grid(ui, t, i, rows));
                }
            });
        stop
    }

    /// The row that chooses where each side is read.
    fn moment_row(&mut self, ui: &mut egui::Ui, t: &Tr) {
        let resolved = self.shown.as_ref().map(|(_, c)| (c.a.event, c.b.event));
        ui.horizontal_wrapped(|ui| {
            for (i, side) in ["A", "B"].into_iter().enumerate() {
                let at = if i == 0 {
                    &mut self.at_a
                } else {
                    &mut self.at_b
                };
                let label = ui.label(READ_AT.get(t).replace("{side}", side));
                let text = |m: Moment| match m {
                    Moment::Peak => MOMENTS[0].get(t).to_string(),
                    Moment::End => MOMENTS[1].get(t).to_string(),
                    Moment::Event(k) => format!("{} {k}", MOMENTS[2].get(t)),
                };
                egui::ComboBox::from_id_salt(("snapshot_compare_at", i))
                    .selected_text(text(*at))
                    .show_ui(ui, |ui| {
                        for m in [Moment::Peak, Moment::End] {
                            ui.selectable_value(at, m, text(m));
                        }
                        let event = match *at {
                            Moment::Event(k) => k,
                            _ => 0,
                        };
                        ui.selectable_value(at, Moment::Event(event), MOMENTS[2].get(t));
                    })
                    .response
                    .labelled_by(label.id);
                if let Moment::Event(k) = at {
                    ui.add(egui::DragValue::new(k).speed(1.0));
                } else if *at == Moment::Peak
                    && let Some(Some(k)) = resolved.map(|r| if i == 0 { r.0 } else { r.1 })
                {
                    ui.weak(PEAK_EVENT.get(t).replace("{k}", &k.to_string()));
                }
                if i == 0 {
                    ui.separator();
                }
            }
        });
    }
}

/// Compares A's `device` with B's same device when B has it (else B's own default).
fn compare_sides(
    a: &AllocatorSnapshot,
    b: &AllocatorSnapshot,
    (device, at_a, at_b): Key,
) -> Result<SnapshotComparison, SummaryError> {
    let device_b = b.devices().contains(&device).then_some(device);
    compare_snapshots((a, Some(device), at_a), (b, device_b, at_b))
}

/// A frame as the tables show it.
fn frame_text(t: &Tr, f: &Option<Frame>) -> String {
    f.as_ref()
        .map_or_else(|| NO_STACK.get(t).to_string(), Frame::text)
}

/// MB with two decimals, grouped.
fn mb(b: i64) -> String {
    grouped(bytes_to_mib(b), 2)
}

/// A signed change in MB.
fn signed_mb(b: i64) -> String {
    let s = mb(b);
    if b > 0 { format!("+{s}") } else { s }
}

/// The figures of both sides with their Δ, then each side's fix.
fn figures(ui: &mut egui::Ui, t: &Tr, c: &SnapshotComparison) {
    let (a, b) = (&c.a, &c.b);
    let mut rows: Vec<(String, i64, i64)> = vec![
        (
            FIGURES[0].get(t).into(),
            a.fragmentation.reserved_bytes,
            b.fragmentation.reserved_bytes,
        ),
        (
            FIGURES[1].get(t).into(),
            a.fragmentation.allocated_bytes,
            b.fragmentation.allocated_bytes,
        ),
        (
            FIGURES[2].get(t).into(),
            a.not_handed_out(),
            b.not_handed_out(),
        ),
    ];
    for (cause, _) in c.cause_deltas() {
        let (x, y) = (a.cause_bytes(cause), b.cause_bytes(cause));
        if x != 0 || y != 0 {
            rows.push((format!("    {}", cause.name(t.lang)), x, y));
        }
    }
    rows.push((
        FIGURES[3].get(t).into(),
        a.fragmentation.largest_possible_bytes,
        b.fragmentation.largest_possible_bytes,
    ));
    egui::Grid::new("snapshot_compare_figures")
        .num_columns(4)
        .striped(true)
        .show(ui, |ui| {
            ui.label("");
            for h in COLUMNS {
                ui.strong(h.get(t));
            }
            ui.end_row();
            for (label, x, y) in rows {
                ui.label(label);
                ui.label(mb(x));
                ui.label(mb(y));
                ui.label(signed_mb(y.saturating_sub(x)));
                ui.end_row();
            }
        });
    for (side, f) in [("A", &a.fragmentation), ("B", &b.fragmentation)] {
        if f.remedy.is_some() {
            ui.label(side_fix(t.lang, side, &f.fix(t.lang)));
        }
    }
}

/// A group's cells: key, A, B, Δ (MB), A blocks, B blocks.
fn group_row<K>(g: &Change<K>, key: String) -> Vec<String> {
    vec![
        key,
        mb(g.a_bytes),
        mb(g.b_bytes),
        signed_mb(g.delta()),
        g.a_blocks.to_string(),
        g.b_blocks.to_string(),
    ]
}

/// The pools' cells: pool, A reserved, B reserved, Δ, A allocated, B allocated (MB).
fn pool_rows(c: &SnapshotComparison) -> Vec<Vec<String>> {
    c.pools
        .iter()
        .map(|p| {
            vec![
                format!("{},{}", p.pool.0, p.pool.1),
                mb(p.a_reserved),
                mb(p.b_reserved),
                signed_mb(p.delta_reserved()),
                mb(p.a_allocated),
                mb(p.b_allocated),
            ]
        })
        .collect()
}

/// The header of group table `i` (0 stacks, 1 sizes, 2 pools).
fn group_header(t: &Tr, i: usize) -> Vec<String> {
    let mut h = vec![KEYS[i].get(t).to_string()];
    if i == 2 {
        h.extend(POOL_COLUMNS.iter().map(|c| c.get(t).to_string()));
    } else {
        h.extend(GROUP_COLUMNS.iter().map(|c| c.get(t).to_string()));
    }
    h
}

/// One group table: its header and the first rows.
fn group_grid(ui: &mut egui::Ui, t: &Tr, i: usize, rows: &[Vec<String>]) {
    if rows.is_empty() {
        ui.weak(NONE_CHANGED.get(t));
        return;
    }
    egui::Grid::new(("snapshot_compare_grid", i))
        .striped(true)
        .show(ui, |ui| {
            for h in group_header(t, i) {
                ui.strong(h);
            }
            ui.end_row();
            for row in rows.iter().take(SHOWN_ROWS) {
                for cell in row {
                    ui.label(cell);
                }
                ui.end_row();
            }
        });
    if rows.len() > SHOWN_ROWS {
        ui.weak(format!("… +{}", rows.len() - SHOWN_ROWS));
    }
}

/// Every group table as TSV, under its title (numbers without grouping, for a spreadsheet).
pub fn comparison_tsv(t: &Tr, c: &SnapshotComparison) -> String {
    let plain = |b: i64| format!("{:.2}", bytes_to_mib(b));
    let change = |key: String, a: i64, b: i64, an: u64, bn: u64| {
        vec![
            key,
            plain(a),
            plain(b),
            plain(b.saturating_sub(a)),
            an.to_string(),
            bn.to_string(),
        ]
    };
    let stacks = c
        .stacks
        .iter()
        .map(|g| {
            change(
                frame_text(t, &g.key),
                g.a_bytes,
                g.b_bytes,
                g.a_blocks,
                g.b_blocks,
            )
        })
        .collect::<Vec<_>>();
    let sizes = c
        .sizes
        .iter()
        .map(|g| {
            change(
                g.key.to_string(),
                g.a_bytes,
                g.b_bytes,
                g.a_blocks,
                g.b_blocks,
            )
        })
        .collect::<Vec<_>>();
    let pools = c
        .pools
        .iter()
        .map(|p| {
            vec![
                format!("{},{}", p.pool.0, p.pool.1),
                plain(p.a_reserved),
                plain(p.b_reserved),
                plain(p.delta_reserved()),
                plain(p.a_allocated),
                plain(p.b_allocated),
            ]
        })
        .collect::<Vec<_>>();
    let mut out = String::new();
    for (i, rows) in [stacks, sizes, pools].iter().enumerate() {
        out.push_str(&GROUPS[i].get(t).replace("{n}", &rows.len().to_string()));
        out.push('\n');
        let mut header = group_header(t, i);
        if i == 1 {
            header[0] = format!("{} (B)", header[0]);
        }
        out.push_str(&header.join("\t"));
        out.push('\n');
        for r in rows {
            out.push_str(&r.join("\t"));
            out.push('\n');
        }
        out.push('\n');
    }
    out
}
