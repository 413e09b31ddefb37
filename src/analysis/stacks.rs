//! Memory by who allocated it: operator_memory rows grouped by call stack, by source line or
//! by host operator (with calls, total allocated and peak live, as TensorBoard's Memory
//! Statistics had), and the memory-weighted icicle (flame) tree of a set of rows.
//!
//! Every function takes the rows to look at (the blocks alive at a time, allocated in a window,
//! or passing the table's filters), so the GUI and the CLI aggregate exactly what they show.

use rustc_hash::FxHashMap;

use crate::model::{CallStacks, NO_STACK, NULL, NameId, RankData};

/// What rows are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupKey {
    /// The whole call stack.
    Stack,
    /// The stack's source line ([`CallStacks::source_line`]).
    SourceLine,
    /// The host operator that was running ([`CallStacks::row_op`]).
    Operator,
    /// The block's role in training (`RankData::roles`; the key is the role's index in
    /// [`crate::model::Role::ALL`]).
    Role,
}

impl GroupKey {
    /// All keys, in the order offered.
    pub const ALL: [GroupKey; 4] = [
        GroupKey::Stack,
        GroupKey::SourceLine,
        GroupKey::Operator,
        GroupKey::Role,
    ];

    /// The name used on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupKey::Stack => "stack",
            GroupKey::SourceLine => "line",
            GroupKey::Operator => "op",
            GroupKey::Role => "role",
        }
    }
}

/// One group of rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The stack id, frame id or op name id; [`NO_STACK`] for rows whose key is unknown.
    pub key: u32,
    /// Rows in the group.
    pub blocks: u64,
    /// Sum of their sizes, bytes.
    pub bytes: i64,
    /// The most bytes of the group alive at once (alive: allocated at or before a time and
    /// released after it; a missing allocation time is before everything, a missing release
    /// after everything).
    pub peak_live: i64,
    /// Times the host op ran ([`GroupKey::Operator`] only).
    pub calls: Option<u64>,
}

/// The key of `row` under `by`.
pub fn key_of(data: &RankData, stacks: &CallStacks, by: GroupKey, row: usize) -> u32 {
    let stack = stacks.row_stack.get(row).copied().unwrap_or(NO_STACK);
    match by {
        GroupKey::Role => data
            .roles
            .as_ref()
            .and_then(|r| r.role.get(row))
            .map_or(NO_STACK, |r| r.index() as u32),
        GroupKey::Stack => stack,
        GroupKey::SourceLine => stacks.source_line(stack).unwrap_or(NO_STACK),
        GroupKey::Operator => stacks.row_op.get(row).copied().unwrap_or(NO_STACK),
    }
}

/// `rows` grouped by `by`, heaviest first (bytes, then blocks, then key).
pub fn group_rows(data: &RankData, stacks: &CallStacks, rows: &[u32], by: GroupKey) -> Vec<Group> {
    let o = &data.operators;
    let mut index: FxHashMap<u32, usize> = FxHashMap::default();
    let mut groups: Vec<Group> = Vec::new();
    // (time, delta, group): releases sort before allocations at the same time.
    let mut events: Vec<(i64, i64, usize)> = Vec::with_capacity(rows.len() * 2);
    for &r in rows {
        let r = r as usize;
        if r >= o.len() {
            continue;
        }
        let key = key_of(data, stacks, by, r);
        let g = *index.entry(key).or_insert_with(|| {
            groups.push(Group {
                key,
                blocks: 0,
                bytes: 0,
                peak_live: 0,
                calls: (by == GroupKey::Operator && key != NO_STACK)
                    .then(|| stacks.op_calls.get(key as usize).copied().unwrap_or(0)),
            });
            groups.len() - 1
        });
        let size = o.size[r].max(0);
        groups[g].blocks += 1;
        groups[g].bytes = groups[g].bytes.saturating_add(size);
        let start = if o.alloc_time[r] == NULL {
            i64::MIN
        } else {
            o.alloc_time[r]
        };
        events.push((start, size, g));
        if o.release_time[r] != NULL {
            events.push((o.release_time[r], -size, g));
        }
    }
    events.sort_unstable_by_key(|&(t, d, _)| (t, d));
    let mut live = vec![0i64; groups.len()];
    for (_, d, g) in events {
        live[g] = live[g].saturating_add(d);
        groups[g].peak_live = groups[g].peak_live.max(live[g]);
    }
    groups.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then(b.blocks.cmp(&a.blocks))
            .then(a.key.cmp(&b.key))
    });
    groups
}

/// The rows of `rows` whose key under `by` is `key`, in the order given.
pub fn rows_with_key(
    data: &RankData,
    stacks: &CallStacks,
    rows: &[u32],
    by: GroupKey,
    key: u32,
) -> Vec<u32> {
    rows.iter()
        .copied()
        .filter(|&r| key_of(data, stacks, by, r as usize) == key)
        .collect()
}

/// A group's label: the source line or op name; for a stack, its source line and how deep it
/// is; `None` when the key is unknown (no op was running, or no stack was recorded).
pub fn group_label(stacks: &CallStacks, by: GroupKey, key: u32) -> Option<String> {
    if key == NO_STACK {
        return None;
    }
    Some(match by {
        GroupKey::Stack => {
            let frames = stacks.frames_of(key);
            let line = stacks.source_line(key).map_or("", |f| stacks.frames.get(f));
            let n = frames.len();
            format!("{line}  [{n} {}]", if n == 1 { "frame" } else { "frames" })
        }
        GroupKey::SourceLine => stacks.frames.get(key).to_string(),
        GroupKey::Operator => stacks.op_names.get(key).to_string(),
        GroupKey::Role => crate::model::Role::ALL
            .get(key as usize)?
            .as_str()
            .to_string(),
    })
}

/// Labels for the call-stack groups `keys` that tell them apart: [`group_label`], and where
/// two stacks would read the same (the same source line and depth), the innermost frame where
/// each differs from the others, `… · via model.py(88): forward`. `None` where
/// [`group_label`] has none.
pub fn distinct_stack_labels(stacks: &CallStacks, keys: &[u32]) -> Vec<Option<String>> {
    let base: Vec<Option<String>> = keys
        .iter()
        .map(|&k| group_label(stacks, GroupKey::Stack, k))
        .collect();
    // Groups that read the same, found in one pass (a rank may have thousands of stacks).
    let mut same: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (i, b) in base.iter().enumerate() {
        if let Some(b) = b {
            same.entry(b.as_str()).or_default().push(i);
        }
    }
    let mut out = base.clone();
    for twins in same.values().filter(|v| v.len() > 1) {
        for &i in twins {
            let mine = stacks.frames_of(keys[i]);
            // The innermost frame of this stack that no twin has at the same depth.
            let differing = mine.iter().enumerate().find(|(d, f)| {
                twins
                    .iter()
                    .filter(|&&j| j != i)
                    .all(|&j| stacks.frames_of(keys[j]).get(*d) != Some(*f))
            });
            let b = base[i].as_deref().unwrap_or_default();
            out[i] = Some(match differing {
                Some((_, &f)) => format!("{b} · via {}", short_frame(stacks.frames.get(f))),
                None => format!("{b} · #{}", keys[i]),
            });
        }
    }
    out
}

/// Every group's label ([`group_label`]; call stacks told apart by
/// [`distinct_stack_labels`]), `None` where the key is unknown (the UI names those).
pub fn group_labels(stacks: &CallStacks, by: GroupKey, groups: &[Group]) -> Vec<Option<String>> {
    let keys: Vec<u32> = groups.iter().map(|g| g.key).collect();
    match by {
        GroupKey::Stack => distinct_stack_labels(stacks, &keys),
        _ => keys.iter().map(|&k| group_label(stacks, by, k)).collect(),
    }
}

/// A frame without its file's folder: `model.py(88): forward` (a `/` or `\\` inside the
/// function's text stays).
pub fn short_frame(frame: &str) -> &str {
    let cut = frame
        .find('(')
        .map_or(frame, |i| &frame[..i])
        .rfind(['/', '\\'])
        .map_or(0, |i| i + 1);
    &frame[cut..]
}

/// What an icicle node stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlameFrame {
    /// Everything.
    Root,
    /// A Python frame (into [`CallStacks::frames`]).
    Frame(NameId),
    /// The operator_memory name of the blocks (the leaves; into the rank's strings).
    Operator(NameId),
    /// Blocks without a known stack.
    NoStack,
}

/// One node of the icicle: a frame on the path from the outermost frame to the blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlameNode {
    /// What it stands for.
    pub frame: FlameFrame,
    /// Its parent (0 for the root's children; the root is its own parent).
    pub parent: usize,
    /// Depth (the root is 0).
    pub depth: usize,
    /// Bytes of the blocks under it.
    pub bytes: i64,
    /// Blocks under it.
    pub blocks: u64,
    /// Children, heaviest first.
    pub children: Vec<usize>,
}

/// A memory-weighted icicle of a set of rows: each row's path is its stack from the outermost
/// frame in, then its operator name.
#[derive(Debug, Clone, Default)]
pub struct Flame {
    /// Nodes; 0 is the root.
    pub nodes: Vec<FlameNode>,
    /// Each row with the leaf it ends in.
    pub leaves: Vec<(u32, usize)>,
}

/// Builds a [`Flame`] from weighted paths, one [`FlameBuilder::add`] per block.
#[derive(Debug)]
pub struct FlameBuilder {
    nodes: Vec<FlameNode>,
    child: FxHashMap<(usize, FlameFrame), usize>,
    leaves: Vec<(u32, usize)>,
}

impl Default for FlameBuilder {
    fn default() -> Self {
        FlameBuilder {
            nodes: vec![FlameNode {
                frame: FlameFrame::Root,
                parent: 0,
                depth: 0,
                bytes: 0,
                blocks: 0,
                children: Vec::new(),
            }],
            child: FxHashMap::default(),
            leaves: Vec::new(),
        }
    }
}

impl FlameBuilder {
    /// Adds block `row` of `size` bytes (negative counts as 0) under `path`, outermost first.
    pub fn add(&mut self, row: u32, path: &[FlameFrame], size: i64) {
        let size = size.max(0);
        let nodes = &mut self.nodes;
        let mut at = 0;
        nodes[0].bytes = nodes[0].bytes.saturating_add(size);
        nodes[0].blocks += 1;
        for &f in path {
            let next = *self.child.entry((at, f)).or_insert_with(|| {
                nodes.push(FlameNode {
                    frame: f,
                    parent: at,
                    depth: nodes[at].depth + 1,
                    bytes: 0,
                    blocks: 0,
                    children: Vec::new(),
                });
                let id = nodes.len() - 1;
                nodes[at].children.push(id);
                id
            });
            nodes[next].bytes = nodes[next].bytes.saturating_add(size);
            nodes[next].blocks += 1;
            at = next;
        }
        self.leaves.push((row, at));
    }

    /// The icicle, each node's children heaviest first.
    pub fn finish(self) -> Flame {
        let mut nodes = self.nodes;
        for i in 0..nodes.len() {
            let mut kids = std::mem::take(&mut nodes[i].children);
            kids.sort_by(|&a, &b| nodes[b].bytes.cmp(&nodes[a].bytes).then(a.cmp(&b)));
            nodes[i].children = kids;
        }
        Flame {
            nodes,
            leaves: self.leaves,
        }
    }
}

impl Flame {
    /// Builds the icicle of `rows`.
    pub fn build(data: &RankData, stacks: &CallStacks, rows: &[u32]) -> Flame {
        let o = &data.operators;
        let mut b = FlameBuilder::default();
        let mut path: Vec<FlameFrame> = Vec::new();
        for &r in rows {
            let ru = r as usize;
            if ru >= o.len() {
                continue;
            }
            path.clear();
            let stack = stacks.row_stack.get(ru).copied().unwrap_or(NO_STACK);
            if stack == NO_STACK {
                path.push(FlameFrame::NoStack);
            } else {
                path.extend(
                    stacks
                        .frames_of(stack)
                        .iter()
                        .rev()
                        .map(|&f| FlameFrame::Frame(f)),
                );
            }
            path.push(FlameFrame::Operator(o.name[ru]));
            b.add(r, &path, o.size[ru]);
        }
        b.finish()
    }

    /// The deepest level.
    pub fn depth(&self) -> usize {
        self.nodes.iter().map(|n| n.depth).max().unwrap_or(0)
    }

    /// The nodes from the root down to `node`, both included (just the root for an unknown
    /// node).
    pub fn ancestors(&self, node: usize) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut n = node;
        while n != 0 && n < self.nodes.len() {
            chain.push(n);
            n = self.nodes[n].parent;
        }
        chain.push(0);
        chain.reverse();
        chain
    }

    /// What `node` stands for, frame by frame below the root: a path that finds it again in a
    /// graph built for another cursor ([`Flame::find`]).
    pub fn path_to(&self, node: usize) -> Vec<FlameFrame> {
        self.ancestors(node)
            .into_iter()
            .skip(1)
            .map(|n| self.nodes[n].frame)
            .collect()
    }

    /// The node `path` leads to from the root, or the deepest node on the way that exists.
    pub fn find(&self, path: &[FlameFrame]) -> usize {
        let mut node = 0;
        for frame in path {
            match self.nodes[node]
                .children
                .iter()
                .find(|&&c| self.nodes[c].frame == *frame)
            {
                Some(&c) => node = c,
                None => break,
            }
        }
        node
    }

    /// The deepest depth under `node`.
    pub fn depth_under(&self, node: usize) -> usize {
        let mut deepest = self.nodes.get(node).map_or(0, |n| n.depth);
        let mut todo = vec![node];
        while let Some(n) = todo.pop() {
            if let Some(x) = self.nodes.get(n) {
                deepest = deepest.max(x.depth);
                todo.extend(&x.children);
            }
        }
        deepest
    }

    /// The rows under `node`, ascending.
    pub fn rows_under(&self, node: usize) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .leaves
            .iter()
            .filter(|&&(_, leaf)| self.is_under(leaf, node))
            .map(|&(r, _)| r)
            .collect();
        out.sort_unstable();
        out
    }

    /// True when `node` is `ancestor` or below it.
    fn is_under(&self, mut node: usize, ancestor: usize) -> bool {
        loop {
            if node == ancestor {
                return true;
            }
            if node == 0 || node >= self.nodes.len() {
                return false;
            }
            node = self.nodes[node].parent;
        }
    }

    /// A node's text: the frame, the operator name, or `None` for the root and for blocks
    /// without a stack (the caller names those in its language).
    pub fn label<'a>(
        &self,
        data: &'a RankData,
        stacks: &'a CallStacks,
        node: usize,
    ) -> Option<&'a str> {
        match self.nodes.get(node)?.frame {
            FlameFrame::Frame(f) => Some(stacks.frames.get(f)),
            FlameFrame::Operator(n) => Some(data.display_name(n)),
            FlameFrame::Root | FlameFrame::NoStack => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{HostOps, RankInfo, StackSource};

    /// Three rows: two under stack A (sizes 10, 20, overlapping), one without a stack.
    fn sample() -> RankData {
        let mut d = RankData::empty(RankInfo::without_files(
            "0",
            crate::model::Format::TorchNpu,
            "x".into(),
        ));
        let name = d.strings.intern("aten::mm");
        for (size, a, r) in [(10, 100, 300), (20, 200, NULL), (5, 1000, 1100)] {
            let mut cells = [NULL; crate::model::OP_I64_COLUMNS];
            cells[0] = size;
            cells[1] = a;
            cells[2] = r;
            d.operators.push_row(name, 0, cells);
        }
        let mut ops = HostOps::default();
        let f1 = ops
            .frames
            .intern("lib/python3.9/site-packages/torch/x.py(1): mm");
        let f2 = ops.frames.intern("main.py(7): step");
        ops.stacks.push(vec![f1, f2].into_boxed_slice());
        let n = ops.names.intern("aten::mm");
        ops.push(50, 250, 1, n, 0, -1);
        d.stacks = Some(crate::ingest::stacks::attribute(
            ops,
            &d.operators.alloc_time,
            StackSource::TraceView,
        ));
        d
    }

    #[test]
    fn groups_by_stack_line_and_operator() {
        let d = sample();
        let s = d.stacks.as_ref().unwrap();
        let g = group_rows(&d, s, &[0, 1, 2], GroupKey::SourceLine);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].blocks, g[0].bytes, g[0].peak_live), (2, 30, 30));
        assert_eq!(
            group_label(s, GroupKey::SourceLine, g[0].key).as_deref(),
            Some("main.py(7): step")
        );
        assert_eq!((g[1].key, g[1].bytes), (NO_STACK, 5));
        let ops = group_rows(&d, s, &[0, 1, 2], GroupKey::Operator);
        assert_eq!(ops[0].calls, Some(1));
        assert_eq!(ops[1].calls, None);
        assert_eq!(
            rows_with_key(&d, s, &[0, 1, 2], GroupKey::Stack, 0),
            vec![0, 1]
        );
    }

    #[test]
    fn stacks_that_read_the_same_get_told_apart() {
        let mut ops = HostOps::default();
        let main = ops.frames.intern("main.py(354): train");
        let mm = ops
            .frames
            .intern("lib/python3.9/site-packages/torch/mm.py(5): mm");
        let add = ops
            .frames
            .intern("lib/python3.9/site-packages/torch/add.py(9): add");
        let own = ops.frames.intern("/x/model.py(88): forward");
        // Innermost first: two stacks read "main.py(354): train [2 frames]" and differ in the
        // library frame below it; a third has a source line of its own.
        ops.stacks.push(vec![mm, main].into_boxed_slice());
        ops.stacks.push(vec![add, main].into_boxed_slice());
        ops.stacks.push(vec![own].into_boxed_slice());
        let s = crate::ingest::stacks::attribute(ops, &[], StackSource::TraceView);
        let labels = distinct_stack_labels(&s, &[0, 1, 2]);
        let text: Vec<String> = labels.into_iter().map(Option::unwrap).collect();
        assert_eq!(
            text[0],
            "main.py(354): train  [2 frames] · via mm.py(5): mm"
        );
        assert_eq!(
            text[1],
            "main.py(354): train  [2 frames] · via add.py(9): add"
        );
        assert_eq!(text[2], "/x/model.py(88): forward  [1 frame]");
    }

    #[test]
    fn flame_paths_and_clicks() {
        let d = sample();
        let s = d.stacks.as_ref().unwrap();
        let f = Flame::build(&d, s, &[0, 1, 2]);
        assert_eq!(f.nodes[0].bytes, 35);
        // Root → main.py → torch/x.py → aten::mm, and root → (no stack) → aten::mm.
        assert_eq!(f.depth(), 3);
        let top = f.nodes[0].children[0];
        assert_eq!(f.label(&d, s, top), Some("main.py(7): step"));
        assert_eq!(f.nodes[top].bytes, 30);
        assert_eq!(f.rows_under(top), vec![0, 1]);
        assert_eq!(f.rows_under(0), vec![0, 1, 2]);
        // Zooming: a node's path finds it again, even in another graph of the same stacks.
        let mm = f.nodes[top].children[0];
        let leaf = f.nodes[mm].children[0];
        assert_eq!(f.ancestors(leaf), vec![0, top, mm, leaf]);
        let path = f.path_to(leaf);
        assert_eq!(path.len(), 3);
        assert_eq!(f.find(&path), leaf);
        let other = Flame::build(&d, s, &[0, 2]);
        let again = other.find(&path);
        assert_eq!(other.path_to(again), path);
        // A path that does not exist stops at the deepest node on the way.
        let gone = [path[0], FlameFrame::NoStack];
        assert_eq!(f.find(&gone), top);
        assert_eq!(f.depth_under(top), 3);
        assert_eq!(f.depth_under(leaf), 3);
    }
}
