//! The 2026 snapshot fields in the app (issue 45, part 3), in English and Chinese: a snapshot
//! with pinned host memory shows its line (figures from plain arithmetic over the raw pickle,
//! tests/reference/snapshot_fx_pinned.py), and blocks allocated by FX-generated code are held
//! by the model's line, never by the generated file.

use std::path::{Path, PathBuf};

use crate::common;

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
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
    assert!(app.document::<SnapshotView>().unwrap().error().is_none());
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
            .replace("{segs}", &segments(&p["segments"]))
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
            .pinned()
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
            .replace("{segs}", &segments(&p["segments"]))
            .replace("{res}", &mb(&p["reserved_bytes"]))
            .replace("{peak}", &mb(&p["peak_reserved_bytes"]))
            .replace("{held}", &mb(&p["allocated_bytes"]));
        common::step_until(&mut h, "the pool's line", |h| {
            h.query_by_label(&legend).is_some()
        });
    }
}

/// A snapshot made from the real H100 trace's own allocations on the allocator's clock
/// (tests/reference/make_snapshot_of_trace.py) at `snap`, and what plain arithmetic over the raw
/// files says of its join at the peak (tests/reference/snapshot_profile_join.py): the reference
/// and the heaviest (operator, step) group with its bytes. `None` (after saying why) without
/// the samples or Python.
fn snapshot_of_trace(trace: &Path, snap: &Path) -> Option<(serde_json::Value, String, i64)> {
    if !common::snapshot_of_trace(trace, snap, "0") {
        return None;
    }
    Some(reference_join(snap, trace))
}

/// What plain arithmetic over the raw files says of the join of `snap` with `trace` at the
/// snapshot's peak (tests/reference/snapshot_profile_join.py): the reference and the heaviest
/// (operator, step) group's operator and bytes.
fn reference_join(snap: &Path, trace: &Path) -> (serde_json::Value, String, i64) {
    // The peak: the event the reference is asked about (the CLI's default moment).
    let peak = {
        let (_, out, _) = common::memsight(&["snapshot", &snap.display().to_string(), "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["devices"][0]["peak_event"].as_u64().unwrap()
    };
    let want = common::python_reference(
        "snapshot_profile_join.py",
        &[
            snap.as_os_str(),
            trace.as_os_str(),
            peak.to_string().as_ref(),
        ],
    )
    .unwrap();
    // The heaviest (op, step) group of the reference's blocks.
    let mut groups: std::collections::BTreeMap<(String, i64), (i64, u64)> = Default::default();
    for b in want["blocks"].as_array().unwrap() {
        let g = groups
            .entry((
                b["op"].as_str().unwrap().to_string(),
                b["step"].as_i64().unwrap(),
            ))
            .or_default();
        g.0 += b["size"].as_i64().unwrap();
        g.1 += 1;
    }
    let ((op, _step), (bytes, _)) = groups.into_iter().max_by_key(|(_, v)| v.0).unwrap();
    (want, op, bytes)
}

/// A snapshot of the real H100 trace's own allocations, in a temporary folder, with what the
/// reference says of its join at the peak.
struct Joined {
    /// The folder (removed when dropped).
    dir: tempfile::TempDir,
    /// The snapshot, `run.pickle` in `dir`.
    snap: PathBuf,
    /// The trace, in the samples.
    trace: PathBuf,
    /// The reference, the heaviest group's operator and bytes ([`snapshot_of_trace`]).
    want: (serde_json::Value, String, i64),
}

/// [`Joined`], or `None` (after saying why) without the samples or Python.
fn joined() -> Option<Joined> {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return None;
    };
    let trace = root.join("cuda_h100/whatif/gpt_b8.pt.trace.json.gz");
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("run.pickle");
    let want = snapshot_of_trace(&trace, &snap)?;
    Some(Joined {
        dir,
        snap,
        trace,
        want,
    })
}

/// Goes to the peak and waits for By operator's join with `trace_name` to say what `want`
/// says, then finds the heaviest group's operator and megabytes.
fn the_join_shows(
    h: &mut Harness<'static, MemsightApp>,
    t: &Tr,
    trace_name: &str,
    (want, op, bytes): &(serde_json::Value, String, i64),
) {
    use memsight::ui::panes::snapshot_join::JOINED;
    let joined = JOINED
        .get(t)
        .replace("{p}", trace_name)
        .replace("{m}", &want["matched"].to_string())
        .replace("{n}", &want["alloc_events"].to_string());
    // A label with a hover text is matched by its value: `_contains` of the whole text.
    // The join at a new moment is computed in a job: its heaviest operator shows when done.
    common::step_until(h, "the join", |h| {
        h.query_all_by_label_contains(&joined).next().is_some()
            && h.query_all_by_label(op).next().is_some()
    });
    let mb = grouped(*bytes as f64 / 1048576.0, 2);
    assert!(h.query_all_by_label(&mb).next().is_some(), "{mb}");
}

/// Goes to the peak and opens By operator, once the join has made it appear.
fn peak_by_operator(h: &mut Harness<'static, MemsightApp>, t: &Tr) {
    use memsight::ui::panes::snapshot_join::VIEW;
    h.get_by_label(t.snapshot_go_peak).click();
    common::step_until(h, "By operator", |h| {
        h.query_by_label(VIEW.get(t)).is_some()
    });
    // The tabs may lie below the window's fold (the Chinese UI's lines are taller).
    h.get_by_label(VIEW.get(t)).scroll_to_me();
    h.step();
    h.get_by_label(VIEW.get(t)).click();
}

/// A snapshot beside the PyTorch trace of its run (issue 45, part 4): By operator appears, and
/// at the peak lists the live blocks by the profile's operator and step as plain arithmetic
/// over the raw files says (tests/reference/snapshot_profile_join.py), in both languages. The
/// snapshot is made from the real H100 trace's own allocations on the allocator's clock
/// (tests/reference/make_snapshot_of_trace.py).
#[test]
fn a_snapshot_beside_its_runs_trace_lists_live_blocks_by_operator() {
    let Some(Joined {
        dir,
        snap,
        trace,
        want,
    }) = joined()
    else {
        return;
    };
    std::fs::copy(&trace, dir.path().join("gpt_b8.pt.trace.json.gz")).unwrap();
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&snap, lang);
        peak_by_operator(&mut h, t);
        the_join_shows(&mut h, t, "gpt_b8.pt.trace.json.gz", &want);
    }
}

/// A real snapshot and profile recorded at once on an H100 (fixtures/snapshots/cuda_join),
/// opened as a user opens the snapshot: the trace beside it is joined, By operator at the peak
/// shows what the reference says, and the two holders named by one line of the script (AdamW's
/// two state tensors) are told apart by their allocating frame, in both languages.
#[test]
fn a_real_paired_recording_opens_joined_and_tells_its_holders_apart() {
    let dir = common::fixtures().join("snapshots/cuda_join");
    let (snap, trace) = (dir.join("run.pickle"), dir.join("run.pt.trace.json.gz"));
    let want = reference_join(&snap, &trace);
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&snap, lang);
        // Every allocation has a band (213 in the trace and 13 held from before it): the
        // legend does not speak of a grey band of 0 others.
        let legend = (t.snapshot_bands_legend)(226, 0);
        common::step_until(&mut h, "the bands' legend", |h| {
            h.query_all_by_label(&legend).next().is_some()
        });
        assert!(
            !legend.contains(" 0 ") && !legend.contains("其余"),
            "{legend}"
        );
        for via in ["adam.py(178): _init_group", "adam.py(182): _init_group"] {
            let row = format!("make_cuda_snapshot_with_profile.py(64): main · {via}");
            common::step_until(&mut h, "the holders told apart", |h| {
                h.query_all_by_label(&row).next().is_some()
            });
        }
        peak_by_operator(&mut h, t);
        the_join_shows(&mut h, t, "run.pt.trace.json.gz", &want);
    }
}

/// A snapshot with no trace beside it joins the one the user picks with Join with a
/// profile…: the dialog asks for a trace (not a snapshot), and By operator then shows the join,
/// with the same figures as plain arithmetic over the raw files, in both languages.
#[test]
fn join_with_a_profile_picks_a_trace_from_elsewhere_and_shows_the_join() {
    use memsight::ui::command::PickKind;
    use memsight::ui::panes::snapshot_join::{JOIN_WITH, PICK, VIEW};
    let Some(Joined {
        dir: _dir,
        snap,
        trace,
        want,
    }) = joined()
    else {
        return;
    };
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&snap, lang);
        let picked = trace.clone();
        h.state_mut().set_picker(move |kind| {
            (kind == PickKind::File(&PICK))
                .then(|| picked.clone())
                .into()
        });
        h.run();
        assert!(
            h.query_by_label(VIEW.get(t)).is_none(),
            "no By operator before a profile is joined"
        );
        h.get_by_label(t.snapshot_go_peak).click();
        h.run();
        h.get_by_label(JOIN_WITH.get(t)).click();
        common::step_until(&mut h, "By operator", |h| {
            h.query_by_label(VIEW.get(t)).is_some()
        });
        the_join_shows(&mut h, t, "gpt_b8.pt.trace.json.gz", &want);
        let view = h.state().document::<SnapshotView>().unwrap();
        assert_eq!(view.profile().map(|p| &p.profile), Some(&trace));
    }
}

/// Issue 87 item 14: a profile that cannot be joined, asked for after one that was, leaves the
/// view as it was (By operator with the first join, its figures the reference's) and says why
/// beside it, in both languages; before, the failure replaced the working join.
#[test]
fn a_failed_join_keeps_the_join_it_was_started_from() {
    use memsight::ui::command::PickKind;
    use memsight::ui::panes::snapshot_join::{FAILED, JOIN_WITH, PICK, VIEW};
    let Some(Joined {
        dir: _dir,
        snap,
        trace,
        want,
    }) = joined()
    else {
        return;
    };
    let other = tempfile::tempdir().unwrap();
    let empty = other.path().join("y.pt.trace.json");
    std::fs::write(&empty, r#"{"traceEvents": []}"#).unwrap();
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&snap, lang);
        let picks = std::sync::Arc::new(std::sync::Mutex::new(vec![empty.clone(), trace.clone()]));
        h.state_mut().set_picker(move |kind| {
            (kind == PickKind::File(&PICK))
                .then(|| picks.lock().unwrap().pop().unwrap())
                .into()
        });
        common::settle(&mut h);
        h.get_by_label(t.snapshot_go_peak).click();
        common::settle(&mut h);
        h.get_by_label(JOIN_WITH.get(t)).click();
        common::step_until(&mut h, "By operator", |h| {
            h.query_by_label(VIEW.get(t)).is_some()
        });
        the_join_shows(&mut h, t, "gpt_b8.pt.trace.json.gz", &want);
        // The second pick: a trace with no memory in it.
        h.get_by_label(JOIN_WITH.get(t)).click();
        let prefix = FAILED
            .get(t)
            .replace("{p}", "y.pt.trace.json")
            .split("{why}")
            .next()
            .unwrap()
            .to_string();
        common::step_until(&mut h, "the reason", |h| {
            h.query_all_by_label_contains(&prefix).next().is_some()
        });
        common::settle(&mut h);
        the_join_shows(&mut h, t, "gpt_b8.pt.trace.json.gz", &want);
        let view = h.state().document::<SnapshotView>().unwrap();
        assert_eq!(view.profile().map(|p| &p.profile), Some(&trace), "{lang:?}");
    }
}

/// A picked file that is not a profile of memory says why in the UI's language: discovery's
/// own typed reason, not its English words inside a Chinese sentence.
#[test]
fn join_with_a_file_that_is_not_a_profile_says_why_in_the_ui_language() {
    use memsight::ui::command::PickKind;
    use memsight::ui::panes::snapshot_join::{FAILED, JOIN_WITH, PICK};
    let Some(Joined {
        dir: _dir, snap, ..
    }) = joined()
    else {
        return;
    };
    let other = tempfile::tempdir().unwrap();
    let empty = other.path().join("y.pt.trace.json");
    std::fs::write(&empty, r#"{"traceEvents": []}"#).unwrap();
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&snap, lang);
        let picked = empty.clone();
        h.state_mut().set_picker(move |kind| {
            (kind == PickKind::File(&PICK))
                .then(|| picked.clone())
                .into()
        });
        h.run();
        h.get_by_label(JOIN_WITH.get(t)).click();
        let why = (t.no_memory_data)(
            &empty.display().to_string(),
            memsight::ingest::MAX_DEPTH,
            &[
                "*.json / *.json.gz (PyTorch profiler traces)",
                "*.csv / memscope_dump_*.db (msMemScope dumps)",
            ],
            "",
        );
        let said = FAILED
            .get(t)
            .replace("{p}", "y.pt.trace.json")
            .replace("{why}", &why);
        common::step_until(&mut h, "the reason", |h| {
            h.query_all_by_label_contains(&said).next().is_some()
        });
    }
}

/// A snapshot and a profile of its run dropped on the window together (in either order) open
/// joined: By operator is shown at once, and at the end, where this run holds nothing, it says
/// so instead of an empty table; at the peak it shows what the reference says.
#[test]
fn a_snapshot_and_its_trace_dropped_together_open_joined() {
    use memsight::ui::panes::snapshot_join::VIEW;
    let Some(Joined {
        dir: _dir,
        snap,
        trace,
        want,
    }) = joined()
    else {
        return;
    };
    for (lang, dropped) in [
        (Lang::En, [trace.clone(), snap.clone()]),
        (Lang::Zh, [snap.clone(), trace.clone()]),
    ] {
        let t = tr(lang);
        let mut app = MemsightApp::new(None, Vec::new(), None);
        app.set_language(lang);
        let mut h = common::harness(app);
        for p in dropped {
            h.input_mut()
                .dropped_files
                .push(std::sync::Arc::new(common::DroppedPath(p)));
        }
        h.step();
        common::step_until(&mut h, "the snapshot, joined", |h| {
            h.state()
                .document::<SnapshotView>()
                .is_some_and(|v| v.snapshot().is_some() && v.profile().is_some())
                && h.query_by_label(VIEW.get(t)).is_some()
        });
        common::step_until(&mut h, "nothing held at the end", |h| {
            h.query_by_label(t.snapshot_nothing_held).is_some()
        });
        h.get_by_label(t.snapshot_go_peak).click();
        the_join_shows(&mut h, t, "gpt_b8.pt.trace.json.gz", &want);
    }
}

/// Joined with its run's trace, a band's tooltip names the operator and step that allocated it
/// in the profile: hovering the bands at the peak shows one of the live blocks' (operator,
/// step) as plain arithmetic over the raw files gives them, in both languages, even with the
/// holders shown as a table.
#[test]
fn a_bands_tooltip_names_its_operator_from_the_joined_profile() {
    use memsight::ui::panes::snapshot_join::{BAND_OP, PICK};
    let Some(Joined {
        dir: _dir,
        snap,
        trace,
        want: (want, _, _),
    }) = joined()
    else {
        return;
    };
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = open(&snap, lang);
        h.state_mut()
            .apply(memsight::ui::Command::Picked(PICK.id, trace.clone()));
        // Back to the table: the tooltips do not need By operator on screen.
        h.state_mut()
            .document_mut::<SnapshotView>()
            .unwrap()
            .show_holders(memsight::ui::panes::snapshot_holders::TABLE);
        common::step_until(&mut h, "the join", |h| {
            h.state()
                .document::<SnapshotView>()
                .and_then(|v| v.profile())
                .is_some_and(|p| !p.event_ops().is_empty())
        });
        let lines: Vec<String> = want["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                BAND_OP
                    .get(t)
                    .replace("{op}", b["op"].as_str().unwrap())
                    .replace("{step}", &b["step"].to_string())
            })
            .collect();
        // Low in the chart, just after the last allocation still live at the peak (the
        // reference's moment): every band there is one of its live blocks.
        let view = h.state().document::<SnapshotView>().unwrap();
        let events = view.snapshot().unwrap().trace(0);
        let last = want["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["event"].as_u64().unwrap() as usize)
            .max()
            .unwrap();
        let (t0, tp) = (events[0].time_us.unwrap(), events[last].time_us.unwrap());
        let x_ms = (tp - t0) as f64 / 1000.0 + 0.0001;
        let (frame, _, _) = view.chart().last_frame().unwrap();
        let x = view.chart().screen_x(x_ms).unwrap();
        let y = frame.bottom() - frame.height() * 0.04;
        h.hover_at(egui::pos2(x, y));
        // The tooltip waits for the pointer to rest.
        h.run_steps(60);
        let prefix = BAND_OP.get(t).split("{op}").next().unwrap().to_string();
        let shown: Vec<String> = h
            .query_all_by_label_contains(&prefix)
            .filter_map(|n| {
                let a = n.accesskit_node();
                a.label().or_else(|| a.value()).map(|l| l.to_string())
            })
            .collect();
        assert!(!shown.is_empty(), "{lang:?}: no operator in the tooltip");
        for s in &shown {
            assert!(lines.contains(s), "{lang:?}: {s} is not a live block's");
        }
    }
}

/// "1 segment", "3 segments": a count and its noun (no "segment(s)").
fn segments(n: &serde_json::Value) -> String {
    match n.as_u64() {
        Some(1) => "1 segment".to_string(),
        Some(k) => format!("{k} segments"),
        None => n.to_string(),
    }
}
