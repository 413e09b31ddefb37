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
use crate::analysis::whatif::{Assumption, Optimizer, Prediction, Scenario, WhyNot, predict_on};
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
/// [`Assumption::NoAllocatedCurve`].
pub const A_NO_CURVE: Text = Text {
    en: "No Operator Allocated curve: what was allocated before profiling is taken as 0",
    zh: "没有 Operator Allocated 曲线：采集前已分配的内存按 0 计",
};
/// [`Assumption::Unexplained`] (`{freed}`, `{allocated}`).
pub const A_UNEXPLAINED: Text = Text {
    en: "Memory no block holds (allocated before profiling, or outside the operators) changes \
         during the profile, as the allocator's total shows: {freed} of what was there at the \
         start is freed, and {allocated} in all is allocated (and freed) over the profile; the \
         replay keeps those changes at their times, unscaled",
    zh: "没有内存块持有的内存（采集前分配的，或在算子之外分配的）在采集期间随分配器总量变化：\
         开始时已有的 {freed} 被释放，采集期间累计另分配（并释放）{allocated}；回放在原时间保留这些变化，不做缩放",
};
/// [`Assumption::Checkpointing`].
pub const A_CHECKPOINT: Text = Text {
    en: "Checkpointing: a module's activations that outlive its forward are freed at its last \
         forward allocation, except its output (the latest of them), and allocated again at its \
         first backward allocation (the recompute); the recompute's own temporaries are not added",
    zh: "激活重计算：模块前向中分配、存活到前向之后的激活，在其最后一次前向分配时释放（输出，\
         即最晚的一个，除外），并在其第一次反向分配时重新分配（重计算）；重计算自身的临时内存不计入",
};
/// [`Assumption::MicroBatch`] (`{k}`).
pub const A_MICRO_BATCH: Text = Text {
    en: "Micro-batch ×{k}: inputs, activations, backward temporaries and the temporaries of the \
         forward and backward passes scale with the batch; gradients, optimizer state and what \
         was allocated before profiling (weights) do not",
    zh: "微批大小 ×{k}：输入、激活、反向临时内存以及前向和反向的临时内存随微批大小缩放；\
         梯度、优化器状态和采集前已分配的内存（权重）不变",
};
/// [`Optimizer::Adam`].
pub const A_ADAM: Text = Text {
    en: "Optimizer: Adam (two moments, each the size of the parameters)",
    zh: "优化器：Adam（两个动量，各与参数同样大小）",
};
/// [`Optimizer::Sgd`].
pub const A_SGD: Text = Text {
    en: "Optimizer: SGD with momentum (one buffer the size of the parameters)",
    zh: "优化器：带动量的 SGD（一个与参数同样大小的缓冲区）",
};
/// [`Optimizer::Unnamed`].
pub const A_UNNAMED: Text = Text {
    en: "Optimizer: not named by the host ops; taken as Adam (two moments, each the size of the \
         parameters)",
    zh: "优化器：host 算子中没有它的名字，按 Adam 计（两个动量，各与参数同样大小）",
};
/// [`Assumption::Parameters`] (`{params}`, `{state}`, `{params_before}`, `{other}`).
pub const A_PARAMETERS: Text = Text {
    en: "Parameters: {params}, the gradient bytes of one backward pass; before profiling: {state} \
         of optimizer state and {params_before} of parameters, {other} else",
    zh: "参数：{params}，即一次反向传播的梯度字节数；采集前已分配：优化器状态 {state}、\
         参数 {params_before}、其他 {other}",
};
/// [`Assumption::Offload`].
pub const A_OFFLOAD: Text = Text {
    en: "Offload: the optimizer state lives on the host; its step's temporaries stay on the \
         device",
    zh: "offload：优化器状态放在主机内存；其 step 的临时内存仍在设备上",
};
/// [`Assumption::Zero3Gather`] (`{ranks}`, `{gather}`).
pub const A_ZERO3_GATHER: Text = Text {
    en: "ZeRO-3: parameters sharded over {ranks} ranks, with one gather buffer the size of the \
         largest top-level module's parameters ({gather}) held throughout",
    zh: "ZeRO-3：参数在 {ranks} 个 rank 间切分，另有一个与最大顶层模块参数同样大小的 gather \
         缓冲区（{gather}）一直占用",
};
/// [`Assumption::Zero`] (`{stage}`, `{ranks}`, `{what}`: one of the three below).
pub const A_ZERO: Text = Text {
    en: "ZeRO-{stage} over {ranks} ranks: {what} divided by {ranks}; communication buckets are \
         not added",
    zh: "ZeRO-{stage}（{ranks} 个 rank）：{what}除以 {ranks}；未计入通信 bucket",
};
/// What ZeRO-1, -2 and -3 divide.
pub const A_ZERO_WHAT: [Text; 3] = [
    Text {
        en: "optimizer state",
        zh: "优化器状态",
    },
    Text {
        en: "optimizer state, gradients",
        zh: "优化器状态、梯度",
    },
    Text {
        en: "optimizer state, gradients, parameters",
        zh: "优化器状态、梯度、参数",
    },
];
/// [`WhyNot::NoBlocks`].
pub const W_NO_BLOCKS: Text = Text {
    en: "the rank has no blocks (operator_memory) to replay",
    zh: "该 rank 没有可回放的内存块（operator_memory）",
};
/// [`WhyNot::NoModules`].
pub const W_NO_MODULES: Text = Text {
    en: "checkpointing needs module spans: record with with_stack=True, with_modules=True",
    zh: "激活重计算需要模块信息：请用 with_stack=True, with_modules=True 采集",
};
/// [`WhyNot::NoModuleMatches`] (`{glob}`, `{some}`).
pub const W_NO_MATCH: Text = Text {
    en: "{glob} matches no module (modules: {some})",
    zh: "{glob} 没有匹配的模块（模块：{some}）",
};
/// [`WhyNot::NoPhases`].
pub const W_NO_PHASES: Text = Text {
    en: "the profile shows no forward and backward passes (host ops with an autograd backward), \
         so nothing tells activations from gradients",
    zh: "数据中没有前向和反向阶段（带 autograd 反向的 host 算子），无法区分激活与梯度",
};
/// [`WhyNot::NoGradients`].
pub const W_NO_GRADIENTS: Text = Text {
    en: "no gradient is allocated in the profile, so the parameters' size is unknown (profile a \
         whole training step, from before backward to after the optimizer step)",
    zh: "采集中没有分配梯度，无法得知参数大小（请采集完整的训练 step：从反向之前到优化器 step 之后）",
};

/// [`WhyNot::Overflow`].
pub const W_OVERFLOW: Text = Text {
    en: "the predicted peak passes 4 EiB (the levers multiply a block past what a 64-bit byte \
         count holds): no prediction; use smaller levers",
    zh: "预测峰值超过 4 EiB（杠杆把内存块放大到 64 位字节数无法表示）：无法预测，请用更小的杠杆",
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
    match a {
        Assumption::NoAllocatedCurve => A_NO_CURVE.get(t).to_string(),
        Assumption::Unexplained { freed, allocated } => A_UNEXPLAINED
            .get(t)
            .replace("{freed}", &bytes(*freed))
            .replace("{allocated}", &bytes(*allocated)),
        Assumption::Checkpointing => A_CHECKPOINT.get(t).to_string(),
        Assumption::MicroBatch(k) => A_MICRO_BATCH.get(t).replace("{k}", &k.to_string()),
        Assumption::Optimizer(Optimizer::Adam) => A_ADAM.get(t).to_string(),
        Assumption::Optimizer(Optimizer::Sgd) => A_SGD.get(t).to_string(),
        Assumption::Optimizer(Optimizer::Unnamed) => A_UNNAMED.get(t).to_string(),
        Assumption::Parameters {
            params,
            state_before,
            params_before,
            other,
        } => A_PARAMETERS
            .get(t)
            .replace("{params}", &bytes(*params))
            .replace("{state}", &bytes(*state_before))
            .replace("{params_before}", &bytes(*params_before))
            .replace("{other}", &bytes(*other)),
        Assumption::Offload => A_OFFLOAD.get(t).to_string(),
        Assumption::Zero3Gather { ranks, gather } => A_ZERO3_GATHER
            .get(t)
            .replace("{ranks}", &ranks.to_string())
            .replace("{gather}", &bytes(*gather)),
        Assumption::Zero { stage, ranks } => {
            let what = A_ZERO_WHAT[usize::from((*stage).clamp(1, 3)) - 1].get(t);
            A_ZERO
                .get(t)
                .replace("{stage}", &stage.to_string())
                .replace("{what}", what)
                .replace("{ranks}", &ranks.to_string())
        }
    }
}

/// Why there is no prediction, in the UI's language (a lever out of range is the CLI's
/// wording: the app's levers cannot make one).
pub fn why_text(t: &Tr, why: &WhyNot) -> String {
    match why {
        WhyNot::NoBlocks => W_NO_BLOCKS.get(t).to_string(),
        WhyNot::NoModules => W_NO_MODULES.get(t).to_string(),
        WhyNot::NoModuleMatches(glob, some, all) => {
            let more = if *all > some.len() {
                format!(", … ({all})")
            } else {
                String::new()
            };
            W_NO_MATCH
                .get(t)
                .replace("{glob}", glob)
                .replace("{some}", &format!("{}{more}", some.join(", ")))
        }
        WhyNot::BadGlob(why) => why.clone(),
        WhyNot::NoPhases => W_NO_PHASES.get(t).to_string(),
        WhyNot::NoGradients => W_NO_GRADIENTS.get(t).to_string(),
        WhyNot::BadLever(what) => what.clone(),
        WhyNot::Overflow => W_OVERFLOW.get(t).to_string(),
    }
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
