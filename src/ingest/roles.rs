//! Each block's role in training (see [`crate::model::Role`]), from its lifetime against the
//! phases the host ops show ([`crate::model::CallStacks::phases`]) and the framework op it was
//! allocated in. The rules, in order (the first that applies wins):
//!
//! 1. A release whose allocation came before the profile (negative size) → `before_profiling`.
//! 2. No phases, or no allocation time → `unknown`.
//! 3. Freed before the outermost framework op (`aten::…`) that allocated it ended →
//!    `temporary`.
//! 4. By the phase at its allocation: data → `input`; forward → `activation`; backward →
//!    `gradient` when alive after the backward phase, else `backward_temporary`; optimizer step →
//!    `optimizer_state` when alive after it, else `temporary`; zero_grad → `temporary` when
//!    freed in it; outside every phase → `unknown`.

use crate::model::{
    BlockRoles, BlockTags, CallStacks, NULL, OperatorMemory, PhaseKind, Phases, RankData, Role,
    Rule, TagKind,
};

/// Gives every operator_memory row of `data` its role (`data.roles`) and, when the profile
/// shows training phases, a Role column (a [`TagKind::Role`] tag). A first look is left alone.
pub fn attach_roles(data: &mut RankData) {
    if data.partial || data.operators.is_empty() {
        return;
    }
    let roles = classify(&data.operators, data.stacks.as_ref());
    if !roles.phases.is_empty() {
        let ids: Vec<u32> = Role::ALL
            .iter()
            .map(|r| data.strings.intern(r.as_str()))
            .collect();
        let values = roles.role.iter().map(|r| ids[r.index()]).collect();
        data.tags.push(BlockTags {
            kind: TagKind::Role,
            values,
        });
    }
    data.roles = Some(roles);
}

/// The role and rule of every row of `ops` (see the module doc).
pub fn classify(ops: &OperatorMemory, stacks: Option<&CallStacks>) -> BlockRoles {
    let phases = stacks.map(|s| s.phases.clone()).unwrap_or_default();
    let why_unknown = match stacks {
        None => Some(crate::model::WhyUnknown::NoHostOps),
        Some(s) if s.phases.is_empty() => Some(crate::model::WhyUnknown::NoBackward),
        Some(_) => None,
    };
    let n = ops.len();
    let mut role = Vec::with_capacity(n);
    let mut rule = Vec::with_capacity(n);
    let call_end = stacks.map(|s| &s.row_call_end[..]).unwrap_or(&[]);
    for r in 0..n {
        let end = call_end.get(r).copied().unwrap_or(NULL);
        let (ro, ru) = classify_row(
            &phases,
            ops.size[r],
            ops.alloc_time[r],
            ops.release_time[r],
            end,
        );
        role.push(ro);
        rule.push(ru);
    }
    BlockRoles {
        phases,
        role,
        rule,
        why_unknown,
    }
}

/// One block's role: `alloc`/`release` absolute ns ([`NULL`] when missing: never released
/// within the profile), `call_end` the end of the framework op it was allocated in.
pub fn classify_row(
    phases: &Phases,
    size: i64,
    alloc: i64,
    release: i64,
    call_end: i64,
) -> (Role, Rule) {
    if size < 0 {
        return (Role::BeforeProfiling, Rule::AllocatedBeforeCapture);
    }
    if phases.is_empty() {
        return (Role::Unknown, Rule::NoPhases);
    }
    if alloc == NULL {
        return (Role::Unknown, Rule::NoTime);
    }
    let freed_by = |t: i64| release != NULL && release <= t;
    if call_end != NULL && freed_by(call_end) {
        return (Role::Temporary, Rule::InsideOneOp);
    }
    let Some(i) = phases.at(alloc) else {
        return (Role::Unknown, Rule::OutsidePhases);
    };
    let p = phases.spans[i];
    match p.kind {
        PhaseKind::Data => (Role::Input, Rule::LoadingData),
        PhaseKind::Forward => {
            let backward = phases.spans[i..]
                .iter()
                .find(|s| s.kind == PhaseKind::Backward)
                .map_or(i64::MAX, |s| s.start_ns);
            if release != NULL && release < backward {
                (Role::Activation, Rule::ForwardFreedBeforeBackward)
            } else {
                (Role::Activation, Rule::ForwardKeptForBackward)
            }
        }
        PhaseKind::Backward if freed_by(p.end_ns) => (Role::BackwardTemporary, Rule::BackwardFreed),
        PhaseKind::Backward => (Role::Gradient, Rule::BackwardKept),
        PhaseKind::Optimizer if freed_by(p.end_ns) => (Role::Temporary, Rule::FreedInPhase),
        PhaseKind::Optimizer => (Role::OptimizerState, Rule::OptimizerKept),
        PhaseKind::ZeroGrad if freed_by(p.end_ns) => (Role::Temporary, Rule::FreedInPhase),
        PhaseKind::ZeroGrad => (Role::Unknown, Rule::OutsidePhases),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Phase;

    fn phases() -> Phases {
        let p = |kind, start_ns, end_ns| Phase {
            kind,
            start_ns,
            end_ns,
        };
        Phases {
            spans: vec![
                p(PhaseKind::Data, 0, 10),
                p(PhaseKind::Forward, 10, 50),
                p(PhaseKind::Backward, 50, 90),
                p(PhaseKind::Optimizer, 100, 120),
                p(PhaseKind::ZeroGrad, 130, 140),
            ],
        }
    }

    #[test]
    fn each_rule() {
        let ph = phases();
        let c = |a, r, e| classify_row(&ph, 64, a, r, e).0;
        assert_eq!(c(5, 200, NULL), Role::Input);
        assert_eq!(c(20, 60, NULL), Role::Activation);
        assert_eq!(c(20, 30, NULL), Role::Activation);
        assert_eq!(c(20, 25, 26), Role::Temporary);
        assert_eq!(c(60, 135, NULL), Role::Gradient);
        assert_eq!(c(60, NULL, NULL), Role::Gradient);
        assert_eq!(c(60, 80, NULL), Role::BackwardTemporary);
        assert_eq!(c(60, 61, 62), Role::Temporary);
        assert_eq!(c(110, NULL, NULL), Role::OptimizerState);
        assert_eq!(c(110, 115, NULL), Role::Temporary);
        assert_eq!(c(135, 136, NULL), Role::Temporary);
        assert_eq!(c(95, NULL, NULL), Role::Unknown);
        assert_eq!(c(NULL, NULL, NULL), Role::Unknown);
        assert_eq!(
            classify_row(&ph, -64, NULL, 5, NULL).0,
            Role::BeforeProfiling
        );
        assert_eq!(
            classify_row(&Phases::default(), 64, 5, 6, NULL),
            (Role::Unknown, Rule::NoPhases)
        );
    }
}
