//! The `Component` column of memory_record: which allocator a sample belongs to.

/// A memory_record component. Unknown names are kept as [`Component::Other`] rows so counts stay
/// truthful, but no curve uses them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Component {
    /// Whole-process device memory, sampled (~20 ms).
    App = 0,
    /// The PyTorch caching allocator.
    Pta = 1,
    /// The Graph Engine allocator.
    Ge = 2,
    /// torch_npu's synthesised sum of PTA and GE: the Overall and Stream curves.
    PtaGe = 3,
    /// Operator workspace memory (torch_npu >= 2025-06).
    Workspace = 4,
    /// The MindSpore framework pool.
    MindSpore = 5,
    /// MindSpore's sum of MindSpore and GE.
    MindSporeGe = 6,
    /// Any other name (CANN modules some exports append).
    Other = 7,
}

impl Component {
    /// All components, in code order.
    pub const ALL: [Component; 8] = [
        Component::App,
        Component::Pta,
        Component::Ge,
        Component::PtaGe,
        Component::Workspace,
        Component::MindSpore,
        Component::MindSporeGe,
        Component::Other,
    ];

    /// Parses the cell text (already trimmed), case-sensitively as the writers spell it, with a
    /// case-insensitive fallback.
    pub fn parse(cell: &[u8]) -> Component {
        match cell {
            b"APP" => Component::App,
            b"PTA" => Component::Pta,
            b"GE" => Component::Ge,
            b"PTA+GE" => Component::PtaGe,
            b"WORKSPACE" => Component::Workspace,
            b"MindSpore" => Component::MindSpore,
            b"MindSpore+GE" => Component::MindSporeGe,
            other => {
                let upper = other.to_ascii_uppercase();
                match upper.as_slice() {
                    b"APP" => Component::App,
                    b"PTA" => Component::Pta,
                    b"GE" => Component::Ge,
                    b"PTA+GE" => Component::PtaGe,
                    b"WORKSPACE" => Component::Workspace,
                    b"MINDSPORE" => Component::MindSpore,
                    b"MINDSPORE+GE" => Component::MindSporeGe,
                    _ => Component::Other,
                }
            }
        }
    }

    /// The name as the files spell it.
    pub fn name(self) -> &'static str {
        match self {
            Component::App => "APP",
            Component::Pta => "PTA",
            Component::Ge => "GE",
            Component::PtaGe => "PTA+GE",
            Component::Workspace => "WORKSPACE",
            Component::MindSpore => "MindSpore",
            Component::MindSporeGe => "MindSpore+GE",
            Component::Other => "other",
        }
    }

    /// The component for a stored code; unknown codes read as `Other`.
    pub fn from_code(code: u8) -> Component {
        Component::ALL
            .get(code as usize)
            .copied()
            .unwrap_or(Component::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_known_name_and_round_trips_codes() {
        for c in Component::ALL {
            if c != Component::Other {
                assert_eq!(Component::parse(c.name().as_bytes()), c);
            }
            assert_eq!(Component::from_code(c as u8), c);
        }
        assert_eq!(Component::parse(b"pta+ge"), Component::PtaGe);
        assert_eq!(Component::parse(b"HCCL"), Component::Other);
    }
}
