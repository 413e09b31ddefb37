//! What kind of memory each block is in training: the phases of a step as the host ops show
//! them ([`Phases`]: loading data, forward, backward, the optimizer step, zeroing gradients)
//! and, per operator_memory row, the role its lifetime gives it within them ([`BlockRoles`]).
//! `ingest::roles` computes both; `analysis::roles` adds them up.

/// A phase of a training step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PhaseKind {
    /// Loading the batch: `enumerate(DataLoader)#…`, and what runs before the forward pass's
    /// first autograd-recorded op (copies to the device).
    Data,
    /// From the first op that records autograd (or a `*.forward` span) to the backward pass.
    Forward,
    /// The autograd engine's `evaluate_function` ops, from the first to the last of a run.
    Backward,
    /// `Optimizer.step#…`.
    Optimizer,
    /// `Optimizer.zero_grad#…`.
    ZeroGrad,
}

impl PhaseKind {
    /// The name in JSON and text output (`data`, `forward`, `backward`, `optimizer`,
    /// `zero_grad`).
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseKind::Data => "data",
            PhaseKind::Forward => "forward",
            PhaseKind::Backward => "backward",
            PhaseKind::Optimizer => "optimizer",
            PhaseKind::ZeroGrad => "zero_grad",
        }
    }
}

/// Does an annotation's name mark a phase (`Optimizer.step#…`, `Optimizer.zero_grad#…`,
/// `enumerate(DataLoader)#…`)?
pub fn is_phase_annotation(name: &str) -> bool {
    name.starts_with("Optimizer.step#")
        || name.starts_with("Optimizer.zero_grad#")
        || name.starts_with("enumerate(DataLoader)")
}

/// One phase: absolute ns, `start_ns <= end_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phase {
    /// Which phase.
    pub kind: PhaseKind,
    /// Start, absolute ns.
    pub start_ns: i64,
    /// End, absolute ns.
    pub end_ns: i64,
}

/// A rank's phases, sorted by start, not overlapping.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Phases {
    /// The phases.
    pub spans: Vec<Phase>,
}

impl Phases {
    /// The index of the phase holding absolute time `t` (start and end inclusive; where two
    /// touch, the later).
    pub fn at(&self, t: i64) -> Option<usize> {
        let i = self.spans.partition_point(|p| p.start_ns <= t);
        let i = i.checked_sub(1)?;
        (self.spans[i].end_ns >= t).then_some(i)
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// The role of a block in training (names fixed: the CLI, tests and scripts use them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// The batch: allocated while loading data or before the forward pass.
    Input,
    /// Made by the forward pass (kept for backward, or an intermediate freed by a later op).
    Activation,
    /// Made by the backward pass and kept past it (until the optimizer step or zero_grad).
    Gradient,
    /// Made by the optimizer step and kept after it (Adam's moments, momentum buffers).
    OptimizerState,
    /// Allocated and freed inside one framework op (a workspace), or freed within the
    /// optimizer step or zero_grad.
    Temporary,
    /// Made by the backward pass and freed before it ends, across ops.
    BackwardTemporary,
    /// Operator Allocated that no block explains: allocated before profiling began (weights,
    /// optimizer state of earlier steps). No block has this role but those whose release is
    /// all the profile saw.
    BeforeProfiling,
    /// No rule places it (allocated outside every phase, or a profile without phases).
    Unknown,
}

impl Role {
    /// Every role, in stacking order (bottom first) and menu order.
    pub const ALL: [Role; 8] = [
        Role::BeforeProfiling,
        Role::OptimizerState,
        Role::Gradient,
        Role::Input,
        Role::Activation,
        Role::BackwardTemporary,
        Role::Temporary,
        Role::Unknown,
    ];

    /// The fixed name (`input`, `activation`, `gradient`, `optimizer_state`, `temporary`,
    /// `backward_temporary`, `before_profiling`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Activation => "activation",
            Role::Gradient => "gradient",
            Role::OptimizerState => "optimizer_state",
            Role::Temporary => "temporary",
            Role::BackwardTemporary => "backward_temporary",
            Role::BeforeProfiling => "before_profiling",
            Role::Unknown => "unknown",
        }
    }

    /// The role's name for a person, in `lang` (the app's legend and the text reports).
    pub fn name(self, lang: super::Lang) -> &'static str {
        use super::Lang::{En, Zh};
        match (self, lang) {
            (Role::BeforeProfiling, En) => "before profiling",
            (Role::BeforeProfiling, Zh) => "采集前已分配",
            (Role::OptimizerState, En) => "optimizer state",
            (Role::OptimizerState, Zh) => "优化器状态",
            (Role::Gradient, En) => "gradient",
            (Role::Gradient, Zh) => "梯度",
            (Role::Input, En) => "input",
            (Role::Input, Zh) => "输入",
            (Role::Activation, En) => "activation",
            (Role::Activation, Zh) => "激活值",
            (Role::BackwardTemporary, En) => "backward temporary",
            (Role::BackwardTemporary, Zh) => "反向临时内存",
            (Role::Temporary, En) => "temporary",
            (Role::Temporary, Zh) => "临时内存",
            (Role::Unknown, En) => "unknown",
            (Role::Unknown, Zh) => "未知",
        }
    }

    /// Parses a fixed name (any case).
    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(s.trim()))
    }

    /// The role's index in [`Role::ALL`] (per block in the report's loops: a match, not a
    /// search; a unit test holds it to `ALL`).
    pub fn index(self) -> usize {
        match self {
            Role::BeforeProfiling => 0,
            Role::OptimizerState => 1,
            Role::Gradient => 2,
            Role::Input => 3,
            Role::Activation => 4,
            Role::BackwardTemporary => 5,
            Role::Temporary => 6,
            Role::Unknown => 7,
        }
    }
}

/// Which rule gave a block its role (the evidence shown with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// Freed before the framework op that allocated it ended.
    InsideOneOp,
    /// Allocated while loading data / before the forward pass.
    LoadingData,
    /// Allocated in forward and alive when the backward pass began.
    ForwardKeptForBackward,
    /// Allocated in forward and freed before the backward pass.
    ForwardFreedBeforeBackward,
    /// Allocated in backward and alive after it ended.
    BackwardKept,
    /// Allocated in backward and freed before it ended.
    BackwardFreed,
    /// Allocated in the optimizer step and alive after it.
    OptimizerKept,
    /// Allocated and freed within the optimizer step or zero_grad.
    FreedInPhase,
    /// A release whose allocation came before the profile.
    AllocatedBeforeCapture,
    /// Allocated outside every phase (or kept past zero_grad).
    OutsidePhases,
    /// The profile has no phases (no host ops, or no backward pass).
    NoPhases,
    /// No allocation time.
    NoTime,
}

impl Rule {
    /// The rule as short English text (JSON, the CLI).
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::InsideOneOp => "freed inside the op that allocated it",
            Rule::LoadingData => "allocated while loading data, before the forward pass",
            Rule::ForwardKeptForBackward => "allocated in forward, alive when backward began",
            Rule::ForwardFreedBeforeBackward => "allocated in forward, freed by a later op",
            Rule::BackwardKept => "allocated in backward, alive after it",
            Rule::BackwardFreed => "allocated in backward, freed before it ended",
            Rule::OptimizerKept => "allocated in the optimizer step, alive after it",
            Rule::FreedInPhase => "allocated and freed within the optimizer step or zero_grad",
            Rule::AllocatedBeforeCapture => "released in the profile, allocated before it",
            Rule::OutsidePhases => "allocated outside the training phases",
            Rule::NoPhases => "the profile has no training phases",
            Rule::NoTime => "no allocation time",
        }
    }
}

/// Per operator_memory row: its role and the rule that gave it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockRoles {
    /// The phases the rules used.
    pub phases: Phases,
    /// Per row.
    pub role: Vec<Role>,
    /// Per row.
    pub rule: Vec<Rule>,
    /// Why every block is `unknown`, when it is (no host ops, no backward pass).
    pub why_unknown: Option<WhyUnknown>,
}

/// Why every block of a rank has the role `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhyUnknown {
    /// No host ops to tell the passes apart.
    NoHostOps,
    /// Host ops, but no backward pass among them.
    NoBackward,
    /// No blocks at all.
    NoBlocks,
}

impl WhyUnknown {
    /// The reason in `lang` (the JSON's `why_unknown` is the English).
    pub fn render(self, lang: super::Lang) -> &'static str {
        use super::Lang::{En, Zh};
        match (self, lang) {
            (WhyUnknown::NoHostOps, En) => {
                "the profile has no host ops (trace_view.json, PYTORCH_API or a PyTorch trace)"
            }
            (WhyUnknown::NoHostOps, Zh) => {
                "数据中没有 host 算子（trace_view.json、PYTORCH_API 或 PyTorch trace）"
            }
            (WhyUnknown::NoBackward, En) => "the host ops show no backward pass",
            (WhyUnknown::NoBackward, Zh) => "host 算子中没有反向阶段",
            (WhyUnknown::NoBlocks, En) => "the rank has no blocks (operator_memory)",
            (WhyUnknown::NoBlocks, Zh) => "该 rank 没有内存块（operator_memory）",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_the_place_in_all_and_names_parse_back() {
        for (i, r) in Role::ALL.into_iter().enumerate() {
            assert_eq!(r.index(), i);
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
    }
}
