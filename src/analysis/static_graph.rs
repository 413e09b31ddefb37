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

/// The columns of the static graph's op table, in display order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StaticColumn {
    /// Device ID.
    Device,
    /// Op name.
    Name,
    /// Node Index Start.
    NodeStart,
    /// Node Index End (`END_OF_GRAPH` sorts as the graph's end).
    NodeEnd,
    /// Size(MB).
    Size,
}

impl StaticColumn {
    /// Every column, in display order.
    pub const ALL: [StaticColumn; 5] = [
        StaticColumn::Device,
        StaticColumn::Name,
        StaticColumn::NodeStart,
        StaticColumn::NodeEnd,
        StaticColumn::Size,
    ];

    /// The header, as static_op_mem.csv names the column.
    pub fn header(self) -> &'static str {
        match self {
            StaticColumn::Device => "Device ID",
            StaticColumn::Name => "Name",
            StaticColumn::NodeStart => "Node Index Start",
            StaticColumn::NodeEnd => "Node Index End",
            StaticColumn::Size => "Size(MB)",
        }
    }

    /// The cell as the table shows it and Copy pastes it.
    pub fn cell(self, data: &RankData, row: usize) -> String {
        let st = &data.static_ops;
        match self {
            StaticColumn::Device => data.strings.get(st.device[row]).to_string(),
            StaticColumn::Name => data.strings.get(st.op_name[row]).to_string(),
            StaticColumn::NodeStart => st.node_start[row].to_string(),
            StaticColumn::NodeEnd => match st.node_end[row] {
                END_OF_GRAPH => "end of graph".to_string(),
                e => e.to_string(),
            },
            StaticColumn::Size => crate::model::units::mib(st.size[row]),
        }
    }
}

/// What the static op table shows of a graph: the same filters in the GUI and `memsight static`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StaticQuery {
    /// Ops whose start or end node index lies in this range (all without one).
    pub range: Option<(i64, i64)>,
    /// Case-insensitive name substring (all when empty).
    pub name: String,
    /// Ops of at least this Size(KB) (inclusive, as Insight compares the KB column).
    pub min_kib: Option<f64>,
    /// Ops of at most this Size(KB) (inclusive).
    pub max_kib: Option<f64>,
    /// Sort (file order when `None`; ties keep file order).
    pub sort: Option<(StaticColumn, super::SortDir)>,
}

/// The ops of `graph` for the table, as `q` filters and sorts them.
pub fn static_rows(data: &RankData, graph: &StaticGraph, q: &StaticQuery) -> Vec<u32> {
    let st = &data.static_ops;
    let mut rows = match q.range {
        Some((a, b)) => static_ops_in_range(data, graph, a, b),
        None => graph.ops.clone(),
    };
    if q.min_kib.is_some() || q.max_kib.is_some() {
        let (lo, hi) = (
            q.min_kib.unwrap_or(f64::NEG_INFINITY),
            q.max_kib.unwrap_or(f64::INFINITY),
        );
        rows.retain(|&i| {
            let kib = st.size[i as usize] as f64 / 1024.0;
            (lo..=hi).contains(&kib)
        });
    }
    let sort = q.sort;
    let needle = q.name.trim().to_lowercase();
    if !needle.is_empty() {
        rows.retain(|&i| {
            data.strings
                .get(st.op_name[i as usize])
                .to_lowercase()
                .contains(&needle)
        });
    }
    if let Some((col, dir)) = sort {
        let end = |i: usize| match st.node_end[i] {
            END_OF_GRAPH => graph.end_index,
            e => e,
        };
        rows.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            let o = match col {
                StaticColumn::Device => data
                    .strings
                    .get(st.device[a])
                    .cmp(data.strings.get(st.device[b])),
                StaticColumn::Name => data
                    .strings
                    .get(st.op_name[a])
                    .cmp(data.strings.get(st.op_name[b])),
                StaticColumn::NodeStart => st.node_start[a].cmp(&st.node_start[b]),
                StaticColumn::NodeEnd => end(a).cmp(&end(b)),
                StaticColumn::Size => st.size[a].cmp(&st.size[b]),
            };
            if dir == super::SortDir::Desc {
                o.reverse()
            } else {
                o
            }
        });
    }
    rows
}

/// `rows` of static_op_mem as TSV with a header row, as the table shows them.
pub fn static_rows_tsv(data: &RankData, rows: &[u32]) -> String {
    let mut out = StaticColumn::ALL.map(StaticColumn::header).join("\t");
    out.push('\n');
    for &r in rows {
        let cells: Vec<String> = StaticColumn::ALL
            .iter()
            .map(|c| c.cell(data, r as usize))
            .collect();
        out.push_str(&cells.join("\t"));
        out.push('\n');
    }
    out
}
