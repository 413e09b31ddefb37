//! The desktop app (egui/eframe): the only module that imports egui.
//!
//! - [`app`]: [`MemsightApp`], the window: menus, parameter bar, loading, shortcuts, panels.
//! - [`chart`]: the memory curves (egui_plot), linked to the table.
//! - [`table`]: the details table, its filters, pages, Copy and Export.
//! - [`panels`]: Live at cursor, the component peak table, the static view, load warnings.
//! - [`reduction`]: the chart's reduced lines, computed off the UI thread for big ranks;
//!   [`step_line`]: step curves drawn as pixel-snapped bars.
//! - [`zoom`]: drag-box and wheel zoom of a chart's x axis.
//! - [`state`]: the view state as plain data; [`format`](mod@format): numbers for reading;
//!   [`loader`]: loading off the UI thread.

pub mod app;
pub mod bench;
pub mod chart;
pub mod format;
pub mod loader;
pub mod panels;
pub mod reduction;
pub mod state;
pub mod step_line;
pub mod table;
pub mod zoom;

pub use app::MemsightApp;

/// Opens the window on `path` and runs until it is closed (`MEMSIGHT_BENCH=SECONDS` times it).
pub fn run(path: std::path::PathBuf) -> Result<(), String> {
    let started = std::time::Instant::now();
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_inner_size([1400.0, 900.0])
            .with_min_inner_size([800.0, 500.0])
            .with_title("memsight"),
        ..Default::default()
    };
    eframe::run_native(
        "memsight",
        options,
        Box::new(move |cc| {
            let recent = cc
                .storage
                .and_then(|s| s.get_string(app::RECENT_KEY))
                .map(|s| app::parse_recent(&s))
                .unwrap_or_default();
            cc.egui_ctx.set_theme(egui::ThemePreference::System);
            let mut app = MemsightApp::new(Some(path), recent, Some(cc.egui_ctx.clone()));
            app.bench = bench::Bench::from_env(started);
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| e.to_string())
}
