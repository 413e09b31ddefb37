//! A memory budget in proportion to the input: what a reader, a builder or a text writer may
//! build from a file, in bytes per byte read, with a floor for small files. A hostile file can
//! name the same object many times (a pickle's memo, a trace's nesting), so that what is built
//! from it grows far past its size; every builder that can be led to do so charges what it
//! builds here and refuses, with [`OverBudget`], once it passes the limit.

/// Bytes a builder may make per byte of input. Real inputs need far less: `memsight snapshot
/// --json` on the 3.5 MB H100 snapshot sample peaks at 44 MB of resident memory in all (the
/// binary included), about 12 bytes per byte read; a trace's module tree takes less than a
/// byte per byte of the trace.
pub const BYTES_PER_INPUT_BYTE: u64 = 64;

/// What a builder may make whatever the input's size (a small file's deep but real nesting).
pub const FLOOR_BYTES: u64 = 64 << 20;

/// What a builder has made from one input, against its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// What it was built from, bytes.
    input: u64,
    /// The most it may build, bytes.
    limit: u64,
    /// What it has built, bytes.
    used: u64,
}

use super::Lang;

/// What a builder builds within a [`Budget`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Built {
    /// An allocator snapshot's stacks (frames shared through the pickle's memo).
    SnapshotStacks,
    /// An allocator snapshot's annotations (`external_annotations`).
    SnapshotAnnotations,
    /// A rank's module tree (`nn.Module` paths).
    ModuleTree,
}

impl Built {
    /// Its name in `lang`.
    pub fn name(self, lang: Lang) -> &'static str {
        match (self, lang) {
            (Built::SnapshotStacks, Lang::En) => "the snapshot's stacks",
            (Built::SnapshotStacks, Lang::Zh) => "快照的调用栈",
            (Built::SnapshotAnnotations, Lang::En) => "the snapshot's annotations",
            (Built::SnapshotAnnotations, Lang::Zh) => "快照的标注",
            (Built::ModuleTree, Lang::En) => "the module tree",
            (Built::ModuleTree, Lang::Zh) => "模块树",
        }
    }
}

/// A builder went past its [`Budget`]: what it was building, from how many bytes, and its limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverBudget {
    /// What was being built.
    pub what: Built,
    /// The input's size, bytes.
    pub input: u64,
    /// The limit it passed, bytes.
    pub limit: u64,
}

impl OverBudget {
    /// The refusal in `lang`.
    pub fn render(&self, lang: Lang) -> String {
        let (what, mib, kib) = (
            self.what.name(lang),
            self.limit >> 20,
            self.input.div_ceil(1024),
        );
        match lang {
            Lang::En => format!(
                "{what} would take more than {mib} MiB of memory from {kib} KiB of input (over \
                 {BYTES_PER_INPUT_BYTE}× its size; it repeats or nests the same data far past \
                 what a real recording holds): refused rather than built"
            ),
            Lang::Zh => format!(
                "{what}将占用超过 {mib} MiB 内存，而输入只有 {kib} KiB（超过其大小的 \
                 {BYTES_PER_INPUT_BYTE} 倍；文件反复引用或嵌套同一数据，远超真实采集）：已拒绝构建"
            ),
        }
    }
}

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(Lang::En))
    }
}

impl std::error::Error for OverBudget {}

impl Budget {
    /// The budget for what is built from `input` bytes: [`BYTES_PER_INPUT_BYTE`] each, at
    /// least [`FLOOR_BYTES`].
    pub fn for_input(input: u64) -> Budget {
        Budget::with_limit(
            input,
            input.saturating_mul(BYTES_PER_INPUT_BYTE).max(FLOOR_BYTES),
        )
    }

    /// A budget with an explicit limit (tests, and builders that share a parent's).
    pub fn with_limit(input: u64, limit: u64) -> Budget {
        Budget {
            input,
            limit,
            used: 0,
        }
    }

    /// Counts `bytes` more as built for `what`; past the limit, the refusal.
    pub fn charge(&mut self, what: Built, bytes: u64) -> Result<(), OverBudget> {
        self.used = self.used.saturating_add(bytes);
        if self.used > self.limit {
            return Err(OverBudget {
                what,
                input: self.input,
                limit: self.limit,
            });
        }
        Ok(())
    }

    /// What has been built so far, bytes.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// The limit, bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_refuses_past_its_limit_and_not_before() {
        let mut b = Budget::with_limit(10, 100);
        assert!(b.charge(Built::ModuleTree, 60).is_ok());
        assert!(b.charge(Built::ModuleTree, 40).is_ok());
        let e = b.charge(Built::ModuleTree, 1).unwrap_err();
        assert_eq!(e.limit, 100);
        assert!(
            e.to_string()
                .starts_with("the module tree would take more than")
        );
        assert!(e.render(Lang::Zh).starts_with("模块树将占用"));
        // Saturates rather than wrapping.
        let mut b = Budget::for_input(u64::MAX);
        assert_eq!(b.limit(), u64::MAX);
        assert!(b.charge(Built::SnapshotStacks, u64::MAX).is_ok());
        assert!(
            b.charge(Built::SnapshotStacks, 1).is_ok(),
            "saturated at the limit, not past it"
        );
    }

    #[test]
    fn the_floor_covers_small_files() {
        assert_eq!(Budget::for_input(1).limit(), FLOOR_BYTES);
        assert_eq!(Budget::for_input(100 << 20).limit(), 6400 << 20);
    }
}
