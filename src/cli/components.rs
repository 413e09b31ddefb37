//! `memsight components`: the Component table (Group By Component): each CANN component whose
//! reserved memory peaks at 100 MB or more, its peak and when it is first reached.

use std::io::Write;
use std::path::Path;

use super::rank::load_one;
use crate::analysis::component_peaks;
use crate::model::{RankData, SourceChoice, bytes_to_mib, ns_to_ms};

/// Runs `components`; returns the exit code.
pub fn components(
    path: &Path,
    source: SourceChoice,
    rank: Option<&str>,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let mut run = || -> Result<(), String> {
        let data = load_one(path, rank, source, err)?;
        let text = if json {
            format!("{}\n", components_json(&data))
        } else {
            components_text(&data)
        };
        out.write_all(text.as_bytes()).map_err(|e| e.to_string())
    };
    super::finish(run(), err)
}

/// The `--json` document (its field names are a contract).
pub fn components_json(data: &RankData) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = component_peaks(data)
        .iter()
        .map(|c| {
            serde_json::json!({
                "name": c.component,
                "peak_reserved_mib": bytes_to_mib(c.peak),
                "at_ms": ns_to_ms(c.time),
            })
        })
        .collect();
    serde_json::json!({"rank": data.info.rank, "components": rows})
}

/// The table as the GUI shows it, aligned.
pub fn components_text(data: &RankData) -> String {
    let rows: Vec<Vec<String>> = component_peaks(data)
        .iter()
        .map(|c| {
            vec![
                c.component.clone(),
                format!("{:.2}", bytes_to_mib(c.peak)),
                format!("{:.3}", ns_to_ms(c.time)),
            ]
        })
        .collect();
    if rows.is_empty() {
        return format!(
            "rank {}: no component reaches 100 MB reserved (or the rank has no npu_module_mem)\n",
            data.info.rank
        );
    }
    super::text_table(&["Component", "Peak Reserved(MB)", "Time(ms)"], &rows)
}
