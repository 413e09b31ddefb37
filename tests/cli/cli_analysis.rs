//! `memsight curve`, `table` and `live` through the real binary.

use crate::common;

use common::{RawCsv, assert_said_in_chinese, first_subdir, fixtures, memsight, us_to_ns};

fn rank_dir() -> std::path::PathBuf {
    first_subdir(&fixtures().join("torch_cluster"))
}

#[test]
fn curve_prints_every_point_in_the_window() {
    let dir = rank_dir();
    let (code, out, _) = memsight(&[
        "curve",
        dir.to_str().unwrap(),
        "--from-ms",
        "0.5",
        "--to-ms",
        "1.0",
    ]);
    assert_eq!(code, 0);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("series,time_ms,mib"));
    let rec = RawCsv::read(&dir.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let origin = common::raw_origin(&dir.join("ASCEND_PROFILER_OUTPUT"));
    let want = rec
        .rows
        .iter()
        .filter(|r| r[0] == "PTA+GE")
        .filter(|r| {
            let t = us_to_ns(&r[1]) - origin;
            (500_000..=1_000_000).contains(&t)
        })
        .count();
    let got = lines
        .filter(|l| l.starts_with("Operator Allocated,"))
        .count();
    assert_eq!(got, want);
}

#[test]
fn curve_json_with_width_is_reduced_and_monotone() {
    let dir = fixtures().join("demo");
    let (code, out, _) = memsight(&[
        "curve",
        dir.to_str().unwrap(),
        "--rank",
        "1",
        "--width",
        "50",
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let series = v["series"].as_array().unwrap();
    assert_eq!(series[0]["name"], "Operator Allocated");
    assert_eq!(series[0]["sampled"], false);
    assert_eq!(series[0]["step"], true);
    let pts = series[0]["points"].as_array().unwrap();
    assert!(pts.len() <= 4 * 50 + 2, "{}", pts.len());
    let times: Vec<f64> = pts.iter().map(|p| p[0].as_f64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    // Forcing sampled mode.
    let (_, out, _) = memsight(&[
        "curve",
        dir.to_str().unwrap(),
        "--width",
        "50",
        "--threshold",
        "100",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["series"][0]["sampled"], true);
}

#[test]
fn table_tsv_is_plain_numbers_with_a_header_and_total_on_stderr() {
    let dir = rank_dir();
    let (code, out, err) = memsight(&[
        "table",
        dir.to_str().unwrap(),
        "--sort",
        "Size(KB):desc",
        "--page-size",
        "3",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].starts_with("Name\tSize(KB)\tAllocation Time(ms)\tRelease Time(ms)"));
    assert_eq!(lines[0].split('\t').count(), 14);
    let ops = RawCsv::read(&dir.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv"));
    assert_eq!(err.trim(), format!("{} rows", ops.rows.len()));
    // The largest block, with its size exactly as written in the file.
    let size = ops.col("Size(KB)");
    let biggest = ops
        .rows
        .iter()
        .max_by(|a, b| {
            a[size]
                .parse::<f64>()
                .unwrap()
                .total_cmp(&b[size].parse::<f64>().unwrap())
        })
        .unwrap();
    let cells: Vec<&str> = lines[1].split('\t').collect();
    assert_eq!(cells[0], biggest[0]);
    assert_eq!(cells[1], biggest[size]);
    // Every numeric cell of every row is a plain number: no thousands separators, `.` decimals.
    for line in &lines[1..] {
        for (k, cell) in line.split('\t').enumerate().skip(1).take(12) {
            assert!(!cell.contains(','), "column {k}: {cell:?}");
            assert!(
                cell.is_empty() || cell.parse::<f64>().is_ok(),
                "column {k}: {cell:?}"
            );
        }
    }
    // Allocation time in ms from the origin.
    let origin = common::raw_origin(&dir.join("ASCEND_PROFILER_OUTPUT"));
    let at = (us_to_ns(&biggest[ops.col("Allocation Time(us)")]) - origin) as f64 / 1e6;
    assert!((cells[2].parse::<f64>().unwrap() - at).abs() < 1e-9);
}

#[test]
fn table_filters_and_all() {
    let dir = rank_dir();
    let (code, out, err) = memsight(&[
        "table",
        dir.to_str().unwrap(),
        "--name",
        "ATEN::MM",
        "--min-size-kib",
        "1000",
        "--all",
    ]);
    assert_eq!(code, 0);
    let ops = RawCsv::read(&dir.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv"));
    let want = ops
        .rows
        .iter()
        .filter(|r| {
            r[0].to_lowercase().contains("aten::mm") && r[1].parse::<f64>().unwrap() >= 1000.0
        })
        .count();
    assert_eq!(out.lines().count(), want + 1);
    assert_eq!(err.trim(), format!("{want} rows"));
}

#[test]
fn live_json_lists_the_largest_blocks() {
    let dir = rank_dir();
    let (code, out, _) = memsight(&[
        "live",
        dir.to_str().unwrap(),
        "--at-ms",
        "1.0",
        "--top",
        "5",
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let largest = v["largest"].as_array().unwrap();
    assert!(largest.len() <= 5 && !largest.is_empty());
    let sizes: Vec<f64> = largest
        .iter()
        .map(|b| b["size_kib"].as_f64().unwrap())
        .collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]));
    assert!(v["by_operator"].as_array().unwrap().len() <= 5);
    assert!(v["blocks"].as_u64().unwrap() >= largest.len() as u64);
}

#[test]
fn errors_are_one_line_and_exit_2() {
    let dir = rank_dir();
    let d = dir.to_str().unwrap();
    for (args, needle) in [
        (vec!["table", d, "--rank", "9"], "unknown rank"),
        (vec!["table", d, "--sort", "colour"], "unknown column"),
        (
            vec!["table", d, "--from-ms", "5", "--to-ms", "1"],
            "bad range",
        ),
        (
            vec!["curve", d, "--from-ms", "5", "--to-ms", "1"],
            "bad range",
        ),
        (vec!["live", d, "--at-ms", "NaN"], "finite"),
    ] {
        let (code, _, err) = memsight(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

/// From the raw files of `dir`: the time origin, `at_ms` as ns from it, and the bytes of the
/// operator_memory rows alive then (allocated at or before, released after).
fn raw_live_bytes(dir: &std::path::Path, at_ms: f64) -> (i128, i128, i128) {
    let origin = common::raw_origin(&dir.join("ASCEND_PROFILER_OUTPUT"));
    let t = (at_ms * 1e6) as i128;
    let (ops, _) = common::raw_ops(dir);
    let blocks = ops
        .iter()
        .filter(|r| r.2.is_none_or(|a| a - origin <= t) && r.3.is_none_or(|z| z - origin > t))
        .map(|r| (r.1.parse::<f64>().unwrap() * 1024.0).round() as i128)
        .sum();
    (origin, t, blocks)
}

#[test]
fn live_json_says_where_the_memory_is() {
    let dir = rank_dir();
    let at_ms = 7.5;
    let (code, out, _) = memsight(&[
        "live",
        dir.to_str().unwrap(),
        "--at-ms",
        &at_ms.to_string(),
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // Independently, from the raw files.
    let (origin, t, blocks) = raw_live_bytes(&dir, at_ms);
    let allocated = common::raw_operator_curve(&dir, "Total Allocated(MB)", origin, t).unwrap();
    let reserved = common::raw_operator_curve(&dir, "Total Reserved(MB)", origin, t).unwrap();
    let app = common::raw_component_curve(&dir, &["APP"], "Total Reserved(MB)", origin, t).unwrap();
    let mib = |b: i128| b as f64 / 1048576.0;
    let close = |key: &str, want: f64| {
        let got = v[key].as_f64().unwrap_or(f64::NAN);
        assert!((got - want).abs() < 1e-6, "{key}: {got} vs {want}");
    };
    close("curve_allocated_mib", mib(allocated));
    close("blocks_mib", mib(blocks));
    close("unattributed_mib", mib(allocated - blocks));
    close("reserved_mib", mib(reserved));
    close("app_reserved_mib", mib(app));
    assert!(v["device_mib"].is_null());
}

/// Issue 43 item 11: the text says what the JSON says — Operator Allocated at that time and the
/// part no live block explains (allocated before profiling), from the raw files.
#[test]
fn live_text_says_what_the_blocks_do_not_explain() {
    let dir = rank_dir();
    let at_ms = 7.5;
    let (code, out, _) = memsight(&["live", dir.to_str().unwrap(), "--at-ms", "7.5"]);
    assert_eq!(code, 0);
    let (origin, t, blocks) = raw_live_bytes(&dir, at_ms);
    let allocated = common::raw_operator_curve(&dir, "Total Allocated(MB)", origin, t).unwrap();
    let reserved = common::raw_operator_curve(&dir, "Total Reserved(MB)", origin, t).unwrap();
    let mib = |b: i128| format!("{:.2}", b as f64 / 1048576.0);
    let want = format!(
        "Operator Allocated at 7.5 ms: {} MB; not in any live block: {} MB",
        mib(allocated),
        mib(allocated - blocks)
    );
    assert!(out.contains(&want), "{want}\n{out}");
    let want = format!("Operator Reserved at 7.5 ms: {} MB", mib(reserved));
    assert!(out.contains(&want), "{want}\n{out}");
    assert!(
        allocated > blocks,
        "the fixture holds memory from before profiling"
    );
}

/// Issue 43 item 16: a release-only row (a free of memory allocated before profiling, size
/// −64 KB in Insight's msprof_0.db) is not a live block: `live` lists only allocations, and
/// its total is the sum of the positive blocks alive then, from the table's own rows.
#[test]
fn a_release_only_row_is_not_a_live_block() {
    let Some(s) = common::samples() else {
        return;
    };
    let db = s.join(
        "xiaobingling93-pixel_Ascend-msinsight/server/src/test/test_data/full_db/msprof_0.db",
    );
    let p = db.to_str().unwrap();
    let (code, tsv, _) = memsight(&["table", p, "--all"]);
    assert_eq!(code, 0);
    let rows: Vec<Vec<&str>> = tsv
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    assert!(
        rows.iter().any(|r| r[1].starts_with('-')),
        "the sample has a release-only row"
    );
    let at = 100.0;
    let alive = |r: &&Vec<&str>| {
        let (a, z) = (r[2].parse::<f64>().ok(), r[3].parse::<f64>().ok());
        a.is_some_and(|a| a <= at) && z.is_none_or(|z| z > at)
    };
    let kib: f64 = rows
        .iter()
        .filter(alive)
        .filter(|r| r[1].parse::<f64>().unwrap() > 0.0)
        .map(|r| r[1].parse::<f64>().unwrap())
        .sum();
    let n = rows
        .iter()
        .filter(alive)
        .filter(|r| !r[1].starts_with('-'))
        .count();
    let (code, out, _) = memsight(&["live", p, "--at-ms", "100", "--json", "--top", "1000"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["blocks"].as_u64().unwrap() as usize, n, "{out}");
    assert!(
        (v["total_mib"].as_f64().unwrap() - kib / 1024.0).abs() < 1e-6,
        "{out}"
    );
    for b in v["largest"].as_array().unwrap() {
        assert!(b["size_kib"].as_f64().unwrap() > 0.0, "{b}");
    }
}

/// The expandable-segments advice names the allocator variable of the rank's backend: on a
/// real H100 trace's CUDA rank `PYTORCH_CUDA_ALLOC_CONF`, never torch_npu's.
#[test]
fn expandable_segments_advice_names_the_backends_variable() {
    let Some(samples) = common::samples() else {
        return;
    };
    let trace = samples.join("cuda_h100/whatif/gpt_b8.pt.trace.json.gz");
    let (code, out, err) = memsight(&["roles", trace.to_str().unwrap(), "--rank", "gpt_b8 cuda:0"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
        "{out}"
    );
    assert!(!out.contains("PYTORCH_NPU_ALLOC_CONF"), "{out}");
}

/// A rank without call stacks or modules is told how to record them in the words of what
/// wrote it: an msMemScope dump by msMemScope's own options (the profiler's `with_stack=True`
/// means nothing to it: the advice said so for every rank), a torch_npu profile by the
/// profiler's. Through `stacks`, `modules` and `explain`, which prints their reasons.
#[test]
fn missing_stacks_and_modules_are_advised_in_the_words_of_what_wrote_the_rank() {
    let Some(samples) = common::samples() else {
        return;
    };
    let msmemscope = samples.join("tanxiangyuu_msmemscope");
    // The smoke dumps record kernels, no op and no stack; the example's ops have no stack
    // (both read off the files' Event and Call Stack(Python) columns by hand).
    let smoke = msmemscope.join("test/smoke/testfile/csvfile");
    let smoke = smoke.to_str().unwrap();
    let example = msmemscope.join("example/compare/baseline.csv");
    let example = example.to_str().unwrap();
    let torch_npu = rank_dir();
    let torch_npu = torch_npu.to_str().unwrap();
    let dump_stacks = "msMemScope's --call-stack=python";
    let dump_modules = "an msMemScope dump names no module";
    for (args, want) in [
        (
            vec!["stacks", smoke, "--rank", "0 pid 2523740"],
            dump_stacks,
        ),
        (vec!["stacks", example], dump_stacks),
        (
            vec!["modules", smoke, "--rank", "0 pid 2523740"],
            dump_modules,
        ),
        (vec!["stacks", torch_npu], "with_stack=True"),
        (vec!["modules", torch_npu], "with_modules=True"),
    ] {
        let (code, out, err) = memsight(&args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(err.contains(want), "{args:?}: {err}");
        if args[0] == "stacks" {
            let dump = args[1] != torch_npu;
            assert_eq!(err.contains("with_stack=True"), !dump, "{args:?}: {err}");
        }
    }
    let (code, out, err) = memsight(&["explain", smoke, "--rank", "0 pid 2523740"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(dump_stacks) && out.contains(dump_modules),
        "{out}"
    );
}

/// Issue 88: `roles --lang zh` says the same in Chinese: the tables' headings and every piece
/// of advice (the app's words, now written once with the CLI's), with the same figures, no
/// English but names (the rank, roles, the lines and ops holding memory, the allocator's
/// variable) and the terms the Chinese UI keeps. A real GPU trace whose advice covers
/// recompute (replayed), memory held before profiling, temporaries, the pool's cache and
/// sharding (replayed over an example 8 ranks).
#[test]
fn roles_speaks_chinese_when_asked() {
    let trace = fixtures().join("pytorch/whatif_cuda/gpu.pt.trace.json.gz");
    let t = trace.to_str().unwrap();
    let run = |lang: &str| {
        let (code, out, err) = memsight(&["roles", t, "--lang", lang]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let (en, zh) = (run("en"), run("zh"));
    let (_, json, _) = memsight(&["roles", t, "--json"]);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut names: Vec<String> = vec![
        json["rank"].as_str().unwrap().to_string(),
        json["source"].as_str().unwrap().to_string(),
        "PYTORCH_CUDA_ALLOC_CONF".into(),
    ];
    names.extend(
        json["totals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["role"].as_str().unwrap().to_string()),
    );
    // The holders each advice names, from its English text: `Held most by: A (1.0 MB); B …`.
    let advice = json["advice"].as_array().unwrap();
    assert!(advice.len() >= 5, "{advice:?}");
    for a in advice {
        let text = a["text"].as_str().unwrap();
        if let Some((_, held)) = text.split_once("Held most by: ") {
            let held = held.split(". ").next().unwrap();
            for h in held.split("; ") {
                names.push(h.rsplit_once(" (").unwrap().0.to_string());
            }
        }
        if let Some(c) = a["replayed"]["checkpoint"].as_str() {
            names.push(c.to_string());
        }
    }
    assert_said_in_chinese(&en, &zh, &names, &[]);
    for want in ["按角色的内存", "峰值时", "如何降低峰值：", "按本次运行回放"]
    {
        assert!(zh.contains(want), "{want} in\n{zh}");
    }
    // The English is the JSON's advice text, word for word.
    for a in advice {
        assert!(en.contains(a["text"].as_str().unwrap()), "{a}");
    }
}

/// Issue 88: every report about a rank speaks both languages. The reports are the
/// subcommands whose arguments take `--lang` (read from the command line's definition, so a
/// new report is checked without a list kept here); each runs on a real Ascend profile (the
/// demo: steps with a leak) and a real GPU trace (modules, roles, advice), in English and in
/// Chinese: the same figures, and no English in the Chinese but names (every string the
/// report's JSON carries except its sentences), units and the terms the Chinese UI keeps.
#[test]
fn every_rank_report_speaks_both_languages() {
    use clap::CommandFactory;
    let cli = memsight::cli::command_line::Args::command();
    let reports: Vec<String> = cli
        .get_subcommands()
        .filter(|c| c.get_arguments().any(|a| a.get_id() == "lang"))
        .map(|c| c.get_name().to_string())
        .collect();
    for want in [
        "steps", "roles", "modules", "live", "stacks", "whatif", "explain",
    ] {
        assert!(
            reports.iter().any(|r| r == want),
            "{want} takes --lang: {reports:?}"
        );
    }
    let demo = first_subdir(&fixtures().join("demo"));
    let gpu = fixtures().join("pytorch/whatif_cuda/gpu.pt.trace.json.gz");
    // Strings of a JSON answer, less its sentences (the English the text translates).
    fn names(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            // A lever's words name module classes too (`--checkpoint Block`).
            serde_json::Value::String(s) => {
                out.push(s.clone());
                if s.starts_with("--") {
                    out.extend(s.split(' ').map(String::from));
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| names(x, out)),
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    // A key can be a name too (`by_role`'s roles).
                    out.push(k.clone());
                    // explain's advice: its sentences, said in Chinese.
                    let sentences = k == "advice"
                        && x.as_array()
                            .is_some_and(|a| a.iter().all(|s| s.is_string()));
                    if !["text", "assumptions", "why_unknown", "rule"].contains(&k.as_str())
                        && !sentences
                    {
                        names(x, out);
                    }
                }
                // Advice names the lines and ops holding memory only in its sentence:
                // `Held most by: A (1.0 MB); B (2.0 MB)`.
                let text = m.get("text").and_then(|t| t.as_str()).unwrap_or_default();
                if let Some((_, held)) = text.split_once("Held most by: ") {
                    for h in held.split(". ").next().unwrap_or_default().split("; ") {
                        out.extend(h.rsplit_once(" (").map(|(n, _)| n.to_string()));
                    }
                }
            }
            _ => {}
        }
    }
    let mut checked = 0;
    for path in [demo.as_path(), gpu.as_path()] {
        let p = path.to_str().unwrap();
        let (_, inspect, _) = memsight(&["explain", p, "--json"]);
        let explained: serde_json::Value = serde_json::from_str(&inspect).unwrap();
        let rank = format!("--rank={}", explained["rank"].as_str().unwrap());
        let peak = explained["peak"]["at_ms"].to_string();
        for report in &reports {
            let extra: &[&str] = match report.as_str() {
                "live" => &["--at-ms", &peak],
                "whatif" => &["--micro-batch", "2"],
                _ => &[],
            };
            let run = |more: &[&str]| {
                let mut args = vec![report.as_str(), p, rank.as_str()];
                args.extend(extra);
                args.extend(more);
                memsight(&args)
            };
            let (code, en, err) = run(&["--lang", "en"]);
            if code != 0 {
                // A report this profile cannot answer (the demo names no module): its refusal
                // in Chinese is checked by the report's own tests.
                assert!(!err.is_empty(), "{report} {p}");
                continue;
            }
            let (_, zh, _) = run(&["--lang", "zh"]);
            let (_, json, _) = run(&["--json"]);
            // The allocator's variables, the exports' files, tables and columns are names too.
            let mut carried: Vec<String> = [
                "PYTORCH_NPU_ALLOC_CONF",
                "PYTORCH_CUDA_ALLOC_CONF",
                "STEP_TIME",
                "ProfilerStep#N",
                "trace_view.json",
                "kernel_details.csv",
                "Step Id",
                "operator_memory",
            ]
            .map(String::from)
            .to_vec();
            names(&serde_json::from_str(&json).unwrap(), &mut carried);
            assert_said_in_chinese(
                &en,
                &zh,
                &carried,
                // Insight's column names, which the app keeps in Chinese too.
                &["Name", "Size", "Allocation", "Release", "Time"],
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} reports checked");
}
