//! A cluster summary (`memsight summarize --out FILE.db`) opened in the app, driven through
//! egui_kittest in English and Chinese: the overview's figures against the raw memory_record
//! rows and against plain SQL over the summary file, the host filter, the sort, Copy, pinning a
//! rank's curve, opening a rank's folder (or saying where it was), comparing two summaries rank
//! by rank, and a summary of another schema version.

use crate::common;

use std::path::{Path, PathBuf};

use common::{RawCsv, memsight, raw_peak};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use memsight::ui::MemsightApp;
use memsight::ui::format::grouped;
use memsight::ui::i18n::{EN, Lang, Tr, ZH};
use rusqlite::Connection;

fn tr(lang: Lang) -> &'static Tr {
    if lang == Lang::Zh { &ZH } else { &EN }
}

/// Generated ranks, summarised: `now.db` holds ranks 0–8 of an ordinary run and ranks 9–11 of
/// one whose operator leaks 30 MiB a step (all on two hosts of 8 ranks each); `before.db` is
/// another run of the same 12 ranks.
struct Cluster {
    tmp: tempfile::TempDir,
    now: PathBuf,
    before: PathBuf,
    /// The rank folders summarised in `now.db`, by rank.
    dirs: Vec<PathBuf>,
}

fn generate(dir: &Path, extra: &[&str]) -> Vec<PathBuf> {
    let mut args = vec![
        "generate",
        dir.to_str().unwrap(),
        "--ranks",
        "12",
        "--allocs",
        "200",
        "--steps",
        "6",
    ];
    args.extend_from_slice(extra);
    let (code, _, err) = memsight(&args);
    assert_eq!(code, 0, "{err}");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    // node{h}_{4000 + rank}_…: the name orders them by rank.
    dirs.sort_by_key(|d| {
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        name.split('_').nth(1).unwrap().parse::<u32>().unwrap()
    });
    assert_eq!(dirs.len(), 12);
    dirs
}

fn summarize(inputs: &[PathBuf], out: &Path) {
    let mut args: Vec<String> = vec!["summarize".into()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["--out".into(), out.display().to_string()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, err) = memsight(&refs);
    assert_eq!(code, 0, "{err}");
}

fn cluster() -> Cluster {
    let tmp = tempfile::tempdir().unwrap();
    let plain = generate(&tmp.path().join("run"), &[]);
    let leaking = generate(
        &tmp.path().join("leak"),
        &["--leak-mib", "30", "--seed", "7"],
    );
    let mut dirs: Vec<PathBuf> = plain[..9].to_vec();
    dirs.extend_from_slice(&leaking[9..]);
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let now = out.join("now.db");
    summarize(&dirs, &now);
    let before_dirs = generate(&tmp.path().join("before"), &["--seed", "99"]);
    let before = out.join("before.db");
    summarize(&before_dirs, &before);
    Cluster {
        tmp,
        now,
        before,
        dirs,
    }
}

fn open(path: &Path, lang: Lang) -> Harness<'static, MemsightApp> {
    let mut app = MemsightApp::new(Some(path.to_path_buf()), Vec::new(), None);
    app.set_language(lang);
    app.document_mut::<memsight::ui::summary::SummaryView>()
        .expect("a summary view")
        .wait();
    let mut h = common::harness(app);
    h.run();
    h
}

/// Operator Allocated's peak of a rank folder from its raw memory_record rows, MiB.
fn raw_peak_mib(dir: &Path) -> f64 {
    let rec = RawCsv::read(&dir.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    raw_peak(&rec, "PTA+GE", "Total Allocated(MB)", 1.0)
        .or_else(|| raw_peak(&rec, "PTA", "Total Allocated(MB)", 1.0))
        .unwrap()
        .0
}

fn host_of(rank: usize) -> String {
    format!("node{}", rank / 8)
}

#[test]
fn the_overview_shows_the_spread_the_worst_step_and_the_leaking_ranks() {
    let c = cluster();
    // The spread, from the raw rows.
    let peaks: Vec<f64> = c.dirs.iter().map(|d| raw_peak_mib(d)).collect();
    let (max_rank, max) = peaks
        .iter()
        .copied()
        .enumerate()
        .fold((0, f64::MIN), |b, p| if p.1 > b.1 { p } else { b });
    let (min_rank, min) = peaks
        .iter()
        .copied()
        .enumerate()
        .fold((0, f64::MAX), |b, p| if p.1 < b.1 { p } else { b });
    let mean = peaks.iter().sum::<f64>() / peaks.len() as f64;
    // The worst step, by SQL over the file.
    let db = Connection::open(&c.now).unwrap();
    let (step, worst_rank, worst): (i64, String, f64) = db
        .query_row(
            "SELECT s.step, r.rank, s.peak_allocated_mib FROM steps s JOIN ranks r ON r.id = s.rank_id \
             ORDER BY s.peak_allocated_mib DESC, s.step LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let mut in_step: Vec<f64> = db
        .prepare("SELECT peak_allocated_mib FROM steps WHERE step = ?1")
        .unwrap()
        .query_map([step], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    in_step.sort_by(f64::total_cmp);
    let n = in_step.len();
    let median = if n % 2 == 1 {
        in_step[n / 2]
    } else {
        (in_step[n / 2 - 1] + in_step[n / 2]) / 2.0
    };
    // The leaking ranks, most growth first: the end of the last step less that of the first.
    let mut growth: Vec<(String, f64)> = db
        .prepare(
            "SELECT r.rank, \
               (SELECT end_allocated_mib FROM steps WHERE rank_id = r.id ORDER BY step DESC LIMIT 1) - \
               (SELECT end_allocated_mib FROM steps WHERE rank_id = r.id ORDER BY step LIMIT 1) \
             FROM ranks r WHERE CAST(r.rank AS INTEGER) >= 9",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    growth.sort_by(|a, b| b.1.total_cmp(&a.1));
    assert!(growth.iter().all(|g| g.1 >= 3.0 * 30.0), "{growth:?}");
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let h = open(&c.now, lang);
        h.get_by_label_contains(&(t.summary_title)("now.db", 12, 2));
        let mb = |v: f64| format!("{} MB", grouped(v, 2));
        h.get_by_label(&(t.overview_spread)(
            &mb(max),
            &format!("{max_rank} ({})", host_of(max_rank)),
            &mb(min),
            &format!("{min_rank} ({})", host_of(min_rank)),
            &mb(mean),
            &mb(max - min),
        ));
        let worst_host = host_of(worst_rank.parse().unwrap());
        h.get_by_label(&(t.summary_worst_step)(
            step,
            &grouped(worst, 2),
            &format!("{worst_rank} ({worst_host})"),
            &grouped(median, 2),
            12,
        ));
        let list: Vec<String> = growth
            .iter()
            .map(|(r, g)| format!("{r} (node1) +{} MB", grouped(*g, 2)))
            .collect();
        h.get_by_label(&(t.summary_leaks)(3, &list.join(", ")));
    }
}

#[test]
fn the_host_filter_the_sort_and_copy_give_the_shown_rows() {
    let c = cluster();
    let peaks: Vec<f64> = c.dirs.iter().map(|d| raw_peak_mib(d)).collect();
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let mut h = open(&c.now, lang);
        common::type_into(&mut h, t.summary_host_filter, "NODE1");
        h.run();
        h.get_by_label(&(t.summary_shown)(4, 12));
        let header = (t.summary_header)(memsight::ui::state::SummaryColumn::PeakAllocated);
        h.get_by_label(header).click();
        h.run();
        h.get_by_label(&format!("{header} ⬆")).click();
        h.run();
        h.get_by_label(t.copy_all).click();
        h.step();
        let tsv = common::copied(&h).expect("Copy all copies the table");
        let lines: Vec<&str> = tsv.lines().collect();
        assert_eq!(lines.len(), 5, "{tsv}");
        // Ranks 8–11 are on node1; largest peak first.
        let mut want: Vec<usize> = (8..12).collect();
        want.sort_by(|&a, &b| peaks[b].total_cmp(&peaks[a]));
        let header: Vec<&str> = lines[0].split('\t').collect();
        assert_eq!(header[9], t.summary_top_operator_mb, "{tsv}");
        for (line, rank) in lines[1..].iter().zip(&want) {
            let cells: Vec<&str> = line.split('\t').collect();
            assert_eq!(cells[0], rank.to_string(), "{tsv}");
            assert_eq!(cells[1], "node1");
            // Plain numbers, as the details table copies them: no separators, exact.
            assert!(!cells[3].contains(','), "{line}");
            assert_eq!(cells[3].parse::<f64>().ok(), Some(peaks[*rank]), "{line}");
            // The top operator's MB in a column of its own.
            assert!(cells[9].parse::<f64>().is_ok_and(|v| v > 0.0), "{line}");
            assert_eq!(cells[10], c.dirs[*rank].display().to_string());
        }
    }
}

#[test]
fn a_row_pins_its_curve_and_its_folder_opens_the_rank() {
    let c = cluster();
    let peaks: Vec<f64> = c.dirs.iter().map(|d| raw_peak_mib(d)).collect();
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let mut h = open(&c.now, lang);
        // Hovering a row shows that rank's curve.
        h.get_by_label(&grouped(peaks[6], 2)).hover();
        h.run();
        h.get_by_label(&(t.summary_curve_title)("6", "node0"));
        // Rank 4's peak cell is unique in the table.
        h.get_by_label(&grouped(peaks[4], 2)).click();
        h.run();
        let app = h.state();
        let open = app
            .document::<memsight::ui::summary::SummaryView>()
            .unwrap()
            .open
            .as_ref()
            .unwrap();
        let i = app
            .view_state()
            .choice::<memsight::ui::panes::summary::SummaryChoice>()
            .selected
            .expect("the click pins the rank");
        assert_eq!(open.summary.ranks[i].identity.rank, "4");
        h.get_by_label(&(t.summary_curve_title)("4", "node0"));
        h.get_by_label(t.summary_unpin);
        // Its folder link opens the rank itself.
        // Its rank number is a link to its folder: the rank itself opens.
        h.get_by_role_and_label(egui::accesskit::Role::Link, "4")
            .click();
        h.step();
        let app = h.state_mut();
        assert!(
            app.document::<memsight::ui::summary::SummaryView>()
                .is_none(),
            "the rank replaced the summary"
        );
        app.wait_for_load();
        assert_eq!(app.path(), Some(c.dirs[4].as_path()));
        let view = app.view().expect("the rank is on screen");
        let peak = memsight::export::summarize(&view.data)
            .peaks
            .operator_allocated
            .map(|p| grouped(p.mib, 2));
        assert_eq!(peak, Some(grouped(peaks[4], 2)));
        // Back (issue 87 item 12): the menu bar's button returns to the summary as it was
        // (read once: it is on screen at the next frame, rank 4 still pinned); Alt+← does the
        // same after the link is followed again.
        common::settle(&mut h);
        for by_key in [false, true] {
            if by_key {
                h.get_by_role_and_label(egui::accesskit::Role::Link, "4")
                    .click();
                h.step();
                h.state_mut().wait_for_load();
                common::settle(&mut h);
                h.key_press_modifiers(egui::Modifiers::ALT, egui::Key::ArrowLeft);
            } else {
                h.get_by_label(&(t.back_to)("now.db")).click();
            }
            h.step();
            let app = h.state();
            let summary = app
                .document::<memsight::ui::summary::SummaryView>()
                .unwrap_or_else(|| panic!("{lang:?} {by_key}: back on the summary"));
            let open = summary.open.as_ref().expect("the summary as it was");
            let i = app
                .view_state()
                .choice::<memsight::ui::panes::summary::SummaryChoice>()
                .selected
                .expect("rank 4 still pinned");
            assert_eq!(open.summary.ranks[i].identity.rank, "4");
            assert_eq!(app.path(), Some(c.now.as_path()));
            common::settle(&mut h);
            assert!(
                h.query_by_label(&(t.back_to)("now.db")).is_none(),
                "nothing before the summary"
            );
        }
    }
}

#[test]
fn a_folder_that_is_not_here_says_where_it_was() {
    let c = cluster();
    let moved = c.tmp.path().join("moved");
    std::fs::rename(&c.dirs[2], &moved).unwrap();
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let mut h = open(&c.now, lang);
        let path = c.dirs[2].display().to_string();
        h.get_by_role_and_label(egui::accesskit::Role::Link, "2")
            .click();
        h.run();
        assert!(
            h.state()
                .document::<memsight::ui::summary::SummaryView>()
                .is_some(),
            "the summary stays on screen"
        );
        let machine = memsight::export::cluster_db::this_machine();
        h.get_by_label(&(t.summary_unreachable)(
            "2",
            &path,
            "node0",
            machine.as_deref(),
        ));
    }
}

#[test]
fn two_summaries_compare_rank_by_rank() {
    let c = cluster();
    // Each rank's peak in both files, by plain SQL.
    let peaks = |db: &Path| -> std::collections::BTreeMap<String, f64> {
        let db = Connection::open(db).unwrap();
        let mut q = db
            .prepare("SELECT rank, peak_allocated_mib FROM ranks")
            .unwrap();
        q.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let (now, before) = (peaks(&c.now), peaks(&c.before));
    let max =
        |m: &std::collections::BTreeMap<String, f64>| m.values().copied().fold(f64::MIN, f64::max);
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let mut h = open(&c.now, lang);
        h.state_mut().apply(memsight::ui::Command::CompareWith(
            memsight::ui::baseline::BaselineSource {
                path: c.before.clone(),
                rank: 0,
            },
        ));
        h.state_mut()
            .document_mut::<memsight::ui::summary::SummaryView>()
            .unwrap()
            .wait();
        h.run();
        h.get_by_label(&(t.summary_compared)(
            "before.db",
            12,
            12,
            &grouped(max(&before), 2),
            &grouped(max(&now), 2),
        ));
        h.get_by_label(t.copy_all).click();
        h.step();
        let tsv = common::copied(&h).unwrap();
        let mut lines = tsv.lines();
        let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
        use memsight::ui::state::SummaryColumn as C;
        assert_eq!(header[4], (t.summary_header)(C::Before));
        assert_eq!(header[5], (t.summary_header)(C::Delta));
        let mut rows = 0;
        for line in lines {
            let cells: Vec<&str> = line.split('\t').collect();
            let (a, b) = (now[cells[0]], before[cells[0]]);
            // Plain numbers: exact, no separators, no sign on a rise.
            assert_eq!(cells[4].parse::<f64>().ok(), Some(b), "{line}");
            assert_eq!(cells[5].parse::<f64>().ok(), Some(a - b), "{line}");
            assert!(
                !cells[4].contains(',') && !cells[5].starts_with('+'),
                "{line}"
            );
            rows += 1;
        }
        assert_eq!(rows, 12);
        // Rank 4's curves, pinned: each of its series once in the legend and the baseline's
        // as one entry (issue 87 item 12: each curve twice, 12 entries, covered the plot).
        let series: Vec<String> = {
            let db = Connection::open(&c.now).unwrap();
            let mut q = db
                .prepare(
                    "SELECT series FROM curves JOIN ranks ON ranks.id = curves.rank_id \
                     WHERE ranks.rank = '4'",
                )
                .unwrap();
            q.query_map([], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        assert!(series.len() >= 3, "{series:?}");
        h.get_by_label(&grouped(now["4"], 2)).click();
        h.run();
        h.get_by_label(&(t.summary_curve_title)("4", "node0"));
        for name in &series {
            assert!(
                h.query_all_by_label(name).next().is_some(),
                "{lang:?}: {name}"
            );
            let twice = format!("{name} ({})", t.summary_before_series);
            assert!(h.query_by_label(&twice).is_none(), "{lang:?}: {twice}");
        }
        assert_eq!(
            h.query_all_by_label(t.summary_before_series).count(),
            1,
            "{lang:?}: one entry for the baseline's curves"
        );
        h.get_by_label(t.summary_stop_compare).click();
        h.run();
        assert!(
            h.state()
                .document::<memsight::ui::summary::SummaryView>()
                .unwrap()
                .baseline
                .is_none()
        );
    }
}

#[test]
fn a_summary_of_another_schema_version_says_which() {
    let c = cluster();
    let copy = c.tmp.path().join("v2.db");
    std::fs::copy(&c.now, &copy).unwrap();
    Connection::open(&copy)
        .unwrap()
        .execute_batch("PRAGMA user_version = 2")
        .unwrap();
    // The reason is typed: said in the UI's language (issue 42 item 4).
    for (lang, why) in [
        (
            Lang::En,
            "summary schema version 2; this memsight reads version 1",
        ),
        (
            Lang::Zh,
            "汇总文件的结构版本为 2；此版本的 memsight 读取版本 1",
        ),
    ] {
        let h = open(&copy, lang);
        h.get_by_label_contains(why);
    }
    // Opening summaries wrote nothing beside them: their folder holds just the two.
    let names: Vec<String> = std::fs::read_dir(c.now.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// Clicks Compare with summary…, waits for the picker's answer and for both readings.
fn click_compare_and_wait(h: &mut Harness<'_, MemsightApp>, t: &Tr) {
    h.get_by_label(t.summary_compare).click();
    common::step_until(h, "the dialog's answer", |app| {
        app.state()
            .document::<memsight::ui::summary::SummaryView>()
            .is_some_and(|s| s.baseline.is_some())
    });
    h.state_mut()
        .document_mut::<memsight::ui::summary::SummaryView>()
        .unwrap()
        .wait();
    h.run();
}

/// Issue 43 item 2: Compare with summary… opened a folder picker, so a summary file could never
/// be chosen. It asks for a file (a picker of its own kind), and the file picked is compared.
#[test]
fn compare_with_summary_picks_a_file_and_compares_it() {
    let c = cluster();
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let mut h = open(&c.now, lang);
        // Only a file picker answers: a folder picker gets nothing.
        let before = c.before.clone();
        h.state_mut().set_picker(move |kind| {
            (kind == memsight::ui::command::PickKind::File(&memsight::ui::panes::summary::PICK))
                .then(|| before.clone())
                .into()
        });
        click_compare_and_wait(&mut h, t);
        let view = h
            .state()
            .document::<memsight::ui::summary::SummaryView>()
            .unwrap();
        let baseline = view.baseline.as_ref().unwrap();
        assert_eq!(baseline.path, c.before);
        assert!(baseline.open.is_some(), "{:?}", baseline.error);
    }
}

/// Issue 42 item 4: a file that is not a summary this memsight reads says why in the UI's
/// language (the reasons are typed; before, the Chinese UI showed the CLI's English sentence).
#[test]
fn a_summary_that_cannot_be_compared_says_why_in_the_ui_language() {
    let c = cluster();
    let tmp = tempfile::tempdir().unwrap();
    // A database memsight did not write, and a summary of another schema version.
    let foreign = tmp.path().join("foreign.db");
    Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
        .unwrap();
    let newer = tmp.path().join("newer.db");
    std::fs::copy(&c.before, &newer).unwrap();
    let reads: i64 = Connection::open(&c.before)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    Connection::open(&newer)
        .unwrap()
        .execute_batch(&format!("PRAGMA user_version = {}", reads + 7))
        .unwrap();
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let cases = [
            (
                &foreign,
                match lang {
                    Lang::En => "not a memsight summary (make one with `memsight summarize PATH --out FILE.db`)".to_string(),
                    Lang::Zh => "不是 memsight 汇总文件（用 `memsight summarize PATH --out FILE.db` 生成）".to_string(),
                },
            ),
            (
                &newer,
                match lang {
                    Lang::En => format!(
                        "summary schema version {}; this memsight reads version {reads}",
                        reads + 7
                    ),
                    Lang::Zh => format!(
                        "汇总文件的结构版本为 {}；此版本的 memsight 读取版本 {reads}",
                        reads + 7
                    ),
                },
            ),
        ];
        for (file, why) in cases {
            let mut h = open(&c.now, lang);
            let picked = file.clone();
            h.state_mut()
                .set_picker(move |_| Some(picked.clone()).into());
            click_compare_and_wait(&mut h, t);
            let sep = if lang == Lang::Zh { "：" } else { ": " };
            let shown = (t.summary_baseline_error)(&format!("{}{sep}{why}", file.display()));
            h.get_by_label(&shown);
        }
    }
}

/// Issue 43 item 1: `summarize run --out run.db`, run in the folder above `run`, stored relative
/// paths: opened from anywhere else, a rank's link said its folder "is not on this machine".
/// Paths are stored absolute (with the machine that summarised); a relative one of an older
/// summary is looked for beside the summary.
#[test]
fn a_rank_link_opens_its_folder_whatever_folder_the_summary_was_made_or_opened_from() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = generate(&tmp.path().join("run"), &[]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
        .current_dir(tmp.path())
        .args(["summarize", "run", "--out", "run.db"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = tmp.path().join("run.db");
    let stored: Vec<String> = {
        let c = Connection::open(&db).unwrap();
        let mut q = c.prepare("SELECT path FROM ranks ORDER BY rank").unwrap();
        q.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert!(
        stored.iter().all(|p| Path::new(p).is_absolute()),
        "{stored:?}"
    );
    let machine: String = Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT value FROM meta WHERE key='summarised_on'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(Some(machine), memsight::export::cluster_db::this_machine());
    // An older summary's relative paths, in a copy.
    let old = tmp.path().join("old.db");
    std::fs::copy(&db, &old).unwrap();
    {
        let c = Connection::open(&old).unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        for p in &stored {
            let canon = std::fs::canonicalize(p).unwrap();
            let rel = canon
                .strip_prefix(&base)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            c.execute("UPDATE ranks SET path = ?1 WHERE path = ?2", [&rel, p])
                .unwrap();
        }
    }
    for summary in [&db, &old] {
        for lang in [Lang::En, Lang::Zh] {
            // The test runs in the crate's folder, not the summary's.
            let mut h = open(summary, lang);
            let rank = "1";
            h.get_by_role_and_label(egui::accesskit::Role::Link, rank)
                .click();
            h.step();
            let app = h.state_mut();
            assert!(
                app.document::<memsight::ui::summary::SummaryView>()
                    .is_none(),
                "{}: the rank replaced the summary",
                summary.display()
            );
            app.wait_for_load();
            // node{h}_{4000 + rank}_…: rank 1's folder (the rank's own folder or one inside it).
            let want = std::fs::canonicalize(&dirs[1]).unwrap();
            let opened = std::fs::canonicalize(app.path().unwrap()).unwrap();
            assert!(opened.starts_with(&want), "{opened:?} is not in {want:?}");
            assert_eq!(
                app.view().expect("the rank is on screen").data.info.rank,
                rank
            );
        }
    }
}

/// The summary at 1280×720 (issue 43 item 7): the warning lines wrap instead of being cut at the
/// right edge, and the table is not squeezed beside the rank's curve (it had half the width:
/// Growth was cut and Top operator and Folder scrolled sideways).
#[test]
fn at_720p_the_lines_wrap_and_the_table_has_the_whole_width() {
    let c = cluster();
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let mut app = MemsightApp::new(Some(c.now.clone()), Vec::new(), None);
        app.set_language(lang);
        app.document_mut::<memsight::ui::summary::SummaryView>()
            .unwrap()
            .wait();
        let h = common::harness_sized(app, [1280.0, 720.0]);
        // Ranks 9–11 leak: the line that names them.
        let prefix = (t.summary_leaks)(3, "");
        let leaks = h.get_by_label_contains(prefix.trim_end());
        let text = leaks.accesskit_node().label().unwrap_or_default();
        let rect = leaks.rect();
        let font =
            egui::FontId::proportional(egui::TextStyle::Body.resolve(&h.ctx.global_style()).size);
        let width = h
            .ctx
            .fonts_mut(|f| f.layout_no_wrap(text.clone(), font.clone(), egui::Color32::WHITE))
            .size()
            .x;
        assert!(rect.max.x <= 1280.0, "{lang:?}: {rect:?}");
        // The whole text is drawn: as wide as it is on one line, or on more lines.
        let line = h.ctx.fonts_mut(|f| f.row_height(&font));
        assert!(
            rect.width() + 1.0 >= width || rect.height() >= 1.8 * line,
            "{lang:?}: {text} is {width} wide but drawn in {rect:?}"
        );
        // With nothing hovered or pinned the curve is the highest rank's.
        let curve_title = (0..c.dirs.len())
            .find_map(|r| {
                h.query_by_label(&(t.summary_curve_title)(&r.to_string(), &host_of(r)))
                    .map(|n| n.rect())
            })
            .expect("the curve's title");
        // The table (its host filter first) starts below the curve, not beside it.
        let filter = h.get_by_label(t.summary_host_filter).rect();
        assert!(
            filter.min.y > curve_title.max.y + 60.0,
            "{lang:?}: the table at {filter:?} sits beside the curve titled at {curve_title:?}"
        );
        for &col in &memsight::ui::state::SummaryColumn::PLAIN {
            // The header under the filter (a curve may have the same name in the legend).
            let header = h
                .query_all_by_label((t.summary_header)(col))
                .map(|n| n.rect())
                .find(|r| r.min.y > filter.min.y)
                .unwrap_or_else(|| panic!("{lang:?}: no header {col:?}"));
            assert!(header.max.x <= 1280.0, "{lang:?}: {col:?} at {header:?}");
        }
    }
}

/// The host filter's "Whole name" check (issue 43 item 7): "node1" matches node1, node10 and
/// node11 as a part of a name, and node1 alone as a whole name.
#[test]
fn the_whole_name_host_filter_leaves_out_longer_names() {
    let tmp = tempfile::tempdir().unwrap();
    // 96 ranks, 8 a host: node0 … node11.
    let (code, _, err) = memsight(&[
        "generate",
        tmp.path().join("run").to_str().unwrap(),
        "--ranks",
        "96",
        "--allocs",
        "50",
        "--steps",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    let dirs: Vec<PathBuf> = std::fs::read_dir(tmp.path().join("run"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let db = tmp.path().join("all.db");
    summarize(&dirs, &db);
    // The ranks per host, by SQL over the file.
    let conn = Connection::open(&db).unwrap();
    let count =
        |sql: &str| -> usize { conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap() as usize };
    let part = count("SELECT COUNT(*) FROM ranks WHERE host LIKE '%node1%'");
    let whole = count("SELECT COUNT(*) FROM ranks WHERE host = 'node1'");
    assert_eq!((part, whole), (24, 8));
    for lang in [Lang::En, Lang::Zh] {
        let t = tr(lang);
        let mut h = open(&db, lang);
        common::type_into(&mut h, t.summary_host_filter, "node1");
        h.run();
        h.get_by_label(&(t.summary_shown)(part, 96));
        h.get_by_label(t.summary_host_exact).click();
        h.run();
        h.get_by_label(&(t.summary_shown)(whole, 96));
        h.get_by_label(t.copy_all).click();
        h.step();
        let tsv = common::copied(&h).unwrap();
        let hosts: Vec<&str> = tsv
            .lines()
            .skip(1)
            .map(|l| l.split('\t').nth(1).unwrap())
            .collect();
        assert_eq!(hosts, vec!["node1"; whole], "{lang:?}");
    }
}
