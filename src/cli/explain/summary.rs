//! The verdict on a cluster summary (`memsight summarize`): the spread of the ranks' peaks,
//! the outlier ranks (by the app's overview's rule, [`findings`]) and why they differ (the step where each is furthest above the others,
//! the operator holding the most at its peak, its growth over the steps), the leak suspects
//! and the ranks that failed, from the summary file as the app's cluster overview reads it.

use std::path::Path;

use serde_json::{Value, json};

use super::SCHEMA;
use crate::analysis::cluster::{findings, steps_across};
use crate::export::cluster_db::SummaryFile;
use crate::model::cluster::ClusterRank;

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
    // The app's overview's rule, the same lists in the same order.
    let found = findings(ranks);
    let suspects: Vec<Value> = found
        .leak_suspects
        .iter()
        .take(LISTED)
        .filter_map(|&i| {
            let (r, g) = (&ranks[i], found.growth[i]?);
            Some(json!({
                "rank": who(r),
                "rises": g.rises,
                "mib": g.mib,
                "next": explain_rank(r),
            }))
        })
        .collect();
    let failed: Vec<&ClusterRank> = found.failed.iter().map(|&i| &ranks[i]).collect();
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
        "outliers": found.outliers.iter().take(LISTED).map(|&i| {
            let r = &ranks[i];
            json!({
                "rank": who(r),
                "peak_mib": r.peak_allocated_mib,
                "above_median_mib": r.peak_allocated_mib.zip(median).map(|(p, m)| p - m),
                "step": furthest_step(r, &across),
                "top_operator": r.top_operator.as_ref().map(|o| json!({"name": o.name, "mib": o.mib})),
                "growth": found.growth[i].map(|g| json!({"rises": g.rises, "mib": g.mib})),
                "next": explain_rank(r),
            })
        }).collect::<Vec<_>>(),
        "outliers_total": found.outliers.len(),
        "outlier_rule": "above Q3 + 1.5 × IQR or below Q1 − 1.5 × IQR of the device ranks' peaks (4 ranks or more), as the app's overview",
        "leak_suspects": suspects,
        "leak_suspects_total": found.leak_suspects.len(),
        "failed": {
            "count": failed.len(),
            "first": failed.iter().take(LISTED).map(|r| json!({
                "rank": who(r),
                "error": r.error,
            })).collect::<Vec<_>>(),
        },
        "from": "the summary file (the app's cluster overview)",
        "next": std::iter::once(json!(format!("memsight {}", crate::model::shell::quote_path(path))))
            .chain(found.outliers.first().map(|&i| explain_rank(&ranks[i])))
            .chain(found.leak_suspects.first().map(|&i| explain_rank(&ranks[i])))
            .filter(|c| !c.is_null())
            .collect::<Vec<_>>(),
    }))
}

/// The command that explains rank `r` from its own profile (the path the summary recorded).
/// The summary's rank id is unique over the whole job (`0_7`: the seventh rank 0); in its own
/// folder the rank may be named otherwise, so the id is taken as that folder names it: no
/// `--rank` for a folder of one rank, else the id, or the id without the job's `_N` suffix.
fn explain_rank(r: &ClusterRank) -> Value {
    if r.identity.path.is_empty() {
        return Value::Null;
    }
    let path = Path::new(&r.identity.path);
    let id = &r.identity.rank;
    let own: Vec<String> = crate::cli::discover_profile(path)
        .map(|p| p.ranks.into_iter().map(|i| i.rank).collect())
        .unwrap_or_default();
    let unsuffixed = id
        .rsplit_once('_')
        .map_or(id.as_str(), |(head, n)| match n.parse::<u32>() {
            Ok(_) => head,
            Err(_) => id.as_str(),
        });
    let rank = match own.len() {
        1 => None,
        _ if own.iter().any(|o| o == id) => Some(id.as_str()),
        _ if own.iter().any(|o| o == unsuffixed) => Some(unsuffixed),
        // Not found here (another machine's path): as the summary names it.
        0 => Some(id.as_str()),
        _ => None,
    };
    let args: Vec<String> = rank
        .map(|id| crate::model::shell::option("--rank", id))
        .into_iter()
        .collect();
    json!(crate::model::shell::memsight("explain", path, &args))
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
