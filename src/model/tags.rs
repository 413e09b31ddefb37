//! Text columns a source gives its blocks besides the operator_memory ones (msMemScope's
//! `owner` and `inefficient`; the roles of the roles issue next): one [`BlockTags`] per column,
//! a value per operator_memory row. The details table, Copy, Export and the table's filters
//! show every column a rank has, so a new one is one [`TagKind`] variant.

use super::NameId;

/// What a tag column says about a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TagKind {
    /// msMemScope's classification of the block (`owner`, `A@B@C`).
    Owner,
    /// msMemScope's finding of inefficient use (`early_allocation`, `late_deallocation`,
    /// `temporary_idleness`); empty when none.
    Inefficient,
    /// The blocks msMemScope listed as held when the process ran out of memory
    /// (`OOM_DETAIL`: `top 3` is the third largest, `recent 1` the latest); empty for others.
    Oom,
    /// The block's role in training (`activation`, `gradient`, …; see [`super::Role`]).
    Role,
    /// The path of the innermost `nn.Module` whose forward allocated it
    /// (`GPT_0/Block_0/Attention_0`; see [`super::ModuleTree`]); empty outside every module.
    Module,
}

/// A module's path (`GPT_0/Block_0/Attention_0`, outermost first, as the Module column holds
/// it) innermost first, `Attention_0 < Block_0 < GPT_0`: the column is narrow, and its start
/// is what tells blocks apart (every path starts with the same wrapper, `DistributedDataParallel_0`).
/// A filter given either way matches ([`crate::analysis::TableQuery`]).
pub fn module_innermost_first(path: &str) -> String {
    path.rsplit('/').collect::<Vec<_>>().join(" < ")
}

impl TagKind {
    /// The column's header, as the source names it (file columns keep English names).
    pub fn header(self) -> &'static str {
        match self {
            TagKind::Owner => "Owner",
            TagKind::Inefficient => "Inefficient",
            TagKind::Oom => "OOM",
            TagKind::Role => "Role",
            TagKind::Module => "Module",
        }
    }

    /// Is a non-empty value a finding to highlight?
    pub fn is_finding(self) -> bool {
        matches!(self, TagKind::Inefficient | TagKind::Oom)
    }
}

/// One tag column: a value per operator_memory row, interned in the rank's strings (0, the
/// empty string, for none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockTags {
    /// Which column.
    pub kind: TagKind,
    /// Per row.
    pub values: Vec<NameId>,
}
