//! The verdict on a cluster summary (`memsight summarize`): the spread of the ranks' peaks,
//! the outlier ranks and why they differ (the step where each is furthest above the others,
//! the operator holding the most at its peak, its growth over the steps), the leak suspects
//! and the ranks that failed, from the summary file as the app's cluster overview reads it.

use std::path::Path;

use serde_json::{Value, json};

use super::SCHEMA;
use crate::analysis::cluster::{growth, steps_across};
use crate::export::cluster_db::SummaryFile;
use crate::model::cluster::ClusterRank;

/// A rank is an outlier when its peak is this share above the median's…
const OUTLIER_SHARE: f64 = 0.05;

/// …and at least this many MiB above it (a few MiB of 1,000 ranks' noise is no outlier).
const OUTLIER_MIN_MIB: f64 = 64.0;

/// How many outliers, suspects and failures the verdict lists.
const LISTED: usize = 5;

/// The verdict on the summary file at `path`.
pub fn verdict(path: &Path) -> Result<Value, String> {
    let file = SummaryFile::open(path).map_err(|e| e.to_string())?;
    let s = file.overview().map_err(|e| e.to_string())?;
    let ranks = &s.ranks;
    let mut peaks: Vec<f64> = ranks
        .iter()
        .filter_map(|r| r.peak_allocated_mib)
        .filter(|p| p.is_finite())
        .collect();
    peaks.sort_by(f64::total_cmp);
    let median = median(&peaks);
    let across = steps_across(ranks);
    let mut outliers: Vec<(usize, f64)> = ranks
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let (p, m) = (r.peak_allocated_mib?, median?);
            let above = p - m;
            (above >= OUTLIER_MIN_MIB && above >= OUTLIER_SHARE * m).then_some((i, above))
        })
        .collect();
    outliers.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let suspects: Vec<Value> = ranks
        .iter()
        .filter_map(|r| {
            let g = growth(r)?;
            g.is_leak_suspect()
                .then(|| json!({"rank": who(r), "rises": g.rises, "mib": g.mib}))
        })
        .take(LISTED)
        .collect();
    let failed: Vec<&ClusterRank> = ranks.iter().filter(|r| r.error.is_some()).collect();
    Ok(json!({
        "schema": SCHEMA,
        "kind": "summary",
        "path": path.display().to_string(),
        "ranks": ranks.len(),
        "peak_mib": {
            "lowest": peaks.first(),
            "median": median,
            "highest": peaks.last(),
        },
        "outliers": outliers.iter().take(LISTED).map(|&(i, above)| {
            let r = &ranks[i];
            json!({
                "rank": who(r),
                "peak_mib": r.peak_allocated_mib,
                "above_median_mib": above,
                "step": furthest_step(r, &across),
                "top_operator": r.top_operator.as_ref().map(|o| json!({"name": o.name, "mib": o.mib})),
                "growth": growth(r).map(|g| json!({"rises": g.rises, "mib": g.mib})),
            })
        }).collect::<Vec<_>>(),
        "outliers_total": outliers.len(),
        "leak_suspects": suspects,
        "failed": {
            "count": failed.len(),
            "first": failed.iter().take(LISTED).map(|r| json!({
                "rank": who(r),
                "error": r.error,
            })).collect::<Vec<_>>(),
        },
        "from": "the summary file (the app's cluster overview)",
        "next": [
            format!("memsight {}", crate::model::shell::quote_path(path)),
            "memsight explain PROFILE --rank R (the outlier's own profile)".to_string(),
        ],
    }))
}

/// The median of sorted values (the mean of the two middle ones for an even count).
fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// A rank as a person names it: `host/rank device`.
fn who(r: &ClusterRank) -> Value {
    json!({
        "rank": r.identity.rank,
        "host": r.identity.host,
        "device": r.identity.device,
    })
}

/// The step where `r`'s peak is furthest above that step's median over the ranks.
fn furthest_step(r: &ClusterRank, across: &[crate::analysis::cluster::StepAcross]) -> Value {
    r.steps
        .iter()
        .filter_map(|s| {
            let p = s.peak_allocated_mib.filter(|p| p.is_finite())?;
            let a = across.iter().find(|a| a.step == s.step)?;
            Some((s.step, p, p - a.median))
        })
        .max_by(|a, b| a.2.total_cmp(&b.2).then(b.0.cmp(&a.0)))
        .map_or(
            Value::Null,
            |(step, p, above)| json!({"step": step, "peak_mib": p, "above_step_median_mib": above}),
        )
}
