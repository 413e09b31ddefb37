//! Memory by role in the app (issue 28), in English and Chinese at 1280×720, on a real PyTorch
//! trace (a 2-layer transformer with AdamW): the tab, the split at the Operator Allocated peak
//! (its total is the raw trace's largest `Total Allocated`; each role's bytes are the raw sizes
//! of its live blocks), the advice with its numbers, the Role column, its filter and Copy.

use crate::common;

use std::path::PathBuf;

use egui_kittest::kittest::Queryable;
use memsight::model::Role;
use memsight::ui::MemsightApp;
use memsight::ui::format::bytes;
use memsight::ui::i18n::Lang;

fn trace() -> PathBuf {
    common::fixtures().join("pytorch/roles/transformer_adamw.pt.trace.json.gz")
}

/// The raw trace's largest `Total Allocated` and its first time (ns, absolute).
fn raw_peak() -> (i64, i128) {
    let mut best: Option<(i64, i128)> = None;
    for e in common::trace_events(&trace()) {
        if e["name"] != "[memory]" {
            continue;
        }
        let v = e["args"]["Total Allocated"].as_i64().unwrap();
        let ts = common::us_to_ns(&e["ts"].to_string());
        if best.is_none_or(|(b, t)| v > b || (v == b && ts < t)) {
            best = Some((v, ts));
        }
    }
    best.unwrap()
}

/// Steps the app until the role report's job is done (a spinner meanwhile), then lets it
/// settle.
fn step_until_roles(h: &mut egui_kittest::Harness<'static, MemsightApp>) {
    common::step_until(h, "the role report", |h| {
        h.state().view().is_some_and(|v| v.roles_ready())
    });
    h.run();
    h.run();
}

fn open_roles(lang: Lang) -> egui_kittest::Harness<'static, MemsightApp> {
    let mut h = common::app_at_720p(&trace(), lang);
    let tab = h.state().tr().roles_tab;
    h.get_by_label(tab).click();
    step_until_roles(&mut h);
    h
}

/// Is `text` on screen (at least once)?
fn shown(h: &egui_kittest::Harness<'static, MemsightApp>, text: &str) -> bool {
    h.query_all_by_label(text).count() >= 1
}

/// The bytes of the blocks of `role` alive at absolute `t` (allocated at or before, released
/// after), summed from the rows.
fn live_bytes(data: &memsight::model::RankData, role: Role, t: i128) -> i64 {
    let roles = data.roles.as_ref().unwrap();
    let ops = &data.operators;
    (0..ops.len())
        .filter(|&r| roles.role[r] == role && ops.size[r] > 0)
        .filter(|&r| i128::from(ops.alloc_time[r]) <= t)
        .filter(|&r| {
            ops.release_time[r] == memsight::model::NULL || i128::from(ops.release_time[r]) > t
        })
        .map(|r| ops.size[r])
        .sum()
}

#[test]
fn the_roles_pane_splits_the_peak_and_says_what_would_lower_it() {
    let (peak, peak_ns) = raw_peak();
    for lang in [Lang::En, Lang::Zh] {
        let h = open_roles(lang);
        let t = h.state().tr();
        let view = h.state().view().unwrap();
        let data = &view.data;
        // The total at the peak: the raw curve's peak.
        let title_ms = (peak_ns - i128::from(data.time_origin_ns)) as f64 / 1e6;
        let title = (t.roles_at_peak)(&format!("{title_ms:.3}"));
        assert!(h.query_by_label(&title).is_some(), "{lang:?}: {title}");
        assert!(shown(&h, &bytes(peak)), "{lang:?}: total {}", bytes(peak));
        // Each role's live bytes at the peak, summed from the raw block sizes and times.
        let mut live = [0i64; 8];
        for role in Role::ALL {
            live[role.index()] = live_bytes(data, role, peak_ns);
        }
        let blocks: i64 = live.iter().sum();
        live[Role::BeforeProfiling.index()] = peak - blocks;
        let mut roles_shown = 0;
        for role in Role::ALL {
            let b = live[role.index()];
            if b == 0 {
                continue;
            }
            let name = role.name(t.lang);
            // In the split beside the plot.
            assert!(shown(&h, name), "{lang:?}: {name}");
            assert!(shown(&h, &bytes(b)), "{lang:?}: {name} {}", bytes(b));
            roles_shown += 1;
        }
        assert!(roles_shown >= 3, "{lang:?}: {live:?}");
        // The advice: activations held at the peak, with their size.
        assert!(h.query_by_label(t.roles_advice_title).is_some(), "{lang:?}");
        let act = live[Role::Activation.index()];
        assert!(act >= 1024 * 1024, "{act}");
        let report = view.roles();
        let advice = report.advice_for(1);
        let line = memsight::ui::panes::roles::advice_text(t, &advice[0]);
        assert!(line.contains(&bytes(advice[0].bytes)), "{line}");
        assert!(h.query_by_label(&line).is_some(), "{lang:?}: {line}");
        let recompute = advice
            .iter()
            .find(|a| a.kind == memsight::analysis::AdviceKind::Recompute)
            .expect("recompute advice");
        assert_eq!(recompute.bytes, act, "{lang:?}");
    }
}

#[test]
fn the_role_column_filters_and_copies() {
    for lang in [Lang::En, Lang::Zh] {
        let mut h = common::app_at_720p(&trace(), lang);
        let view = h.state().view().unwrap();
        let roles = view.data.roles.clone().unwrap();
        let gradients = roles.role.iter().filter(|r| **r == Role::Gradient).count();
        assert!(gradients > 0);
        // The column and its filter in the UI's language (issue 43 item 6): the role's name
        // as that language says it (梯度 in Chinese) filters; Copy keeps the English value.
        let t = h.state().tr();
        let gradient = Role::Gradient.name(t.lang);
        common::type_into(&mut h, t.role_header, gradient);
        let shown = h
            .query_all_by_label(gradient)
            .filter(|n| n.rect().min.y > 300.0)
            .count();
        assert!(shown >= 1, "{lang:?}: cells read {gradient}");
        if lang == Lang::Zh {
            assert!(
                h.query_by_label("gradient").is_none(),
                "no English role on screen"
            );
            assert!(h.query_by_label("Role").is_none());
        }
        let cells = common::copy_all_column(&mut h, "Role");
        assert_eq!(cells.len(), gradients, "{lang:?}");
        assert!(cells.iter().all(|c| c == "gradient"), "{lang:?}");
    }
}

/// The raw trace's steps (`ProfilerStep#N`): (id, start, end) absolute ns.
fn raw_steps() -> Vec<(i64, i128, i128)> {
    let mut out: Vec<(i64, i128, i128)> = common::trace_events(&trace())
        .iter()
        .filter_map(|e| {
            let id = e["name"].as_str()?.strip_prefix("ProfilerStep#")?;
            let s = common::us_to_ns(&e["ts"].to_string());
            let d = common::us_to_ns(&e["dur"].to_string());
            Some((id.parse().ok()?, s, s + d))
        })
        .collect();
    out.sort_by_key(|s| s.1);
    out
}

/// The raw `Total Allocated` samples: (ns, bytes), time-sorted.
fn raw_allocated() -> Vec<(i128, i64)> {
    let mut v: Vec<(i128, i64)> = common::trace_events(&trace())
        .iter()
        .filter(|e| e["name"] == "[memory]")
        .map(|e| {
            (
                common::us_to_ns(&e["ts"].to_string()),
                e["args"]["Total Allocated"].as_i64().unwrap(),
            )
        })
        .collect();
    v.sort_by_key(|x| x.0);
    v
}

#[test]
fn the_steps_tab_splits_each_steps_peak_by_role() {
    let steps = raw_steps();
    let samples = raw_allocated();
    assert_eq!(steps.len(), 3);
    for lang in [Lang::En, Lang::Zh] {
        let mut h = common::app_at_720p(&trace(), lang);
        let t = h.state().tr();
        h.get_by_label(&(t.steps_tab)(3)).click();
        step_until_roles(&mut h);
        assert!(h.query_by_label(t.steps_by_role).is_some(), "{lang:?}");
        for &(id, s, e) in &steps {
            // The step's peak: the largest value held in [start, end] (held at start counts).
            let held = samples.iter().rev().find(|x| x.0 <= s).map(|x| x.1);
            let peak = samples
                .iter()
                .filter(|x| x.0 > s && x.0 <= e)
                .map(|x| x.1)
                .chain(held)
                .max()
                .unwrap();
            assert!(
                shown(&h, &bytes(peak)),
                "{lang:?}: step {id} peak {}",
                bytes(peak)
            );
        }
    }
}

#[test]
fn live_at_the_cursor_splits_the_live_blocks_by_role() {
    let (_, peak_ns) = raw_peak();
    for lang in [Lang::En, Lang::Zh] {
        let mut h = common::app_at_720p(&trace(), lang);
        let view = h.state().view().unwrap();
        let at = (peak_ns - i128::from(view.data.time_origin_ns)) as i64;
        h.state_mut()
            .apply(memsight::ui::Command::SetCursor(Some(at)));
        h.run();
        h.run();
        let t = h.state().tr();
        assert!(h.query_by_label(t.live_by_role).is_some(), "{lang:?}");
        // Gradients live at the peak, from the raw rows and their roles.
        let grad = live_bytes(&view.data, Role::Gradient, peak_ns);
        assert!(grad > 0);
        assert!(
            shown(&h, &bytes(grad)),
            "{lang:?}: gradients {}",
            bytes(grad)
        );
    }
}

#[test]
fn rows_by_role_groups_the_blocks_with_their_totals() {
    use memsight::ui::Command;
    for lang in [Lang::En, Lang::Zh] {
        let mut h = common::app_at_720p(&trace(), lang);
        let t = h.state().tr();
        let view = h.state().view().unwrap();
        // Blocks and bytes per role, summed from the rows.
        let roles = view.data.roles.as_ref().unwrap();
        let mut want: std::collections::HashMap<&str, (usize, i64)> = Default::default();
        for (r, role) in roles.role.iter().enumerate() {
            let e = want.entry(role.name(t.lang)).or_default();
            e.0 += 1;
            e.1 += view.data.operators.size[r].max(0);
        }
        h.get_by_label(t.rows_label).click();
        h.run();
        h.get_by_label(t.row_groupings[4]).click();
        h.run();
        h.state_mut().apply(Command::Copy);
        h.run();
        let tsv = h.state().details().last_copy().unwrap().to_string();
        let lines: Vec<&str> = tsv.lines().collect();
        assert_eq!(lines[0], t.group_headers.join("\t"), "{lang:?}");
        assert_eq!(lines.len() - 1, want.len(), "{lang:?}: {tsv}");
        for line in &lines[1..] {
            let cells: Vec<&str> = line.split('\t').collect();
            let (n, b) = want[cells[0]];
            assert_eq!(cells[1], n.to_string(), "{lang:?}: {line}");
            let mb: f64 = cells[2].parse().unwrap();
            assert!((mb - b as f64 / 1048576.0).abs() < 1e-6, "{lang:?}: {line}");
        }
    }
}

/// The roles plot shares the chart's time window: a box dragged over it zooms both (a drag is
/// not a click), a click sets the cursor (and the split then follows the cursor), a double
/// click resets the zoom.
#[test]
fn the_roles_plot_zooms_the_shared_window_and_sets_the_cursor() {
    use egui::pos2;
    let mut h = open_roles(Lang::En);
    let (x0, x1, y) = (300.0, 600.0, 560.0);
    h.hover_at(pos2(x0, y));
    h.run();
    h.drag_at(pos2(x0, y));
    h.step();
    for x in [400.0, 500.0, x1] {
        h.hover_at(pos2(x, y));
        h.step();
    }
    h.step();
    h.drop_at(pos2(x1, y));
    h.run();
    let view = h.state().view().unwrap();
    let (e0, e1) = view.time_extent();
    let (a, b) = h.state().view_state().window_ms().expect("zoomed");
    // The plot spans the whole extent: the box is inside it and covers a part of it.
    let (e0, e1) = (e0 as f64 / 1e6, e1 as f64 / 1e6);
    assert!(e0 <= a && a < b && b <= e1, "{a}..{b} in {e0}..{e1}");
    assert!(b - a < (e1 - e0) * 0.8, "{a}..{b} of {e0}..{e1}");
    assert_eq!(
        h.state().view_state().cursor_ms(),
        None,
        "a drag is not a click"
    );
    // A click: the cursor, inside the zoomed window; the split names it.
    h.hover_at(pos2(450.0, y));
    h.run();
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos: pos2(450.0, y),
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
        h.step();
    }
    h.run();
    let c = h
        .state()
        .view_state()
        .cursor_ms()
        .expect("a click sets the cursor");
    assert!(a <= c && c <= b, "{c} in {a}..{b}");
    let t = h.state().tr();
    assert!(
        h.query_all_by_label_contains(&(t.roles_at_cursor)("")[..12])
            .count()
            >= 1
    );
    // A double click: the whole profile again.
    for _ in 0..2 {
        for pressed in [true, false] {
            h.event(egui::Event::PointerButton {
                pos: pos2(450.0, y),
                button: egui::PointerButton::Primary,
                pressed,
                modifiers: egui::Modifiers::NONE,
            });
        }
    }
    h.run();
    assert_eq!(
        h.state().view_state().window_ms(),
        None,
        "double click resets"
    );
}

/// The real level1 export: temporaries hold a quarter of the peak, and the advice says so,
/// with the bytes summed from the raw rows alive at the peak and the op holding the most of
/// them first. English and Chinese.
#[test]
fn temporaries_at_the_peak_get_advice_naming_their_ops() {
    let Some(root) = common::samples() else {
        return;
    };
    let level1 = root.join(
        "xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt",
    );
    for lang in [Lang::En, Lang::Zh] {
        let mut h = common::app_at_720p(&level1, lang);
        // The host ops (and so the roles) arrive after the curves.
        common::step_until(&mut h, "the host ops", |h| {
            h.state()
                .view()
                .is_some_and(|v| memsight::ui::panes::roles::has_roles(&v))
        });
        h.run();
        let tab = h.state().tr().roles_tab;
        h.get_by_label(tab).click();
        step_until_roles(&mut h);
        let t = h.state().tr();
        let view = h.state().view().unwrap();
        let data = &view.data;
        let report = view.roles();
        let at = report.at_peak.as_ref().expect("a peak").at_ns;
        let abs = i128::from(data.time_origin_ns) + i128::from(at);
        let temp =
            live_bytes(data, Role::Temporary, abs) + live_bytes(data, Role::BackwardTemporary, abs);
        assert!(temp >= 100 * 1024 * 1024, "{temp}");
        // The op holding the most of them, summed from the rows.
        let roles = data.roles.as_ref().unwrap();
        let ops = &data.operators;
        let mut by_op: std::collections::BTreeMap<String, i64> = Default::default();
        for r in 0..ops.len() {
            let live = i128::from(ops.alloc_time[r]) <= abs
                && (ops.release_time[r] == memsight::model::NULL
                    || i128::from(ops.release_time[r]) > abs);
            if live
                && ops.size[r] > 0
                && matches!(roles.role[r], Role::Temporary | Role::BackwardTemporary)
            {
                *by_op
                    .entry(data.display_name(ops.name[r]).to_string())
                    .or_default() += ops.size[r];
            }
        }
        let top_op = by_op.iter().max_by_key(|(_, b)| **b).unwrap().0.clone();
        let advice = report.advice_for(1);
        let a = advice
            .iter()
            .find(|a| a.kind == memsight::analysis::AdviceKind::Temporaries)
            .expect("temporaries advice");
        assert_eq!(a.bytes, temp, "{lang:?}");
        assert!(
            a.holders[0].0.starts_with(&top_op),
            "{:?} {top_op}",
            a.holders
        );
        let line = memsight::ui::panes::roles::advice_text(t, a);
        assert!(line.contains(&bytes(temp)), "{line}");
        assert!(shown(&h, &line), "{lang:?}: {line}");
    }
}

/// On a real H100 trace PyTorch writes library frames relative to `sys.path`
/// (`torch/nn/functional.py(2914): layer_norm`): the activations' holders are the user's own
/// lines, never torch's.
#[test]
fn the_activation_holders_of_a_real_trace_are_the_users_lines() {
    let Some(root) = common::samples() else {
        return;
    };
    let trace = root.join("cuda_h100/whatif/gpt_b8.pt.trace.json.gz");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
        .args(["roles", "--json", "--rank", "gpt_b8 cuda:0"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let advice = v["advice"].as_array().unwrap();
    let recompute = advice
        .iter()
        .find(|a| a["kind"] == "recompute")
        .expect("recompute advice");
    let text = recompute.to_string();
    assert!(text.contains("make_cuda_refs.py("), "{text}");
    assert!(!text.contains("torch/"), "{text}");
}

/// Issue 43 item 10: Live at cursor's header and the curves under it use one unit, chosen from
/// the largest of them (APP Reserved is 11.6 GB at 316.641 ms on st/level2 rank 0, so the
/// 5.8 GB of live blocks reads in GB in the header too). The live bytes are summed from the
/// rows. English and Chinese.
#[test]
fn live_at_cursor_header_and_curves_share_one_unit() {
    let Some(root) = common::samples() else {
        return;
    };
    let rank = root.join("xiaobingling93-pixel_Ascend-msinsight/test/st/level2/rank_0_ascend_pt");
    for lang in [Lang::En, Lang::Zh] {
        let mut h = common::app_at_720p(&rank, lang);
        let at = memsight::model::ms_to_ns(316.641);
        h.state_mut()
            .apply(memsight::ui::Command::SetCursor(Some(at)));
        h.run();
        let t = h.state().tr();
        let view = h.state().view().unwrap();
        let data = &view.data;
        let abs = i128::from(data.time_origin_ns) + i128::from(at);
        let ops = &data.operators;
        let live: Vec<usize> = (0..ops.len())
            .filter(|&r| ops.size[r] > 0 && i128::from(ops.alloc_time[r]) <= abs)
            .filter(|&r| {
                ops.release_time[r] == memsight::model::NULL
                    || i128::from(ops.release_time[r]) > abs
            })
            .collect();
        let total: i64 = live.iter().map(|&r| ops.size[r]).sum();
        assert!(total > 5 << 30 && total < 10 << 30, "{total}");
        let header = (t.live_summary)(
            &memsight::ui::format::ms(316.641),
            &memsight::ui::format::grouped(live.len() as f64, 0),
            &memsight::ui::format::bytes_in(total, memsight::ui::format::MemUnit::Gb),
        );
        assert!(shown(&h, &header), "{lang:?}: {header}");
        let in_mb = memsight::ui::format::bytes_in(total, memsight::ui::format::MemUnit::Mb);
        assert!(h.query_by_label_contains(&in_mb).is_none(), "{in_mb}");
    }
}

/// The sharding advice carries the replayed peak, not a formula alone: the DDP run of the
/// what-if references, one rank on its own, replayed with ZeRO-1 over 8 ranks for example —
/// the same peaks as the what-if replay and as the raw trace's largest Total Allocated.
#[test]
fn the_sharding_advice_shows_the_replayed_zero_peak() {
    let ddp = common::fixtures().join("pytorch/whatif/ddp_r0.pt.trace.json.gz");
    let raw_peak = common::trace_events(&ddp)
        .iter()
        .filter(|e| e["name"] == "[memory]")
        .filter_map(|e| e["args"]["Total Allocated"].as_i64())
        .max()
        .unwrap();
    for lang in [Lang::En, Lang::Zh] {
        let mut h = common::app_at_720p(&ddp, lang);
        let tab = h.state().tr().roles_tab;
        h.get_by_label(tab).click();
        common::step_until(&mut h, "the replayed advice", |h| {
            h.state()
                .view()
                .is_some_and(|v| v.advice_ready(1).is_some())
        });
        h.run();
        let t = h.state().tr();
        let view = h.state().view().unwrap();
        let scenario = memsight::analysis::whatif::Scenario {
            zero: Some((1, 8)),
            ..Default::default()
        };
        let predicted = memsight::analysis::whatif::predict(&view.data, &scenario).unwrap();
        let (from, to) = (bytes(raw_peak), bytes(predicted.predicted.bytes));
        let replayed = match lang {
            Lang::En => format!(
                ". ZeRO-1 over 8 ranks, for example, would lower the peak from {from} to {to} \
                 (replayed from this run: memsight whatif --zero 1 --ranks 8)"
            ),
            Lang::Zh => format!(
                "。例如在 8 个 rank 间使用 ZeRO-1，峰值将从 {from} 降到 {to}（按本次运行回放：\
                 memsight whatif --zero 1 --ranks 8）"
            ),
        };
        let advice = view.advice(1);
        let shard = advice
            .iter()
            .find(|a| a.kind == memsight::analysis::AdviceKind::ShardOptimizerState)
            .expect("optimizer state advice");
        let line = memsight::ui::panes::roles::advice_text(t, shard);
        assert!(line.ends_with(&replayed), "{lang:?}: {line}");
        assert!(h.query_by_label(&line).is_some(), "{lang:?}: {line}");
    }
}

/// Issue 87 item 10: the advice panel prints every figure in one unit, its largest figure's:
/// 12 GiB of activations held by a 500 MiB line and a 100 MiB cache read "12.00 GB",
/// "0.49 GB" and "0.10 GB" (before: "12.00 GB … (500.00 MB)" and a line in MB), in English
/// and Chinese. The figures are plain arithmetic on the bytes given.
#[test]
fn the_advice_panel_reads_in_one_unit() {
    use memsight::analysis::{Advice, AdviceKind};
    let gib = 1i64 << 30;
    let advice = [
        Advice {
            kind: AdviceKind::Recompute,
            bytes: 12 * gib,
            ranks: 1,
            holders: vec![("train.py(52): forward".into(), 500 << 20)],
            alloc_conf: "PYTORCH_CUDA_ALLOC_CONF",
            replayed: None,
        },
        Advice {
            kind: AdviceKind::ExpandableSegments,
            bytes: 100 << 20,
            ranks: 1,
            holders: Vec::new(),
            alloc_conf: "PYTORCH_CUDA_ALLOC_CONF",
            replayed: None,
        },
    ];
    for lang in [Lang::En, Lang::Zh] {
        let t = lang.tr();
        let lines = memsight::ui::panes::roles::advice_lines(t, &advice);
        assert_eq!(lines.len(), 2);
        for (line, want) in lines
            .iter()
            .zip([["12.00 GB", "0.49 GB"], ["0.10 GB", "0.10 GB"]])
        {
            assert!(!line.contains(" MB"), "{lang:?}: {line}");
            for w in want {
                assert!(line.contains(w), "{lang:?}: {w} in {line}");
            }
        }
    }
}
