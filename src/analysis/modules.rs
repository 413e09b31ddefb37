//! Memory by module: which `nn.Module` holds the memory.
//!
//! PyTorch writes a module's forward as a Python frame named `nn.Module: Block_0` (traces
//! recorded with `with_stack=True` or `with_modules=True`; torch_npu's `trace_view.json` and
//! DB carry the same frames). A block's call stack ([`CallStacks`]) is the stack of the host op
//! that allocated it, and for a backward op linked to its forward op the forward op's stack
//! ([`crate::ingest::stacks`]), so the module frames of a block's stack are the modules whose
//! forward was open on the allocating thread, and a backward block is attributed to the
//! module of its forward op, as the brief asks.
//!
//! The modules form a tree by path ([`ModuleTree`], built once per rank at load:
//! `RankData::module_tree`); [`held`] sums the blocks of any set of rows (those alive at a time) into each
//! node, on its own (`self`) and with its descendants; [`allocated_by_phase`] sums what each
//! module allocated in forward and in backward, by role.

use crate::model::{CallStacks, NULL, PhaseKind, RankData, Role};
pub use crate::model::{MODULE_FRAME_PREFIX, ModuleNode, ModuleTree, NO_MODULE};

/// A glob over module names or classes, as `--checkpoint` and the What if tab take it: `*` any
/// run of characters, `?` one, `[0-2]` one of a set or range, `{Block_0,Block_1}` either;
/// matched against the whole name (`Block_*`, `Block_[0-2]`) or the class (`Block`).
/// (globset: the matcher ripgrep uses; a hand-written one had no `[…]`.)
#[derive(Debug, Clone)]
pub struct ModuleGlob(globset::GlobMatcher);

impl ModuleGlob {
    /// The glob `pattern`, or why it is not one.
    pub fn new(pattern: &str) -> Result<ModuleGlob, String> {
        globset::GlobBuilder::new(pattern)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map(|g| ModuleGlob(g.compile_matcher()))
            .map_err(|e| format!("--checkpoint {pattern:?} is not a glob: {}", e.kind()))
    }

    /// Whether `name` (a module's name or class) matches, as a whole.
    pub fn is_match(&self, name: &str) -> bool {
        self.0.is_match(name)
    }

    /// The modules of `tree` it matches (by name or class).
    pub fn modules(&self, tree: &ModuleTree) -> Vec<u32> {
        tree.matching(|n| self.is_match(n))
    }
}

/// True when `text` matches the glob `pattern` as a whole ([`ModuleGlob`]); false for a
/// pattern that is no glob.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    ModuleGlob::new(pattern).is_ok_and(|g| g.is_match(text))
}

/// What one module holds of a set of blocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    /// Bytes of the blocks allocated in it or in a module under it.
    pub bytes: i64,
    /// Bytes of the blocks whose innermost module is this one.
    pub self_bytes: i64,
    /// Blocks counted in `bytes`.
    pub blocks: u64,
    /// Blocks counted in `self_bytes`.
    pub self_blocks: u64,
}

/// A set of blocks by module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModulesHeld {
    /// Per node of the tree.
    pub modules: Vec<Held>,
    /// Bytes of the blocks allocated outside every module.
    pub unattributed: i64,
    /// Those blocks.
    pub unattributed_blocks: u64,
    /// Bytes of all the blocks.
    pub total: i64,
}

/// The blocks `rows` by module (sizes of 0 or less, frees of memory allocated before
/// profiling, count nothing).
pub fn held(data: &RankData, stacks: &CallStacks, tree: &ModuleTree, rows: &[u32]) -> ModulesHeld {
    let mut out = ModulesHeld {
        modules: vec![Held::default(); tree.nodes.len()],
        ..Default::default()
    };
    for &r in rows {
        let Some(&size) = data.operators.size.get(r as usize) else {
            continue;
        };
        if size <= 0 {
            continue;
        }
        out.total = out.total.saturating_add(size);
        let node = tree.row_module(stacks, r as usize);
        if node == NO_MODULE {
            out.unattributed = out.unattributed.saturating_add(size);
            out.unattributed_blocks += 1;
            continue;
        }
        if let Some(h) = out.modules.get_mut(node as usize) {
            h.self_bytes = h.self_bytes.saturating_add(size);
            h.self_blocks += 1;
        }
        for n in tree.ancestors(node) {
            if let Some(h) = out.modules.get_mut(n as usize) {
                h.bytes = h.bytes.saturating_add(size);
                h.blocks += 1;
            }
        }
    }
    out
}

/// The pass of a training step a block was allocated in, as far as modules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pass {
    /// The forward pass.
    Forward,
    /// The backward pass.
    Backward,
}

impl Pass {
    /// Both, in order.
    pub const ALL: [Pass; 2] = [Pass::Forward, Pass::Backward];

    /// The name in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Pass::Forward => "forward",
            Pass::Backward => "backward",
        }
    }
}

/// What a module allocated in one pass, by role (indexed as [`Role::ALL`]), with its
/// descendants.
pub type RoleBytes = [i64; Role::ALL.len()];

/// What each module allocated in forward and in backward over the whole profile, by role, with
/// its descendants: per node, `[forward, backward]`. Empty when the rank has no phases (nothing
/// then tells forward from backward).
pub fn allocated_by_phase(
    data: &RankData,
    stacks: &CallStacks,
    tree: &ModuleTree,
) -> Vec<[RoleBytes; 2]> {
    if stacks.phases.is_empty() {
        return Vec::new();
    }
    let ops = &data.operators;
    let mut out = vec![[[0i64; Role::ALL.len()]; 2]; tree.nodes.len()];
    for row in 0..ops.len() {
        let (size, at) = (ops.size[row], ops.alloc_time[row]);
        if size <= 0 || at == NULL {
            continue;
        }
        let pass = match stacks.phases.at(at).map(|i| stacks.phases.spans[i].kind) {
            Some(PhaseKind::Forward) => 0,
            Some(PhaseKind::Backward) => 1,
            _ => continue,
        };
        let role = data
            .roles
            .as_ref()
            .and_then(|r| r.role.get(row))
            .copied()
            .unwrap_or(Role::Unknown);
        for n in tree.ancestors(tree.row_module(stacks, row)) {
            if let Some(slot) = out.get_mut(n as usize) {
                let b = &mut slot[pass][role.index()];
                *b = b.saturating_add(size);
            }
        }
    }
    out
}

/// Why a rank has no module tree, for the CLI and the pane: how to record one.
pub const NO_MODULES_HINT: &str = "the profile names no module: record it with \
     torch.profiler.profile(with_stack=True, with_modules=True) (torch_npu: \
     torch_npu.profiler.profile(with_stack=True, with_modules=True)), so that each module's \
     forward is written as an `nn.Module: NAME` frame";
