//! Memory by module in the app (issue 44), in English and Chinese, on a real PyTorch trace (a
//! 2-layer transformer with AdamW, CPU): the tab, what each module holds at the peak (from the
//! brute-force reference over the raw trace, `tests/reference/module_attribution.py`), a click
//! on a module filtering the details table to its blocks (the Module column, Copy), and folding.

use crate::common;

use std::path::{Path, PathBuf};

use egui_kittest::kittest::Queryable;
use memsight::ui::MemsightApp;
use memsight::ui::format::{MemUnit, bytes, bytes_in};
use memsight::ui::i18n::Lang;
use memsight::ui::panes::modules;

fn trace() -> PathBuf {
    common::fixtures().join("pytorch/roles/transformer_adamw.pt.trace.json.gz")
}

/// The reference's figures at the peak, or None without python3 (a failure in CI).
fn reference() -> Option<serde_json::Value> {
    reference_at(None)
}

/// The same at `at_ms` after the trace's first memory event, when given.
fn reference_at(at_ms: Option<&str>) -> Option<serde_json::Value> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/module_attribution.py");
    match std::process::Command::new("python3")
        .arg(script)
        .arg(trace())
        .args(["0", "0"])
        .args(at_ms)
        .output()
    {
        Ok(o) if o.status.success() => Some(serde_json::from_slice(&o.stdout).unwrap()),
        other => {
            common::skip(&format!("python3 reference not available ({other:?})"));
            None
        }
    }
}

/// The app on the trace in `lang`, tall enough for every module's row, on the modules tab.
fn open_modules(lang: Lang) -> egui_kittest::Harness<'static, MemsightApp> {
    let mut app = MemsightApp::new(Some(trace()), Vec::new(), None);
    app.set_language(lang);
    app.wait_for_load();
    assert!(app.view().is_some(), "{:?}", app.error());
    let mut h = common::harness_sized(app, [1400.0, 2000.0]);
    let title = modules::TITLE.get(h.state().tr());
    h.get_by_label(title).click();
    h.run();
    assert_eq!(h.state().view_state().tab, modules::TAB, "{lang:?}");
    h
}

fn shown(h: &egui_kittest::Harness<'static, MemsightApp>, text: &str) -> bool {
    h.query_all_by_label(text).count() >= 1
}

/// The pane's line of what is live and what no module holds, from the reference's figures.
fn live_text(t: &memsight::ui::i18n::Tr, want: &serde_json::Value) -> String {
    modules::LIVE
        .get(t)
        .replace("{live}", &bytes(want["live_bytes"].as_i64().unwrap()))
        .replace(
            "{outside}",
            &bytes(want["unattributed_bytes"].as_i64().unwrap()),
        )
}

/// The last part of a module path: its name.
fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap()
}

#[test]
fn the_module_pane_shows_what_each_module_holds_at_the_peak() {
    let Some(want) = reference() else {
        return;
    };
    let held = want["held"].as_object().unwrap();
    let largest = held.values().map(|v| v.as_i64().unwrap()).max().unwrap();
    let unit = MemUnit::for_max(largest as f64);
    for lang in [Lang::En, Lang::Zh] {
        let h = open_modules(lang);
        let t = h.state().tr();
        let heading = modules::AT_PEAK
            .get(t)
            .replace("{ms}", &format!("{:.3}", want["at_ms"].as_f64().unwrap()));
        assert!(shown(&h, &heading), "{lang:?}: {heading}");
        let live = live_text(t, &want);
        assert!(shown(&h, &live), "{lang:?}: {live}");
        for header in modules::HEADERS {
            assert!(shown(&h, header.get(t)), "{lang:?}: {}", header.get(t));
        }
        // Every module the reference finds, with what it holds. The pane shows about twenty
        // rows here: the rest come into view as modules above them fold (the first encoder
        // layer, then the encoder: the third and second toggles, after Tiny_0's).
        let mut h = h;
        let mut seen = std::collections::BTreeSet::new();
        for fold in [None, Some(2), Some(1)] {
            if let Some(k) = fold {
                h.query_all_by_label("⏷").nth(k).unwrap().click();
                h.run();
            }
            for (path, b) in held {
                let text = bytes_in(b.as_i64().unwrap(), unit);
                if shown(&h, name_of(path)) {
                    assert!(shown(&h, &text), "{lang:?}: {path} holds {text}");
                    seen.insert(path.clone());
                }
            }
        }
        let missing: Vec<&String> = held.keys().filter(|p| !seen.contains(*p)).collect();
        assert!(missing.is_empty(), "{lang:?}: never shown: {missing:?}");
        if lang == Lang::Zh {
            assert!(!shown(&h, "Held"), "no English header in Chinese");
        }
    }
}

#[test]
fn clicking_a_module_filters_the_details_table_to_its_blocks() {
    let Some(want) = reference() else {
        return;
    };
    let path = "Tiny_0/TransformerEncoder_0/TransformerEncoderLayer_1/MultiheadAttention_1";
    let blocks = want["all_blocks"][path].as_u64().unwrap() as usize;
    assert!(blocks > 0);
    for lang in [Lang::En, Lang::Zh] {
        let mut h = open_modules(lang);
        h.get_by_label(name_of(path)).click();
        h.run();
        let state = h.state().view_state();
        assert_eq!(state.tab, memsight::ui::state::TabId::DETAILS, "{lang:?}");
        let filter = state.choice::<memsight::ui::panes::details_table::DetailsFilter>();
        // The filter reads innermost first (issue 87), as the column does.
        let innermost_first = path.split('/').rev().collect::<Vec<_>>().join(" < ");
        assert_eq!(
            filter
                .tags
                .get(&memsight::model::TagKind::Module)
                .map(String::as_str),
            Some(innermost_first.as_str()),
            "{lang:?}"
        );
        // The filter field shows it, under the column's name in the UI's language.
        let header = h.state().tr().module_header;
        let field = h.get_by_role_and_label(egui::accesskit::Role::TextInput, header);
        assert_eq!(
            field.value().as_deref(),
            Some(innermost_first.as_str()),
            "{lang:?}"
        );
        // The cells on screen read innermost first; Copy keeps the path.
        assert!(
            h.query_all_by_label(&innermost_first).count() >= 2,
            "{lang:?}"
        );
        let cells = common::copy_all_column(&mut h, "Module");
        assert_eq!(cells.len(), blocks, "{lang:?}");
        assert!(cells.iter().all(|c| c == path), "{lang:?}");
    }
}

#[test]
fn a_module_folds_and_unfolds_its_children() {
    for lang in [Lang::En, Lang::Zh] {
        let mut h = open_modules(lang);
        assert!(shown(&h, "MultiheadAttention_0"), "{lang:?}");
        // The first toggle is the top module's (Tiny_0): folding it hides every module under it.
        h.query_all_by_label("⏷").next().unwrap().click();
        h.run();
        assert!(shown(&h, "Tiny_0"), "{lang:?}");
        assert!(!shown(&h, "MultiheadAttention_0"), "{lang:?}");
        assert!(!shown(&h, "Embedding_0"), "{lang:?}");
        assert!(shown(&h, "CrossEntropyLoss_0"), "{lang:?}: a sibling stays");
        h.get_by_label("▸").click();
        h.run();
        assert!(shown(&h, "MultiheadAttention_0"), "{lang:?}");
    }
}

#[test]
fn the_cursor_shows_what_each_module_holds_then() {
    let Some(want) = reference_at(Some("5.5")) else {
        return;
    };
    for lang in [Lang::En, Lang::Zh] {
        let mut h = open_modules(lang);
        h.state_mut()
            .apply(memsight::ui::Command::SetCursor(Some(5_500_000)));
        h.run();
        let t = h.state().tr();
        let heading = modules::AT_CURSOR.get(t).replace("{ms}", "5.500");
        assert!(shown(&h, &heading), "{lang:?}: {heading}");
        let live = live_text(t, &want);
        assert!(shown(&h, &live), "{lang:?}: {live}");
        let top = want["held"]["Tiny_0"].as_i64().unwrap();
        let unit = MemUnit::for_max(top as f64);
        assert!(shown(&h, &bytes_in(top, unit)), "{lang:?}: Tiny_0 {top}");
    }
}
