//! What-if by replay: the peak of a run not made, from the measured one. Every block of the
//! profile is replayed on its own timeline (allocated at its time, freed at its time) with the
//! levers of a [`Scenario`] applied, over what was allocated before profiling began; the
//! predicted curve's maximum is the prediction.
//!
//! The levers:
//! - **micro-batch ×K** scales what depends on the batch: the blocks whose role
//!   ([`crate::model::Role`]) is input, activation or backward temporary, and temporaries made
//!   in the forward or backward pass. Gradients, optimizer state and what was allocated before
//!   profiling (weights) stay;
//! - **checkpointing** a module (a glob over names or classes, `Block_*` or `Block`): in each
//!   forward pass, the activations allocated in that module's forward that outlive it are freed
//!   when its forward ends (its last activation), except its output (the latest of them); they
//!   are allocated again when its backward starts (its first block of the backward pass: the
//!   recompute) and freed when they were;
//! - **ZeRO-1/2/3 over N ranks** divides the optimizer state by N, then the gradients too, then
//!   the parameters too (stage 3 adds a gather buffer of the largest top-level module's
//!   parameters);
//! - **offloading the optimizer** takes the optimizer state off the device.
//!
//! Parameters and optimizer state allocated before profiling are not blocks of the profile:
//! the parameters' size is taken from the gradients one backward pass makes (a gradient is the
//! size of its parameter), and the optimizer state's as Adam's two moments (or SGD's one
//! buffer) of it. Every such step is said in [`Prediction::assumptions`].

use crate::model::{Lang, ModuleTree, NO_MODULE, NULL, PhaseKind, Phases, RankData, Role};

/// What to change.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The micro-batch as a multiple of the profiled one (1: as profiled).
    pub micro_batch: f64,
    /// Modules to checkpoint: globs over module names (`Block_*`) or classes (`Block`).
    pub checkpoint: Vec<String>,
    /// ZeRO: (stage 1 to 3, ranks).
    pub zero: Option<(u8, u32)>,
    /// Optimizer state moved to the host.
    pub offload_optimizer: bool,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            micro_batch: 1.0,
            checkpoint: Vec::new(),
            zero: None,
            offload_optimizer: false,
        }
    }
}

/// A peak: bytes and when (ns from the rank's origin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeakAt {
    /// Bytes.
    pub bytes: i64,
    /// ns from the rank's origin.
    pub at_ns: i64,
}

/// The answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// The profile's own peak (Operator Allocated, else the live blocks').
    pub measured: PeakAt,
    /// The predicted peak.
    pub predicted: PeakAt,
    /// The predicted peak by role ([`Role::ALL`] order; `before_profiling` is what was
    /// allocated before the profile, as changed by the levers): adds up to `predicted.bytes`.
    pub by_role: Vec<(Role, i64)>,
    /// The predicted curve: (ns from origin, bytes), one point per change.
    pub curve: Vec<(i64, i64)>,
    /// What the replay took as given (in words: their `Display`, English).
    pub assumptions: Vec<Assumption>,
    /// The modules the checkpoint globs matched (paths).
    pub checkpointed: Vec<String>,
}

/// The optimizer the replay takes the run to use (its state per parameter byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Optimizer {
    /// Adam or AdamW, named by the host ops: two moments.
    Adam,
    /// SGD with momentum, named by the host ops: one buffer.
    Sgd,
    /// None named: taken as Adam.
    Unnamed,
}

/// One thing a replay takes as given, with its numbers (bytes). Its `Display` is the English
/// text of the CLI and JSON; the app words each in its own language.
#[derive(Debug, Clone, PartialEq)]
pub enum Assumption {
    /// No Operator Allocated curve: nothing allocated before profiling.
    NoAllocatedCurve,
    /// What no block holds changes during the profile, as the allocator's total shows.
    Unexplained {
        /// Of what was there at the start, freed during the profile.
        freed: i64,
        /// Allocated during the profile outside every block, in all (freed again or not).
        allocated: i64,
    },
    /// How checkpointing is replayed.
    Checkpointing,
    /// Which blocks scale with the micro-batch, by this factor.
    MicroBatch(f64),
    /// The optimizer, from the host ops' names.
    Optimizer(Optimizer),
    /// The parameters' size and what was allocated before profiling, split.
    Parameters {
        /// The parameters (the gradient bytes of one backward pass).
        params: i64,
        /// Optimizer state allocated before profiling.
        state_before: i64,
        /// Parameters allocated before profiling.
        params_before: i64,
        /// The rest of what was allocated before profiling.
        other: i64,
    },
    /// The optimizer state moves to the host.
    Offload,
    /// ZeRO-3's gather buffer.
    Zero3Gather {
        /// The ranks sharded over.
        ranks: u32,
        /// The buffer, bytes.
        gather: i64,
    },
    /// What ZeRO shards.
    Zero {
        /// 1, 2 or 3.
        stage: u8,
        /// The ranks sharded over.
        ranks: u32,
    },
}

impl Assumption {
    /// The assumption in `lang`, each size written by `size` (the CLI's `12.34 MB`, the app's
    /// unit): one text, both languages side by side, its figures typed arguments.
    pub fn render(&self, lang: Lang, size: &dyn Fn(i64) -> String) -> String {
        match (self, lang) {
            (Assumption::NoAllocatedCurve, Lang::En) => {
                "no Operator Allocated curve: what was allocated before profiling is taken as 0"
                    .into()
            }
            (Assumption::NoAllocatedCurve, Lang::Zh) => {
                "没有 Operator Allocated 曲线：采集前已分配的内存按 0 计".into()
            }
            (Assumption::Unexplained { freed, allocated }, Lang::En) => format!(
                "memory no block of the profile holds (allocated before profiling, or outside \
                 the operators) changes during it, as the allocator's total shows: {} of \
                 what was there at the start is freed, and {} in all is allocated (and \
                 freed) over the profile; the replay keeps those changes at their times, \
                 unscaled",
                size(*freed),
                size(*allocated)
            ),
            (Assumption::Unexplained { freed, allocated }, Lang::Zh) => format!(
                "没有内存块持有的内存（采集前分配的，或在算子之外分配的）在采集期间随分配器总量变化：\
                 开始时已有的 {} 被释放，采集期间累计另分配（并释放）{}；回放在原时间保留这些变化，不做缩放",
                size(*freed),
                size(*allocated)
            ),
            (Assumption::Checkpointing, Lang::En) => "checkpointing: a module's activations that \
                 outlive its forward are freed at its last forward allocation, except its output \
                 (the latest of them), and allocated again at its first backward allocation (the \
                 recompute); the recompute's own temporaries are not added"
                .into(),
            (Assumption::Checkpointing, Lang::Zh) => "激活重计算：模块前向中分配、存活到前向之后的激活，\
                 在其最后一次前向分配时释放（输出，即最晚的一个，除外），并在其第一次反向分配时重新分配\
                 （重计算）；重计算自身的临时内存不计入"
                .into(),
            (Assumption::MicroBatch(k), Lang::En) => format!(
                "micro-batch ×{k}: inputs, activations, backward temporaries and the temporaries \
                 of the forward and backward passes scale with the batch; gradients, optimizer \
                 state and what was allocated before profiling (weights) do not"
            ),
            (Assumption::MicroBatch(k), Lang::Zh) => format!(
                "微批大小 ×{k}：输入、激活、反向临时内存以及前向和反向的临时内存随微批大小缩放；\
                 梯度、优化器状态和采集前已分配的内存（权重）不变"
            ),
            (Assumption::Optimizer(o), _) => o.render(lang),
            (
                Assumption::Parameters {
                    params,
                    state_before,
                    params_before,
                    other,
                },
                Lang::En,
            ) => format!(
                "parameters: {}, the gradient bytes of one backward pass; before profiling: {} \
                 of optimizer state and {} of parameters, {} else",
                size(*params),
                size(*state_before),
                size(*params_before),
                size(*other)
            ),
            (
                Assumption::Parameters {
                    params,
                    state_before,
                    params_before,
                    other,
                },
                Lang::Zh,
            ) => format!(
                "参数：{}，即一次反向传播的梯度字节数；采集前已分配：优化器状态 {}、参数 {}、其他 {}",
                size(*params),
                size(*state_before),
                size(*params_before),
                size(*other)
            ),
            (Assumption::Offload, Lang::En) => "offload: the optimizer state lives on the host; \
                 its step's temporaries stay on the device"
                .into(),
            (Assumption::Offload, Lang::Zh) => {
                "offload：优化器状态放在主机内存；其 step 的临时内存仍在设备上".into()
            }
            (Assumption::Zero3Gather { ranks, gather }, Lang::En) => format!(
                "ZeRO-3: parameters sharded over {ranks} ranks, with one gather buffer the size \
                 of the largest top-level module's parameters ({}) held throughout",
                size(*gather)
            ),
            (Assumption::Zero3Gather { ranks, gather }, Lang::Zh) => format!(
                "ZeRO-3：参数在 {ranks} 个 rank 间切分，另有一个与最大顶层模块参数同样大小的 gather \
                 缓冲区（{}）一直占用",
                size(*gather)
            ),
            (Assumption::Zero { stage, ranks }, Lang::En) => format!(
                "ZeRO-{stage} over {ranks} ranks: optimizer state{}{} divided by {ranks}; \
                 communication buckets are not added",
                if *stage >= 2 { ", gradients" } else { "" },
                if *stage >= 3 { ", parameters" } else { "" },
            ),
            (Assumption::Zero { stage, ranks }, Lang::Zh) => format!(
                "ZeRO-{stage}（{ranks} 个 rank）：优化器状态{}{}除以 {ranks}；未计入通信 bucket",
                if *stage >= 2 { "、梯度" } else { "" },
                if *stage >= 3 { "、参数" } else { "" },
            ),
        }
    }
}

impl Optimizer {
    /// What the replay takes the optimizer to be, in `lang`.
    pub fn render(self, lang: Lang) -> String {
        let text = match (self, lang) {
            (Optimizer::Adam, Lang::En) => {
                "optimizer: Adam (two moments, each the size of the parameters)"
            }
            (Optimizer::Adam, Lang::Zh) => "优化器：Adam（两个动量，各与参数同样大小）",
            (Optimizer::Sgd, Lang::En) => {
                "optimizer: SGD with momentum (one buffer the size of the parameters)"
            }
            (Optimizer::Sgd, Lang::Zh) => "优化器：带动量的 SGD（一个与参数同样大小的缓冲区）",
            (Optimizer::Unnamed, Lang::En) => {
                "optimizer: not named by the host ops; taken as Adam (two moments, each the size \
                 of the parameters)"
            }
            (Optimizer::Unnamed, Lang::Zh) => {
                "优化器：host 算子中没有它的名字，按 Adam 计（两个动量，各与参数同样大小）"
            }
        };
        text.to_string()
    }
}

/// How the CLI and the JSON write a size in an assumption: MiB with two decimals.
fn mb(bytes: i64) -> String {
    format!("{:.2} MB", crate::model::bytes_to_mib(bytes))
}

impl std::fmt::Display for Assumption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(Lang::En, &mb))
    }
}

/// Why no prediction can be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WhyNot {
    /// The rank has no blocks (operator_memory).
    NoBlocks,
    /// Checkpointing needs module spans, which the profile lacks.
    NoModules,
    /// A checkpoint glob matched no module (the glob, the first module names, how many there
    /// are in all).
    NoModuleMatches(String, Vec<String>, usize),
    /// A checkpoint pattern is no glob (why).
    BadGlob(String),
    /// Checkpointing and micro-batch scaling need the training phases.
    NoPhases,
    /// ZeRO or offload needs the parameters' size: no gradient is allocated in the profile.
    NoGradients,
    /// A lever is out of range (which, in words).
    BadLever(String),
    /// The prediction passes what 64-bit byte counts hold ([`SATURATED_BYTES`]): a lever
    /// so large that the figure would be a saturated number, not a prediction.
    Overflow,
}

/// A predicted byte count at or past this (4 EiB) is a saturated sum, not a prediction: no
/// device comes near it.
pub const SATURATED_BYTES: i64 = 1 << 62;

impl WhyNot {
    /// Why there is no prediction, in `lang` (a glob's or a lever's own complaint is passed on
    /// as it came).
    pub fn render(&self, lang: Lang) -> String {
        match (self, lang) {
            (WhyNot::NoBlocks, Lang::En) => {
                "the rank has no blocks (operator_memory) to replay".into()
            }
            (WhyNot::NoBlocks, Lang::Zh) => "该 rank 没有可回放的内存块（operator_memory）".into(),
            (WhyNot::NoModules, Lang::En) => format!(
                "checkpointing needs module spans: {}",
                super::modules::NO_MODULES_HINT
            ),
            (WhyNot::NoModules, Lang::Zh) => {
                "激活重计算需要模块信息：请用 with_stack=True, with_modules=True 采集".into()
            }
            (WhyNot::NoModuleMatches(glob, some, all), Lang::En) => format!(
                "--checkpoint {glob:?} matches no module (modules: {}{})",
                some.join(", "),
                if *all > some.len() {
                    format!(", … {all} in all; memsight modules lists them")
                } else {
                    String::new()
                }
            ),
            (WhyNot::NoModuleMatches(glob, some, all), Lang::Zh) => format!(
                "{glob:?} 没有匹配的模块（模块：{}{}）",
                some.join("、"),
                if *all > some.len() {
                    format!("……共 {all} 个，memsight modules 可列出全部")
                } else {
                    String::new()
                }
            ),
            (WhyNot::BadGlob(why) | WhyNot::BadLever(why), _) => why.clone(),
            (WhyNot::NoPhases, Lang::En) => "the profile shows no forward and backward passes \
                 (host ops with an autograd backward), so nothing tells activations from \
                 gradients"
                .into(),
            (WhyNot::NoPhases, Lang::Zh) => {
                "数据中没有前向和反向阶段（带 autograd 反向的 host 算子），无法区分激活与梯度"
                    .into()
            }
            (WhyNot::NoGradients, Lang::En) => "no gradient is allocated in the profile, so the \
                 parameters' size is unknown (profile a whole training step, from before \
                 backward to after the optimizer step)"
                .into(),
            (WhyNot::NoGradients, Lang::Zh) => {
                "采集中没有分配梯度，无法得知参数大小（请采集完整的训练 \
                 step：从反向之前到优化器 step 之后）"
                    .into()
            }
            (WhyNot::Overflow, Lang::En) => "the predicted peak passes 4 EiB (the levers multiply \
                 a block past what a 64-bit byte count holds): no prediction; use smaller levers"
                .into(),
            (WhyNot::Overflow, Lang::Zh) => {
                "预测峰值超过 4 EiB（杠杆把内存块放大到 64 位字节数无法表示）：\
                 无法预测，请用更小的杠杆"
                    .into()
            }
        }
    }
}

impl std::fmt::Display for WhyNot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(Lang::En))
    }
}

/// One block on the replayed timeline.
#[derive(Debug, Clone, Copy)]
struct Interval {
    start: i64,
    /// `i64::MAX`: never freed.
    end: i64,
    bytes: i64,
    role: Role,
}

/// Predicts the peak of `scenario` from `data` (a loaded rank); builds its Operator Allocated
/// curve ([`predict_on`] takes a view's, built already).
pub fn predict(data: &RankData, scenario: &Scenario) -> Result<Prediction, WhyNot> {
    let overall = super::build_series(data, super::GroupBy::Overall);
    let allocated = overall
        .iter()
        .find(|s| s.name == super::OverallCurve::OperatorAllocated.label());
    predict_with(data, allocated, scenario, None)
}

/// [`predict`] on a view: its Operator Allocated curve is the chart's (built once).
pub fn predict_on(view: &super::RankView, scenario: &Scenario) -> Result<Prediction, WhyNot> {
    predict_with(
        &view.data,
        view.operator_allocated(),
        scenario,
        Some(view.event_order()),
    )
}

/// [`predict`] with the rank's Operator Allocated curve, when it has one.
fn predict_with(
    data: &RankData,
    allocated: Option<&super::Series>,
    scenario: &Scenario,
    order: Option<&EventOrder>,
) -> Result<Prediction, WhyNot> {
    check_levers(scenario)?;
    let ops = &data.operators;
    if !(0..ops.len()).any(|r| ops.size[r] > 0) {
        return Err(WhyNot::NoBlocks);
    }
    let phases = data
        .stacks
        .as_ref()
        .map(|s| s.phases.clone())
        .unwrap_or_default();
    let roles: Vec<Role> = match data.roles.as_ref() {
        Some(r) if !phases.is_empty() => r.role.clone(),
        _ if scenario.micro_batch != 1.0 || !scenario.checkpoint.is_empty() => {
            return Err(WhyNot::NoPhases);
        }
        _ => vec![Role::Unknown; ops.len()],
    };
    let mut assumptions = Vec::new();
    let mut intervals = measured_intervals(data, &roles);
    let (base, unexplained, measured) = match order {
        Some(o) => (o.base, o.unexplained.clone(), o.measured),
        None => {
            let events = sorted_events(&intervals, 0);
            base_and_peak(allocated, &intervals, &events)
        }
    };
    if allocated.is_none() {
        assumptions.push(Assumption::NoAllocatedCurve);
    }

    // Checkpointing moves activations; the sizes change after.
    let measured_ends: Vec<i64> = intervals.iter().map(|iv| iv.end).collect();
    let mut checkpointed = Vec::new();
    if !scenario.checkpoint.is_empty() {
        checkpointed = checkpoint(data, &roles, &phases, &scenario.checkpoint, &mut intervals)?;
        assumptions.push(Assumption::Checkpointing);
    }
    if scenario.micro_batch != 1.0 {
        let k = scenario.micro_batch;
        for iv in &mut intervals {
            if scales_with_batch(iv.role, iv.start, &phases, data.time_origin_ns) {
                iv.bytes = scale(iv.bytes, k);
            }
        }
        assumptions.push(Assumption::MicroBatch(k));
    }
    let mut base_by_role = vec![(Role::BeforeProfiling, base)];
    if scenario.zero.is_some() || scenario.offload_optimizer {
        base_by_role = shard(
            data,
            &roles,
            scenario,
            base,
            &mut intervals,
            &mut assumptions,
        )?;
    }
    // What the blocks do not explain changes: what was there before profiling and is freed
    // during it (last step's gradients, freed by `zero_grad`), as blocks of its own.
    let first_sample = allocated.and_then(|a| a.times.first().copied());
    let freed_before: i64 = unexplained
        .iter()
        .filter(|iv| Some(iv.start) == first_sample && iv.end != i64::MAX)
        .map(|iv| iv.bytes)
        .sum();
    if let Some(b) = base_by_role
        .iter_mut()
        .find(|b| b.0 == Role::BeforeProfiling)
    {
        b.1 = b.1.saturating_sub(freed_before);
    }
    if !unexplained.is_empty() {
        let rose: i64 = unexplained
            .iter()
            .filter(|iv| Some(iv.start) != first_sample || iv.end == i64::MAX)
            .map(|iv| iv.bytes)
            .sum();
        assumptions.push(Assumption::Unexplained {
            freed: freed_before,
            allocated: rose,
        });
    }
    intervals.extend(unexplained);
    let base_total: i64 = base_by_role.iter().map(|b| b.1).sum();
    let (curve, predicted) = match order {
        Some(order) => replay_in_order(&intervals, &measured_ends, &order.events, base_total),
        None => replay(&intervals, base_total),
    };
    let by_role = roles_at(&intervals, predicted.at_ns, &base_by_role);
    if predicted.bytes >= SATURATED_BYTES || by_role.iter().any(|r| r.1 >= SATURATED_BYTES) {
        return Err(WhyNot::Overflow);
    }
    Ok(Prediction {
        measured,
        predicted,
        by_role,
        curve,
        assumptions,
        checkpointed,
    })
}

/// Whether the levers are in range, before anything is read (the CLI checks them first: a
/// bad lever is refused at once, not after loading a 120 MB trace).
pub fn check_levers(s: &Scenario) -> Result<(), WhyNot> {
    if !s.micro_batch.is_finite() || s.micro_batch <= 0.0 || s.micro_batch > 1.0e6 {
        return Err(WhyNot::BadLever(format!(
            "--micro-batch must be a positive multiple of the profiled micro-batch, got {}",
            s.micro_batch
        )));
    }
    if let Some((stage, ranks)) = s.zero {
        if !(1..=3).contains(&stage) {
            return Err(WhyNot::BadLever(format!(
                "--zero must be 1, 2 or 3, got {stage}"
            )));
        }
        if ranks == 0 {
            return Err(WhyNot::BadLever("--ranks must be at least 1".into()));
        }
    }
    Ok(())
}

/// `bytes × k`, saturating.
fn scale(bytes: i64, k: f64) -> i64 {
    let v = (bytes as f64 * k).round();
    if v >= i64::MAX as f64 {
        i64::MAX
    } else {
        v as i64
    }
}

/// The measured blocks as intervals (ns from the origin).
fn measured_intervals(data: &RankData, roles: &[Role]) -> Vec<Interval> {
    let ops = &data.operators;
    (0..ops.len())
        .filter(|&r| ops.size[r] > 0)
        .map(|r| Interval {
            start: match ops.alloc_time[r] {
                NULL => i64::MIN,
                t => data.rel_ns(t),
            },
            end: match ops.release_time[r] {
                NULL => i64::MAX,
                t => data.rel_ns(t),
            },
            bytes: ops.size[r],
            role: roles.get(r).copied().unwrap_or(Role::Unknown),
        })
        .collect()
}

/// What was allocated before profiling (Operator Allocated at its first sample less the blocks
/// alive then; 0 without the curve), how that changes later as blocks of their own (see
/// [`unexplained_changes`]), and the profile's own peak.
fn base_and_peak(
    allocated: Option<&super::Series>,
    intervals: &[Interval],
    order: &[(i64, bool, u32)],
) -> (i64, Vec<Interval>, PeakAt) {
    match allocated.filter(|a| !a.times.is_empty() && a.times.len() == a.values.len()) {
        Some(a) => {
            let peak = super::peak(a).map_or(PeakAt { bytes: 0, at_ns: 0 }, |p| PeakAt {
                bytes: p.value,
                at_ns: p.time,
            });
            let (base, changes) = unexplained_changes(a, intervals, order);
            (base, changes, peak)
        }
        None => {
            let (_, peak) = replay(intervals, 0);
            (0, Vec::new(), peak)
        }
    }
}

/// What the allocator held that no block explains (its total less the live blocks, at each of
/// its samples): its first value, and its changes as intervals of role `BeforeProfiling` — a
/// fall as a block alive from the first sample until then (memory allocated before profiling
/// and freed during it), a rise as a block from then until the next fall or the end. Added to the
/// replay, they make the profile as measured replay to its own curve.
fn unexplained_changes(
    allocated: &super::Series,
    intervals: &[Interval],
    order: &[(i64, bool, u32)],
) -> (i64, Vec<Interval>) {
    let mut out = Vec::new();
    let mut rises: Vec<(i64, i64)> = Vec::new(); // (since, bytes), latest last
    let (mut live, mut e) = (0i64, 0usize);
    let mut level: Option<i64> = None;
    let mut first = 0;
    let origin = allocated.times.first().copied().unwrap_or(0);
    for (&t, &v) in allocated.times.iter().zip(&allocated.values) {
        while let Some(&(_, alloc, i)) = order.get(e).filter(|ev| ev.0 <= t) {
            let iv = &intervals[i as usize];
            if iv.end > iv.start {
                live = if alloc {
                    live.saturating_add(iv.bytes)
                } else {
                    live.saturating_sub(iv.bytes)
                };
            }
            e += 1;
        }
        let now = v.saturating_sub(live).max(0);
        let Some(before) = level else {
            level = Some(now);
            first = now;
            continue;
        };
        if now > before {
            rises.push((t, now - before));
        } else if now < before {
            // A fall closes the latest rises first; what is left was there from the start.
            let mut fall = before - now;
            while fall > 0 {
                let Some((since, bytes)) = rises.pop() else {
                    out.push(Interval {
                        start: origin,
                        end: t,
                        bytes: fall,
                        role: Role::BeforeProfiling,
                    });
                    break;
                };
                let closed = bytes.min(fall);
                out.push(Interval {
                    start: since,
                    end: t,
                    bytes: closed,
                    role: Role::BeforeProfiling,
                });
                if bytes > closed {
                    rises.push((since, bytes - closed));
                }
                fall -= closed;
            }
        }
        level = Some(now);
    }
    out.extend(rises.into_iter().map(|(since, bytes)| Interval {
        start: since,
        end: i64::MAX,
        bytes,
        role: Role::BeforeProfiling,
    }));
    (first, out)
}

/// Does a block of `role` allocated at `start` (ns from origin) scale with the micro-batch?
fn scales_with_batch(role: Role, start: i64, phases: &Phases, origin: i64) -> bool {
    match role {
        Role::Input | Role::Activation | Role::BackwardTemporary => true,
        Role::Temporary => phases
            .at(origin.saturating_add(start))
            .map(|i| phases.spans[i].kind)
            .is_some_and(|k| matches!(k, PhaseKind::Forward | PhaseKind::Backward)),
        _ => false,
    }
}

/// Applies checkpointing to `intervals` (in row order of the blocks with size > 0); returns
/// the modules matched.
fn checkpoint(
    data: &RankData,
    roles: &[Role],
    phases: &Phases,
    globs: &[String],
    intervals: &mut Vec<Interval>,
) -> Result<Vec<String>, WhyNot> {
    let (Some(tree), Some(stacks)) = (data.module_tree.as_ref(), data.stacks.as_ref()) else {
        return Err(WhyNot::NoModules);
    };
    let mut matched: Vec<u32> = Vec::new();
    for g in globs {
        let glob = super::modules::ModuleGlob::new(g).map_err(WhyNot::BadGlob)?;
        let m = glob.modules(tree);
        if m.is_empty() {
            let some = tree.nodes.iter().take(12).map(|n| n.name.clone()).collect();
            return Err(WhyNot::NoModuleMatches(g.clone(), some, tree.nodes.len()));
        }
        matched.extend(m);
    }
    matched.sort_unstable();
    matched.dedup();
    // A module inside another checkpointed one is covered by the outer one.
    let outermost: Vec<u32> = matched
        .iter()
        .copied()
        .filter(|&n| {
            !tree
                .ancestors(n)
                .skip(1)
                .any(|a| matched.binary_search(&a).is_ok())
        })
        .collect();
    let ops = &data.operators;
    // Row (size > 0) → its interval's index.
    let rows: Vec<usize> = (0..ops.len()).filter(|&r| ops.size[r] > 0).collect();
    let module_of: Vec<u32> = rows.iter().map(|&r| tree.row_module(stacks, r)).collect();
    let origin = data.time_origin_ns;
    let forward: Vec<(i64, i64)> = spans_of(phases, PhaseKind::Forward, origin);
    let backward: Vec<(i64, i64)> = spans_of(phases, PhaseKind::Backward, origin);
    let mut moved: Vec<Interval> = Vec::new();
    for &m in &outermost {
        let inside: Vec<usize> = (0..rows.len())
            .filter(|&i| in_subtree(tree, module_of[i], m))
            .collect();
        for &(f0, f1) in &forward {
            let Some(&(b0, b1)) = backward.iter().find(|b| b.0 >= f1) else {
                continue;
            };
            let acts: Vec<usize> = inside
                .iter()
                .copied()
                .filter(|&i| {
                    let iv = &intervals[i];
                    roles.get(rows[i]) == Some(&Role::Activation) && (f0..=f1).contains(&iv.start)
                })
                .collect();
            let Some(forward_end) = acts.iter().map(|&i| intervals[i].start).max() else {
                continue;
            };
            let Some(recompute) = inside
                .iter()
                .map(|&i| intervals[i].start)
                .filter(|&t| (b0..=b1).contains(&t))
                .min()
            else {
                continue;
            };
            let saved: Vec<usize> = acts
                .iter()
                .copied()
                .filter(|&i| intervals[i].end > forward_end)
                .collect();
            let output = saved
                .iter()
                .copied()
                .max_by_key(|&i| (intervals[i].start, i));
            for i in saved {
                if Some(i) == output || intervals[i].end <= recompute {
                    continue;
                }
                let iv = intervals[i];
                moved.push(Interval {
                    start: recompute,
                    ..iv
                });
                intervals[i].end = forward_end;
            }
        }
    }
    intervals.extend(moved);
    Ok(outermost
        .iter()
        .map(|&n| tree.nodes[n as usize].path.clone())
        .collect())
}

/// The spans of `kind` in `phases`, ns from the origin.
fn spans_of(phases: &Phases, kind: PhaseKind, origin: i64) -> Vec<(i64, i64)> {
    phases
        .spans
        .iter()
        .filter(|p| p.kind == kind)
        .map(|p| {
            (
                p.start_ns.saturating_sub(origin),
                p.end_ns.saturating_sub(origin),
            )
        })
        .collect()
}

/// Is `node` the module `root` or under it?
fn in_subtree(tree: &ModuleTree, node: u32, root: u32) -> bool {
    node != NO_MODULE && tree.ancestors(node).any(|a| a == root)
}

/// The parameters' bytes: the most gradient bytes allocated in one backward pass.
fn parameter_bytes(data: &RankData, roles: &[Role], phases: &Phases) -> i64 {
    let ops = &data.operators;
    let mut per_pass: Vec<i64> = vec![0; phases.spans.len().max(1)];
    for r in 0..ops.len() {
        if roles.get(r) != Some(&Role::Gradient) || ops.size[r] <= 0 {
            continue;
        }
        let i = phases.at(ops.alloc_time[r]).unwrap_or(0);
        if let Some(p) = per_pass.get_mut(i) {
            *p = p.saturating_add(ops.size[r]);
        }
    }
    per_pass.into_iter().max().unwrap_or(0)
}

/// Optimizer state per parameter byte, from the optimizer the host ops name.
fn optimizer_factor(data: &RankData, assumptions: &mut Vec<Assumption>) -> f64 {
    let names = |needle: &str| {
        data.stacks.as_ref().is_some_and(|s| {
            (0..s.op_names.len() as u32)
                .map(|i| s.op_names.get(i))
                .chain((0..s.frames.len() as u32).map(|i| s.frames.get(i)))
                .any(|n| n.to_ascii_lowercase().contains(needle))
        })
    };
    if names("adam") {
        assumptions.push(Assumption::Optimizer(Optimizer::Adam));
        2.0
    } else if names("sgd") {
        assumptions.push(Assumption::Optimizer(Optimizer::Sgd));
        1.0
    } else {
        assumptions.push(Assumption::Optimizer(Optimizer::Unnamed));
        2.0
    }
}

/// Applies ZeRO and offload: shrinks the optimizer state, gradients and parameters, in the
/// blocks and in what was allocated before profiling; returns the latter by role.
fn shard(
    data: &RankData,
    roles: &[Role],
    scenario: &Scenario,
    base: i64,
    intervals: &mut [Interval],
    assumptions: &mut Vec<Assumption>,
) -> Result<Vec<(Role, i64)>, WhyNot> {
    let phases = data
        .stacks
        .as_ref()
        .map(|s| s.phases.clone())
        .unwrap_or_default();
    let params = parameter_bytes(data, roles, &phases);
    if params <= 0 {
        return Err(WhyNot::NoGradients);
    }
    let factor = optimizer_factor(data, assumptions);
    // Optimizer state made during the profile is in its blocks; the rest was there before.
    let state_in_blocks: i64 = intervals
        .iter()
        .filter(|iv| iv.role == Role::OptimizerState)
        .map(|iv| iv.bytes)
        .sum();
    let state_total = scale(params, factor);
    let state_before = (state_total - state_in_blocks).clamp(0, base);
    let params_before = params.min(base - state_before);
    let other = base - state_before - params_before;
    assumptions.push(Assumption::Parameters {
        params,
        state_before,
        params_before,
        other,
    });
    let (stage, ranks) = scenario.zero.unwrap_or((0, 1));
    let n = f64::from(ranks.max(1));
    let mut state_factor = if stage >= 1 { 1.0 / n } else { 1.0 };
    if scenario.offload_optimizer {
        state_factor = 0.0;
        assumptions.push(Assumption::Offload);
    }
    let grad_factor = if stage >= 2 { 1.0 / n } else { 1.0 };
    let param_factor = if stage >= 3 { 1.0 / n } else { 1.0 };
    for iv in intervals.iter_mut() {
        match iv.role {
            Role::OptimizerState => iv.bytes = scale(iv.bytes, state_factor),
            Role::Gradient => iv.bytes = scale(iv.bytes, grad_factor),
            _ => {}
        }
    }
    let mut gather = 0;
    // Over one rank nothing is sharded, so nothing is gathered.
    if stage >= 3 && ranks > 1 {
        gather = largest_module_params(data, roles);
        assumptions.push(Assumption::Zero3Gather { ranks, gather });
    }
    if stage >= 1 {
        assumptions.push(Assumption::Zero { stage, ranks });
    }
    Ok(vec![
        (Role::OptimizerState, scale(state_before, state_factor)),
        (
            Role::BeforeProfiling,
            other
                .saturating_add(scale(params_before, param_factor))
                .saturating_add(gather),
        ),
    ])
}

/// The gradient bytes of the largest module just under the top one (its parameters).
fn largest_module_params(data: &RankData, roles: &[Role]) -> i64 {
    let (Some(tree), Some(stacks)) = (data.module_tree.as_ref(), data.stacks.as_ref()) else {
        return 0;
    };
    let phases = &stacks.phases;
    let ops = &data.operators;
    let mut per: std::collections::HashMap<(u32, usize), i64> = Default::default();
    for r in 0..ops.len() {
        if roles.get(r) != Some(&Role::Gradient) || ops.size[r] <= 0 {
            continue;
        }
        let pass = phases.at(ops.alloc_time[r]).unwrap_or(0);
        let node = tree.row_module(stacks, r);
        // The ancestor at depth 1 (else the top module itself).
        let top = tree
            .ancestors(node)
            .find(|&a| tree.nodes[a as usize].depth <= 1);
        if let Some(top) = top {
            let e = per.entry((top, pass)).or_default();
            *e = e.saturating_add(ops.size[r]);
        }
    }
    per.into_values().max().unwrap_or(0)
}

/// What every replay of a view starts from, computed once per view
/// ([`super::RankView::event_order`]): the measured blocks' events in replay order,
/// `(time, is_alloc, interval)` by time with frees first, so that a lever that moves no block
/// (micro-batch, ZeRO, offload) replays in one pass and checkpointing merges in only the
/// events it moves; and what the blocks do not explain (the allocator's total less the live
/// blocks).
#[derive(Debug)]
pub struct EventOrder {
    events: Vec<(i64, bool, u32)>,
    base: i64,
    unexplained: Vec<Interval>,
    measured: PeakAt,
}

impl EventOrder {
    /// The order of `data`'s measured blocks, and what `allocated` (its Operator Allocated
    /// curve) holds that they do not explain.
    pub fn new(data: &RankData, allocated: Option<&super::Series>) -> EventOrder {
        let intervals = measured_intervals(data, &[]);
        let events = sorted_events(&intervals, 0);
        let (base, unexplained, measured) = base_and_peak(allocated, &intervals, &events);
        EventOrder {
            events,
            base,
            unexplained,
            measured,
        }
    }
}

/// The events of `intervals[from..]` (indices into `intervals`), sorted (frees first at a
/// time; a million blocks' events sort in parallel).
fn sorted_events(intervals: &[Interval], from: usize) -> Vec<(i64, bool, u32)> {
    let mut events: Vec<(i64, bool, u32)> = Vec::with_capacity((intervals.len() - from) * 2);
    for (i, iv) in intervals.iter().enumerate().skip(from) {
        events.push((iv.start, true, i as u32));
        if iv.end != i64::MAX {
            events.push((iv.end, false, i as u32));
        }
    }
    use rayon::slice::ParallelSliceMut;
    events.par_sort_unstable_by_key(|&(t, alloc, _)| (t, alloc));
    events
}

/// The curve of `intervals` over `base` and its peak (first reached; frees before allocations
/// at the same time).
fn replay(intervals: &[Interval], base: i64) -> (Vec<(i64, i64)>, PeakAt) {
    let ends: Vec<i64> = intervals.iter().map(|iv| iv.end).collect();
    replay_in_order(intervals, &ends, &sorted_events(intervals, 0), base)
}

/// [`replay`] walking `order`, the sorted events of the first `measured_ends.len()` intervals
/// as measured: an interval whose end differs from its measured one frees at its new end, and
/// the intervals after those (the recomputed activations) are merged in.
fn replay_in_order(
    intervals: &[Interval],
    measured_ends: &[i64],
    order: &[(i64, bool, u32)],
    base: i64,
) -> (Vec<(i64, i64)>, PeakAt) {
    let n = measured_ends.len();
    let valid = |i: usize| {
        let iv = &intervals[i];
        iv.bytes != 0 && iv.end > iv.start
    };
    let moved = |i: usize| i < n && intervals[i].end != measured_ends[i];
    let mut extra: Vec<(i64, bool, u32)> = (0..n)
        .filter(|&i| moved(i) && valid(i) && intervals[i].end != i64::MAX)
        .map(|i| (intervals[i].end, false, i as u32))
        .collect();
    extra.extend(sorted_events(intervals, n));
    extra.sort_unstable_by_key(|&(t, alloc, _)| (t, alloc));
    let kept = order
        .iter()
        .copied()
        .filter(|&(_, alloc, i)| valid(i as usize) && (alloc || !moved(i as usize)));
    let extra = extra.into_iter().filter(|&(_, _, i)| valid(i as usize));
    let events = itertools_merge(kept, extra);
    let mut curve: Vec<(i64, i64)> = Vec::with_capacity(order.len());
    let mut now = base;
    let mut peak: Option<PeakAt> = None;
    for (t, alloc, i) in events {
        let b = intervals[i as usize].bytes;
        now = if alloc {
            now.saturating_add(b)
        } else {
            now.saturating_sub(b)
        };
        let t = t.max(i64::MIN + 1);
        match curve.last_mut() {
            Some(last) if last.0 == t => last.1 = now,
            _ => curve.push((t, now)),
        }
        let first = peak.get_or_insert(PeakAt {
            bytes: base,
            at_ns: t.max(0),
        });
        if now > first.bytes {
            *first = PeakAt {
                bytes: now,
                at_ns: t,
            };
        }
    }
    let peak = peak.unwrap_or(PeakAt {
        bytes: base,
        at_ns: 0,
    });
    (curve, peak)
}

/// Two sorted event streams merged by (time, is_alloc).
fn itertools_merge(
    a: impl Iterator<Item = (i64, bool, u32)>,
    b: impl Iterator<Item = (i64, bool, u32)>,
) -> impl Iterator<Item = (i64, bool, u32)> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if (y.0, y.1) < (x.0, x.1) => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    })
}

/// The bytes alive at `t` by role, with what was there before profiling.
fn roles_at(intervals: &[Interval], t: i64, base: &[(Role, i64)]) -> Vec<(Role, i64)> {
    let mut by = [0i64; Role::ALL.len()];
    for iv in intervals {
        if iv.start <= t && iv.end > t && iv.end > iv.start {
            let b = &mut by[iv.role.index()];
            *b = b.saturating_add(iv.bytes);
        }
    }
    for &(role, b) in base {
        let e = &mut by[role.index()];
        *e = e.saturating_add(b);
    }
    Role::ALL
        .iter()
        .map(|&r| (r, by[r.index()]))
        .filter(|&(_, b)| b != 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(start: i64, end: i64, bytes: i64) -> Interval {
        Interval {
            start,
            end,
            bytes,
            role: Role::Activation,
        }
    }

    #[test]
    fn the_replay_peaks_where_the_live_bytes_are_most() {
        let (curve, peak) = replay(&[iv(0, 10, 5), iv(2, 4, 7), iv(4, 20, 1)], 100);
        assert_eq!(
            peak,
            PeakAt {
                bytes: 112,
                at_ns: 2
            }
        );
        // At 4 the 7 is freed before the 1 is allocated: never 113.
        assert_eq!(
            curve,
            vec![(0, 105), (2, 112), (4, 106), (10, 101), (20, 100)]
        );
    }

    #[test]
    fn roles_at_the_peak_add_up_to_it() {
        let ivs = [iv(0, 10, 5), iv(2, 4, 7)];
        let (_, peak) = replay(&ivs, 100);
        let by = roles_at(&ivs, peak.at_ns, &[(Role::BeforeProfiling, 100)]);
        assert_eq!(by.iter().map(|r| r.1).sum::<i64>(), peak.bytes);
    }

    #[test]
    fn levers_out_of_range_are_refused() {
        for s in [
            Scenario {
                micro_batch: 0.0,
                ..Default::default()
            },
            Scenario {
                micro_batch: f64::NAN,
                ..Default::default()
            },
            Scenario {
                zero: Some((4, 8)),
                ..Default::default()
            },
            Scenario {
                zero: Some((1, 0)),
                ..Default::default()
            },
        ] {
            assert!(
                matches!(check_levers(&s), Err(WhyNot::BadLever(_))),
                "{s:?}"
            );
        }
    }
}
