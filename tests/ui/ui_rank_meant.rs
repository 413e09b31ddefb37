//! The app opens on the rank a user means (issue 87): a single-GPU PyTorch trace on its device
//! rank, not the 0 MB CPU pseudo-rank behind a 2-rank overview; a folder of several devices on
//! the overview, then on the device rank with the highest peak (PyTorch's own
//! `max_memory_allocated`, in the fixtures' `truth.json`), unless the user chose one.

use std::path::{Path, PathBuf};

use memsight::ui::MemsightApp;

use crate::common;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pytorch/whatif_cuda")
}

/// The rank id shown on screen.
fn shown_rank(app: &MemsightApp) -> String {
    let i = app.view_state().rank;
    app.profile().unwrap().ranks[i].rank.clone()
}

#[test]
fn a_single_gpu_trace_opens_on_its_device_without_the_overview() {
    let trace = fixtures().join("gpu.pt.trace.json.gz");
    let mut app = MemsightApp::new(Some(trace), Vec::new(), None);
    app.wait_for_load();
    let mut h = common::harness(app);
    h.run();
    let app = h.state();
    assert_eq!(shown_rank(app), "gpu cuda:0");
    assert!(!app.view_state().show_overview, "no overview of one device");
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("truth.json")).unwrap())
            .unwrap();
    let want = truth["runs"]["gpu"]["max_allocated"].as_f64().unwrap() / 1048576.0;
    let summary = memsight::export::summary::summarize(&app.view().unwrap().data);
    let peak = summary.peaks.operator_allocated.unwrap().mib;
    assert!((peak - want).abs() / want < 0.005, "{peak} against {want}");
}

#[test]
fn several_devices_open_on_the_overview_then_the_highest_peak() {
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("truth.json")).unwrap())
            .unwrap();
    let (best, _) = truth["runs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, r)| (k.clone(), r["max_allocated"].as_f64().unwrap()))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    let mut app = MemsightApp::new(Some(fixtures()), Vec::new(), None);
    app.wait_for_load();
    app.wait_for_overview();
    let mut h = common::harness(app);
    h.run();
    assert!(h.state().view_state().show_overview, "the overview stays");
    assert_eq!(shown_rank(h.state()), format!("{best} cuda:0"));

    // A rank the user picked is not moved away from.
    let mut app = MemsightApp::new(Some(fixtures()), Vec::new(), None);
    app.wait_for_load();
    let other = app
        .profile()
        .unwrap()
        .ranks
        .iter()
        .position(|r| r.rank != format!("{best} cuda:0") && r.rank.ends_with("cuda:0"))
        .unwrap();
    app.select_rank(other);
    app.wait_for_overview();
    let mut h = common::harness(app);
    h.run();
    assert_eq!(h.state().view_state().rank, other);
}
