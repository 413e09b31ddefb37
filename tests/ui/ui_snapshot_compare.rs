//! Snapshot against snapshot in the app (issue 45, part 2), driven through egui_kittest in
//! English and Chinese on real H100 snapshots: Compare with snapshot… asks for a snapshot file
//! and compares it; the figures, the moments chosen, the copied tables and the errors are
//! checked against plain arithmetic over the raw pickles (tests/reference/snapshot_compare.py).

use std::path::{Path, PathBuf};

use crate::common;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use memsight::snapshot::compare::Moment;
use memsight::ui::MemsightApp;
use memsight::ui::command::PickKind;
use memsight::ui::format::grouped;
use memsight::ui::i18n::{EN, Lang, Tr, ZH};
use memsight::ui::panes::snapshot::SnapshotView;
use memsight::ui::panes::snapshot_compare::{
    COMPARE_WITH, COPY, DIFFERENT_DEVICES, FAILED, MOMENTS, NO_EVENT, READ_AT, STOP,
    SnapshotComparing,
};

fn tr(lang: Lang) -> &'static Tr {
    if lang == Lang::Zh { &ZH } else { &EN }
}

fn view(app: &MemsightApp) -> &SnapshotView {
    app.document::<SnapshotView>().expect("a snapshot view")
}

fn comparing(app: &mut MemsightApp) -> &mut SnapshotComparing {
    app.document_mut::<SnapshotView>()
        .and_then(|v| v.comparing_mut())
        .expect("comparing")
}

/// The reference's document, or None without python3 (a failure in CI).
fn reference(a: &Path, b: &Path, at_a: &str, at_b: &str) -> Option<serde_json::Value> {
    common::python_reference(
        "snapshot_compare.py",
        &[a.as_os_str(), b.as_os_str(), at_a.as_ref(), at_b.as_ref()],
    )
}

/// The two real snapshots: a GPT run with CUDA graphs (A) and a GPT step that ran out (B).
fn files() -> Option<(PathBuf, PathBuf)> {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return None;
    };
    Some((
        root.join("cuda_h100/snap/gpt_all_graph_pinned.pickle"),
        root.join("cuda_h100/oom/gpt/oom_snapshot.pickle"),
    ))
}

/// The app on `a` in `lang`, whose picker answers only a snapshot picker, with `b` (its own
/// `b`: the tests of this file run side by side, each with its own file to pick).
fn open(a: &Path, b: &Path, lang: Lang) -> Harness<'static, MemsightApp> {
    let mut app = MemsightApp::new(Some(a.to_path_buf()), Vec::new(), None);
    app.set_language(lang);
    app.document_mut::<SnapshotView>().unwrap().wait();
    let picked = b.to_path_buf();
    app.set_picker(move |kind| {
        (kind == PickKind::File(&memsight::ui::panes::snapshot_compare::PICK))
            .then(|| picked.clone())
            .into()
    });
    common::harness(app)
}

/// Waits until the comparison on screen is for these moments.
fn wait_for(h: &mut Harness<'_, MemsightApp>, at_a: Moment, at_b: Moment) {
    common::step_until(h, "the comparison", |h| {
        view(h.state())
            .comparing()
            .and_then(|c| c.shown())
            .is_some_and(|c| c.a.moment == at_a && c.b.moment == at_b)
    });
    h.run();
}

fn mb(v: &serde_json::Value) -> String {
    grouped(v.as_f64().unwrap() / 1048576.0, 2)
}

/// True when a label with exactly `text` is on screen.
fn shows(h: &Harness<'_, MemsightApp>, text: &str) -> bool {
    h.query_all_by_label(text).next().is_some()
}

#[test]
fn compare_with_snapshot_shows_what_grew_at_the_moments_chosen() {
    let Some((a, b)) = files() else { return };
    let Some(at_peaks) = reference(&a, &b, "peak", "peak") else {
        return;
    };
    let Some(b_at_end) = reference(&a, &b, "peak", "end") else {
        return;
    };
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let mut h = open(&a, &b, lang);
        h.get_by_label(COMPARE_WITH.get(t)).click();
        wait_for(&mut h, Moment::Peak, Moment::Peak);
        let c = view(h.state()).comparing().unwrap();
        assert_eq!(c.path(), b);
        let shown = c.shown().unwrap();
        assert_eq!(
            shown.a.event,
            at_peaks["a"]["event"].as_u64().map(|k| k as usize)
        );
        assert_eq!(
            shown.b.event,
            at_peaks["b"]["event"].as_u64().map(|k| k as usize)
        );
        // Reserved, allocated and not handed out of both sides, as Python counts them.
        for key in ["reserved_bytes", "allocated_bytes", "not_handed_out_bytes"] {
            for side in ["a", "b"] {
                let text = mb(&at_peaks[side][key]);
                assert!(shows(&h, &text), "{lang:?} {side} {key}: {text}");
            }
        }
        // B at its end instead: chosen in B's list.
        h.get_by_label(&READ_AT.get(t).replace("{side}", "B"))
            .click();
        h.run();
        h.get_by_label(MOMENTS[1].get(t)).click();
        wait_for(&mut h, Moment::Peak, Moment::End);
        let shown = view(h.state()).comparing().unwrap().shown().unwrap();
        assert_eq!(shown.b.event, None);
        assert_eq!(
            shown.b.fragmentation.allocated_bytes,
            b_at_end["b"]["allocated_bytes"].as_i64().unwrap()
        );
        assert!(shows(&h, &mb(&b_at_end["b"]["allocated_bytes"])));
        // The tables copy as TSV: every stack that changed, as Python groups them.
        h.get_by_label(COPY.get(t)).click();
        h.step();
        let tsv = common::copied(&h).expect("copied");
        let stacks: Vec<&str> = tsv.split("\n\n").next().unwrap().lines().skip(2).collect();
        assert_eq!(
            stacks.len(),
            b_at_end["stacks"].as_array().unwrap().len(),
            "{tsv}"
        );
        // The largest change first, with Python's bytes.
        let largest = b_at_end["stacks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["b_bytes"].as_i64().unwrap() - s["a_bytes"].as_i64().unwrap())
            .max_by_key(|d| d.abs())
            .unwrap();
        let delta: f64 = stacks[0].split('\t').nth(3).unwrap().parse().unwrap();
        assert!(
            (delta - largest as f64 / 1048576.0).abs() < 0.006,
            "{delta} vs {largest}"
        );
        // Stop comparing: the snapshot again, with its Compare with snapshot… button.
        h.get_by_label(STOP.get(t)).click();
        h.run();
        assert!(view(h.state()).comparing().is_none());
        h.get_by_label(COMPARE_WITH.get(t));
    }
}

#[test]
fn a_snapshot_that_cannot_be_compared_says_why_in_the_ui_language() {
    let Some((a, b)) = files() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.pickle");
    std::fs::write(&bad, "not a pickle").unwrap();
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        // Not a pickle: the reader's reason, in the UI's language.
        let mut h = open(&a, &bad, lang);
        h.get_by_label(COMPARE_WITH.get(t)).click();
        let prefix = FAILED.get(t).replace("{why}", "");
        common::step_until(&mut h, "the error", |h| {
            h.query_all_by_label_contains(&prefix).next().is_some()
        });
        // An event past B's trace: says so, and choosing another moment recovers.
        let mut h = open(&a, &b, lang);
        h.get_by_label(COMPARE_WITH.get(t)).click();
        wait_for(&mut h, Moment::Peak, Moment::Peak);
        comparing(h.state_mut()).set_at_b(Moment::Event(999_999));
        let device = view(h.state())
            .comparing()
            .unwrap()
            .shown()
            .unwrap()
            .b
            .device;
        let why = NO_EVENT
            .get(t)
            .replace("{k}", "999999")
            .replace("{d}", &device.to_string());
        let why = &why[..why.find('(').or_else(|| why.find('（')).unwrap()];
        common::step_until(&mut h, "the event error", |h| {
            h.query_all_by_label_contains(why).next().is_some()
        });
        comparing(h.state_mut()).set_at_b(Moment::End);
        wait_for(&mut h, Moment::Peak, Moment::End);
    }
}

/// Python's phases of device 0 of `file` and its live blocks by phase at `at` (None: the end).
fn phases_reference(file: &Path, at: Option<usize>) -> Option<serde_json::Value> {
    let at = at.map(|k| k.to_string());
    let mut args = vec![file.as_os_str(), "0".as_ref()];
    args.extend(at.as_deref().map(std::ffi::OsStr::new));
    common::python_reference("snapshot_phases.py", &args)
}

/// Issue 45 part 3: the snapshot's `external_annotations` as phases in the view. By phase lists
/// them with Python's figures, a click on one goes to its peak, and the live blocks there are
/// counted by the phase that allocated them as Python counts them.
#[test]
fn by_phase_lists_the_annotations_and_goes_to_a_phase_peak() {
    use memsight::ui::panes::snapshot_phases::{LIVE, VIEW};
    let Some((a, _)) = files() else { return };
    let Some(want) = phases_reference(&a, None) else {
        return;
    };
    let phases = want["phases"].as_array().unwrap();
    // The second step's forward: its peak is where the click goes.
    let forward = phases
        .iter()
        .filter(|p| p["name"] == "forward")
        .nth(1)
        .unwrap();
    let peak = forward["peak_event"].as_u64().unwrap() as usize;
    let Some(at_peak) = phases_reference(&a, Some(peak)) else {
        return;
    };
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let mut h = open(&a, &a, lang);
        h.run();
        h.get_by_label(VIEW.get(t)).click();
        h.run();
        // Every phase's peak, as Python computes it.
        for p in phases {
            assert!(shows(&h, &mb(&p["peak_allocated_bytes"])), "{lang:?} {p}");
        }
        let label = format!("    {}", forward["name"].as_str().unwrap());
        h.get_all_by_label(&label)
            .nth(1)
            .expect("the second forward")
            .click();
        common::step_until(&mut h, "the phase's peak", |h| {
            view(h.state()).event() == Some(peak)
        });
        common::step_until(&mut h, "the figures at it", |h| {
            !view(h.state()).is_computing()
        });
        h.run();
        let when = (t.snapshot_when_event)(peak);
        h.get_by_label(&LIVE.get(t).replace("{when}", &when));
        for g in at_peak["live_by_phase"].as_array().unwrap() {
            let text = format!("{} MB", mb(&g["bytes"]));
            assert!(shows(&h, &text), "{lang:?}: {text} ({g})");
        }
    }
}

/// File ▸ Compare with… on a snapshot asks for a snapshot file (not a profile folder) and
/// compares with it, as the view's own button does.
#[test]
fn the_file_menus_compare_with_asks_for_a_snapshot_on_a_snapshot() {
    let Some((a, b)) = files() else { return };
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let mut h = open(&a, &b, lang);
        h.get_by_label(t.file).click();
        h.run();
        h.get_by_label(t.compare_with_menu).click();
        wait_for(&mut h, Moment::Peak, Moment::Peak);
        assert_eq!(view(h.state()).comparing().unwrap().path(), b);
    }
}

/// Issue 86 item 13: a CUDA snapshot compared with an NPU one says the devices differ, in the
/// UI's language; two CUDA snapshots say nothing of it.
#[test]
fn snapshots_of_different_accelerators_say_so_in_the_ui_language() {
    let a = common::fixtures().join("snapshots/cuda_join/run.pickle");
    let tmp = tempfile::tempdir().unwrap();
    let npu = tmp.path().join("npu.pickle");
    std::fs::write(&npu, memsight::generate::hostile::many_ooms_snapshot(0, 5)).unwrap();
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let note = DIFFERENT_DEVICES
            .get(t)
            .replace("{a}", "CUDA:0")
            .replace("{b}", "NPU:0");
        let mut h = open(&a, &npu, lang);
        h.get_by_label(COMPARE_WITH.get(t)).click();
        wait_for(&mut h, Moment::Peak, Moment::Peak);
        assert!(shows(&h, &note), "{lang:?}: {note}");
        let mut h = open(&a, &a, lang);
        h.get_by_label(COMPARE_WITH.get(t)).click();
        wait_for(&mut h, Moment::Peak, Moment::Peak);
        let prefix = &note[..note.find("CUDA").unwrap()];
        assert!(
            h.query_all_by_label_contains(prefix).next().is_none(),
            "{lang:?}: the same device"
        );
    }
}
