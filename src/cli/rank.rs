//! Picking one rank for the per-rank commands (`curve`, `table`, `live`, `roles`, …).

use std::io::Write;
use std::path::Path;

use crate::analysis::rank_meant::{Seen, allocated_peak, candidates, rank_meant};
use crate::ingest::{LoadControl, load_rank};
use crate::model::plural::count;
use crate::model::{Lang, RankData, RankInfo, SourceChoice};

/// Discovers `path` and loads rank `rank` (its id as shown by `inspect`), or the rank a user
/// means ([`crate::analysis::rank_meant`]: the device rank with the highest peak), from the files
/// `source` names; a rank chosen that way is said on `err`. The error is one line for the user.
pub fn load_one(
    path: &Path,
    rank: Option<&str>,
    source: SourceChoice,
    err: &mut dyn Write,
) -> Result<RankData, String> {
    let lang = crate::reports::default_lang();
    load_one_of_many(path, rank, source, lang, err).map(|(data, _)| data)
}

/// [`load_one`], and how many device ranks the profile has (what `roles` shards advice over;
/// a trace's CPU pseudo-rank is not one); the rank chosen is said in `lang`.
pub fn load_one_of_many(
    path: &Path,
    rank: Option<&str>,
    source: SourceChoice,
    lang: Lang,
    err: &mut dyn Write,
) -> Result<(RankData, usize), String> {
    let profile = super::discover_profile(path)?;
    let data = match rank {
        Some(r) => {
            let index = profile
                .ranks
                .iter()
                .position(|i| i.rank == r)
                .ok_or_else(|| {
                    let ids: Vec<&str> = profile.ranks.iter().map(|i| i.rank.as_str()).collect();
                    format!("unknown rank {r:?} (ranks: {})", ids.join(", "))
                })?;
            load_info(&profile.ranks[index], source)?
        }
        None => {
            let chosen = load_meant(&profile.ranks, source)?;
            if let Some(note) = chosen.note {
                let _ = writeln!(err, "memsight: {}", note.render(lang));
            }
            chosen.data
        }
    };
    let devices: Vec<Option<&str>> = profile.ranks.iter().map(|r| r.device.as_deref()).collect();
    Ok((data, crate::analysis::rank_meant::parallel_ranks(&devices)))
}

/// Loads `info` from `source`.
fn load_info(info: &RankInfo, source: SourceChoice) -> Result<RankData, String> {
    let info = with_source(info, source)?;
    load_rank(&info, &LoadControl::new()).map_err(|e| e.to_string())
}

/// The rank a user means, loaded, and the line that says which it is (none for a one-rank
/// profile).
pub struct Meant {
    /// The rank's data.
    pub data: RankData,
    /// Which rank was chosen and why (none for a one-rank profile).
    pub note: Option<MeantNote>,
}

/// Which rank a command chose without `--rank`, among how many, and by which rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeantNote {
    /// The rank chosen.
    pub rank: String,
    /// How many ranks the profile has.
    pub of: usize,
    /// The rule that chose it.
    pub why: MeantBy,
}

/// The rule that chose a rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeantBy {
    /// Every rank is a device rank: the highest peak.
    HighestPeak,
    /// One device rank among host ranks.
    OnlyDeviceRank,
    /// The highest peak among several device ranks.
    HighestDevicePeak,
}

impl MeantNote {
    /// The note in `lang`: "rank R: the device rank with the highest peak of N ranks (--rank
    /// picks another)".
    pub fn render(&self, lang: Lang) -> String {
        let (rank, n) = (&self.rank, self.of);
        match lang {
            Lang::En => {
                let which = match self.why {
                    MeantBy::HighestPeak => "the rank with the highest peak",
                    MeantBy::OnlyDeviceRank => "the only device rank",
                    MeantBy::HighestDevicePeak => "the device rank with the highest peak",
                };
                format!(
                    "rank {rank}: {which} of {} (--rank picks another)",
                    count(n as u64, "rank", "ranks")
                )
            }
            Lang::Zh => {
                let which = match self.why {
                    MeantBy::HighestPeak => "峰值最高的 rank",
                    MeantBy::OnlyDeviceRank => "唯一的设备 rank",
                    MeantBy::HighestDevicePeak => "峰值最高的设备 rank",
                };
                format!("rank {rank}：{n} 个 rank 中{which}（--rank 可另选）")
            }
        }
    }
}

/// Loads the rank a user means among `ranks` ([`rank_meant`]): the only device rank is loaded
/// alone; among several, each is loaded in turn (one rank's memory besides the best so far) and
/// the highest peak kept. A rank that fails to load is passed over; when all fail, the first
/// failure is the error.
pub fn load_meant(ranks: &[RankInfo], source: SourceChoice) -> Result<Meant, String> {
    let devices: Vec<Option<&str>> = ranks.iter().map(|r| r.device.as_deref()).collect();
    let candidates = candidates(&devices);
    let mut best: Option<(RankData, Option<i64>)> = None;
    let mut first_error = None;
    for &i in &candidates {
        match load_info(&ranks[i], source) {
            Ok(data) => {
                let peak = if candidates.len() > 1 {
                    allocated_peak(&data)
                } else {
                    None
                };
                let seen = |p: Option<i64>| Seen {
                    host: false,
                    peak: p,
                };
                let better = best
                    .as_ref()
                    .is_none_or(|(_, b)| rank_meant(&[seen(*b), seen(peak)]) == Some(1));
                if better {
                    best = Some((data, peak));
                }
            }
            Err(e) => {
                first_error.get_or_insert(format!("rank {}: {e}", ranks[i].rank));
            }
        }
    }
    let Some((data, _)) = best else {
        return Err(first_error.unwrap_or_else(|| "the profile has no rank".into()));
    };
    let note = (ranks.len() > 1).then(|| MeantNote {
        rank: data.info.rank.clone(),
        of: ranks.len(),
        why: if candidates.len() == ranks.len() {
            MeantBy::HighestPeak
        } else if candidates.len() == 1 {
            MeantBy::OnlyDeviceRank
        } else {
            MeantBy::HighestDevicePeak
        },
    });
    Ok(Meant { data, note })
}

/// `info` read from `source`, or why it cannot be.
pub fn with_source(info: &RankInfo, source: SourceChoice) -> Result<RankInfo, String> {
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

pub use crate::reports::ms_to_ns;

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

/// Runs the rank report `R` as its subcommand: checks its arguments, loads the rank asked for
/// (or the one a user means) once, and prints its answer; returns the exit code.
pub fn run<R: crate::reports::RankReport>(
    path: &Path,
    source: SourceChoice,
    args: &R::Args,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    use crate::reports::RankArgs as _;
    let mut run = || -> Result<(), String> {
        R::check(args)?;
        let lang = args.lang().unwrap_or_else(crate::reports::default_lang);
        let (data, parallel_ranks) = load_one_of_many(path, args.rank(), source, lang, err)?;
        let view = crate::analysis::RankView::new(data);
        let input = crate::reports::RankInput {
            view: &view,
            parallel_ranks,
        };
        let text = crate::reports::render::<R>(&input, args)?;
        out.write_all(text.as_bytes()).map_err(|e| e.to_string())
    };
    super::finish(run(), err)
}
