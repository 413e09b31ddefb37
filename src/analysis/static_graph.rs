//! The static-graph view (MindSpore graph mode, static_op_mem): per Graph ID the Size step series
//! over node index and the Total Size line, plus the graph's op list.

use crate::model::{NULL, RankData};

/// Node Index End meaning "lives until the end of the graph" (UINT32_MAX).
pub const END_OF_GRAPH: i64 = 4_294_967_295;

/// One graph of static_op_mem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticGraph {
    /// The Graph ID as written.
    pub graph_id: String,
    /// Distinct node indices where the running size changes, ascending.
    pub node_index: Vec<i64>,
    /// Running size (bytes) from each node index on: Σ +size at start, −size at end.
    pub size: Vec<i64>,
    /// The TOTAL row's size, bytes (None when the graph has no TOTAL row).
    pub total: Option<i64>,
    /// static_op_mem rows of this graph, file order, TOTAL excluded.
    pub ops: Vec<u32>,
    /// Where end-of-graph is drawn: the largest real node index + 1.
    pub end_index: i64,
}

/// Every graph of the rank, ordered by Graph ID (numerically when they are numbers).
pub fn static_graphs(data: &RankData) -> Vec<StaticGraph> {
    let st = &data.static_ops;
    let total_id = data.strings.lookup("TOTAL");
    let mut ids: Vec<u32> = Vec::new();
    for &g in &st.graph_id {
        if !ids.contains(&g) {
            ids.push(g);
        }
    }
    ids.sort_by(|&a, &b| {
        let (sa, sb) = (data.strings.get(a), data.strings.get(b));
        match (sa.parse::<i64>(), sb.parse::<i64>()) {
            (Ok(x), Ok(y)) => x.cmp(&y),
            _ => sa.cmp(sb),
        }
    });
    ids.into_iter()
        .map(|gid| {
            let rows: Vec<u32> = (0..st.len() as u32)
                .filter(|&i| st.graph_id[i as usize] == gid)
                .collect();
            let is_total = |i: u32| Some(st.op_name[i as usize]) == total_id;
            let total = rows
                .iter()
                .copied()
                .find(|&i| is_total(i))
                .map(|i| st.size[i as usize]);
            let ops: Vec<u32> = rows.iter().copied().filter(|&i| !is_total(i)).collect();
            let max_index = ops
                .iter()
                .flat_map(|&i| [st.node_start[i as usize], st.node_end[i as usize]])
                .filter(|&n| n != END_OF_GRAPH && n != NULL)
                .max()
                .unwrap_or(0);
            let end_index = max_index.saturating_add(1);
            let mut deltas: Vec<(i64, i64)> = Vec::with_capacity(ops.len() * 2);
            for &i in &ops {
                let (s, e, size) = (
                    st.node_start[i as usize],
                    st.node_end[i as usize],
                    st.size[i as usize],
                );
                if size == 0 {
                    continue;
                }
                deltas.push((s, size));
                deltas.push((
                    if e == END_OF_GRAPH { end_index } else { e },
                    size.saturating_neg(),
                ));
            }
            deltas.sort_by_key(|d| d.0);
            let (mut node_index, mut size) = (Vec::new(), Vec::new());
            let mut run = 0i64;
            for (k, &(n, d)) in deltas.iter().enumerate() {
                run = run.saturating_add(d);
                if deltas.get(k + 1).is_none_or(|next| next.0 != n) {
                    node_index.push(n);
                    size.push(run);
                }
            }
            StaticGraph {
                graph_id: data.strings.get(gid).to_string(),
                node_index,
                size,
                total,
                ops,
                end_index,
            }
        })
        .collect()
}

/// Ops of `graph` whose start or end node index lies in `[a, b]` (the box-zoom filter; an
/// end-of-graph end counts as `end_index`).
pub fn static_ops_in_range(data: &RankData, graph: &StaticGraph, a: i64, b: i64) -> Vec<u32> {
    let st = &data.static_ops;
    graph
        .ops
        .iter()
        .copied()
        .filter(|&i| {
            let s = st.node_start[i as usize];
            let e = st.node_end[i as usize];
            let e = if e == END_OF_GRAPH {
                graph.end_index
            } else {
                e
            };
            (a..=b).contains(&s) || (a..=b).contains(&e)
        })
        .collect()
}
