//! The what-if pane: levers (micro-batch, checkpointed module classes, ZeRO stage and ranks,
//! optimizer offload) and the peak they would give, replayed from the rank's own blocks
//! ([`crate::analysis::whatif`], off the UI thread), with the predicted Operator Allocated
//! curve drawn over the measured one, the predicted peak by role and the replay's assumptions.
//!
//! Its texts are written here, both languages side by side ([`Text`]); its levers are its
//! [`WhatifLevers`] choice; it is registered by one line in [`super::bottom_panes`].

use std::collections::BTreeSet;
use std::sync::Arc;

use egui_plot::{Line, Plot, PlotPoints};

use super::PaneCx;
use crate::analysis::fit::{Card, CardFrom, Fit};
use crate::analysis::whatif::{Assumption, Prediction, Scenario, WhyNot, predict_on};
use crate::analysis::{RankView, ViewId};
use crate::ingest::pytorch::trace::{Recorded, recorded};
use crate::model::ns_to_ms;
use crate::ui::command::{Command, TabId};
use crate::ui::format::{MemUnit, bytes};
use crate::ui::i18n::{Text, Tr};
use crate::ui::jobs::{Job, JobKey, JobKind, Place, Poll};
use crate::ui::palette;

/// The tab's id.
pub const TAB: TabId = TabId("whatif");

/// The job that replays a scenario.
pub const WHATIF_JOB: JobKind = JobKind::new("whatif", "what-if replay", "假设场景回放");

/// The job that reads what the trace records about the card and the micro-batch.
pub const RECORDED_JOB: JobKind =
    JobKind::new("whatif_card", "card and micro-batch", "卡与微批大小");

/// The tab's title.
pub const TITLE: Text = Text {
    en: "What if",
    zh: "假设分析",
};
/// The micro-batch lever.
pub const MICRO_BATCH: Text = Text {
    en: "Micro-batch ×",
    zh: "微批大小 ×",
};
/// The checkpoint lever's heading.
pub const CHECKPOINT: Text = Text {
    en: "Checkpoint (recompute) modules:",
    zh: "激活重计算的模块：",
};
/// The checkpoint lever by name (a glob).
pub const CHECKPOINT_GLOB: Text = Text {
    en: "or by name (glob):",
    zh: "或按名称（通配符）：",
};
/// The modules a checkpoint lever matched (`{modules}`).
pub const CHECKPOINTED: Text = Text {
    en: "Checkpointed: {modules}",
    zh: "匹配并重计算：{modules}",
};
/// The ZeRO lever.
pub const ZERO: Text = Text {
    en: "ZeRO stage",
    zh: "ZeRO 阶段",
};
/// ZeRO off.
pub const ZERO_OFF: Text = Text {
    en: "off",
    zh: "关闭",
};
/// The ranks ZeRO shards over.
pub const RANKS: Text = Text {
    en: "over ranks",
    zh: "分片到 rank 数",
};
/// The offload lever.
pub const OFFLOAD: Text = Text {
    en: "Optimizer state on the host (offload)",
    zh: "优化器状态放到主机内存（offload）",
};
/// The prediction (`{predicted}`, `{measured}`, `{change}`).
pub const PREDICTED: Text = Text {
    en: "Predicted peak {predicted} (measured {measured}, {change})",
    zh: "预测峰值 {predicted}（实测 {measured}，{change}）",
};
/// Being worked out.
pub const REPLAYING: Text = Text {
    en: "Replaying the run with these levers…",
    zh: "正在按这些设置回放本次运行…",
};
/// Why no prediction (`{why}`: [`why_text`]).
pub const CANNOT: Text = Text {
    en: "No prediction: {why}",
    zh: "无法预测：{why}",
};
/// The curves' names.
pub const MEASURED_CURVE: Text = Text {
    en: "Measured",
    zh: "实测",
};
/// The predicted curve's name.
pub const PREDICTED_CURVE: Text = Text {
    en: "Predicted",
    zh: "预测",
};
/// The assumptions' heading.
pub const ASSUMPTIONS: Text = Text {
    en: "Assumptions of the replay",
    zh: "回放的假设",
};
/// The profiled micro-batch, absolute (`{n}` of the profiled `{b}`).
pub const BATCH_OF: Text = Text {
    en: "= batch {n} (profiled {b})",
    zh: "= 批大小 {n}（采集时 {b}）",
};
/// The card's size field.
pub const CARD_GIB: Text = Text {
    en: "Card memory (GiB, 0: as recorded)",
    zh: "卡的内存（GiB，0：按采集记录）",
};
/// The predicted reserved peak (`{reserved}`, `{ratio}`).
pub const RESERVED: Text = Text {
    en: "Predicted reserved {reserved} (allocated × {ratio}, the measured reserved / allocated at the peak)",
    zh: "预测保留内存 {reserved}（分配 × {ratio}，即实测峰值处的保留 / 分配）",
};
/// It fits (`{card}`, `{headroom}`).
pub const FITS: Text = Text {
    en: "Fits {card}: {headroom} to spare",
    zh: "放得下 {card}：剩余 {headroom}",
};
/// It does not fit (`{card}`, `{over}`).
pub const DOES_NOT_FIT: Text = Text {
    en: "Does not fit {card}: {over} over",
    zh: "放不下 {card}：超出 {over}",
};
/// The card as the trace records it (`{name}`, `{size}`).
pub const CARD_RECORDED: Text = Text {
    en: "{name} ({size}, as the trace records it)",
    zh: "{name}（{size}，按 trace 记录）",
};
/// The card as given (`{size}`).
pub const CARD_GIVEN: Text = Text {
    en: "a {size} card",
    zh: "{size} 的卡",
};
/// No card known.
pub const CARD_UNKNOWN: Text = Text {
    en: "Will it fit? The profile does not record the card.",
    zh: "能否放下？数据中没有记录卡的内存。",
};

/// The split's heading.
pub const AT_PEAK_BY_ROLE: Text = Text {
    en: "At the predicted peak, by role",
    zh: "预测峰值处按角色",
};

/// The levers: the pane's choice.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatifLevers {
    /// Micro-batch multiple (1: as profiled).
    pub micro_batch: f64,
    /// Module classes to checkpoint.
    pub checkpoint: BTreeSet<String>,
    /// Modules to checkpoint by name, a glob (`Block_[0-2]`); empty: none.
    pub checkpoint_glob: String,
    /// ZeRO stage (0: off).
    pub zero: u8,
    /// Ranks ZeRO shards over.
    pub ranks: u32,
    /// Optimizer state offloaded.
    pub offload: bool,
    /// The card's memory in GiB to fit against (0: the card the trace records).
    pub card_gib: f64,
}

impl Default for WhatifLevers {
    fn default() -> Self {
        WhatifLevers {
            micro_batch: 1.0,
            checkpoint: BTreeSet::new(),
            checkpoint_glob: String::new(),
            zero: 0,
            ranks: 8,
            offload: false,
            card_gib: 0.0,
        }
    }
}

impl crate::ui::choices::Choice for WhatifLevers {
    const ID: &'static str = "whatif";
}

impl WhatifLevers {
    /// The scenario they describe.
    pub fn scenario(&self) -> Scenario {
        Scenario {
            micro_batch: self.micro_batch,
            checkpoint: self
                .checkpoint
                .iter()
                .cloned()
                .chain(Some(self.checkpoint_glob.trim().to_string()).filter(|g| !g.is_empty()))
                .collect(),
            zero: (self.zero > 0).then_some((self.zero, self.ranks.max(1))),
            offload_optimizer: self.offload,
        }
    }
}

/// Why a replay gave no prediction.
#[derive(Debug, Clone)]
enum NoPrediction {
    /// The replay's reason.
    Why(WhyNot),
    /// The job failed (its message).
    Failed(String),
}

/// A replay's outcome: the prediction, or why there is none.
type Outcome = Result<Arc<Prediction>, NoPrediction>;

/// The what-if tab.
#[derive(Default)]
pub struct WhatifPane {
    /// The last outcome, for the view and scenario it was replayed for.
    done: Option<(ViewId, Scenario, Outcome)>,
    /// The replay running.
    running: Option<(ViewId, Scenario, Job<Outcome>)>,
    /// What the view's trace records (card, micro-batch), read once per view off the UI thread.
    recorded: Option<(ViewId, Recorded)>,
    /// Its reading.
    reading: Option<(ViewId, Job<Recorded>)>,
}

/// True when the rank's phases tell the roles apart (what the replay needs).
pub fn has_phases(view: &RankView) -> bool {
    super::roles::has_roles(view)
}

impl WhatifPane {
    /// What the view's trace records (`None` while it is read, the job started here).
    fn recorded(&mut self, cx: &mut PaneCx<'_>) -> Option<Recorded> {
        let id = cx.view.id();
        if let Some((v, r)) = &self.recorded
            && *v == id
        {
            return Some(r.clone());
        }
        if self.reading.as_ref().is_none_or(|(v, _)| *v != id) {
            let view = Arc::clone(cx.view);
            let key = JobKey::scoped(RECORDED_JOB, &id);
            let job = cx
                .jobs
                .run(key, Place::Thread, move |_| recorded(&view.data.info));
            self.reading = Some((id, job));
        }
        let (_, job) = self.reading.as_ref()?;
        let r = match job.poll() {
            Poll::Msg(r) => r,
            // A trace that cannot be read again records nothing (a job that ended without a
            // word neither: the tab must not wait on it for ever).
            Poll::Failed(_) | Poll::Finished => Recorded::default(),
            Poll::Pending => return None,
        };
        self.recorded = Some((id, r.clone()));
        self.reading = None;
        Some(r)
    }

    /// The outcome of `scenario` on `view`: ready, or `None` while its job runs (started here).
    fn outcome(&mut self, cx: &mut PaneCx<'_>, scenario: &Scenario) -> Option<Outcome> {
        let id = cx.view.id();
        if let Some((v, s, o)) = &self.done
            && *v == id
            && s == scenario
        {
            return Some(o.clone());
        }
        let running_it = self
            .running
            .as_ref()
            .is_some_and(|(v, s, _)| *v == id && s == scenario);
        if !running_it {
            let view = Arc::clone(cx.view);
            let sc = scenario.clone();
            let key = JobKey::scoped(WHATIF_JOB, &(id, format!("{scenario:?}")));
            let job = cx.jobs.run(key, Place::Thread, move |_| {
                predict_on(&view, &sc)
                    .map(Arc::new)
                    .map_err(NoPrediction::Why)
            });
            self.running = Some((id, scenario.clone(), job));
        }
        let (v, s, job) = self.running.as_ref()?;
        match job.poll() {
            Poll::Msg(o) => {
                self.done = Some((*v, s.clone(), o.clone()));
                self.running = None;
                Some(o)
            }
            Poll::Failed(m) => {
                let o: Outcome = Err(NoPrediction::Failed(m));
                self.done = Some((*v, s.clone(), o.clone()));
                self.running = None;
                Some(o)
            }
            Poll::Pending | Poll::Finished => None,
        }
    }
}

impl super::tab::BottomPane for WhatifPane {
    fn id(&self) -> TabId {
        TAB
    }

    fn title(&self, t: &'static Tr, _cx: &PaneCx<'_>) -> String {
        TITLE.get(t).to_string()
    }

    fn offered(&self, cx: &PaneCx<'_>) -> bool {
        has_phases(cx.view)
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        let levers = cx.state.choice::<WhatifLevers>();
        let outcome = self.outcome(cx, &levers.scenario());
        let recorded = self.recorded(cx);
        // The levers and the prediction appear together, once both are known.
        let outcome = outcome.filter(|_| recorded.is_some());
        let side = 300.0_f32.min(ui.available_width() * 0.35);
        ui.horizontal_top(|ui| {
            ui.vertical(|ui| {
                ui.set_width(side);
                egui::ScrollArea::vertical()
                    .id_salt("whatif_levers")
                    .show(ui, |ui| {
                        ui.vertical(|ui| match &recorded {
                            Some(r) => levers_ui(ui, cx, &levers, r),
                            // Until the trace's record is read: the batch row would
                            // otherwise appear under the pointer a moment later.
                            None => {
                                crate::ui::spinner::spinner(ui);
                            }
                        });
                    });
            });
            ui.separator();
            ui.vertical(|ui| match &outcome {
                None => {
                    ui.horizontal(|ui| {
                        crate::ui::spinner::spinner(ui);
                        ui.label(REPLAYING.get(cx.t));
                    });
                }
                Some(Err(no)) => {
                    let why = match no {
                        NoPrediction::Why(w) => why_text(cx.t, w),
                        NoPrediction::Failed(m) => m.clone(),
                    };
                    ui.colored_label(
                        ui.visuals().error_fg_color,
                        CANNOT.get(cx.t).replace("{why}", &why),
                    );
                }
                Some(Ok(p)) => {
                    let fit = fit_of(cx.view, p, &levers, recorded.clone());
                    prediction_ui(ui, cx, p, &levers, &fit);
                }
            });
        });
    }
}

/// An assumption in the UI's language, with its numbers.
pub fn assumption_text(t: &Tr, a: &Assumption) -> String {
    a.render(t.lang, &bytes)
}

/// Why there is no prediction, in the UI's language.
pub fn why_text(t: &Tr, why: &WhyNot) -> String {
    why.render(t.lang)
}

/// The module classes offered for checkpointing: each class once, outermost first.
fn classes(view: &RankView) -> Vec<String> {
    let Some(tree) = view.data.module_tree.as_ref() else {
        return Vec::new();
    };
    let mut seen: Vec<(u32, String)> = Vec::new();
    for m in &tree.nodes {
        let class = m.class_name();
        match seen.iter_mut().find(|(_, c)| c == class) {
            Some(e) => e.0 = e.0.min(m.depth),
            None => seen.push((m.depth, class.to_string())),
        }
    }
    seen.sort();
    seen.into_iter().map(|(_, c)| c).collect()
}

/// The levers; a change is a [`Command::choose`] of [`WhatifLevers`].
fn levers_ui(ui: &mut egui::Ui, cx: &mut PaneCx<'_>, levers: &WhatifLevers, recorded: &Recorded) {
    let t = cx.t;
    let mut k = levers.micro_batch;
    ui.horizontal_wrapped(|ui| {
        let label = ui.label(MICRO_BATCH.get(t));
        let r = ui
            .add(
                egui::Slider::new(&mut k, 0.25..=8.0)
                    .logarithmic(true)
                    .max_decimals(2),
            )
            .labelled_by(label.id);
        if r.changed() {
            cx.out.push(Command::choose(move |l: &mut WhatifLevers| {
                l.micro_batch = k
            }));
        }
    });
    // The batch as a size, where the trace says the profiled one: "16" needs no arithmetic.
    if let Some(b) = recorded.micro_batch {
        ui.horizontal(|ui| {
            let mut n = (levers.micro_batch * b as f64).round().max(1.0) as u64;
            let max = b.saturating_mul(8);
            let before = n;
            let (head, tail) = BATCH_OF
                .get(t)
                .split_once("{n}")
                .unwrap_or((BATCH_OF.get(t), ""));
            let label = ui.label(head.trim_end());
            ui.add(egui::DragValue::new(&mut n).range(1..=max.max(1)))
                .labelled_by(label.id);
            ui.label(tail.replace("{b}", &b.to_string()).trim_start());
            if n != before {
                let k = n as f64 / b as f64;
                cx.out.push(Command::choose(move |l: &mut WhatifLevers| {
                    l.micro_batch = k
                }));
            }
        });
    }
    ui.add_space(4.0);
    let classes = classes(cx.view);
    if !classes.is_empty() {
        ui.label(CHECKPOINT.get(t));
        // Flowed, several to a line: a model's dozen classes stay above the fold at 720p.
        ui.horizontal_wrapped(|ui| {
            for class in classes {
                let mut on = levers.checkpoint.contains(&class);
                if ui.checkbox(&mut on, &class).changed() {
                    cx.out.push(Command::choose(move |l: &mut WhatifLevers| {
                        if on {
                            l.checkpoint.insert(class.clone());
                        } else {
                            l.checkpoint.remove(&class);
                        }
                    }));
                }
            }
        });
        // By name, a glob: `Block_[0-2]` asks for the first three blocks, which no class can.
        ui.horizontal(|ui| {
            let label = ui.label(CHECKPOINT_GLOB.get(t));
            let mut text = levers.checkpoint_glob.clone();
            let r = ui
                .add(
                    egui::TextEdit::singleline(&mut text)
                        .hint_text("Block_[0-2]")
                        .desired_width(140.0),
                )
                .labelled_by(label.id);
            if r.changed() {
                cx.out.push(Command::choose(move |l: &mut WhatifLevers| {
                    l.checkpoint_glob.clone_from(&text);
                }));
            }
        });
        ui.add_space(4.0);
    }
    ui.horizontal(|ui| {
        let label = ui.label(ZERO.get(t));
        let name = |z: u8| {
            if z == 0 {
                ZERO_OFF.get(t).to_string()
            } else {
                format!("ZeRO-{z}")
            }
        };
        egui::ComboBox::from_id_salt("whatif_zero")
            .selected_text(name(levers.zero))
            .show_ui(ui, |ui| {
                for z in 0..=3u8 {
                    if ui.selectable_label(levers.zero == z, name(z)).clicked() {
                        cx.out
                            .push(Command::choose(move |l: &mut WhatifLevers| l.zero = z));
                    }
                }
            })
            .response
            .labelled_by(label.id);
    });
    ui.add_enabled_ui(levers.zero > 0, |ui| {
        ui.horizontal(|ui| {
            let label = ui.label(RANKS.get(t));
            let mut n = levers.ranks;
            if ui
                .add(egui::DragValue::new(&mut n).range(1..=65_536))
                .labelled_by(label.id)
                .changed()
            {
                cx.out
                    .push(Command::choose(move |l: &mut WhatifLevers| l.ranks = n));
            }
        });
    });
    let mut off = levers.offload;
    if ui.checkbox(&mut off, OFFLOAD.get(t)).changed() {
        cx.out
            .push(Command::choose(move |l: &mut WhatifLevers| l.offload = off));
    }
}

/// The card's size field (GiB; 0: the card the trace records), beside the verdict.
fn card_field(ui: &mut egui::Ui, cx: &mut PaneCx<'_>, levers: &WhatifLevers) {
    let label = ui.label(CARD_GIB.get(cx.t));
    let mut gib = levers.card_gib;
    if ui
        .add(
            egui::DragValue::new(&mut gib)
                .range(0.0..=1.0e6)
                .speed(1.0)
                .max_decimals(1),
        )
        .labelled_by(label.id)
        .changed()
    {
        cx.out.push(Command::choose(move |l: &mut WhatifLevers| {
            l.card_gib = gib
        }));
    }
}

/// The fit of prediction `p`: the card typed in, else the trace's.
fn fit_of(
    view: &RankView,
    p: &Prediction,
    levers: &WhatifLevers,
    recorded: Option<Recorded>,
) -> Fit {
    let recorded = recorded.unwrap_or_default();
    Fit::on(
        view,
        p.predicted.bytes,
        Card::given_gib(levers.card_gib),
        recorded.card,
        recorded.micro_batch,
    )
}

/// The fit in words: the reserved peak, and fits or not with the headroom (red when not).
fn fit_ui(ui: &mut egui::Ui, cx: &mut PaneCx<'_>, levers: &WhatifLevers, fit: &Fit) {
    let t = cx.t;
    if let (Some(r), Some(ratio)) = (fit.reserved(), fit.reserved_ratio) {
        ui.add(
            egui::Label::new(
                RESERVED
                    .get(t)
                    .replace("{reserved}", &bytes(r))
                    .replace("{ratio}", &format!("{ratio:.3}")),
            )
            .wrap(),
        );
    }
    ui.horizontal_wrapped(|ui| {
        match (&fit.card, fit.headroom()) {
            (Some(card), Some(h)) => {
                let card = match card.from {
                    CardFrom::Trace => CARD_RECORDED
                        .get(t)
                        .replace("{name}", &card.name)
                        .replace("{size}", &bytes(card.bytes)),
                    CardFrom::Given => CARD_GIVEN.get(t).replace("{size}", &bytes(card.bytes)),
                };
                if h >= 0 {
                    ui.add(
                        egui::Label::new(
                            FITS.get(t)
                                .replace("{card}", &card)
                                .replace("{headroom}", &bytes(h)),
                        )
                        .wrap(),
                    );
                } else {
                    let text = DOES_NOT_FIT
                        .get(t)
                        .replace("{card}", &card)
                        .replace("{over}", &bytes(h.saturating_neg()));
                    ui.add(
                        egui::Label::new(
                            egui::RichText::new(text)
                                .strong()
                                .color(ui.visuals().error_fg_color),
                        )
                        .wrap(),
                    );
                }
            }
            _ => {
                ui.add(egui::Label::new(CARD_UNKNOWN.get(t)).wrap());
            }
        }
        ui.add_space(12.0);
        card_field(ui, cx, levers);
    });
}

/// The prediction: the headline, the curves, the split by role and the assumptions.
fn prediction_ui(
    ui: &mut egui::Ui,
    cx: &mut PaneCx<'_>,
    p: &Prediction,
    levers: &WhatifLevers,
    fit: &Fit,
) {
    let t = cx.t;
    let change = crate::model::percent_change(
        crate::model::bytes_to_mib(p.measured.bytes),
        crate::model::bytes_to_mib(p.predicted.bytes),
    )
    .map_or_else(|| "–".into(), |c| format!("{c:+.1} %"));
    ui.strong(
        PREDICTED
            .get(t)
            .replace("{predicted}", &bytes(p.predicted.bytes))
            .replace("{measured}", &bytes(p.measured.bytes))
            .replace("{change}", &change),
    );
    fit_ui(ui, cx, levers, fit);
    if !p.checkpointed.is_empty() {
        ui.add(
            egui::Label::new(
                CHECKPOINTED
                    .get(t)
                    .replace("{modules}", &p.checkpointed.join(", ")),
            )
            .wrap(),
        );
    }
    let side = 260.0_f32.min(ui.available_width() * 0.4);
    ui.horizontal_top(|ui| {
        let plot_w = (ui.available_width() - side - 12.0).max(120.0);
        ui.vertical(|ui| {
            ui.set_width(plot_w);
            curves_ui(ui, cx, p);
        });
        ui.separator();
        egui::ScrollArea::vertical()
            .id_salt("whatif_side")
            .show(ui, |ui| {
                ui.vertical(|ui| side_ui(ui, t, p, side));
            });
    });
}

/// Beside the curves: the predicted peak by role, and the assumptions.
fn side_ui(ui: &mut egui::Ui, t: &Tr, p: &Prediction, side: f32) {
    ui.set_width(side);
    ui.strong(AT_PEAK_BY_ROLE.get(t));
    egui::Grid::new("whatif_roles")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            for &(role, b) in &p.by_role {
                ui.label(super::roles::role_name(t, role));
                ui.label(bytes(b));
                ui.end_row();
            }
        });
    ui.add_space(6.0);
    egui::CollapsingHeader::new(ASSUMPTIONS.get(t))
        .id_salt("whatif_assumptions")
        .show(ui, |ui| {
            for a in &p.assumptions {
                ui.label(format!("• {}", assumption_text(t, a)));
            }
        });
}

/// `(ms, value)` of a step curve in at most `columns` buckets of points, each bucket's largest
/// value (a peak is never drawn lower than it is), joined by straight lines (drawn without
/// egui_plot's bands, which fill a line's turns within a pixel column).
fn decimate(
    points: impl ExactSizeIterator<Item = (i64, i64)>,
    scale: f64,
    columns: usize,
) -> Vec<[f64; 2]> {
    let n = points.len();
    let per = n.div_ceil(columns.max(1)).max(1);
    let mut out: Vec<[f64; 2]> = Vec::with_capacity(n / per + 1);
    let mut bucket: Option<(i64, i64)> = None;
    for (k, (t, v)) in points.enumerate() {
        bucket = Some(match bucket {
            Some((bt, bv)) if v <= bv => (bt, bv),
            _ => (t, v),
        });
        if (k + 1) % per == 0
            && let Some((bt, bv)) = bucket.take()
        {
            out.push([ns_to_ms(bt), bv as f64 / scale]);
        }
    }
    if let Some((bt, bv)) = bucket {
        out.push([ns_to_ms(bt), bv as f64 / scale]);
    }
    out
}

/// The measured Operator Allocated curve and the predicted one.
fn curves_ui(ui: &mut egui::Ui, cx: &PaneCx<'_>, p: &Prediction) {
    let t = cx.t;
    let unit = MemUnit::for_max(p.predicted.bytes.max(p.measured.bytes) as f64);
    let scale = unit.bytes();
    let columns = (ui.available_width() / 2.0).max(50.0) as usize;
    let measured: Vec<[f64; 2]> = cx
        .view
        .operator_allocated()
        .map(|s| {
            decimate(
                s.times.iter().copied().zip(s.values.iter().copied()),
                scale,
                columns,
            )
        })
        .unwrap_or_default();
    let predicted = decimate(p.curve.iter().copied(), scale, columns);
    Plot::new("whatif_plot")
        .height(ui.available_height().max(120.0))
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .include_y(0.0)
        // Room for "4000" from the first frame: egui_plot sizes the axis from the labels it
        // drew last, and the first frame draws only "0" (the axis kept only "0").
        .y_axis_min_width(36.0)
        .y_grid_spacer(crate::ui::plot::value_grid)
        .legend(egui_plot::Legend::default().position(egui_plot::Corner::RightBottom))
        .x_axis_label(t.time_axis)
        .y_axis_label((t.memory_axis)(unit.label()))
        .x_grid_spacer(crate::ui::plot::time_grid)
        .show(ui, |plot_ui| {
            plot_ui.line(
                Line::new(MEASURED_CURVE.get(t), PlotPoints::from(measured))
                    .width(1.0)
                    .allow_band(false)
                    .color(palette::series_color(0)),
            );
            plot_ui.line(
                Line::new(PREDICTED_CURVE.get(t), PlotPoints::from(predicted))
                    .width(1.0)
                    .allow_band(false)
                    .color(palette::series_color(1)),
            );
        });
}
