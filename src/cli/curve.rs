//! `memsight curve`: the series of a Group By in a window, every point or reduced for a width.

use std::io::Write;
use std::path::Path;

use crate::model::SourceChoice;

use serde::Serialize;

use super::rank::{load_one, window};
use crate::analysis::{GroupBy, LodSeries, Series, build_series};
use crate::model::units::{mib, ms_exact};
use crate::model::{bytes_to_mib, ns_to_ms};

/// Options of `curve`.
#[derive(Debug, Clone, clap::Args)]
pub struct CurveArgs {
    /// Rank id (as `inspect` shows it); default the device rank with the highest peak.
    #[arg(long, allow_hyphen_values = true)]
    pub rank: Option<String>,
    /// overall, stream or component.
    #[arg(long, default_value = "overall", value_parser = parse_group_by)]
    pub group_by: GroupBy,
    /// Window start, ms from the rank's time origin.
    #[arg(long, allow_negative_numbers = true)]
    pub from_ms: Option<f64>,
    /// Window end, ms from the rank's time origin.
    #[arg(long, allow_negative_numbers = true)]
    pub to_ms: Option<f64>,
    /// Reduce to what a chart this many pixels wide shows (exact per-pixel min/max, or LTTB
    /// above the threshold); without it every point in the window is printed.
    #[arg(long)]
    pub width: Option<usize>,
    /// Points in the window above which sampling (LTTB) is used.
    #[arg(long, default_value_t = crate::analysis::DEFAULT_THRESHOLD)]
    pub threshold: usize,
    /// JSON: {"rank", "series": [{"name", "sampled", "step", "points": [[time_ms, mib], ...]}]}.
    #[arg(long)]
    pub json: bool,
}

fn parse_group_by(s: &str) -> Result<GroupBy, String> {
    GroupBy::parse(s).ok_or_else(|| format!("unknown group {s:?} (overall, stream or component)"))
}

#[derive(Serialize)]
struct JsonSeries {
    name: String,
    sampled: bool,
    step: bool,
    points: Vec<[f64; 2]>,
}

/// The points of one series for the window: all inside it, or the reduced set (which also keeps
/// the sample before and after the window so a step line can be drawn to the edges).
fn points(
    s: Series,
    win: Option<(i64, i64)>,
    width: Option<usize>,
    threshold: usize,
) -> (Vec<(i64, i64)>, bool) {
    // Without a window: the series' own extent (so columns span the data, not all of time).
    let extent = (
        s.times.first().copied().unwrap_or(0),
        s.times.last().copied().unwrap_or(0),
    );
    let (t0, t1) = win.unwrap_or(extent);
    match width {
        Some(w) => {
            let lod = LodSeries::new(s);
            let r = lod.reduce(t0, t1, w, threshold);
            (r.times.into_iter().zip(r.values).collect(), r.sampled)
        }
        None => (
            s.times
                .iter()
                .zip(&s.values)
                .filter(|(t, _)| (t0..=t1).contains(*t))
                .map(|(&t, &v)| (t, v))
                .collect(),
            false,
        ),
    }
}

/// Runs `curve`; returns the exit code.
pub fn curve(
    path: &Path,
    source: SourceChoice,
    args: &CurveArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let mut run = || -> Result<(), String> {
        let win = window(args.from_ms, args.to_ms)?;
        let data = load_one(path, args.rank.as_deref(), source, err)?;
        if args.width == Some(0) {
            return Err("--width must be at least 1".into());
        }
        let series = build_series(&data, args.group_by);
        let io = |e: std::io::Error| e.to_string();
        if args.json {
            let list: Vec<JsonSeries> = series
                .into_iter()
                .map(|s| {
                    let name = s.name.clone();
                    let (pts, sampled) = points(s, win, args.width, args.threshold);
                    JsonSeries {
                        name,
                        sampled,
                        step: true,
                        points: pts
                            .into_iter()
                            .map(|(t, v)| [ns_to_ms(t), bytes_to_mib(v)])
                            .collect(),
                    }
                })
                .collect();
            let doc = serde_json::json!({ "rank": &data.info.rank, "series": list });
            writeln!(out, "{doc}").map_err(io)?;
        } else {
            writeln!(out, "series,time_ms,mib").map_err(io)?;
            for s in series {
                let name = s.name.clone();
                let (pts, _) = points(s, win, args.width, args.threshold);
                for (t, v) in pts {
                    writeln!(out, "{name},{},{}", ms_exact(t), mib(v)).map_err(io)?;
                }
            }
        }
        Ok(())
    };
    super::finish(run(), err)
}
