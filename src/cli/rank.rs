//! Picking one rank for the per-rank commands (`curve`, `table`, `live`, `roles`, …).

use std::path::Path;

use crate::ingest::{LoadControl, load_rank};
use crate::model::{RankData, SourceChoice};

/// Discovers `path` and loads rank `rank` (its id as shown by `inspect`), or the first rank,
/// from the files `source` names. The error is one line for the user.
pub fn load_one(path: &Path, rank: Option<&str>, source: SourceChoice) -> Result<RankData, String> {
    load_one_of_many(path, rank, source).map(|(data, _)| data)
}

/// [`load_one`], and how many ranks the profile has (what `roles` shards advice over).
pub fn load_one_of_many(
    path: &Path,
    rank: Option<&str>,
    source: SourceChoice,
) -> Result<(RankData, usize), String> {
    let profile = super::discover_profile(path)?;
    let index = match rank {
        None => 0,
        Some(r) => profile
            .ranks
            .iter()
            .position(|i| i.rank == r)
            .ok_or_else(|| {
                let ids: Vec<&str> = profile.ranks.iter().map(|i| i.rank.as_str()).collect();
                format!("unknown rank {r:?} (ranks: {})", ids.join(", "))
            })?,
    };
    let info = with_source(&profile.ranks[index], source)?;
    let data = load_rank(&info, &LoadControl::new()).map_err(|e| e.to_string())?;
    Ok((data, profile.ranks.len()))
}

/// `info` read from `source`, or why it cannot be.
pub fn with_source(
    info: &crate::model::RankInfo,
    source: SourceChoice,
) -> Result<crate::model::RankInfo, String> {
    info.with_source(source).ok_or_else(|| {
        let (want, have) = match source {
            SourceChoice::Csv => ("CSV files", "a DB only"),
            _ => ("a DB", "CSV files only"),
        };
        format!(
            "rank {}: --source asks for {want}, but it has {have}",
            info.rank
        )
    })
}

/// Milliseconds (user input) as ns, rejecting non-finite values.
pub fn ms_to_ns(ms: f64, what: &str) -> Result<i64, String> {
    if !ms.is_finite() || ms.abs() > 9.0e12 {
        return Err(format!(
            "{what} must be a finite number of milliseconds, got {ms}"
        ));
    }
    Ok(crate::model::ms_to_ns(ms))
}

/// The `[from, to]` window in ns from origin (open ends extend to all time); checked before any
/// data is loaded.
pub fn window(from_ms: Option<f64>, to_ms: Option<f64>) -> Result<Option<(i64, i64)>, String> {
    if from_ms.is_none() && to_ms.is_none() {
        return Ok(None);
    }
    let a = from_ms
        .map(|v| ms_to_ns(v, "--from-ms"))
        .transpose()?
        .unwrap_or(i64::MIN / 2);
    let b = to_ms
        .map(|v| ms_to_ns(v, "--to-ms"))
        .transpose()?
        .unwrap_or(i64::MAX / 2);
    if a > b {
        return Err(format!(
            "bad range: --from-ms {} is after --to-ms {}",
            from_ms.unwrap_or(0.0),
            to_ms.unwrap_or(0.0)
        ));
    }
    Ok(Some((a, b)))
}
