//! Image snapshots of the main views, rendered headless by kittest + wgpu. They are compared on
//! Mesa's software Vulkan (lavapipe, which `scripts/install-deps.sh` installs), so they are
//! ignored by a plain `cargo test`: run them with `cargo test --release --test snapshots --
//! --ignored` (CI does); refresh with `UPDATE_SNAPSHOTS=1`. Built by every `cargo test`, so that
//! running them costs no second build with other features.
#![cfg(feature = "gui")]

mod common;

use std::path::PathBuf;

use common::fixtures;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use memsight::ui::MemsightApp;

/// The app on `path`: its first rank, or with `cluster` the cluster overview once complete.
fn open_view(path: PathBuf, cluster: bool) -> Harness<'static, MemsightApp> {
    let mut app = MemsightApp::new(Some(path), Vec::new(), None);
    app.wait_for_load();
    app.wait_for_overview();
    app.apply(memsight::ui::Command::ShowOverview(cluster));
    let mut h = Harness::builder()
        .with_size([1400.0, 900.0])
        .build_ui_state(
            |ui, app: &mut MemsightApp| {
                // eframe clears the window to the panel colour (the panels are unfilled); the
                // harness clears to transparent, so paint what eframe's clear would.
                ui.painter()
                    .rect_filled(ui.max_rect(), 0.0, ui.visuals().panel_fill);
                app.ui_root(ui)
            },
            app,
        );
    h.run();
    h
}

fn open(path: PathBuf) -> Harness<'static, MemsightApp> {
    open_view(path, false)
}

fn first_rank(root: &str) -> PathBuf {
    common::first_subdir(&fixtures().join(root))
}

#[test]
#[ignore = "needs Mesa's software Vulkan: cargo test --release --test snapshots -- --ignored"]
fn overview() {
    let mut h = open(fixtures().join("demo"));
    h.snapshot("overview");
}

#[test]
#[ignore = "needs Mesa's software Vulkan: cargo test --release --test snapshots -- --ignored"]
fn cluster_overview() {
    let mut h = open_view(fixtures().join("demo"), true);
    h.snapshot("cluster_overview");
}

#[test]
#[ignore = "needs Mesa's software Vulkan: cargo test --release --test snapshots -- --ignored"]
fn zoomed_with_hovered_row_and_live_panel() {
    let mut h = open(first_rank("torch_cluster"));
    h.state_mut().apply(memsight::ui::Command::SetWindow {
        window: memsight::model::TimeWindow::from_ms(0.4, 0.9),
        moving: false,
    });
    h.state_mut().apply(memsight::ui::Command::SetCursor(Some(
        memsight::model::ms_to_ns(0.6),
    )));
    // Two header clicks: ascending, then descending.
    for _ in 0..2 {
        h.state_mut().apply(memsight::ui::Command::sort(
            memsight::ui::panes::details_table::SORT,
            memsight::analysis::Column::Size,
        ));
    }
    h.run();
    h.snapshot("zoomed_live");
}

#[test]
#[ignore = "needs Mesa's software Vulkan: cargo test --release --test snapshots -- --ignored"]
fn component_mode() {
    let mut h = open(first_rank("torch_cluster"));
    h.state_mut().apply(memsight::ui::Command::SetGroupBy(
        memsight::analysis::GroupBy::Component,
    ));
    h.run();
    h.snapshot("component");
}

#[test]
#[ignore = "needs Mesa's software Vulkan: cargo test --release --test snapshots -- --ignored"]
fn static_graph_view() {
    let mut h = open(first_rank("mindspore"));
    h.get_by_label("Static graph").click();
    h.run();
    h.snapshot("static_graph");
}
