//! Times a cluster summary opening in the app without a window: `cargo run --release --example
//! summary_timing -- ALL.db` prints the time from the app's start to the first frame that draws
//! the whole overview (the file read in the app's job, then the frame: bars, step plot, table,
//! the highest rank's curve read from the file), the median of the next frames with the pointer
//! moving over the bars, and the process's peak memory (VmHWM). The renderer is not included:
//! the real window adds its GPU (or Mesa) frame on top.

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use memsight::ui::MemsightApp;

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: summary_timing ALL.db");
        std::process::exit(2);
    };
    let started = Instant::now();
    let mut app = MemsightApp::new(Some(path.into()), Vec::new(), None);
    let Some(summary) = app.document_mut::<memsight::ui::summary::SummaryView>() else {
        eprintln!("not a memsight summary");
        std::process::exit(2);
    };
    summary.wait();
    if let Some(e) = &summary.error {
        eprintln!("{}", e.text(&memsight::ui::i18n::EN));
        std::process::exit(2);
    }
    let ranks = summary.open.as_ref().map_or(0, |o| o.summary.ranks.len());
    let read = summary.read_after.unwrap_or_default();
    let mut h = Harness::builder()
        .with_size([1280.0, 720.0])
        .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
    h.step();
    let first_frame = started.elapsed();
    let mut frames: Vec<Duration> = Vec::new();
    for k in 0..60 {
        h.hover_at(egui::pos2(80.0 + k as f32 * 9.0, 250.0));
        let t = Instant::now();
        h.step();
        frames.push(t.elapsed());
    }
    frames.sort();
    println!(
        "{ranks} ranks; read {:.3} s; first full frame {:.3} s after start; later frames median {:.1} ms (max {:.1}); peak RSS {:.0} MiB",
        read.as_secs_f64(),
        first_frame.as_secs_f64(),
        frames[frames.len() / 2].as_secs_f64() * 1e3,
        frames[frames.len() - 1].as_secs_f64() * 1e3,
        peak_rss_mib().unwrap_or(f64::NAN)
    );
}
