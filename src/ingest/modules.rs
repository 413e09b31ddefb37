//! Each block's module: the `nn.Module`s the rank's call stacks name
//! ([`crate::model::ModuleTree`]), and a Module column (a [`TagKind::Module`] tag: the path of
//! the innermost module whose forward allocated the block) for the details table, its filter,
//! Copy and Export.

use crate::model::{BlockTags, Message, ModuleTree, NO_MODULE, RankData, TagKind};

/// Sets `data.module_tree` and adds the Module column when the call stacks name a module. A
/// first look, or a rank without stacks, is left alone.
pub fn attach_modules(data: &mut RankData) {
    if data.partial || data.operators.is_empty() {
        return;
    }
    let Some(stacks) = data.stacks.as_ref() else {
        return;
    };
    if stacks.stacks_cut > 0 {
        let count = stacks.stacks_cut;
        data.report.warn(Message::StacksCut {
            count,
            kept: super::module_spans::MAX_STACK_FRAMES,
        });
    }
    let Some(stacks) = data.stacks.as_ref() else {
        return;
    };
    let tree = match ModuleTree::new(stacks) {
        Ok(tree) => tree,
        Err(over) => {
            data.report.warn(Message::ModulesRefused { over });
            return;
        }
    };
    if tree.is_empty() {
        return;
    }
    let ids: Vec<u32> = tree
        .nodes
        .iter()
        .map(|m| data.strings.intern(&m.path))
        .collect();
    let empty = data.strings.intern("");
    let values = (0..data.operators.len())
        .map(|row| match tree.row_module(stacks, row) {
            NO_MODULE => empty,
            n => ids.get(n as usize).copied().unwrap_or(empty),
        })
        .collect();
    data.tags.push(BlockTags {
        kind: TagKind::Module,
        values,
    });
    data.module_tree = Some(tree);
}
