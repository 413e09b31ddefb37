//! The modules of a rank (`nn.Module`s), from the module frames of its call stacks: PyTorch
//! writes a module's forward as a Python frame named `nn.Module: Block_0` (traces recorded with
//! `with_stack=True` or `with_modules=True`; torch_npu's `trace_view.json` and DB carry the same
//! frames). The modules form a tree by path (the module frames of a stack, outermost first):
//! the same module called in every step is one node. What they hold is
//! `crate::analysis::modules`.

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use super::{Budget, Built, CallStacks, NO_STACK, NameId, OverBudget};

/// How a module's forward frame starts in a call stack.
pub const MODULE_FRAME_PREFIX: &str = "nn.Module: ";

/// Separates the names of a module path (`GPT_0/Block_0/Attention_0`).
pub const PATH_SEPARATOR: char = '/';

/// No module (a node id): the block was allocated outside every module's forward.
pub const NO_MODULE: u32 = u32::MAX;

/// One module in the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleNode {
    /// Its parent, or [`NO_MODULE`] for a top-level module.
    pub parent: u32,
    /// Its name as the trace writes it (`Block_0`).
    pub name: String,
    /// Its path from the top (`GPT_0/Block_0`).
    pub path: String,
    /// Modules above it (0 for a top-level one).
    pub depth: u32,
}

impl ModuleNode {
    /// The module's class as the trace names it: the name without its instance number
    /// (`Block` for `Block_0`).
    pub fn class_name(&self) -> &str {
        match self.name.rsplit_once('_') {
            Some((class, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => class,
            _ => &self.name,
        }
    }
}

/// The modules of a rank, and which one each call stack was allocated in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleTree {
    /// The modules, parents before children, siblings in the order first seen.
    pub nodes: Vec<ModuleNode>,
    /// Per stack id: its innermost module, or [`NO_MODULE`].
    stack_module: Vec<u32>,
}

/// A module's name as one part of a path: `%` and the separator `/` escaped (`%25`, `%2F`), so
/// that a name holding `/` cannot make two modules share a path.
pub fn path_part(name: &str) -> Cow<'_, str> {
    if !name.contains(['%', PATH_SEPARATOR]) {
        return Cow::Borrowed(name);
    }
    Cow::Owned(name.replace('%', "%25").replace(PATH_SEPARATOR, "%2F"))
}

impl ModuleTree {
    /// The modules named in `stacks`' frames. A module is its name (trimmed, as the trace's
    /// frames may pad it) under its parent: two frames that differ only by spaces are one
    /// module, so no two modules share a path. The paths are built within a [`Budget`] in
    /// proportion to the stacks (a path repeats its parents' names, which deep nesting of long
    /// names would make quadratic); past it, the refusal.
    pub fn new(stacks: &CallStacks) -> Result<ModuleTree, OverBudget> {
        // Per frame id: the module name it opens, when it is a module frame.
        let module_name: FxHashMap<NameId, &str> = (0..stacks.frames.len() as NameId)
            .filter_map(|f| {
                let name = stacks.frames.get(f).strip_prefix(MODULE_FRAME_PREFIX)?;
                Some((f, name.trim()))
            })
            .collect();
        let input: u64 = module_name.values().map(|n| n.len() as u64).sum::<u64>()
            + stacks
                .stacks
                .iter()
                .map(|s| s.len() as u64 * 4)
                .sum::<u64>();
        let mut budget = Budget::for_input(input);
        let mut tree = ModuleTree::default();
        let mut child: FxHashMap<(u32, &str), u32> = FxHashMap::default();
        let mut stack_module = Vec::with_capacity(stacks.stacks.len());
        for frames in &stacks.stacks {
            // Frames are innermost first: walk them from the outermost.
            let mut node = NO_MODULE;
            for f in frames.iter().rev() {
                let Some(&name) = module_name.get(f) else {
                    continue;
                };
                if let Some(&n) = child.get(&(node, name)) {
                    node = n;
                    continue;
                }
                let parent = tree.nodes.get(node as usize);
                let part = path_part(name);
                let path = match parent {
                    Some(p) => format!("{}{PATH_SEPARATOR}{part}", p.path),
                    None => part.into_owned(),
                };
                let cost = path.len() + name.len() + size_of::<ModuleNode>() + 16;
                budget.charge(Built::ModuleTree, cost as u64)?;
                let depth = parent.map_or(0, |p| p.depth + 1);
                tree.nodes.push(ModuleNode {
                    parent: node,
                    name: name.to_string(),
                    path,
                    depth,
                });
                let id = (tree.nodes.len() - 1) as u32;
                child.insert((node, name), id);
                node = id;
            }
            stack_module.push(node);
        }
        tree.stack_module = stack_module;
        Ok(tree)
    }

    /// True when no stack names a module (the profile recorded none).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The innermost module `row` was allocated in, or [`NO_MODULE`]: from the row's module
    /// stack ([`CallStacks::row_module`]) when the source records one, else from the module
    /// frames of its call stack.
    pub fn row_module(&self, stacks: &CallStacks, row: usize) -> u32 {
        let stack = if stacks.row_module.is_empty() {
            stacks.row_stack.get(row)
        } else {
            stacks.row_module.get(row)
        };
        let stack = stack.copied().unwrap_or(NO_STACK);
        self.stack_module
            .get(stack as usize)
            .copied()
            .unwrap_or(NO_MODULE)
    }

    /// `node` and the modules above it, innermost first.
    pub fn ancestors(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors((node != NO_MODULE).then_some(node), |&n| {
            self.nodes
                .get(n as usize)
                .map(|m| m.parent)
                .filter(|&p| p != NO_MODULE)
        })
    }

    /// Every module, depth first: each after its parent and before its parent's next child,
    /// siblings in the order first seen (the order the forward pass runs them).
    pub fn depth_first(&self) -> Vec<u32> {
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); self.nodes.len()];
        let mut roots = Vec::new();
        for (i, m) in self.nodes.iter().enumerate() {
            match children.get_mut(m.parent as usize) {
                Some(c) => c.push(i as u32),
                None => roots.push(i as u32),
            }
        }
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut todo: Vec<u32> = roots.into_iter().rev().collect();
        while let Some(n) = todo.pop() {
            order.push(n);
            todo.extend(children[n as usize].iter().rev());
        }
        order
    }

    /// The modules whose name or class `matches` says yes to (the what-if's glob,
    /// [`crate::analysis::modules::ModuleGlob`]).
    pub fn matching(&self, matches: impl Fn(&str) -> bool) -> Vec<u32> {
        (0..self.nodes.len() as u32)
            .filter(|&n| {
                let m = &self.nodes[n as usize];
                matches(&m.name) || matches(m.class_name())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_is_the_name_without_its_instance_number() {
        let node = |name: &str| ModuleNode {
            parent: NO_MODULE,
            name: name.into(),
            path: name.into(),
            depth: 0,
        };
        assert_eq!(node("Block_0").class_name(), "Block");
        assert_eq!(node("Multi_Head_12").class_name(), "Multi_Head");
        assert_eq!(node("Block_").class_name(), "Block_");
        assert_eq!(node("Block").class_name(), "Block");
    }
}
