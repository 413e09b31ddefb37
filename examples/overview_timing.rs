//! Times the cluster overview without a window: `cargo run --release --example overview_timing
//! -- PATH` prints when the first rank's summary and the last arrived (the app's own job, the
//! same computation as `memsight inspect`). Run it under `farm-bench` for the peak memory.

use std::time::Instant;

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: overview_timing PATH");
        std::process::exit(2);
    };
    let started = Instant::now();
    let mut app = memsight::ui::MemsightApp::new(Some(path.into()), Vec::new(), None);
    // As in the window: discovery starts the overview, and the first rank loads beside it.
    app.wait_for_load();
    app.wait_for_overview();
    let Some(o) = app.overview() else {
        eprintln!("no overview (one rank, or nothing loaded)");
        std::process::exit(2);
    };
    println!(
        "{} ranks; first row {:.3} s after the overview started, all {:.3} s; {:.3} s since start",
        o.rows.len(),
        o.first_row_after.map_or(f64::NAN, |d| d.as_secs_f64()),
        o.done_after.map_or(f64::NAN, |d| d.as_secs_f64()),
        started.elapsed().as_secs_f64()
    );
}
