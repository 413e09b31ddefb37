//! Curves, peaks, the static graph, live-at-time and table queries, checked against brute-force
//! computations written here (raw CSV lines, linear scans, std's stable sort).

use crate::common;

use common::{RawCsv, first_subdir, fixtures, load_first, samples, us_to_ns};
use memsight::analysis::*;
use memsight::model::{MIB, NULL, RankData};

/// Raw points of `component` rows for a MiB column, time-sorted (stable), as (rel ns, bytes).
fn raw_points(
    csv: &RawCsv,
    origin: i64,
    component: &str,
    col: &str,
    stream: Option<&str>,
) -> Vec<(i64, i64)> {
    let (c, t, v) = (csv.col("Component"), csv.col("Timestamp(us)"), csv.col(col));
    let s = csv.try_col("Stream Ptr");
    let mut pts: Vec<(i64, i64)> = csv
        .rows
        .iter()
        .filter(|r| r[c] == component && !r[v].is_empty())
        .filter(|r| stream.is_none_or(|want| s.is_some_and(|si| r[si] == want)))
        .map(|r| {
            (
                (us_to_ns(&r[t]) - origin as i128) as i64,
                (r[v].parse::<f64>().unwrap() * MIB as f64).round() as i64,
            )
        })
        .collect();
    pts.sort_by_key(|p| p.0);
    pts
}

fn points(s: &Series) -> Vec<(i64, i64)> {
    s.times
        .iter()
        .copied()
        .zip(s.values.iter().copied())
        .collect()
}

#[test]
fn overall_stream_and_component_series_match_raw_rows() {
    let dir = first_subdir(&fixtures().join("torch_cluster"));
    let data = load_first(&dir);
    let rec = RawCsv::read(&dir.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let o = data.time_origin_ns;
    let overall = build_series(&data, GroupBy::Overall);
    let names: Vec<&str> = overall.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Operator Allocated",
            "Operator Activated",
            "Operator Reserved",
            "APP Reserved",
            "Workspace Allocated",
            "Workspace Reserved"
        ]
    );
    for (s, comp, col) in [
        (&overall[0], "PTA+GE", "Total Allocated(MB)"),
        (&overall[1], "PTA+GE", "Total Active(MB)"),
        (&overall[2], "PTA+GE", "Total Reserved(MB)"),
        (&overall[3], "APP", "Total Reserved(MB)"),
        (&overall[4], "WORKSPACE", "Total Allocated(MB)"),
    ] {
        assert_eq!(
            points(s),
            raw_points(&rec, o, comp, col, None),
            "{}",
            s.name
        );
    }
    // Stream: three series per stream pointer, in order of first appearance.
    let stream = build_series(&data, GroupBy::Stream);
    let sp = rec.col("Stream Ptr");
    let mut ptrs: Vec<String> = Vec::new();
    for r in rec
        .rows
        .iter()
        .filter(|r| r[0] == "PTA+GE" && !r[sp].is_empty())
    {
        if !ptrs.contains(&r[sp]) {
            ptrs.push(r[sp].clone());
        }
    }
    assert_eq!(stream.len(), 3 * ptrs.len());
    assert_eq!(stream[0].name, format!("Allocated of {}", ptrs[0]));
    assert_eq!(
        points(&stream[0]),
        raw_points(&rec, o, "PTA+GE", "Total Allocated(MB)", Some(&ptrs[0]))
    );
    // Component: PTA and GE triples; GE has no Active values, so no GE Activated.
    let comp: Vec<String> = build_series(&data, GroupBy::Component)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        comp,
        [
            "PTA Allocated",
            "PTA Activated",
            "PTA Reserved",
            "GE Allocated",
            "GE Reserved",
            "APP Reserved"
        ]
    );
}

#[test]
fn absent_series_are_absent_not_zero() {
    let data = load_first(&fixtures().join("torch_crlf")); // generated without WORKSPACE rows
    let names: Vec<String> = build_series(&data, GroupBy::Overall)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with("Workspace")),
        "{names:?}"
    );
    let ms = load_first(&fixtures().join("mindspore"));
    let names: Vec<String> = build_series(&ms, GroupBy::Component)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names[0], "MindSpore Allocated");
    assert!(
        build_series(&ms, GroupBy::Stream).is_empty(),
        "no Stream Ptr in MindSpore data"
    );
    let msprof = load_first(&fixtures().join("msprof"));
    let names: Vec<String> = build_series(&msprof, GroupBy::Overall)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        names,
        ["Operator Allocated", "Operator Reserved"],
        "GE-only data feeds Overall"
    );
}

#[test]
fn window_peaks_match_a_scan_of_the_step_function() {
    let Some(root) = samples() else { return };
    let data = load_first(
        &root.join("xiaobingling93-pixel_Ascend-msinsight/test/st/level2/rank_2_ascend_pt"),
    );
    let s = &build_series(&data, GroupBy::Overall)[0];
    let last = *s.times.last().unwrap();
    let mut x = 12345u64;
    for _ in 0..200 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let a = (x >> 20) as i64 % (last + 1);
        let b = a + (x >> 40) as i64 % (last / 4 + 1);
        // Brute force: the value held from before a counts (at a) unless a sample sits exactly
        // at a; then every sample in [a, b]. Earliest time wins ties.
        let mut best: Option<(i64, i64)> = None;
        let mut consider = |v: i64, t: i64| {
            if best.is_none_or(|bb| v > bb.0) {
                best = Some((v, t));
            }
        };
        if !s.times.contains(&a)
            && let Some(i) = s.times.iter().rposition(|&t| t < a)
        {
            consider(s.values[i], a);
        }
        for j in 0..s.len() {
            if s.times[j] >= a && s.times[j] <= b {
                consider(s.values[j], s.times[j]);
            }
        }
        let got = peak_in_window(s, a, b).map(|p| (p.value, p.time));
        assert_eq!(got, best, "[{a}, {b}]");
    }
}

#[test]
fn component_peak_table_compares_numbers() {
    let dir = first_subdir(&fixtures().join("torch_cluster"));
    let data = load_first(&dir);
    let raw = RawCsv::read(&dir.join("ASCEND_PROFILER_OUTPUT/npu_module_mem.csv"));
    let (c, t, v) = (
        raw.col("Component"),
        raw.col("Timestamp(us)"),
        raw.col("Total Reserved(MB)"),
    );
    let mut want: Vec<(String, i64, i64)> = Vec::new();
    let mut names: Vec<String> = raw.rows.iter().map(|r| r[c].clone()).collect();
    names.sort();
    names.dedup();
    for n in names {
        let mut rows: Vec<(i128, f64)> = raw
            .rows
            .iter()
            .filter(|r| r[c] == n)
            .map(|r| (us_to_ns(&r[t]), r[v].parse().unwrap()))
            .collect();
        rows.sort_by_key(|r| r.0);
        let max = rows.iter().map(|r| r.1).fold(f64::MIN, f64::max);
        let first = rows.iter().find(|r| r.1 == max).unwrap().0;
        if max >= 100.0 {
            want.push((
                n,
                (max * MIB as f64) as i64,
                (first - data.time_origin_ns as i128) as i64,
            ));
        }
    }
    want.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let got: Vec<(String, i64, i64)> = component_peaks(&data)
        .into_iter()
        .map(|p| (p.component, p.peak, p.time))
        .collect();
    assert_eq!(got, want);
    // HCCL goes 900 → 1200 → 95 MiB: the peak is 1200, not "95.0" as a string comparison says.
    assert!(got.iter().any(|g| g.0 == "HCCL" && g.1 == 1200 * MIB));
}

#[test]
fn static_graph_sweep_matches_the_raw_plan() {
    let Some(root) = samples() else { return };
    let dir =
        root.join("xiaobingling93-pixel_Ascend-msinsight/server/src/test/test_data/test_rank_1");
    let data = load_first(&dir);
    let raw = RawCsv::read(&dir.join("ASCEND_PROFILER_OUTPUT/static_op_mem.csv"));
    let graphs = static_graphs(&data);
    assert_eq!(
        graphs
            .iter()
            .map(|g| g.graph_id.as_str())
            .collect::<Vec<_>>(),
        ["0", "1"]
    );
    for g in &graphs {
        let rows: Vec<&Vec<String>> = raw.rows.iter().filter(|r| r[3] == g.graph_id).collect();
        let ops: Vec<&&Vec<String>> = rows.iter().filter(|r| r[1] != "TOTAL").collect();
        assert_eq!(g.ops.len(), ops.len());
        let total = rows
            .iter()
            .find(|r| r[1] == "TOTAL")
            .map(|r| (r[6].parse::<f64>().unwrap() * 1024.0) as i64);
        assert_eq!(g.total, total);
        let max_idx = ops
            .iter()
            .flat_map(|r| [r[4].parse::<i64>().unwrap(), r[5].parse::<i64>().unwrap()])
            .filter(|&n| n != 4294967295)
            .max()
            .unwrap();
        let mut map = std::collections::BTreeMap::new();
        for r in &ops {
            let size = (r[6].parse::<f64>().unwrap() * 1024.0) as i64;
            if size == 0 {
                continue;
            }
            let (s, e) = (r[4].parse::<i64>().unwrap(), r[5].parse::<i64>().unwrap());
            *map.entry(s).or_insert(0) += size;
            *map.entry(if e == 4294967295 { max_idx + 1 } else { e })
                .or_insert(0) -= size;
        }
        let mut run = 0;
        let want: Vec<(i64, i64)> = map
            .into_iter()
            .map(|(k, d)| {
                run += d;
                (k, run)
            })
            .collect();
        let got: Vec<(i64, i64)> = g
            .node_index
            .iter()
            .copied()
            .zip(g.size.iter().copied())
            .collect();
        assert_eq!(got, want, "graph {}", g.graph_id);
        // Box-zoom filter on node index.
        let sel = static_ops_in_range(&data, g, 10, 20);
        let want_sel = ops
            .iter()
            .filter(|r| {
                let s: i64 = r[4].parse().unwrap();
                let e: i64 = r[5].parse().unwrap();
                let e = if e == 4294967295 { max_idx + 1 } else { e };
                (10..=20).contains(&s) || (10..=20).contains(&e)
            })
            .count();
        assert_eq!(sel.len(), want_sel);
    }
}

fn brute_alive(data: &RankData, t_rel: i64) -> Vec<u32> {
    let o = &data.operators;
    let t = data.time_origin_ns + t_rel;
    (0..o.len() as u32)
        .filter(|&i| {
            let (a, r) = (o.alloc_time[i as usize], o.release_time[i as usize]);
            // Blocks only: a row of size 0 or less (a free of memory from before profiling)
            // is never alive.
            o.size[i as usize] > 0 && (a == NULL || a <= t) && (r == NULL || r > t)
        })
        .collect()
}

#[test]
fn live_at_matches_a_scan_including_exact_instants() {
    let mut ranks = vec![
        load_first(&first_subdir(&fixtures().join("torch_cluster"))),
        load_first(&fixtures().join("malformed/bad_rows_ascend_pt")),
    ];
    if let Some(root) = samples() {
        ranks.push(load_first(&root.join(
            "xiaobingling93-pixel_Ascend-msinsight/test/st/level2/rank_2_ascend_pt",
        )));
    }
    for data in &ranks {
        let index = LiveIndex::new(data);
        let o = &data.operators;
        let mut times: Vec<i64> = vec![-1, 0, i64::MAX / 4];
        for i in (0..o.len()).step_by((o.len() / 40).max(1)) {
            for t in [o.alloc_time[i], o.release_time[i]] {
                if t != NULL {
                    let rel = t - data.time_origin_ns;
                    times.extend([rel - 1, rel, rel + 1]);
                }
            }
        }
        for t in times {
            let live = live_at(data, &index, t);
            let mut got = live.rows.clone();
            got.sort_unstable();
            assert_eq!(got, brute_alive(data, t), "t = {t}");
            assert!(
                live.rows
                    .windows(2)
                    .all(|w| o.size[w[0] as usize] >= o.size[w[1] as usize]),
                "largest first"
            );
            let total: i64 = live.rows.iter().map(|&r| o.size[r as usize]).sum();
            assert_eq!(live.total, total);
            assert_eq!(live.by_name.iter().map(|b| b.1).sum::<i64>(), total);
        }
    }
}

/// The engine's answer, recomputed with a scan and std's stable sort.
fn brute_query(data: &RankData, q: &TableQuery) -> (usize, Vec<u32>) {
    let o = &data.operators;
    let origin = data.time_origin_ns;
    let mut rows: Vec<u32> = (0..o.len() as u32)
        .filter(|&i| {
            let i = i as usize;
            let (a, r) = (o.alloc_time[i], o.release_time[i]);
            let win_ok = match q.window {
                None => true,
                Some((t0, t1)) => {
                    let (t0, t1) = (origin + t0, origin + t1);
                    match q.mode {
                        WindowMode::Overlap => (r == NULL || r >= t0) && (a == NULL || a <= t1),
                        WindowMode::Within => {
                            (a != NULL && t0 <= a && a <= t1) || (r != NULL && t0 <= r && r <= t1)
                        }
                    }
                }
            };
            let name_ok = data
                .strings
                .get(o.name[i])
                .to_lowercase()
                .contains(&q.name.to_lowercase());
            let range_ok = q
                .ranges
                .iter()
                .all(|f| match f.column.display_value(data, i) {
                    None => false,
                    Some(v) => f.min.is_none_or(|m| v >= m) && f.max.is_none_or(|m| v <= m),
                });
            win_ok && name_ok && range_ok
        })
        .collect();
    if let Some((col, dir)) = q.sort {
        let late = matches!(
            col,
            Column::ReleaseTime
                | Column::ActiveReleaseTime
                | Column::Duration
                | Column::ActiveDuration
                | Column::ReleaseTotalAllocated
                | Column::ReleaseTotalReserved
                | Column::ReleaseTotalActive
        );
        let key = |i: u32| -> (i64, String) {
            match col {
                Column::Name => (0, data.strings.get(o.name[i as usize]).to_string()),
                Column::Stream => (0, data.strings.get(o.stream[i as usize]).to_string()),
                _ => {
                    let v = col.raw(data, i as usize);
                    (
                        if v == NULL {
                            if late { i64::MAX } else { i64::MIN }
                        } else {
                            v
                        },
                        String::new(),
                    )
                }
            }
        };
        rows.sort_by(|&a, &b| {
            let ord = key(a).cmp(&key(b));
            if dir == SortDir::Desc {
                ord.reverse()
            } else {
                ord
            }
        }); // stable: ties keep file order in both directions
    }
    let total = rows.len();
    (
        total,
        rows.into_iter()
            .skip(q.page * q.page_size)
            .take(q.page_size)
            .collect(),
    )
}

#[test]
fn table_queries_match_a_scan_and_a_stable_sort() {
    let mut ranks = vec![
        load_first(&first_subdir(&fixtures().join("torch_cluster"))),
        load_first(&fixtures().join("mindspore")),
    ];
    if let Some(root) = samples() {
        ranks.push(load_first(&root.join(
            "xiaobingling93-pixel_Ascend-msinsight/test/st/level2/rank_2_ascend_pt",
        )));
        ranks.push(load_first(&root.join(
            "xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt",
        )));
    }
    let mut x = 99u64;
    let mut rnd = move |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n.max(1)
    };
    for data in &ranks {
        let cache = SortCache::new();
        let span = data
            .operators
            .alloc_time
            .iter()
            .filter(|&&t| t != NULL)
            .max()
            .unwrap()
            - data.time_origin_ns;
        for k in 0..150 {
            let a = rnd(span as u64) as i64;
            let q = TableQuery {
                window: (k % 3 != 0).then(|| (a, a + rnd(span as u64 / 3) as i64)),
                mode: if k % 2 == 0 {
                    WindowMode::Overlap
                } else {
                    WindowMode::Within
                },
                name: ["", "ATEN::", "mm", "cann", "zzz"][rnd(5) as usize].to_string(),
                ranges: if k % 4 == 0 {
                    vec![RangeFilter {
                        column: Column::Size,
                        min: Some(rnd(20_000) as f64),
                        max: None,
                    }]
                } else if k % 4 == 1 {
                    vec![RangeFilter {
                        column: Column::Duration,
                        min: None,
                        max: Some(rnd(500) as f64 / 10.0),
                    }]
                } else {
                    vec![]
                },
                sort: (k % 5 != 0).then(|| {
                    (
                        Column::ALL[rnd(14) as usize],
                        if rnd(2) == 0 {
                            SortDir::Asc
                        } else {
                            SortDir::Desc
                        },
                    )
                }),
                page_size: [10, 20, 100][rnd(3) as usize],
                page: rnd(4) as usize,
                require_stream: false,
                tags: Vec::new(),
                only_rows: None,
            };
            let got = query(data, &cache, &q);
            let (total, rows) = brute_query(data, &q);
            assert_eq!((got.total, got.rows), (total, rows), "{q:?}");
        }
    }
}

#[test]
fn table_edge_cases() {
    let data = load_first(&first_subdir(&fixtures().join("torch_cluster")));
    let cache = SortCache::new();
    // A window before everything: only blocks allocated before the capture (null allocation
    // time) that are released after it overlap.
    let early = query(
        &data,
        &cache,
        &TableQuery {
            window: Some((-1000, -500)),
            ..Default::default()
        },
    );
    assert_eq!(
        early.total,
        brute_query(
            &data,
            &TableQuery {
                window: Some((-1000, -500)),
                ..Default::default()
            }
        )
        .0
    );
    // Page past the end: empty page, same total.
    let all = query(
        &data,
        &cache,
        &TableQuery {
            page_size: usize::MAX,
            ..Default::default()
        },
    );
    let past = query(
        &data,
        &cache,
        &TableQuery {
            page: 10_000,
            ..Default::default()
        },
    );
    assert_eq!((past.total, past.rows.len()), (all.total, 0));
    // Release time ascending puts unreleased blocks last; allocation time puts the release-only
    // block (no allocation time) first.
    let by_release = query(
        &data,
        &cache,
        &TableQuery {
            sort: Some((Column::ReleaseTime, SortDir::Asc)),
            page_size: usize::MAX,
            ..Default::default()
        },
    );
    let last = *by_release.rows.last().unwrap() as usize;
    assert_eq!(data.operators.release_time[last], NULL);
    let by_alloc = query(
        &data,
        &cache,
        &TableQuery {
            sort: Some((Column::AllocationTime, SortDir::Asc)),
            page_size: 1,
            ..Default::default()
        },
    );
    assert_eq!(data.operators.alloc_time[by_alloc.rows[0] as usize], NULL);
    // Negative sizes pass a negative range filter.
    let neg = query(
        &data,
        &cache,
        &TableQuery {
            ranges: vec![RangeFilter {
                column: Column::Size,
                min: None,
                max: Some(-1.0),
            }],
            ..Default::default()
        },
    );
    assert_eq!(neg.total, 1);
    // Column names parse from headers and short forms.
    assert_eq!(Column::parse("Size(KB)"), Some(Column::Size));
    assert_eq!(Column::parse("release time"), Some(Column::ReleaseTime));
    assert_eq!(Column::parse("nope"), None);
}

#[test]
fn a_freed_views_identity_is_never_reused() {
    // Caches (chart lines, table pages, background sorts) are keyed by `RankView::id`; an
    // address could come back for the next view once the first is freed, an id cannot.
    let dir = first_subdir(&fixtures().join("torch_cluster"));
    let mut seen = std::collections::HashSet::new();
    for _ in 0..50 {
        let view = RankView::new(load_first(&dir));
        assert!(seen.insert(view.id()), "an id came back");
        drop(view);
    }
}
