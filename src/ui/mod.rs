//! The desktop app (egui/eframe): the only module that imports egui.
//!
//! - [`app`]: [`MemsightApp`], the window: owns the one [`document`] on screen (the
//!   [`profile`], a snapshot, an OOM folder, a summary; the registry is [`documents`]), the view
//!   [`state`] and the [`jobs`] runner; applies every [`command`] in one place.
//! - [`profile`]: the profile as a document: its [`session`], load, overview, baseline and
//!   [`panes`].
//! - [`session`]: the opened profile and its loaded ranks (a bounded LRU, stable keys).
//! - [`state`]: the view state as plain data, changed only by [`state::ViewState::apply`];
//!   [`command`]: user intents as data; [`sorts`] and [`choices`]: each pane's sorts, filters
//!   and modes, defined by the pane and kept in the state under its id.
//! - [`i18n`]: every UI string in English and 简体中文; [`fonts`]: the system's CJK font;
//!   [`prefs`]: language, theme and recent paths kept between runs;
//!   [`file_browser`]: the in-app open/save browser for desktops without a native dialog.
//! - [`baseline`]: the other side of a comparison and the per-operator diff.
//! - [`jobs`]: the one job runner (keyed, cancellable, with progress) for all background work;
//!   [`loading`]: discovery and rank loads as jobs; [`overview`]: the per-rank summaries of the
//!   cluster overview, filled by a job.
//! - [`panes`]: memory chart, details table, component table, static graph, live at cursor,
//!   warnings; [`top_bar`]: menus, parameter bar, start page.
//! - [`plot`]: what the charts share (step lines, zoom gestures, reduced lines, colours);
//!   [`format`](mod@format): numbers for reading; [`tooltip`]: tooltips' width;
//!   [`spinner`](mod@spinner): the busy spinner, redrawn 15 times a second;
//!   [`bench`](mod@bench): self-timing under Xvfb; [`chart_image`]: Save chart as PNG's report
//!   figure, drawn on the CPU with [`report_text`]'s fonts.

pub mod app;
pub mod baseline;
pub mod bench;
pub mod chart_image;
pub mod choices;
pub mod command;
pub mod document;
pub mod documents;
pub mod file_browser;
pub mod fonts;
pub mod format;
pub mod i18n;
pub mod jobs;
pub mod loading;
pub mod overview;
pub mod palette;
pub mod panes;
pub mod plot;
pub mod prefs;
pub mod profile;
pub mod report_text;
pub mod session;
pub mod sorts;
pub mod spinner;
pub mod state;
pub mod summary;
pub mod tooltip;
pub mod top_bar;

pub use app::MemsightApp;
pub use command::{Command, PickKind};

/// The window icon, 256×256 PNG.
const WINDOW_ICON: &[u8] = include_bytes!("../../assets/icons/memsight-256.png");

/// Opens the window on `path` (compared with `baseline` when given; an allocator snapshot joined
/// with `profile`, a profile of its run, when given) and runs until it is closed
/// (`MEMSIGHT_BENCH=SECONDS` times it). A path given starts loading before the window is made;
/// without one it opens what [`prefs::startup`] says: the last profile, or the demo.
pub fn run(
    path: Option<std::path::PathBuf>,
    baseline: Option<std::path::PathBuf>,
    profile: Option<std::path::PathBuf>,
) -> Result<(), String> {
    let started = std::time::Instant::now();
    let mut viewport = egui::ViewportBuilder::default()
        .with_inner_size([1400.0, 900.0])
        .with_min_inner_size([800.0, 500.0])
        .with_title("memsight")
        // Matches assets/memsight.desktop, so a Wayland desktop shows the entry's icon and name.
        .with_app_id("memsight");
    // The window and taskbar icon (assets/icons, drawn from assets/memsight.svg).
    if let Ok(icon) = eframe::icon_data::from_png_bytes(WINDOW_ICON) {
        viewport = viewport.with_icon(icon);
    }
    let options = eframe::NativeOptions {
        viewport,
        ..Default::default()
    };
    // A path given on the command line starts loading now, while the window and its GL context
    // are made (0.065 s under Xvfb): the app is made before the window,
    // with the default preferences, and takes the stored ones once the window is up. Without a
    // path, what opens depends on the stored preferences (the last path, or the demo).
    let mut early = path.map(|p| MemsightApp::with_prefs(Some(p), prefs::Prefs::default(), None));
    eframe::run_native(
        "memsight",
        options,
        Box::new(move |cc| {
            let prefs = prefs::Prefs::load(cc.storage);
            cc.egui_ctx.set_theme(prefs.theme.egui());
            let mut app = match early.take() {
                Some(mut app) => {
                    app.adopt_stored_prefs(prefs);
                    app
                }
                None => {
                    let start = prefs::startup(&prefs, std::path::Path::exists);
                    let path = match &start {
                        prefs::Startup::Path(p) => p.clone(),
                        prefs::Startup::Demo | prefs::Startup::Gone(_) => {
                            crate::cli::demo_profile_path()
                                .map_err(|e| format!("cannot prepare the demo profile: {e}"))?
                        }
                    };
                    let mut app =
                        MemsightApp::with_prefs(Some(path), prefs, Some(cc.egui_ctx.clone()));
                    if let prefs::Startup::Gone(last) = &start {
                        app.notice = Some((app.tr().last_path_gone)(last));
                    }
                    app
                }
            };
            app.bench = bench::Bench::from_env(started);
            if let Some(b) = baseline {
                app.apply(Command::CompareWith(baseline::BaselineSource {
                    path: b,
                    rank: 0,
                }));
            }
            if let Some(p) = profile {
                app.apply(Command::Picked(panes::snapshot_join::PICK.id, p));
            }
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| e.to_string())
}
