//! The allocator snapshot view, driven through egui_kittest in English and Chinese, on the five
//! real torch_npu snapshots: the per-device figures, who holds memory just after a picked event,
//! the active-memory bands (click, box zoom, double-click, hover), the segments rewound to the
//! picked event, the flame graph of the holders, and the leak suspects, each against Python's own `pickle` module over the same file
//! (tests/reference/snapshot_summary.py, and a few lines of Python here for the leaks).

use crate::common;

use std::path::Path;
use std::process::Command as Process;

/// Runs a python3 command that writes a test input; false (and a note) when python3 is not there.
fn python_ran(cmd: &mut Process) -> bool {
    let ran = cmd.status().is_ok_and(|s| s.success());
    if !ran {
        common::skip("python3 not available");
    }
    ran
}

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use memsight::ui::MemsightApp;
use memsight::ui::format::grouped;
use memsight::ui::i18n::{EN, Lang, Tr, ZH};
use memsight::ui::panes::snapshot::SnapshotView;

/// The snapshot document on screen.
fn snapshot_view(app: &MemsightApp) -> &SnapshotView {
    app.document::<SnapshotView>().expect("a snapshot view")
}

/// The same, mutable.
fn snapshot_view_mut(app: &mut MemsightApp) -> &mut SnapshotView {
    app.document_mut::<SnapshotView>().expect("a snapshot view")
}

/// Python's figures for `file` at the end, or just after event `at`.
fn reference(file: &Path, at: Option<(i64, usize)>) -> Option<serde_json::Value> {
    let args: Vec<String> = match at {
        Some((d, k)) => vec!["20".into(), d.to_string(), k.to_string()],
        None => Vec::new(),
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::snapshot_reference(file, &args)
}

/// Blocks of `device` allocated in the trace and never freed in it, counted by Python.
fn python_never_freed(file: &Path, device: i64) -> Option<u64> {
    let code = "import pickle,sys\n\
        d=pickle.load(open(sys.argv[1],'rb'))\n\
        t=d['device_traces'][int(sys.argv[2])]\n\
        o={}\n\
        for e in t:\n\
        \x20if e['action']=='alloc': o[e['addr']]=1\n\
        \x20elif e['action']=='free_completed': o.pop(e['addr'],None)\n\
        print(len(o))";
    let out = Process::new("python3")
        .args(["-c", code])
        .arg(file)
        .arg(device.to_string())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn tr(lang: Lang) -> &'static Tr {
    if lang == Lang::Zh { &ZH } else { &EN }
}

fn open(file: &Path, lang: Lang) -> Harness<'static, MemsightApp> {
    let mut app = MemsightApp::new(Some(file.to_path_buf()), Vec::new(), None);
    app.set_language(lang);
    snapshot_view_mut(&mut app).wait();
    assert!(snapshot_view(&app).error().is_none());
    common::harness(app)
}

fn mb(bytes: &serde_json::Value) -> String {
    grouped(bytes.as_f64().unwrap() / 1048576.0, 2)
}

/// A device's events, all actions together, from Python's counts.
fn event_count(d: &serde_json::Value) -> u64 {
    d["events"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum()
}

/// The figures line of a device, as the view words it, from Python's numbers.
fn figures(t: &Tr, d: &serde_json::Value) -> String {
    let events = event_count(d);
    let at = d["peak_event"]
        .as_u64()
        .map_or_else(|| t.snapshot_before_trace.to_string(), |k| format!("#{k}"));
    (t.snapshot_figures)(
        d["segments"].as_u64().unwrap() as usize,
        &mb(&d["reserved_bytes"]),
        &mb(&d["allocated_bytes"]),
        &mb(&d["peak_allocated_bytes"]),
        &at,
        &grouped(events as f64, 0),
    )
}

#[test]
fn every_real_snapshot_shows_pythons_figures_and_leaks() {
    let files = common::sample_snapshots();
    for file in &files {
        let Some(r) = reference(file, None) else {
            return;
        };
        let d0 = &r["devices"][0];
        let device = d0["device"].as_i64().unwrap();
        let leaks = python_never_freed(file, device).unwrap();
        for lang in Lang::ALL {
            let t = tr(lang);
            let mut h = open(file, lang);
            h.get_by_label(&figures(t, d0));
            h.get_by_label(&(t.snapshot_leaks)(leaks));
            h.get_by_label(t.snapshot_at_end);
            h.run();
        }
    }
}

#[test]
fn the_leak_demo_picks_a_device_and_an_event() {
    let Some(file) = common::sample_snapshots()
        .into_iter()
        .find(|p| p.to_string_lossy().contains("multi_devices"))
    else {
        return;
    };
    let Some(r) = reference(&file, None) else {
        return;
    };
    assert!(r["devices"].as_array().unwrap().len() >= 2);
    let t = &EN;
    let mut h = open(&file, Lang::En);
    // Device 1 from the picker.
    h.get_by_label(t.snapshot_device).click();
    h.run();
    h.get_by_label("NPU:1").click();
    h.run();
    h.get_by_label(&figures(t, &r["devices"][1]));
    // An event on device 0 (as a click on the curve picks it): who holds memory just after.
    snapshot_view_mut(h.state_mut()).show(0, Some(3232));
    h.run();
    let at = reference(&file, Some((0, 3232))).unwrap();
    let a = &at["at_event"];
    h.get_by_label(&(t.snapshot_at_event)(
        3232,
        &mb(&a["allocated_bytes"]),
        a["blocks"].as_u64().unwrap(),
    ));
    // The heaviest stack's MB and its innermost frame, as Python ranks them.
    let top = &at["top_stacks"][0];
    h.get_by_label(&mb(&top["bytes"]));
    h.get_by_label(t.snapshot_end).click();
    h.run();
    h.get_by_label(t.snapshot_at_end);
}

/// The segment map's heading, as the view words it, from Python's numbers.
fn segments_heading(t: &Tr, d: &serde_json::Value) -> String {
    let free = d["free_in_segments_bytes"].as_f64().unwrap();
    let reserved = d["reserved_bytes"].as_f64().unwrap();
    let share = if reserved > 0.0 {
        free / reserved * 100.0
    } else {
        0.0
    };
    (t.snapshot_segments)(
        t.snapshot_when_end,
        d["segments"].as_u64().unwrap() as usize,
        &mb(&d["free_in_segments_bytes"]),
        &grouped(share, 1),
        &mb(&d["largest_free_block_bytes"]),
    )
}

#[test]
fn every_real_snapshot_maps_its_segments_with_pythons_fragmentation() {
    for file in &common::sample_snapshots() {
        let Some(r) = reference(file, None) else {
            return;
        };
        let d0 = &r["devices"][0];
        for lang in Lang::ALL {
            let t = tr(lang);
            let mut h = open(file, lang);
            // Folded at first: the heading carries the figures.
            let heading = segments_heading(t, d0);
            assert!(h.query_by_label(t.snapshot_block_kinds[2]).is_none());
            h.get_by_label(&heading).click();
            h.run();
            // Unfolded: the legend of the block kinds above the bars; the figures behind them are
            // Python's too.
            for kind in t.snapshot_block_kinds {
                h.get_by_label(kind);
            }
            let snap = snapshot_view(h.state()).snapshot().cloned().unwrap();
            let device = d0["device"].as_i64().unwrap();
            let state = memsight::snapshot::segments::allocator_state(&snap, device);
            assert_eq!(
                state.segments.len() as u64,
                d0["segments"].as_u64().unwrap()
            );
            assert_eq!(
                serde_json::json!(state.free),
                d0["free_in_segments_bytes"],
                "{}",
                file.display()
            );
        }
    }
}

#[test]
fn a_long_trace_is_summarised_in_a_job_and_then_shown() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("long.pickle");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen_snapshot.py");
    if !python_ran(
        Process::new("python3")
            .arg(script)
            .arg(&file)
            .arg("80000")
            .arg("1"),
    ) {
        return;
    }
    let Some(r) = reference(&file, None) else {
        return;
    };
    let d0 = &r["devices"][0];
    assert!(event_count(d0) as usize > memsight::ui::panes::snapshot::SYNC_EVENTS);
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut app = MemsightApp::new(Some(file.clone()), Vec::new(), None);
        app.set_language(lang);
        snapshot_view_mut(&mut app).wait();
        let mut h = Harness::builder()
            .with_size([1400.0, 900.0])
            .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
        // The first frame starts the job and says so; the window stays responsive meanwhile.
        h.step();
        assert!(snapshot_view(h.state()).is_computing());
        h.get_by_label(t.snapshot_computing);
        snapshot_view_mut(h.state_mut()).wait_for_figures();
        h.run();
        assert!(!snapshot_view(h.state()).is_computing());
        assert!(h.query_by_label(t.snapshot_computing).is_none());
        h.get_by_label(&figures(t, d0));
    }
}

/// The leak demo: one device, expandable segments.
fn leak_demo() -> Option<std::path::PathBuf> {
    common::sample_snapshots()
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with("snapshot_expandable.pkl"))
}

/// Live blocks at the end whose stack holds `frame` (file ending, line, name), counted by Python
/// (a block without frames takes its last alloc's, as memsight does).
fn python_live_under(file: &Path, frame: (&str, i64, &str)) -> Option<usize> {
    let code = "import pickle,sys\n\
        d=pickle.load(open(sys.argv[1],'rb'))\n\
        last={}\n\
        for e in d['device_traces'][0]:\n\
        \x20if e['action']=='alloc': last[e['addr']]=e['frames']\n\
        n=0\n\
        for s in d['segments']:\n\
        \x20for b in s['blocks']:\n\
        \x20\x20if b['state']!='active_allocated': continue\n\
        \x20\x20fr=b['frames'] or last.get(b['address'],[])\n\
        \x20\x20n+=any(f['filename'].endswith(sys.argv[2]) and f['line']==int(sys.argv[3]) and f['name']==sys.argv[4] for f in fr)\n\
        print(n)";
    let out = Process::new("python3")
        .args(["-c", code])
        .arg(file)
        .args([
            frame.0.to_string(),
            frame.1.to_string(),
            frame.2.to_string(),
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// A click at a screen point, as a hand makes it: move there, press, release.
fn click_at(h: &mut Harness<'static, MemsightApp>, x: f32, y: f32) {
    h.hover_at(egui::pos2(x, y));
    h.run();
    h.drag_at(egui::pos2(x, y));
    h.step();
    h.drop_at(egui::pos2(x, y));
    h.run();
}

/// The centre of the bands plot, and its screen x for plot x `x`.
fn plot_x(h: &Harness<'static, MemsightApp>, x: f64) -> (f32, f32) {
    let chart = snapshot_view(h.state()).chart();
    let (frame, _, _) = chart.last_frame().expect("the chart was drawn");
    (chart.screen_x(x).unwrap(), frame.center().y)
}

#[test]
fn clicking_the_bands_picks_the_event_and_shows_the_state_after_it() {
    let Some(file) = leak_demo() else {
        return;
    };
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&file, lang);
        h.run();
        // A click in the middle of event 4000's column.
        let (x, y) = plot_x(&h, 4000.5);
        click_at(&mut h, x, y);
        let k = snapshot_view(h.state()).event().expect("picked");
        assert!((3999..=4001).contains(&k), "{k}");
        let at = reference(&file, Some((0, k))).unwrap();
        let a = &at["at_event"];
        h.get_by_label(&(t.snapshot_at_event)(
            k,
            &mb(&a["allocated_bytes"]),
            a["blocks"].as_u64().unwrap(),
        ));
        // The segments just after it, with Python's rewound fragmentation figures.
        let free = a["free_in_segments_bytes"].as_f64().unwrap();
        let reserved = a["reserved_bytes"].as_f64().unwrap();
        h.get_by_label(&(t.snapshot_segments)(
            &(t.snapshot_when_event)(k),
            a["segments"].as_u64().unwrap() as usize,
            &mb(&a["free_in_segments_bytes"]),
            &grouped(free / reserved * 100.0, 1),
            &mb(&a["largest_free_block_bytes"]),
        ));
        // The peak, from Python's figures.
        let whole = reference(&file, None).unwrap();
        let peak = whole["devices"][0]["peak_event"].as_u64().unwrap() as usize;
        h.get_by_label(t.snapshot_go_peak).click();
        h.run();
        assert_eq!(snapshot_view(h.state()).event(), Some(peak));
    }
}

#[test]
fn a_box_drag_zooms_the_bands_and_a_double_click_shows_them_all() {
    let Some(file) = leak_demo() else {
        return;
    };
    for lang in Lang::ALL {
        let mut h = open(&file, lang);
        h.run();
        let (x0, y) = plot_x(&h, 2000.0);
        let (x1, _) = plot_x(&h, 3000.0);
        let px = {
            let (a, _) = plot_x(&h, 0.0);
            let (b, _) = plot_x(&h, 1000.0);
            1000.0 / f64::from(b - a)
        };
        h.hover_at(egui::pos2(x0, y));
        h.run();
        h.drag_at(egui::pos2(x0, y));
        h.step();
        for x in [x0 + 40.0, (x0 + x1) / 2.0, x1] {
            h.hover_at(egui::pos2(x, y));
            h.step();
        }
        h.step();
        h.drop_at(egui::pos2(x1, y));
        h.run();
        let view = snapshot_view(h.state());
        let (a, b) = view.chart().range().expect("zoomed");
        assert!(
            (a - 2000.0).abs() < 2.0 * px && (b - 3000.0).abs() < 2.0 * px,
            "{a}..{b}"
        );
        assert_eq!(view.event(), None, "a drag is not a click");
        let (x, y) = plot_x(&h, 2500.0);
        for _ in 0..2 {
            for pressed in [true, false] {
                h.event(egui::Event::PointerButton {
                    pos: egui::pos2(x, y),
                    button: egui::PointerButton::Primary,
                    pressed,
                    modifiers: egui::Modifiers::NONE,
                });
            }
            h.step();
        }
        h.run();
        assert_eq!(snapshot_view(h.state()).chart().range(), None);
    }
}

#[test]
fn hovering_a_band_names_its_allocation_as_the_trace_records_it() {
    use memsight::snapshot::Action;
    let Some(file) = leak_demo() else {
        return;
    };
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&file, lang);
        h.run();
        // 50 MB up, in the middle of event 5000: the bottom bands, held since before the trace or
        // allocated early.
        let (x, _) = plot_x(&h, 5000.5);
        let view = snapshot_view(h.state());
        let (frame, _, _) = view.chart().last_frame().unwrap();
        let y = frame.bottom() - frame.height() * 50.0 / (view_peak_mb(&h) * 1.05) as f32;
        h.hover_at(egui::pos2(x, y));
        h.run_steps(60);
        let snap = snapshot_view(h.state()).snapshot().cloned().unwrap();
        let tl = memsight::snapshot::timeline::timeline(&snap, 0, 3000, 2_000_000);
        let i = tl.allocation_at(5000, 50 << 20).expect("a band there");
        let a = &tl.allocations[i];
        // What the hover says agrees with the raw trace: the alloc and free events at its address.
        let trace = &snap.traces[0];
        if let Some(k) = a.allocated_at {
            assert!(trace[k].action == Action::Alloc && trace[k].addr == a.addr);
            assert_eq!(trace[k].size, a.size);
        }
        if let Some(k) = a.freed_at {
            assert!(trace[k].action == Action::FreeCompleted && trace[k].addr == a.addr);
            let from = a.allocated_at.map_or(0, |k| k + 1);
            assert!(
                !trace[from..k]
                    .iter()
                    .any(|e| e.action == Action::FreeCompleted && e.addr == a.addr),
                "freed once"
            );
        }
        h.get_by_label(&memsight::ui::panes::snapshot_bands::band_text(t, a));
    }
}

/// The bands' y scale: the largest total, MB.
fn view_peak_mb(h: &Harness<'static, MemsightApp>) -> f64 {
    let snap = snapshot_view(h.state()).snapshot().cloned().unwrap();
    let tl = memsight::snapshot::timeline::timeline(&snap, 0, 10, 1000);
    *tl.total.iter().max().unwrap() as f64 / (1u64 << 20) as f64
}

#[test]
fn the_flame_graph_lists_the_blocks_under_a_frame() {
    let Some(file) = leak_demo() else {
        return;
    };
    let frame = ("memory_leaks_demo.py", 12, "train_one_step");
    let Some(want) = python_live_under(&file, frame) else {
        return;
    };
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&file, lang);
        h.run();
        h.get_by_label(t.snapshot_views[1]).click();
        h.run();
        h.get_by_label(t.all_blocks);
        // The frame as every view writes one: file(line): name.
        let label = format!("{}({}): {}", frame.0, frame.1, frame.2);
        h.get_by_label(&label).click();
        h.run();
        h.get_by_label(&(t.blocks_under)(&label, want));
    }
}

#[test]
fn a_snapshot_with_times_is_drawn_over_time_and_a_click_picks_the_event_then() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("timed.pickle");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen_snapshot.py");
    if !python_ran(
        Process::new("python3")
            .arg(script)
            .arg(&file)
            .args(["3000", "1", "--timed"]),
    ) {
        return;
    }
    for lang in Lang::ALL {
        let mut h = open(&file, lang);
        h.run();
        let snap = snapshot_view(h.state()).snapshot().cloned().unwrap();
        let times: Vec<i64> = snap.traces[0].iter().map(|e| e.time_us.unwrap()).collect();
        // The x axis spans the trace's time in ms (an event index axis would span its count).
        let (_, a, b) = snapshot_view(h.state()).chart().last_frame().unwrap();
        let span_ms = (times[times.len() - 1] - times[0]) as f64 / 1000.0;
        assert!(
            (b - a - span_ms).abs() < 0.01 * span_ms,
            "{a}..{b} for {span_ms} ms"
        );
        // A click 40 % of the way through the trace's time, in ms from its first event.
        let ms = (times[times.len() - 1] - times[0]) as f64 * 0.4 / 1000.0;
        let (x, y) = plot_x(&h, ms);
        click_at(&mut h, x, y);
        let k = snapshot_view(h.state()).event().expect("picked");
        // The last event at or before the clicked time, from the raw times (a pixel's width
        // either way).
        let (frame, a, b) = snapshot_view(h.state()).chart().last_frame().unwrap();
        let px_us = (b - a) / f64::from(frame.width()) * 1000.0;
        let at = |us: f64| times.partition_point(|&v| (v - times[0]) as f64 <= us) - 1;
        let lo = at(ms * 1000.0 - px_us);
        let hi = at(ms * 1000.0 + px_us);
        assert!((lo..=hi).contains(&k), "{k} not in {lo}..={hi}");
    }
}

#[test]
fn a_snapshot_without_events_shows_its_segments_and_a_click_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("no_events.pickle");
    let code = "import pickle,sys\n\
        b=[{'address':4096,'size':1024,'requested_size':1000,'state':'active_allocated','frames':[]},\n\
        \x20{'address':5120,'size':3072,'requested_size':3072,'state':'inactive','frames':[]}]\n\
        s=[{'device':0,'address':4096,'total_size':4096,'allocated_size':1024,'active_size':1024,\n\
        \x20'requested_size':1000,'stream':0,'segment_type':'small','segment_pool_id':(0,0),\n\
        \x20'is_expandable':False,'frames':[],'blocks':b}]\n\
        pickle.dump({'segments':s,'device_traces':[[]]},open(sys.argv[1],'wb'),protocol=4)";
    if !python_ran(Process::new("python3").args(["-c", code]).arg(&file)) {
        return;
    }
    let Some(r) = reference(&file, None) else {
        return;
    };
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&file, lang);
        h.run();
        h.get_by_label(&figures(t, &r["devices"][0]));
        let (x, y) = plot_x(&h, 0.0);
        click_at(&mut h, x, y);
        assert_eq!(snapshot_view(h.state()).event(), None);
        // Still all there: the figures and the segments' heading (3,072 of 4,096 bytes free).
        h.get_by_label(&figures(t, &r["devices"][0]));
        h.get_by_label(&segments_heading(t, &r["devices"][0]));
    }
}

/// The band tooltip keeps a readable width when the pointer moves onto a band from a spot whose
/// tooltip is one short word ("#5000"): egui keeps an open tooltip's first width, and the band's
/// sentence wrapped one word per line in a 40 px column (issue 26 item 4).
#[test]
fn a_band_tooltip_stays_readable_after_a_narrow_one() {
    let Some(file) = leak_demo() else {
        return;
    };
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&file, lang);
        h.run();
        let (x, _) = plot_x(&h, 5000.5);
        let view = snapshot_view(h.state());
        let (frame, _, _) = view.chart().last_frame().unwrap();
        let band_y = frame.bottom() - frame.height() * 50.0 / (view_peak_mb(&h) * 1.05) as f32;
        // Above every band first: the tooltip is just the event number.
        h.hover_at(egui::pos2(x, frame.top() + 2.0));
        h.run_steps(60);
        h.get_by_label("#5,000");
        h.hover_at(egui::pos2(x, band_y));
        h.run_steps(60);
        let snap = snapshot_view(h.state()).snapshot().cloned().unwrap();
        let tl = memsight::snapshot::timeline::timeline(&snap, 0, 3000, 2_000_000);
        let a = &tl.allocations[tl.allocation_at(5000, 50 << 20).expect("a band there")];
        let line = memsight::ui::panes::snapshot_bands::band_text(t, a);
        let r = h.get_by_label(&line).rect();
        let row = 20.0;
        assert!(
            r.height() <= 2.0 * row,
            "{lang:?}: the band's line is {} × {} px",
            r.width(),
            r.height()
        );
    }
}

/// An empty table of holders or leak suspects says so instead of showing bare headers (issue 26
/// item 18): on every sample whose leak table is empty, in both languages.
#[test]
fn an_empty_holders_table_says_so() {
    let mut seen = 0;
    for file in common::sample_snapshots() {
        for lang in Lang::ALL {
            let t = tr(lang);
            let mut h = open(&file, lang);
            h.run();
            let empties = h.query_all_by_label(t.snapshot_nothing_held).count();
            if h.query_by_label(&(t.snapshot_leaks)(0)).is_some() {
                assert!(empties >= 1, "{}", file.display());
                seen += 1;
            }
        }
    }
    assert!(
        seen > 0 || common::sample_snapshots().is_empty(),
        "a sample without leak suspects"
    );
}

/// The heaviest leak suspect as Python ranks it (blocks allocated in the trace and never freed,
/// grouped by their alloc's stack, most bytes first, then most blocks): its innermost frame as
/// `file.py(12): name`, and the index of the event that allocated its last block.
fn python_top_leak(file: &Path, device: i64) -> Option<(String, usize)> {
    let code = "import pickle,sys,os\n\
        d=pickle.load(open(sys.argv[1],'rb'))\n\
        t=d['device_traces'][int(sys.argv[2])]\n\
        o={}\n\
        for k,e in enumerate(t):\n\
        \x20if e['action']=='alloc': o[e['addr']]=k\n\
        \x20elif e['action']=='free_completed': o.pop(e['addr'],None)\n\
        g={}\n\
        for k in o.values():\n\
        \x20f=tuple((x['filename'],x['line'],x['name']) for x in t[k].get('frames') or [])\n\
        \x20b=g.setdefault(f,[0,0,-1]); b[0]+=t[k]['size']; b[1]+=1; b[2]=max(b[2],k)\n\
        f,b=sorted(g.items(),key=lambda kv:(-kv[1][0],-kv[1][1]))[0]\n\
        x=f[0]\n\
        print('%s(%d): %s' % (x[0].replace('\\\\','/').split('/')[-1],x[1],x[2]))\n\
        print(b[2])";
    let out = Process::new("python3")
        .args(["-c", code])
        .arg(file)
        .arg(device.to_string())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    Some((lines.next()?.to_string(), lines.next()?.parse().ok()?))
}

/// A leak suspect is a link (issue 26 item 18): a click goes to the event that allocated its last
/// never-freed block, in English and Chinese, against Python's reading of the same pickle.
#[test]
fn clicking_a_leak_suspect_goes_to_where_its_last_block_was_allocated() {
    if common::samples().is_none() {
        return; // it said so (a failure under MEMSIGHT_REQUIRE_ALL)
    }
    let file = leak_demo().expect("the leak demo snapshot in the samples");
    let (frame, event) = python_top_leak(&file, 0).expect("python3 reads the pickle");
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&file, lang);
        h.run();
        h.get_by_label(t.snapshot_leaks_hint);
        assert_eq!(snapshot_view(h.state()).event(), None);
        // The same frame can head a holders row too: the leak table is the right-hand column.
        let right = h
            .get_all_by_label(&frame)
            .max_by(|a, b| {
                a.rect()
                    .min
                    .x
                    .partial_cmp(&b.rect().min.x)
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .expect("the leak suspect's row");
        right.click();
        h.run();
        assert_eq!(snapshot_view(h.state()).event(), Some(event), "{lang:?}");
    }
}

/// A real CUDA snapshot (`context="all"`: the C++ unwinder is every stack's innermost frame)
/// names each holder by the user's own line, as Python's reading of the pickle picks it, calls
/// its device CUDA:0, and never shows the unwinder as a holder; at an OOM the never-freed
/// blocks are "held at the OOM", not leak suspects. English and Chinese.
#[test]
fn a_cuda_snapshot_names_holders_by_the_users_line_and_its_device_cuda() {
    for file in common::cuda_snapshots() {
        let Some(r) = reference(&file, None) else {
            return;
        };
        let at_oom = r["devices"][0]["events"].get("oom").is_some();
        let never_freed = python_never_freed(&file, 0).unwrap();
        let top = &r["top_stacks"][0]["frame"];
        let short = |f: &serde_json::Value| {
            let path = f["filename"].as_str().unwrap();
            let name = f["name"].as_str().unwrap();
            if path.is_empty() || path == "??" {
                // A C++ frame the unwinder could not place: its name alone.
                return name.to_string();
            }
            let file = path.rsplit('/').next().unwrap();
            format!("{file}({}): {name}", f["line"])
        };
        for lang in Lang::ALL {
            let t = tr(lang);
            let mut h = open(&file, lang);
            h.run();
            assert_eq!(
                h.get_by_label(t.snapshot_device).value().as_deref(),
                Some("CUDA:0"),
                "{}",
                file.display()
            );
            if !top.is_null() {
                // A row named by the same line as another one says where they part.
                let label = match &r["top_stacks"][0]["via"] {
                    serde_json::Value::Null => short(top),
                    via => format!("{} · {}", short(top), short(via)),
                };
                assert!(
                    h.query_all_by_label(&label).count() >= 1,
                    "{}: {label}",
                    file.display(),
                );
            }
            assert!(
                h.query_by_label_contains("torch::unwind").is_none(),
                "{}",
                file.display()
            );
            if at_oom {
                // A CUDA snapshot's advice names CUDA's allocator settings.
                assert!(
                    h.query_by_label_contains("PYTORCH_NPU_ALLOC_CONF")
                        .is_none()
                );
                h.get_by_label(&(t.snapshot_held_at_oom)(never_freed));
                assert!(h.query_by_label(&(t.snapshot_leaks)(never_freed)).is_none());
            } else {
                h.get_by_label(&(t.snapshot_leaks)(never_freed));
            }
        }
    }
}

/// The fragmentation diagnosis under the segments (issue 45), in English and Chinese, on the
/// real H100 fragmentation OOM: what is not handed out (reserved − allocated of the raw
/// segments), its cause, the largest request that fits (the largest free run) and the fix —
/// `expandable_segments:True`, which let the same program pass when it was run again.
#[test]
fn the_view_says_why_memory_is_fragmented_and_which_fix_closes_it() {
    use memsight::ui::panes::snapshot::{frag_fix, frag_heading, frag_largest};
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return;
    };
    let file = root.join("cuda_h100/oom/fragmentation/oom_snapshot.pickle");
    let Some(want) = python_fragmentation(&file) else {
        return;
    };
    let free = want["reserved_bytes"].as_i64().unwrap() - want["allocated_bytes"].as_i64().unwrap();
    let split = want["causes"]["split_across_segments"].as_i64().unwrap();
    assert_eq!(
        split, free,
        "the reference: all of it split across segments"
    );
    let mbs = |b: i64| format!("{} MB", grouped(b as f64 / 1048576.0, 2));
    for lang in [Lang::En, Lang::Zh] {
        let mut h = open(&file, lang);
        h.run();
        let _t = tr(lang);
        // The segment map folds its blocks; the diagnosis is under its heading, always shown.
        let heading = frag_heading(lang, &mbs(free));
        assert!(h.query_by_label(&heading).is_some(), "{lang:?}: {heading}");
        let cause = memsight::snapshot::fragmentation::Cause::SplitAcrossSegments;
        assert!(h.query_by_label(cause.name(lang)).is_some(), "{lang:?}");
        let largest = frag_largest(lang, &mbs(want["largest_possible_bytes"].as_i64().unwrap()));
        assert!(h.query_by_label(&largest).is_some(), "{lang:?}: {largest}");
        let fix = frag_fix(lang, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
        assert!(h.query_by_label(&fix).is_some(), "{lang:?}: {fix}");
    }
}

/// `tests/reference/snapshot_fragmentation.py` on device 0 of `file`.
fn python_fragmentation(file: &Path) -> Option<serde_json::Value> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/snapshot_fragmentation.py");
    match std::process::Command::new("python3")
        .arg(script)
        .arg(file)
        .arg("0")
        .output()
    {
        Ok(o) if o.status.success() => Some(serde_json::from_slice(&o.stdout).unwrap()),
        other => {
            common::skip(&format!("python3 reference not available ({other:?})"));
            None
        }
    }
}

/// An OOM snapshot opens at its OOM, and the app's advice follows the verdict, in English and
/// Chinese (issue 87): the real H100 OOM capped per process gets "raise the limit or lower the
/// peak by …" (expandable segments did not save its re-run), its fragmentation fix said not to
/// be why it ran out; the fragmentation OOM gets expandable segments and what they free.
#[test]
fn an_oom_snapshot_opens_at_the_oom_with_advice_that_follows_its_verdict() {
    use memsight::snapshot::fragmentation::Fix;
    use memsight::snapshot::oom::OomAdvice;
    use memsight::ui::panes::snapshot::{FRAG_NOT_WHY, frag_fix, oom_advice};
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return;
    };
    for case in ["gpt", "fragmentation"] {
        let file = root.join(format!("cuda_h100/oom/{case}/oom_snapshot.pickle"));
        let worked = common::expandable_rerun_passed(&root, case);
        // The OOM's figures, as `memsight snapshot --json` reports them (checked against
        // PyTorch's message in the CLI tests).
        let (code, out, err) = common::memsight(&["snapshot", file.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "{err}");
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let oom = &doc["oom"][0];
        let advice = &oom["advice"];
        let typed = match advice["kind"].as_str().unwrap() {
            "defragment" => OomAdvice::Defragment {
                fix: Fix::ExpandableSegments,
                frees_bytes: advice["frees_bytes"].as_i64().unwrap(),
            },
            "raise_limit_or_hold_less" => OomAdvice::RaiseLimitOrHoldLess {
                short_bytes: advice["short_bytes"].as_i64().unwrap(),
            },
            other => panic!("{case}: {other}"),
        };
        assert_eq!(
            matches!(typed, OomAdvice::Defragment { .. }),
            worked,
            "{case}"
        );
        for lang in [Lang::En, Lang::Zh] {
            let t = tr(lang);
            let mut h = open(&file, lang);
            h.run();
            assert_eq!(
                snapshot_view(h.state()).event(),
                oom["event"].as_u64().map(|k| k as usize),
                "{case}: opens at the OOM"
            );
            let text = oom_advice(t, typed, "PYTORCH_CUDA_ALLOC_CONF").unwrap();
            assert!(h.query_by_label(&text).is_some(), "{case} {lang:?}: {text}");
            let fix = frag_fix(lang, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
            let caveat = format!("{fix}{}", FRAG_NOT_WHY.get(t));
            assert_eq!(h.query_by_label(&fix).is_some(), worked, "{case} {lang:?}");
            assert_eq!(
                h.query_by_label(&caveat).is_some(),
                !worked,
                "{case} {lang:?}"
            );
        }
    }
}

/// A real OOM snapshot whose first event came 4 s before the rest (the model's load) opens with
/// its events across the chart, not squeezed into its right 5 % (issue 87): the first view
/// starts just before the events after that pause, as the pickle's `time_us` say; a double-click
/// shows the whole trace.
#[test]
fn a_long_pause_before_the_run_does_not_squeeze_the_bands() {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return;
    };
    let file = root.join("cuda_h100/oom/gpt/oom_snapshot.pickle");
    // The times of device 0's events, µs, read with Python's pickle (trusted test data).
    let script = "import pickle,sys,json; d=pickle.load(open(sys.argv[1],'rb')); \
                  print(json.dumps([e['time_us'] for e in d['device_traces'][0]]))";
    let out = match Process::new("python3")
        .args(["-c", script])
        .arg(&file)
        .output()
    {
        Ok(o) if o.status.success() => o,
        other => {
            common::skip(&format!("python3 not available ({other:?})"));
            return;
        }
    };
    let times: Vec<f64> = serde_json::from_slice(&out.stdout).unwrap();
    let mut h = open(&file, Lang::En);
    h.run();
    let (_, a, b) = snapshot_view(h.state()).chart().last_frame().unwrap();
    if times.len() > 1 {
        let first = times[0];
        let (gap, after) = times
            .windows(2)
            .map(|w| (w[1] - w[0], w[1]))
            .max_by(|x, y| x.0.total_cmp(&y.0))
            .unwrap();
        let span = times.last().unwrap() - first;
        assert!(gap > 0.5 * span, "the sample's pause: {gap} of {span}");
        let after_ms = (after - first) / 1000.0;
        assert!(
            a > 0.9 * after_ms && a <= after_ms,
            "{a} {after_ms} (to {b})"
        );
    } else {
        panic!("the sample has its events' times");
    }
}
