//! Times one rank's load without a window, as the app does it: `cargo run --release --example
//! first_curves_timing -- PATH` prints when discovery ended, when the first look (the curves,
//! drawn while the rest loads) arrived and when the whole rank was in. Run it under
//! `farm-bench` for the peak memory. `--first PATH` stops at the first look (for profiling
//! what it costs).

use std::time::Instant;

fn main() {
    let Some(mut path) = std::env::args_os().nth(1) else {
        eprintln!("usage: first_curves_timing [--first | --scan] PATH");
        std::process::exit(2);
    };
    let only_first = path == "--first";
    if only_first {
        path = std::env::args_os().nth(2).unwrap_or_default();
    }
    let started = Instant::now();
    // `--scan FILE`: only the PyTorch importer's byte search for memory events.
    if path == "--scan" {
        let file = std::env::args_os().nth(2).unwrap_or_default();
        let control = memsight::ingest::LoadControl::new();
        let scan = memsight::ingest::pytorch::memory_scan::scan_file(
            std::path::Path::new(&file),
            file.to_string_lossy().ends_with(".gz"),
            &|_| true,
            &control,
        );
        match scan {
            Ok(s) => println!(
                "scan {:.3} s: {} events, {} unsure",
                started.elapsed().as_secs_f64(),
                s.events.len(),
                s.unsure
            ),
            Err(e) => eprintln!("{e:?}"),
        }
        return;
    }
    let profile = match memsight::ingest::discover(std::path::Path::new(&path)) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let discovered = started.elapsed().as_secs_f64();
    let Some(info) = profile.ranks.first() else {
        eprintln!("no rank");
        std::process::exit(2);
    };
    let control = memsight::ingest::LoadControl::new();
    let mut first: Option<(f64, usize)> = None;
    let mut early = |d: memsight::model::RankData| {
        let (t, n) = *first.get_or_insert((started.elapsed().as_secs_f64(), d.records.len()));
        if only_first {
            println!("discovered {discovered:.3} s; first look {t:.3} s ({n} points)");
            std::process::exit(0);
        }
    };
    let data = memsight::ingest::load_rank_with(info, &control, &mut early);
    let done = started.elapsed().as_secs_f64();
    match data {
        Ok(d) => println!(
            "discovered {discovered:.3} s; first look {}; complete {done:.3} s ({} points, {} blocks)",
            first.map_or("none".to_string(), |(t, n)| format!(
                "{t:.3} s ({n} points)"
            )),
            d.records.len(),
            d.operators.len()
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
