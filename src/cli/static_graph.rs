//! `memsight static`: the static-graph view (MindSpore graph mode, static_op_mem) of one graph:
//! its ops with the view's filters and sort, and its Size curve over node index with the
//! graph's Total Size.

use crate::model::plural::count;
use std::io::Write;
use std::path::Path;

use super::rank::load_one;
use crate::analysis::{
    END_OF_GRAPH, SortDir, StaticColumn, StaticGraph, StaticQuery, static_graphs, static_rows,
};
use crate::model::{RankData, SourceChoice, bytes_to_mib};

/// Options of `static`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StaticArgs {
    /// Rank id; default the device rank with the highest peak.
    #[arg(long, allow_hyphen_values = true)]
    pub rank: Option<String>,
    /// Graph ID, as static_op_mem writes it; default the first graph (the view's default).
    #[arg(long)]
    pub graph: Option<String>,
    /// Ops whose start or end node index is at least this (the chart's box selection).
    #[arg(long)]
    pub from_node: Option<i64>,
    /// Ops whose start or end node index is at most this ("end of graph" counts as the last
    /// node index + 1).
    #[arg(long)]
    pub to_node: Option<i64>,
    /// Case-insensitive name substring.
    #[arg(long)]
    pub name: Option<String>,
    /// Minimum Size(KB), inclusive.
    #[arg(long, allow_negative_numbers = true)]
    pub min_size_kib: Option<f64>,
    /// Maximum Size(KB), inclusive.
    #[arg(long, allow_negative_numbers = true)]
    pub max_size_kib: Option<f64>,
    /// Sort: COLUMN[:asc|desc], COLUMN one of "Device ID", Name, "Node Index Start", "Node Index
    /// End", "Size(MB)" (or device, name, start, end, size).
    #[arg(long)]
    pub sort: Option<String>,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Parses `COLUMN[:asc|desc]` for the static op table.
pub fn parse_static_sort(s: &str) -> Result<(StaticColumn, SortDir), String> {
    let (col, dir) = super::table::split_sort(s)?;
    let key = col.trim().to_ascii_lowercase();
    let col = StaticColumn::ALL
        .into_iter()
        .find(|c| {
            let short = match c {
                StaticColumn::Device => "device",
                StaticColumn::Name => "name",
                StaticColumn::NodeStart => "start",
                StaticColumn::NodeEnd => "end",
                StaticColumn::Size => "size",
            };
            key == c.header().to_ascii_lowercase() || key == short
        })
        .ok_or_else(|| {
            let names: Vec<&str> = StaticColumn::ALL.iter().map(|c| c.header()).collect();
            format!("unknown column {col:?} (columns: {})", names.join(", "))
        })?;
    Ok((col, dir))
}

/// Runs `static`; returns the exit code.
pub fn static_graph(
    path: &Path,
    source: SourceChoice,
    args: &StaticArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let mut run = || -> Result<(), String> {
        let sort = args.sort.as_deref().map(parse_static_sort).transpose()?;
        let range = match (args.from_node, args.to_node) {
            (None, None) => None,
            (a, b) => {
                let (a, b) = (a.unwrap_or(i64::MIN), b.unwrap_or(i64::MAX));
                if a > b {
                    return Err(format!("bad range: --from-node {a} is after --to-node {b}"));
                }
                Some((a, b))
            }
        };
        for (what, v) in [
            ("--min-size-kib", args.min_size_kib),
            ("--max-size-kib", args.max_size_kib),
        ] {
            if v.is_some_and(|v| !v.is_finite()) {
                return Err(format!("{what} must be a finite number"));
            }
        }
        let data = load_one(path, args.rank.as_deref(), source, err)?;
        let graphs = static_graphs(&data);
        if graphs.is_empty() {
            return Err(format!(
                "rank {}: no static graph (static_op_mem.csv is written in graph mode only)",
                data.info.rank
            ));
        }
        let graph = match &args.graph {
            None => &graphs[0],
            Some(id) => graphs.iter().find(|g| g.graph_id == *id).ok_or_else(|| {
                let ids: Vec<&str> = graphs.iter().map(|g| g.graph_id.as_str()).collect();
                format!("unknown graph {id:?} (graphs: {})", ids.join(", "))
            })?,
        };
        let q = StaticQuery {
            range,
            name: args.name.clone().unwrap_or_default(),
            min_kib: args.min_size_kib,
            max_kib: args.max_size_kib,
            sort,
        };
        let rows = static_rows(&data, graph, &q);
        let text = if args.json {
            format!("{}\n", static_json(&data, &graphs, graph, &rows))
        } else {
            static_text(&data, graph, &rows)
        };
        out.write_all(text.as_bytes()).map_err(|e| e.to_string())
    };
    super::finish(run(), err)
}

/// The `--json` document (its field names are a contract). `end_node` is `null` for "end of
/// graph"; the curve is the running Size at each node index where it changes ("end of graph"
/// drawn at the last node index + 1), with the graph's TOTAL row as `total_size_mib`.
pub fn static_json(
    data: &RankData,
    graphs: &[StaticGraph],
    graph: &StaticGraph,
    rows: &[u32],
) -> serde_json::Value {
    let st = &data.static_ops;
    let ops: Vec<serde_json::Value> = rows
        .iter()
        .map(|&r| {
            let r = r as usize;
            serde_json::json!({
                "name": data.strings.get(st.op_name[r]),
                "start_node": st.node_start[r],
                "end_node": (st.node_end[r] != END_OF_GRAPH).then_some(st.node_end[r]),
                "size_kib": st.size[r] as f64 / 1024.0,
            })
        })
        .collect();
    let total = graph.total.map(bytes_to_mib);
    let curve: Vec<serde_json::Value> = graph
        .node_index
        .iter()
        .zip(&graph.size)
        .map(|(&n, &s)| {
            serde_json::json!({"node": n, "size_mib": bytes_to_mib(s), "total_size_mib": total})
        })
        .collect();
    serde_json::json!({
        "rank": data.info.rank,
        "graphs": graphs.iter().map(|g| g.graph_id.as_str()).collect::<Vec<_>>(),
        "graph": graph.graph_id,
        "ops": ops,
        "curve": curve,
    })
}

/// The graph's ops as the table shows them, aligned, after a line with the graph and its
/// Total Size.
pub fn static_text(data: &RankData, graph: &StaticGraph, rows: &[u32]) -> String {
    let mut text = format!("graph {}", graph.graph_id);
    if let Some(t) = graph.total {
        text.push_str(&format!("    Total Size {:.2} MB", bytes_to_mib(t)));
    }
    text.push_str(&format!(
        "    {}\n\n",
        count(rows.len() as u64, "op", "ops")
    ));
    // One unit for the Size column, from its largest value, with two decimals (the JSON and
    // the TSV export keep the exact values).
    let sizes = &data.static_ops.size;
    let largest = rows
        .iter()
        .filter_map(|&r| sizes.get(r as usize))
        .map(|s| s.unsigned_abs())
        .max()
        .unwrap_or(0);
    let (unit, header) = if largest >= 1 << 20 {
        ((1u64 << 20) as f64, "Size(MB)")
    } else {
        (1024.0, "Size(KB)")
    };
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|&r| {
            let r = r as usize;
            let mut row: Vec<String> = [
                StaticColumn::Name,
                StaticColumn::NodeStart,
                StaticColumn::NodeEnd,
            ]
            .iter()
            .map(|c| c.cell(data, r))
            .collect();
            row.push(format!(
                "{:.2}",
                sizes.get(r).copied().unwrap_or(0) as f64 / unit
            ));
            row
        })
        .collect();
    text.push_str(&super::text_table(
        &["Name", "Node Index Start", "Node Index End", header],
        &cells,
    ));
    text
}
