//! Memory by training role: the live bytes of each role over time, the split at the Operator
//! Allocated peak and at each step's peak, and what would lower the peak (each line with the
//! bytes it addresses and its evidence). The roles themselves come from `ingest::roles`.
//!
//! **Adding up.** At any time, the live blocks of each role plus `before_profiling` (Operator
//! Allocated less every live block: what was allocated before the profile began) equal the
//! Operator Allocated curve. Without that curve, the live blocks are the total.

use super::{Series, held_at};
use crate::model::{Lang, NULL, RankData, Role};

/// The live bytes of one role over time (a step series, ns from the rank origin).
#[derive(Debug, Clone)]
pub struct RoleSeries {
    /// Which role.
    pub role: Role,
    /// Its live bytes.
    pub series: Series,
}

/// Bytes and blocks of one role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoleBytes {
    /// Which role.
    pub role: Role,
    /// Bytes (live at a time, or allocated over the profile for totals).
    pub bytes: i64,
    /// Blocks (0 for `before_profiling`, which has none).
    pub blocks: usize,
}

/// The roles at one time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolesAt {
    /// ns from the rank origin.
    pub at_ns: i64,
    /// Each role present, in [`Role::ALL`] order, `before_profiling` included when the
    /// Operator Allocated curve is known.
    pub roles: Vec<RoleBytes>,
    /// What they add up to (Operator Allocated, else the live blocks).
    pub total: i64,
}

impl RolesAt {
    /// The bytes of `role` (0 when absent).
    pub fn bytes(&self, role: Role) -> i64 {
        self.roles
            .iter()
            .find(|r| r.role == role)
            .map_or(0, |r| r.bytes)
    }
}

/// One step's peak split by role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRoles {
    /// The step number.
    pub step: i64,
    /// Its peak and the roles then.
    pub at_peak: RolesAt,
}

/// What a line of advice is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdviceKind {
    /// Activations held at the peak: recompute them.
    Recompute,
    /// Optimizer state: shard it over the data-parallel ranks.
    ShardOptimizerState,
    /// Gradients: shard them, or accumulate in fewer buffers.
    ShardGradients,
    /// The pool's cache at the peak: `expandable_segments:True`.
    ExpandableSegments,
    /// What was allocated before profiling: profile from step 1.
    BeforeProfiling,
    /// Forward and backward temporaries at the peak: in-place ops, fused kernels, chunks.
    Temporaries,
}

impl AdviceKind {
    /// The name in JSON (`recompute`, `shard_optimizer_state`, `shard_gradients`,
    /// `expandable_segments`, `before_profiling`, `temporaries`).
    pub fn as_str(self) -> &'static str {
        match self {
            AdviceKind::Recompute => "recompute",
            AdviceKind::ShardOptimizerState => "shard_optimizer_state",
            AdviceKind::ShardGradients => "shard_gradients",
            AdviceKind::ExpandableSegments => "expandable_segments",
            AdviceKind::BeforeProfiling => "before_profiling",
            AdviceKind::Temporaries => "temporaries",
        }
    }
}

/// One thing that would lower the peak, with the bytes it addresses and its evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advice {
    /// What it is about.
    pub kind: AdviceKind,
    /// Bytes at the peak it addresses.
    pub bytes: i64,
    /// Data-parallel ranks in the profile (for sharding; 1 until [`RoleReport::advice_for`]).
    pub ranks: usize,
    /// The largest holders (source line or op, bytes), for recompute and temporaries.
    pub holders: Vec<(String, i64)>,
    /// The allocator's settings variable on this rank's device (for expandable segments):
    /// `PYTORCH_NPU_ALLOC_CONF`, or `PYTORCH_CUDA_ALLOC_CONF` on a CUDA rank.
    pub alloc_conf: &'static str,
    /// What the advice's lever would do, replayed from the run ([`super::whatif`]) rather
    /// than estimated: checkpointing the profile's repeated module for recompute, ZeRO for
    /// sharding (see [`advice_replayed`]).
    pub replayed: Option<Replayed>,
}

/// A lever of the what-if replay, as advice names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lever {
    /// Checkpoint these modules, as `--checkpoint` takes them (a class: `Block`).
    Checkpoint(String),
    /// ZeRO at `stage` over `ranks` data-parallel ranks.
    Zero {
        /// 1 (optimizer state), 2 (and gradients) or 3 (and parameters).
        stage: u8,
        /// The ranks sharded over.
        ranks: u32,
    },
}

impl Lever {
    /// The lever as `memsight whatif` arguments (`--checkpoint Block`, `--zero 1 --ranks 8`).
    pub fn whatif_args(&self) -> String {
        match self {
            Lever::Checkpoint(glob) => {
                format!(
                    "--checkpoint {}",
                    crate::model::shell::quote(std::ffi::OsStr::new(glob))
                )
            }
            Lever::Zero { stage, ranks } => format!("--zero {stage} --ranks {ranks}"),
        }
    }
}

/// A lever replayed from the run: the peak without and with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    /// The lever.
    pub lever: Lever,
    /// The profile's peak, bytes.
    pub from: i64,
    /// The predicted peak, bytes.
    pub to: i64,
}

/// The ranks a one-rank profile's sharding advice is replayed over, as an example (a node of
/// eight accelerators).
pub const EXAMPLE_RANKS: u32 = 8;

impl Advice {
    /// Bytes sharding would save on this rank ((N−1)/N of [`Advice::bytes`] with N ranks), for
    /// the sharding kinds.
    pub fn saves(&self) -> Option<i64> {
        let n = self.ranks.max(1) as i64;
        matches!(
            self.kind,
            AdviceKind::ShardOptimizerState | AdviceKind::ShardGradients
        )
        .then(|| self.bytes.saturating_mul(n - 1) / n)
    }

    /// The advice as English text, sizes in MB with one decimal (the CLI and the JSON's
    /// `text`).
    pub fn english(&self) -> String {
        self.in_cli(Lang::En)
    }

    /// The advice in `lang` with the CLI's sizes (MiB, one decimal).
    pub fn in_cli(&self, lang: Lang) -> String {
        self.render(lang, &|b| {
            format!("{:.1} MB", crate::model::bytes_to_mib(b))
        })
    }

    /// The advice in `lang`, each size written by `size` (the app passes its panel's unit):
    /// one text, both languages side by side, its figures typed arguments.
    pub fn render(&self, lang: Lang, size: &dyn Fn(i64) -> String) -> String {
        let mb = size(self.bytes);
        let (n, saves) = (self.ranks, size(self.saves().unwrap_or(0)));
        let sep = if lang == Lang::Zh { "；" } else { "; " };
        let who = self
            .holders
            .iter()
            .map(|(name, b)| match lang {
                Lang::En => format!("{name} ({})", size(*b)),
                Lang::Zh => format!("{name}（{}）", size(*b)),
            })
            .collect::<Vec<_>>()
            .join(sep);
        let conf = self.alloc_conf;
        let one_rank = n <= 1;
        let text = match (self.kind, lang) {
            (AdviceKind::Recompute, Lang::En) => format!(
                "Activations hold {mb} at the peak; recompute them (activation checkpointing) or use a smaller micro-batch. Held most by: {who}"
            ),
            (AdviceKind::Recompute, Lang::Zh) => format!(
                "峰值时激活值占 {mb}：可用重计算（activation checkpointing）或减小 micro-batch。占用最多的位置：{who}"
            ),
            (AdviceKind::ShardOptimizerState, Lang::En) if one_rank => format!(
                "Optimizer state allocated in the profile holds {mb} at the peak; sharding it over N data-parallel ranks (ZeRO-1, distributed optimizer) saves (N-1)/N of it (this profile has one rank)"
            ),
            (AdviceKind::ShardOptimizerState, Lang::Zh) if one_rank => format!(
                "采集中分配的优化器状态在峰值时占 {mb}：在 N 个数据并行 rank 间切分（ZeRO-1、分布式优化器）可节省其中的 (N-1)/N（本数据只有一个 rank）"
            ),
            (AdviceKind::ShardOptimizerState, Lang::En) => format!(
                "Optimizer state allocated in the profile holds {mb} at the peak; sharding it over the {n} data-parallel ranks (ZeRO-1, distributed optimizer) saves {saves} on this rank"
            ),
            (AdviceKind::ShardOptimizerState, Lang::Zh) => format!(
                "采集中分配的优化器状态在峰值时占 {mb}：在 {n} 个数据并行 rank 间切分（ZeRO-1、分布式优化器）可在本 rank 节省 {saves}"
            ),
            (AdviceKind::ShardGradients, Lang::En) if one_rank => format!(
                "Gradients hold {mb} at the peak; sharding them over N ranks (ZeRO-2, FSDP) saves (N-1)/N of it (this profile has one rank); smaller DDP buckets lower the extra copies"
            ),
            (AdviceKind::ShardGradients, Lang::Zh) if one_rank => format!(
                "峰值时梯度占 {mb}：在 N 个 rank 间切分（ZeRO-2、FSDP）可节省其中的 (N-1)/N（本数据只有一个 rank）；减小 DDP bucket 可减少额外拷贝"
            ),
            (AdviceKind::ShardGradients, Lang::En) => format!(
                "Gradients hold {mb} at the peak; sharding them over the {n} ranks (ZeRO-2, FSDP) saves {saves}; smaller DDP buckets lower the extra copies"
            ),
            (AdviceKind::ShardGradients, Lang::Zh) => format!(
                "峰值时梯度占 {mb}：在 {n} 个 rank 间切分（ZeRO-2、FSDP）可节省 {saves}；减小 DDP bucket 可减少额外拷贝"
            ),
            (AdviceKind::ExpandableSegments, Lang::En) => format!(
                "The pool caches {mb} at the peak (Operator Reserved − Allocated); {conf}=expandable_segments:True lets it reuse that memory instead of reserving more"
            ),
            (AdviceKind::ExpandableSegments, Lang::Zh) => format!(
                "峰值时内存池缓存了 {mb}（Operator Reserved − Allocated）：设置 {conf}=expandable_segments:True 可复用这部分内存，而不是再申请"
            ),
            (AdviceKind::BeforeProfiling, Lang::En) => format!(
                "{mb} was allocated before profiling began (weights, optimizer state of earlier steps, buffers): the profile cannot tell them apart; profiling from step 1 splits it by role"
            ),
            (AdviceKind::BeforeProfiling, Lang::Zh) => format!(
                "{mb} 在采集开始前就已分配（权重、之前迭代的优化器状态、缓冲区），本次数据无法区分；从第 1 个迭代开始采集即可按角色拆分"
            ),
            (AdviceKind::Temporaries, Lang::En) => format!(
                "Temporaries (forward and backward intermediates) hold {mb} at the peak; in-place ops, fused kernels (fused attention, fused optimizer) or computing in smaller chunks lower them. Held most by: {who}"
            ),
            (AdviceKind::Temporaries, Lang::Zh) => format!(
                "峰值时临时内存（前向与反向的中间结果）占 {mb}：可改用原地（in-place）算子、融合算子（融合注意力、融合优化器），或分块计算。占用最多的算子：{who}"
            ),
        };
        format!("{text}{}", self.replayed_text(lang, size))
    }

    /// The replayed lever as a sentence to append (empty when none was replayed).
    fn replayed_text(&self, lang: Lang, size: &dyn Fn(i64) -> String) -> String {
        let Some(r) = &self.replayed else {
            return String::new();
        };
        let (from, to, args) = (size(r.from), size(r.to), r.lever.whatif_args());
        match (&r.lever, lang) {
            (Lever::Checkpoint(module), Lang::En) => format!(
                ". Checkpointing every {module} would lower the peak from {from} to {to} (replayed from this run: memsight whatif {args})"
            ),
            (Lever::Checkpoint(module), Lang::Zh) => format!(
                "。对每个 {module} 做激活重计算，峰值将从 {from} 降到 {to}（按本次运行回放：memsight whatif {args}）"
            ),
            (Lever::Zero { stage, ranks }, Lang::En) if self.ranks <= 1 => format!(
                ". ZeRO-{stage} over {ranks} ranks, for example, would lower the peak from {from} to {to} (replayed from this run: memsight whatif {args})"
            ),
            (Lever::Zero { stage, ranks }, Lang::Zh) if self.ranks <= 1 => format!(
                "。例如在 {ranks} 个 rank 间使用 ZeRO-{stage}，峰值将从 {from} 降到 {to}（按本次运行回放：memsight whatif {args}）"
            ),
            (Lever::Zero { stage, ranks }, Lang::En) => format!(
                ". ZeRO-{stage} over the {ranks} ranks would lower the peak from {from} to {to} (replayed from this run: memsight whatif {args})"
            ),
            (Lever::Zero { stage, ranks }, Lang::Zh) => format!(
                "。在这 {ranks} 个 rank 间使用 ZeRO-{stage}，峰值将从 {from} 降到 {to}（按本次运行回放：memsight whatif {args}）"
            ),
        }
    }
}

/// Everything the roles view and `memsight roles` show for a rank.
#[derive(Debug, Clone)]
pub struct RoleReport {
    /// Each role present: its live bytes over time.
    pub series: Vec<RoleSeries>,
    /// Per role: bytes allocated over the profile and blocks; `before_profiling`'s bytes are
    /// what was held at the profile's start.
    pub totals: Vec<RoleBytes>,
    /// At the Operator Allocated peak (else the live blocks' peak).
    pub at_peak: Option<RolesAt>,
    /// Each step's peak.
    pub per_step: Vec<StepRoles>,
    /// What would lower the peak, largest first.
    pub advice: Vec<Advice>,
    /// Why every block is `unknown`, when it is.
    pub why_unknown: Option<crate::model::WhyUnknown>,
}

impl RoleReport {
    /// The advice with `ranks` data-parallel ranks in the profile (the report is computed for
    /// one; what sharding saves follows from the count, [`Advice::saves`]).
    pub fn advice_for(&self, ranks: usize) -> Vec<Advice> {
        self.advice
            .iter()
            .map(|a| Advice {
                ranks: ranks.max(1),
                ..a.clone()
            })
            .collect()
    }
}

/// Smallest amount worth a line of advice.
const ADVICE_MIN_BYTES: i64 = 1024 * 1024;

/// Holders listed for recompute.
const HOLDERS: usize = 3;

/// The report for `data`: `overall` are its Overall curves (Operator Allocated, Reserved).
/// The advice is for one rank: [`RoleReport::advice_for`] gives it for the profile's ranks.
pub fn role_report(data: &RankData, overall: &[&Series]) -> RoleReport {
    let curve = |name: &str| overall.iter().copied().find(|s| s.name == name);
    let allocated = curve(super::OverallCurve::OperatorAllocated.label());
    let reserved = curve(super::OverallCurve::OperatorReserved.label());
    let series = role_series(data);
    let Some(roles) = data.roles.as_ref() else {
        return RoleReport {
            series,
            totals: Vec::new(),
            at_peak: None,
            per_step: Vec::new(),
            advice: Vec::new(),
            why_unknown: Some(crate::model::WhyUnknown::NoBlocks),
        };
    };
    let ops = &data.operators;

    // Totals over the profile.
    let mut totals: Vec<RoleBytes> = Role::ALL
        .iter()
        .map(|&role| RoleBytes {
            role,
            bytes: 0,
            blocks: 0,
        })
        .collect();
    for (r, &role) in roles.role.iter().enumerate() {
        let t = &mut totals[role.index()];
        t.blocks += 1;
        t.bytes = t.bytes.saturating_add(ops.size[r].max(0));
    }
    if let Some(a) = allocated
        && let Some(&t0) = a.times.first()
    {
        let held = a.values[0].saturating_sub(live_total(&series, t0));
        totals[Role::BeforeProfiling.index()].bytes = held;
    }
    totals.retain(|t| t.blocks > 0 || t.bytes != 0);

    // The peak: Operator Allocated's, else the live blocks'.
    // Without Operator Allocated, the live blocks' sum is the curve (built only then).
    let live_sum;
    let peak_curve = match allocated {
        Some(a) => a,
        None => {
            live_sum = live_sum_series(&series);
            &live_sum
        }
    };
    let at_peak = super::peak(peak_curve).map(|p| roles_at(data, &series, allocated, p.time));

    let per_step = data
        .steps
        .as_ref()
        .map(|steps| {
            steps
                .steps
                .iter()
                .filter_map(|s| {
                    let (a, b) = (data.rel_ns(s.start_ns), data.rel_ns(s.end_ns));
                    let t = peak_within(peak_curve, a, b)?;
                    Some(StepRoles {
                        step: s.id,
                        at_peak: roles_at_quick(&series, allocated, t),
                    })
                })
                .collect()
        })
        .unwrap_or_default();

    let advice = at_peak
        .as_ref()
        .map(|p| advice_at(data, p, reserved))
        .unwrap_or_default();
    RoleReport {
        series,
        totals,
        at_peak,
        per_step,
        advice,
        why_unknown: roles.why_unknown,
    }
}

/// Each role's live bytes over time (only roles with blocks; `before_profiling` has none).
/// Each role's events are radix-sorted, the roles in parallel.
pub fn role_series(data: &RankData) -> Vec<RoleSeries> {
    use rayon::prelude::*;
    let Some(roles) = data.roles.as_ref() else {
        return Vec::new();
    };
    let ops = &data.operators;
    let mut counts = [0usize; 8];
    for &role in &roles.role {
        counts[role.index()] += 2;
    }
    let mut events: Vec<Vec<(i64, i64)>> = counts.iter().map(|&n| Vec::with_capacity(n)).collect();
    for (r, &role) in roles.role.iter().enumerate() {
        let (size, a, f) = (ops.size[r], ops.alloc_time[r], ops.release_time[r]);
        if size <= 0 || a == NULL {
            continue;
        }
        let e = &mut events[role.index()];
        e.push((data.rel_ns(a), size));
        if f != NULL {
            e.push((data.rel_ns(f), -size));
        }
    }
    let built: Vec<Option<RoleSeries>> = Role::ALL
        .par_iter()
        .zip(events.into_par_iter())
        .map(|(&role, mut e)| {
            if e.is_empty() {
                return None;
            }
            // By time only (radix): events at one time collapse into one point below, so
            // their order among themselves does not matter.
            radsort::sort_by_key(&mut e, |x| x.0);
            let mut s = Series::new(role.as_str());
            s.times.reserve(e.len());
            s.values.reserve(e.len());
            let mut live = 0i64;
            for (t, d) in e {
                live = live.saturating_add(d);
                if s.times.last() == Some(&t) {
                    if let Some(v) = s.values.last_mut() {
                        *v = live;
                    }
                } else {
                    s.times.push(t);
                    s.values.push(live);
                }
            }
            Some(RoleSeries { role, series: s })
        })
        .collect();
    built.into_iter().flatten().collect()
}

/// The live blocks of all roles at `t`.
fn live_total(series: &[RoleSeries], t: i64) -> i64 {
    series
        .iter()
        .map(|s| held_at(&s.series, t).unwrap_or(0))
        .fold(0i64, i64::saturating_add)
}

/// The sum of the role series, as one series.
fn live_sum_series(series: &[RoleSeries]) -> Series {
    let mut times: Vec<i64> = series
        .iter()
        .flat_map(|s| s.series.times.iter().copied())
        .collect();
    times.sort_unstable();
    times.dedup();
    let mut out = Series::new("live blocks");
    let mut idx = vec![0usize; series.len()];
    let mut cur = vec![0i64; series.len()];
    for t in times {
        for (k, s) in series.iter().enumerate() {
            while idx[k] < s.series.times.len() && s.series.times[idx[k]] <= t {
                cur[k] = s.series.values[idx[k]];
                idx[k] += 1;
            }
        }
        out.times.push(t);
        out.values
            .push(cur.iter().copied().fold(0, i64::saturating_add));
    }
    out
}

/// The time of `curve`'s largest value within [a, b] (the value held at `a` counts), or none.
fn peak_within(curve: &Series, a: i64, b: i64) -> Option<i64> {
    let lo = curve.times.partition_point(|&t| t <= a);
    let hi = curve.times.partition_point(|&t| t <= b);
    let mut best: Option<(i64, i64)> = lo.checked_sub(1).map(|i| (curve.values[i], a));
    for i in lo..hi {
        if best.is_none_or(|(v, _)| curve.values[i] > v) {
            best = Some((curve.values[i], curve.times[i]));
        }
    }
    best.map(|(_, t)| t)
}

/// The roles at `t` from the series (bytes only, no block counts).
pub fn roles_at_quick(series: &[RoleSeries], allocated: Option<&Series>, t: i64) -> RolesAt {
    let mut roles: Vec<RoleBytes> = series
        .iter()
        .map(|s| RoleBytes {
            role: s.role,
            bytes: held_at(&s.series, t).unwrap_or(0),
            blocks: 0,
        })
        .collect();
    finish_at(&mut roles, allocated, t)
}

/// The roles at `t` (ns from the origin), with the live blocks counted (one pass over the
/// blocks).
pub fn roles_at(
    data: &RankData,
    series: &[RoleSeries],
    allocated: Option<&Series>,
    t: i64,
) -> RolesAt {
    let mut roles = roles_at_quick(series, allocated, t).roles;
    roles.retain(|r| r.role != Role::BeforeProfiling);
    if let Some(br) = data.roles.as_ref() {
        let ops = &data.operators;
        let abs = data.time_origin_ns.saturating_add(t);
        for (r, &role) in br.role.iter().enumerate() {
            if live_at(ops.size[r], ops.alloc_time[r], ops.release_time[r], abs)
                && let Some(x) = roles.iter_mut().find(|x| x.role == role)
            {
                x.blocks += 1;
            }
        }
    }
    finish_at(&mut roles, allocated, t)
}

/// Is a block live at absolute `t` (allocated at or before, released after)?
fn live_at(size: i64, alloc: i64, release: i64, t: i64) -> bool {
    size > 0 && alloc != NULL && alloc <= t && (release == NULL || release > t)
}

fn finish_at(roles: &mut Vec<RoleBytes>, allocated: Option<&Series>, t: i64) -> RolesAt {
    let live: i64 = roles.iter().map(|r| r.bytes).fold(0, i64::saturating_add);
    let total = match allocated.and_then(|a| held_at(a, t)) {
        Some(a) => {
            roles.push(RoleBytes {
                role: Role::BeforeProfiling,
                bytes: a.saturating_sub(live),
                blocks: 0,
            });
            a
        }
        None => live,
    };
    roles.sort_by_key(|r| r.role.index());
    RolesAt {
        at_ns: t,
        roles: std::mem::take(roles),
        total,
    }
}

/// The advice at the peak, largest first.
fn advice_at(data: &RankData, at: &RolesAt, reserved: Option<&Series>) -> Vec<Advice> {
    let base = |kind, bytes| Advice {
        kind,
        bytes,
        ranks: 1,
        holders: Vec::new(),
        alloc_conf: crate::model::alloc_conf_var(data.info.device.as_deref()),
        replayed: None,
    };
    let mut out = Vec::new();
    let act = at.bytes(Role::Activation);
    if act >= ADVICE_MIN_BYTES {
        out.push(Advice {
            holders: holders(data, at.at_ns, &[Role::Activation], Holder::Line),
            replayed: replay_checkpoint(data),
            ..base(AdviceKind::Recompute, act)
        });
    }
    let opt = at.bytes(Role::OptimizerState);
    if opt >= ADVICE_MIN_BYTES {
        out.push(base(AdviceKind::ShardOptimizerState, opt));
    }
    let grad = at.bytes(Role::Gradient);
    if grad >= ADVICE_MIN_BYTES {
        out.push(base(AdviceKind::ShardGradients, grad));
    }
    if let Some(r) = reserved.and_then(|r| held_at(r, at.at_ns)) {
        let cache = r.saturating_sub(at.total);
        if cache >= ADVICE_MIN_BYTES {
            out.push(base(AdviceKind::ExpandableSegments, cache));
        }
    }
    let before = at.bytes(Role::BeforeProfiling);
    if before >= ADVICE_MIN_BYTES {
        out.push(base(AdviceKind::BeforeProfiling, before));
    }
    let temporaries = at
        .bytes(Role::Temporary)
        .saturating_add(at.bytes(Role::BackwardTemporary));
    if temporaries >= ADVICE_MIN_BYTES {
        out.push(Advice {
            holders: holders(
                data,
                at.at_ns,
                &[Role::Temporary, Role::BackwardTemporary],
                Holder::OpAndLine,
            ),
            ..base(AdviceKind::Temporaries, temporaries)
        });
    }
    out.sort_by_key(|a| std::cmp::Reverse(a.bytes));
    out
}

/// Checkpointing the profile's repeated module (the outermost class with two or more
/// instances under one parent: a transformer's `Block`), replayed; `None` without modules, or
/// when it would not lower the peak by [`ADVICE_MIN_BYTES`].
fn replay_checkpoint(data: &RankData) -> Option<Replayed> {
    let tree = data.module_tree.as_ref()?;
    let mut count: rustc_hash::FxHashMap<(u32, &str), (u32, u32)> = Default::default();
    for m in &tree.nodes {
        let e = count
            .entry((m.parent, m.class_name()))
            .or_insert((0, m.depth));
        e.0 += 1;
    }
    let (&(_, class), _) = count
        .iter()
        .filter(|(_, (n, _))| *n >= 2)
        .min_by_key(|((_, class), (n, depth))| (*depth, std::cmp::Reverse(*n), *class))?;
    let scenario = super::whatif::Scenario {
        checkpoint: vec![class.to_string()],
        ..Default::default()
    };
    let p = super::whatif::predict(data, &scenario).ok()?;
    (p.measured.bytes.saturating_sub(p.predicted.bytes) >= ADVICE_MIN_BYTES).then(|| Replayed {
        lever: Lever::Checkpoint(class.to_string()),
        from: p.measured.bytes,
        to: p.predicted.bytes,
    })
}

/// The advice of `view` for `ranks` data-parallel ranks ([`RoleReport::advice_for`]) with each
/// sharding line replayed: ZeRO-1 for the optimizer state, ZeRO-2 for the gradients, over the
/// profile's ranks (over [`EXAMPLE_RANKS`] when it has one). A lever the replay refuses (no
/// backward pass to size the parameters from) keeps the line without a replay.
pub fn advice_replayed(view: &super::RankView, ranks: usize) -> Vec<Advice> {
    let mut advice = view.roles().advice_for(ranks);
    let over = if ranks > 1 {
        u32::try_from(ranks).unwrap_or(u32::MAX)
    } else {
        EXAMPLE_RANKS
    };
    for a in &mut advice {
        let stage = match a.kind {
            AdviceKind::ShardOptimizerState => 1,
            AdviceKind::ShardGradients => 2,
            _ => continue,
        };
        let scenario = super::whatif::Scenario {
            zero: Some((stage, over)),
            ..Default::default()
        };
        if let Ok(p) = super::whatif::predict_on(view, &scenario) {
            a.replayed = Some(Replayed {
                lever: Lever::Zero { stage, ranks: over },
                from: p.measured.bytes,
                to: p.predicted.bytes,
            });
        }
    }
    advice
}

/// How a holder of advice is named.
#[derive(Clone, Copy)]
enum Holder {
    /// The user's source line, else the op (activations: the line is what to checkpoint).
    Line,
    /// The op, with the user's source line when known (temporaries: the op is what to fuse
    /// or make in-place).
    OpAndLine,
}

/// The holders of the most bytes of `roles` at `t` (ns from the origin), named as `how` says.
fn holders(data: &RankData, t: i64, roles_of: &[Role], how: Holder) -> Vec<(String, i64)> {
    let Some(roles) = data.roles.as_ref() else {
        return Vec::new();
    };
    let ops = &data.operators;
    let abs = data.time_origin_ns.saturating_add(t);
    let mut by: rustc_hash::FxHashMap<String, i64> = Default::default();
    for (r, &role) in roles.role.iter().enumerate() {
        if !roles_of.contains(&role)
            || !live_at(ops.size[r], ops.alloc_time[r], ops.release_time[r], abs)
        {
            continue;
        }
        let line = data.stacks.as_ref().and_then(|s| s.row_source_line(r));
        let op = data.display_name(ops.name[r]);
        let name = match (how, line) {
            (Holder::Line, Some(line)) => line.to_string(),
            (_, None) => op.to_string(),
            (Holder::OpAndLine, Some(line)) => format!("{op} @ {line}"),
        };
        let e = by.entry(name).or_insert(0);
        *e = e.saturating_add(ops.size[r]);
    }
    let mut v: Vec<(String, i64)> = by.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(HOLDERS);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_levers_arguments_are_quoted_for_the_shell() {
        let plain = Lever::Checkpoint("Block".into());
        assert_eq!(plain.whatif_args(), "--checkpoint Block");
        #[cfg(unix)]
        assert_eq!(
            Lever::Checkpoint("x; touch PWNED".into()).whatif_args(),
            "--checkpoint 'x; touch PWNED'"
        );
        let zero = Lever::Zero { stage: 1, ranks: 8 };
        assert_eq!(zero.whatif_args(), "--zero 1 --ranks 8");
    }

    #[test]
    fn sharding_saves_follow_the_rank_count() {
        let a = |kind, ranks| Advice {
            kind,
            bytes: 800,
            ranks,
            holders: Vec::new(),
            alloc_conf: "PYTORCH_NPU_ALLOC_CONF",
            replayed: None,
        };
        assert_eq!(a(AdviceKind::ShardGradients, 4).saves(), Some(600));
        assert_eq!(a(AdviceKind::ShardOptimizerState, 8).saves(), Some(700));
        assert_eq!(a(AdviceKind::ShardGradients, 1).saves(), Some(0));
        assert_eq!(a(AdviceKind::Recompute, 4).saves(), None);
        // One rank: no "saves 0", the fraction it would save with N.
        let one = a(AdviceKind::ShardOptimizerState, 1).english();
        assert!(one.contains("(N-1)/N") && !one.contains("saves 0"), "{one}");
        assert!(
            a(AdviceKind::ShardOptimizerState, 4)
                .english()
                .contains("over the 4")
        );
    }
}
