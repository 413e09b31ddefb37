//! The OOM bundle (issue 27): an allocator snapshot whose trace ends with an `oom` event and the
//! memUsageInfo CSV beside it, written by `tests/reference/make_oom_bundle.py` with what a reader
//! must find computed there from the data it wrote. The CLI's figures and verdicts equal
//! Python's; the app opens on the device that ran out and says why, in English and Chinese, with
//! a way to the event and the modules' table.

use crate::common;

use std::path::{Path, PathBuf};

/// The bundle in `dir` and Python's expectations, or None (a failure under
/// MEMSIGHT_REQUIRE_ALL) without python3.
fn bundle(dir: &Path) -> Option<(PathBuf, serde_json::Value)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/make_oom_bundle.py");
    let out = match std::process::Command::new("python3")
        .arg(script)
        .arg(dir)
        .output()
    {
        Ok(o) if o.status.success() => o,
        other => {
            common::skip(&format!("python3 not available ({other:?})"));
            return None;
        }
    };
    let want: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    Some((dir.join("oom_snapshot_4242_20261125101600.pickle"), want))
}

#[test]
fn the_cli_says_why_each_device_ran_out() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((pickle, want)) = bundle(tmp.path()) else {
        return;
    };
    let (code, out, err) = common::memsight(&["snapshot", pickle.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // The advice follows each verdict: device 0's holes between live blocks (fragmentation)
    // get max_split_size and what they hold; device 1 (exhaustion) holds less by the request
    // less all that was free, in its segments and on the device (the reference's figures).
    for o in v["oom"].as_array_mut().unwrap() {
        let advice = o.as_object_mut().unwrap().remove("advice").unwrap();
        o.as_object_mut().unwrap().remove("advice_text").unwrap();
        let at = |k: &str| o[k].as_i64().unwrap();
        match o["verdict"].as_str().unwrap() {
            "fragmentation" => {
                assert_eq!(advice["kind"], "defragment");
                assert_eq!(advice["fix"], "max_split_size");
                assert_eq!(
                    advice["frees_bytes"].as_i64(),
                    Some(at("free_in_segments_bytes"))
                );
            }
            "exhaustion" => {
                assert_eq!(advice["kind"], "hold_less");
                let short =
                    at("requested_bytes") - at("free_in_segments_bytes") - at("device_free_bytes");
                assert_eq!(advice["short_bytes"].as_i64(), Some(short));
            }
            other => panic!("{other}"),
        }
    }
    assert_eq!(v["oom"], want["oom"]);
    assert_eq!(v["modules_at_oom"], want["modules"]);
    let (code, text, _) = common::memsight(&["snapshot", pickle.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        text.starts_with("OUT OF MEMORY on device 0 at event 9"),
        "{text}"
    );
    assert!(
        text.contains(": fragmentation") && text.contains(": exhaustion"),
        "{text}"
    );
}

/// A job's folder of bundles, one per rank (`make_oom_bundle.py --cluster`): the CLI lists
/// which ranks ran out and how close the other came, every figure Python's.
#[test]
fn a_folder_of_bundles_says_which_ranks_ran_out_and_how_close_the_others_were() {
    let tmp = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/make_oom_bundle.py");
    let out = match std::process::Command::new("python3")
        .arg(script)
        .arg("--cluster")
        .arg(tmp.path())
        .output()
    {
        Ok(o) if o.status.success() => o,
        other => return common::skip(&format!("python3 not available ({other:?})")),
    };
    let want: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let before = common::list_files(tmp.path());
    let dir = tmp.path().to_str().unwrap();
    let (code, json, err) = common::memsight(&["snapshot", dir, "--json"]);
    assert_eq!(code, 0, "{err}");
    let got: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(got, want);
    let (code, text, err) = common::memsight(&["snapshot", dir]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[1].contains("\tfragmentation\t") && lines[2].contains("\texhaustion\t"));
    // The rank that did not run out: 22 MiB reserved, 49 MiB short of the room (71 MiB).
    assert!(
        lines[3].ends_with("\t\t\t\t22.00\t16.00\t49.00"),
        "{}",
        lines[3]
    );
    assert_eq!(common::list_files(tmp.path()), before, "nothing written");
    // Opening the folder as a profile points to the command.
    let (code, _, err) = common::memsight(&["inspect", dir]);
    assert_ne!(code, 0);
    assert!(
        err.contains("2 allocator snapshots") && err.contains("memsight snapshot"),
        "{err}"
    );
    // A folder without snapshots says so.
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = common::memsight(&["snapshot", empty.path().to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("no allocator snapshot"), "{err}");
}

#[cfg(feature = "gui")]
#[test]
fn the_app_opens_on_the_oom_and_says_why() {
    use egui_kittest::kittest::Queryable;
    use memsight::ui::MemsightApp;
    use memsight::ui::format::grouped;
    use memsight::ui::i18n::Lang;
    let tmp = tempfile::tempdir().unwrap();
    let Some((pickle, want)) = bundle(tmp.path()) else {
        return;
    };
    let o = &want["oom"][0];
    for lang in [Lang::En, Lang::Zh] {
        let mut app = MemsightApp::new(Some(pickle.clone()), Vec::new(), None);
        app.set_language(lang);
        app.document_mut::<memsight::ui::panes::snapshot::SnapshotView>()
            .expect("a snapshot view")
            .wait();
        let h = common::harness(app);
        let t = h.state().tr();
        assert_eq!(
            h.state()
                .document::<memsight::ui::panes::snapshot::SnapshotView>()
                .unwrap()
                .device(),
            0,
            "the device that ran out"
        );
        // The verdict line, rendered from the CLI's JSON figures in the app's units.
        use memsight::snapshot::oom::{OomAdvice, OomReport, OomVerdict};
        let bytes = |k: &str| o[k].as_i64().unwrap();
        let report = OomReport {
            device: 0,
            event: o["event"].as_u64().unwrap() as usize,
            requested_bytes: bytes("requested_bytes"),
            device_free_bytes: Some(bytes("device_free_bytes")),
            reserved_bytes: 0,
            allocated_bytes: 0,
            free_in_segments_bytes: bytes("free_in_segments_bytes"),
            largest_free_block_bytes: bytes("largest_free_block_bytes"),
            verdict: match o["verdict"].as_str() {
                Some("fragmentation") => OomVerdict::Fragmentation,
                Some("process_limit") => OomVerdict::ProcessLimit,
                _ => OomVerdict::Exhaustion,
            },
            advice: OomAdvice::Nothing,
            advice_text: String::new(),
            stack: 0,
        };
        let verdict = report.headline(lang, &|b| {
            format!("{} MB", grouped(b as f64 / 1048576.0, 2))
        });
        h.get_by_label(&verdict);
        h.get_by_label(&(t.oom_modules)(0));
        for m in want["modules"].as_array().unwrap() {
            h.get_by_label(m["module"].as_str().unwrap());
        }
        // It opens at the OOM: the state its verdict and advice are of.
        assert_eq!(
            h.state()
                .document::<memsight::ui::panes::snapshot::SnapshotView>()
                .unwrap()
                .event(),
            o["event"].as_u64().map(|k| k as usize)
        );
        assert!(h.query_by_label(t.oom_go).is_none(), "at the OOM already");
    }
}

/// Opening a job's folder of bundles in the app (EN and ZH): the table of which ranks ran out,
/// Copy gives what `memsight snapshot DIR` prints, and a file name opens that snapshot.
#[cfg(feature = "gui")]
#[test]
fn the_app_opens_a_folder_of_bundles_on_which_ranks_ran_out() {
    use egui_kittest::kittest::Queryable;
    use memsight::ui::MemsightApp;
    use memsight::ui::i18n::Lang;
    let tmp = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/make_oom_bundle.py");
    match std::process::Command::new("python3")
        .arg(script)
        .arg("--cluster")
        .arg(tmp.path())
        .output()
    {
        Ok(o) if o.status.success() => {}
        other => return common::skip(&format!("python3 not available ({other:?})")),
    }
    let dir = tmp.path().to_str().unwrap();
    let (_, cli, _) = common::memsight(&["snapshot", dir]);
    let quiet = "rank_1/oom_snapshot_4243_20261125101600.pickle";
    for lang in [Lang::En, Lang::Zh] {
        let mut app = MemsightApp::new(Some(tmp.path().to_path_buf()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        app.document_mut::<memsight::ui::panes::oom_cluster::OomClusterView>()
            .expect("the bundles' table, not an error")
            .wait();
        let mut h = common::harness(app);
        let t = h.state().tr();
        h.get_by_label(&(t.oom_cluster_title)(dir));
        h.get_by_label(t.oom_fragmentation);
        h.get_by_label(t.oom_exhaustion);
        for head in t.oom_cluster_headers {
            // "File" is the menu's name too.
            assert!(h.query_all_by_label(head).count() >= 1, "{head}");
        }
        // Headroom of the rank that did not run out: 71 MB of room, 22 MB reserved.
        h.get_by_label("49.00");
        h.get_by_label(t.copy).click();
        h.step();
        assert_eq!(common::copied(&h).as_deref(), Some(cli.as_str()));
        h.get_by_label(quiet).click();
        h.step();
        h.step();
        let app = h.state_mut();
        assert!(
            app.document::<memsight::ui::panes::oom_cluster::OomClusterView>()
                .is_none()
        );
        let snap = app
            .document_mut::<memsight::ui::panes::snapshot::SnapshotView>()
            .expect("the snapshot opened");
        snap.wait();
        let opened = memsight::ui::document::Document::path(&*snap).map(Path::to_path_buf);
        assert_eq!(opened, Some(tmp.path().join(quiet)));
        assert!(snap.error().is_none() && snap.snapshot().is_some());
    }
}

/// An msMemScope dump with `OOM_DETAIL` rows beside the OOM snapshot (in msMemScope's own
/// folder layout): the CLI and the snapshot view (EN and ZH) show what failed and the blocks
/// msMemScope listed, as the rows say.
#[test]
fn msmemscope_oom_rows_beside_the_snapshot_are_shown() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((pickle, _)) = bundle(tmp.path()) else {
        return;
    };
    let dump_dir = tmp
        .path()
        .join("msmemscope_4242_20261125101600_ascend/device_0/dump");
    std::fs::create_dir_all(&dump_dir).unwrap();
    let header = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n";
    let rows = "\
1,MALLOC,PTA,N/A,1764753366165640170,4242,4242,0,0x12c041400000,\"{allocation_id:1,addr:0x12c041400000,size:6291456,total:20971520,used:6291456}\",,\n\
2,OOM_DETAIL,OOM_TRIGGER,OOM_Trigger,1764753366265640170,4242,4242,0,N/A,\"{func:halMemAlloc,req_size:8388608,flag:0,ret:7}\",\"train.py(40): train_step\",\n\
3,OOM_DETAIL,OOM_RECENT_ALLOC,OOM_RecentAlloc,1764753366265640171,4242,4242,N/A,N/A,\"{pool:PTA,ptr:0x12c041400000,size:6291456,timestamp:1764753366165640170}\",\"model.py(12): forward\ntrain.py(40): train_step\",\n\
4,OOM_DETAIL,OOM_TOP_ALLOC,OOM_TopAlloc,1764753366265640172,4242,4242,N/A,N/A,\"{pool:PTA,ptr:0x12c041a00000,size:12582912,timestamp:1764753366100000000}\",\"optim.py(88): step\",\n";
    std::fs::write(
        dump_dir.join("memscope_dump_20261125101600.csv"),
        format!("{header}{rows}"),
    )
    .unwrap();
    let before = common::list_files(tmp.path());
    let (code, out, err) = common::memsight(&["snapshot", pickle.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let dumps = v["memscope_oom"].as_array().unwrap();
    assert_eq!(dumps.len(), 1);
    assert_eq!(
        dumps[0]["file"],
        "msmemscope_4242_20261125101600_ascend/device_0/dump/memscope_dump_20261125101600.csv"
    );
    let r = dumps[0]["rows"].as_array().unwrap();
    assert_eq!(r.len(), 3, "the MALLOC row is not an OOM row");
    assert_eq!(r[0]["kind"], "trigger");
    assert_eq!(r[0]["func"], "halMemAlloc");
    assert_eq!(r[0]["request_bytes"], 8_388_608);
    assert_eq!(r[0]["ret"], 7);
    assert_eq!(r[1]["kind"], "recent");
    assert_eq!(r[1]["size_bytes"], 6_291_456);
    assert_eq!(r[1]["ptr"], 0x12c0_4140_0000u64);
    assert_eq!(
        r[1]["python_stack"],
        serde_json::json!(["model.py(12): forward", "train.py(40): train_step"])
    );
    assert_eq!(r[2]["kind"], "top");
    assert_eq!(r[2]["pool"], "PTA");
    assert_eq!(r[2]["size_bytes"], 12_582_912);
    let (_, text, _) = common::memsight(&["snapshot", pickle.to_str().unwrap()]);
    assert!(
        text.contains("trigger: halMemAlloc asked for 8.00 MB, ret 7"),
        "{text}"
    );
    assert_eq!(common::list_files(tmp.path()), before, "nothing written");

    #[cfg(feature = "gui")]
    {
        use egui_kittest::kittest::Queryable;
        use memsight::ui::MemsightApp;
        use memsight::ui::i18n::Lang;
        for lang in [Lang::En, Lang::Zh] {
            let mut app = MemsightApp::new(Some(pickle.clone()), Vec::new(), None);
            app.set_language(lang);
            app.document_mut::<memsight::ui::panes::snapshot::SnapshotView>()
                .expect("a snapshot view")
                .wait();
            let h = common::harness(app);
            let t = h.state().tr();
            h.get_by_label(&(t.oom_memscope)(
                "msmemscope_4242_20261125101600_ascend/device_0/dump/memscope_dump_20261125101600.csv",
            ));
            h.get_by_label(&(t.oom_memscope_trigger)("halMemAlloc", "8.00", Some(7)));
            for head in t.oom_memscope_headers {
                h.get_by_label(head);
            }
            h.get_by_label(t.oom_memscope_top);
            h.get_by_label(t.oom_memscope_recent);
            h.get_by_label("12.00");
            h.get_by_label("model.py(12): forward");
            h.get_by_label("optim.py(88): step");
        }
    }
}

/// More snapshots than are read: the rest are counted, not lost without a word.
#[test]
fn a_folder_of_too_many_snapshots_counts_those_it_leaves_out() {
    use memsight::snapshot::cluster::{MAX_FILES, bundle_cluster, cluster_tsv};
    let tmp = tempfile::tempdir().unwrap();
    for i in 0..=MAX_FILES {
        std::fs::write(tmp.path().join(format!("s{i:05}.pkl")), b"").unwrap();
    }
    let c = bundle_cluster(tmp.path());
    assert_eq!(c.unreadable.len(), MAX_FILES, "empty files cannot be read");
    assert_eq!(c.left_out, 1);
    assert!(c.rows.is_empty());
    assert!(cluster_tsv(&c).ends_with("# 1 more snapshots not read (at most 4096 are)\n"));
}

/// The real H100 OOMs: PyTorch's own error says why each failed. The fragmentation case ran
/// out with 1.3 GiB free in pieces (and succeeded with expandable segments): fragmentation.
/// The others failed under a per-process cap ("4.50 GiB allowed") while the device had tens of
/// GiB free: a limit on the process, not fragmentation (every one read "fragmentation" before).
#[test]
fn real_cuda_ooms_say_whether_pieces_or_the_process_limit_failed() {
    let Some(root) = common::samples() else {
        return;
    };
    let cuda = root.join("cuda_h100");
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cuda.join("truth.json")).unwrap()).unwrap();
    let mut seen = 0;
    for (case, t) in truth["oom"].as_object().unwrap() {
        let pickle = cuda.join("oom").join(case).join("oom_snapshot.pickle");
        if !pickle.is_file() {
            assert_eq!(t["ok"], true, "{case}: no snapshot although it failed");
            continue;
        }
        let error = t["error"].as_str().unwrap();
        let want = if t["kind"] == "fragmentation" && t["expandable"] == "" {
            "fragmentation"
        } else {
            // PyTorch's message: a cap ("… allowed") and the device's free memory above the
            // request.
            assert!(error.contains("allowed"), "{case}: {error}");
            "process_limit"
        };
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
            .args(["snapshot", "--json"])
            .arg(&pickle)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let oom = &v["oom"][0];
        assert_eq!(oom["verdict"], want, "{case}: {oom}");
        seen += 1;
    }
    assert_eq!(seen, 5);
}
