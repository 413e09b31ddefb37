//! The 2026 snapshot fields in the app (issue 45, part 3), in English and Chinese: a snapshot
//! with pinned host memory shows its line (figures from plain arithmetic over the raw pickle,
//! tests/reference/snapshot_fx_pinned.py), and blocks allocated by FX-generated code are held
//! by the model's line, never by the generated file.

use std::path::{Path, PathBuf};

use crate::common;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use memsight::ui::MemsightApp;
use memsight::ui::format::grouped;
use memsight::ui::i18n::{EN, Lang, Tr, ZH};
use memsight::ui::panes::snapshot::SnapshotView;
use memsight::ui::panes::snapshot_pinned::{FIGURES, HOLDER};

fn tr(lang: Lang) -> &'static Tr {
    if lang == Lang::Zh { &ZH } else { &EN }
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/snapshots/fx_pinned/fx_pinned.pickle")
}

fn open(file: &Path, lang: Lang) -> Harness<'static, MemsightApp> {
    let mut app = MemsightApp::new(Some(file.to_path_buf()), Vec::new(), None);
    app.set_language(lang);
    app.document_mut::<SnapshotView>().unwrap().wait();
    assert!(app.document::<SnapshotView>().unwrap().error.is_none());
    common::harness(app)
}

fn mb(v: &serde_json::Value) -> String {
    grouped(v.as_f64().unwrap() / 1048576.0, 2)
}

#[test]
fn the_pinned_host_memory_line_and_the_models_line_show_in_both_languages() {
    let file = fixture();
    let Some(want) =
        common::python_reference("snapshot_fx_pinned.py", &[file.as_os_str(), "1".as_ref()])
    else {
        return;
    };
    let p = &want["pinned_host"];
    let holder = want["top_stacks"][0][0].as_str().unwrap();
    let short_holder = holder.rsplit('/').next().unwrap();
    let pin_holder = p["top_stacks"][0][0].as_str().unwrap();
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&file, lang);
        common::step_until(&mut h, "the snapshot's figures", |h| {
            h.query_all_by_label_contains(short_holder).next().is_some()
        });
        let figures = FIGURES
            .get(t)
            .replace("{res}", &mb(&p["reserved_bytes"]))
            .replace("{n}", &p["segments"].to_string())
            .replace("{alloc}", &mb(&p["allocated_bytes"]))
            .replace("{pend}", &mb(&p["pending_free_bytes"]))
            .replace("{peak}", &mb(&p["peak_allocated_bytes"]));
        h.get_by_label(&figures);
        let held = HOLDER
            .get(t)
            .replace("{mb}", &mb(&p["top_stacks"][0][1]))
            .replace("{frame}", pin_holder.rsplit('/').next().unwrap());
        h.get_by_label(&held);
        assert!(
            h.query_by_label_contains("fx_generated_").is_none(),
            "{lang:?}"
        );
    }
}

#[test]
fn a_snapshot_without_pinned_memory_has_no_such_line() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/snapshots/cuda_compiled/compiled.pickle");
    let mut h = open(&file, Lang::En);
    h.run();
    assert!(
        h.state()
            .document::<SnapshotView>()
            .unwrap()
            .pinned
            .is_none()
    );
    assert!(h.query_by_label_contains("Pinned host memory").is_none());
}

/// The CUDA graph's private pool of the real torch.compile snapshot is drawn and named under
/// the chart, its figures from plain arithmetic over the raw pickle
/// (tests/reference/snapshot_pools.py), in both languages.
#[test]
fn a_private_pool_is_drawn_and_named_under_the_chart() {
    use memsight::ui::panes::snapshot_pools::LEGEND;
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/snapshots/cuda_compiled/compiled.pickle");
    let Some(want) =
        common::python_reference("snapshot_pools.py", &[file.as_os_str(), "0".as_ref()])
    else {
        return;
    };
    let p = &want[0];
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&file, lang);
        let legend = LEGEND
            .get(t)
            .replace("{p}", "(1, 0)")
            .replace("{n}", &p["segments"].to_string())
            .replace("{res}", &mb(&p["reserved_bytes"]))
            .replace("{peak}", &mb(&p["peak_reserved_bytes"]))
            .replace("{held}", &mb(&p["allocated_bytes"]));
        common::step_until(&mut h, "the pool's line", |h| {
            h.query_by_label(&legend).is_some()
        });
    }
}
