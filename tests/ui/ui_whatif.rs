//! The What-if pane (issue 44), in English and Chinese: on a real CPU run of a GPT-like decoder
//! (`fixtures/pytorch/whatif/gpt_b4`), the levers change the predicted peak, which must match
//! the run made with that lever (the max of Total Allocated in its raw trace) within 10 %.

use crate::common;

use std::path::PathBuf;

use egui_kittest::kittest::{NodeT, Queryable};
use memsight::ui::MemsightApp;
use memsight::ui::i18n::Lang;
use memsight::ui::panes::whatif::{self, WhatifLevers};

fn run(name: &str) -> PathBuf {
    common::fixtures().join(format!("pytorch/whatif/{name}.pt.trace.json.gz"))
}

/// The largest `Total Allocated` in the raw trace, bytes.
fn raw_peak(name: &str) -> f64 {
    common::trace_events(&run(name))
        .iter()
        .filter(|e| e["name"] == "[memory]")
        .filter_map(|e| e["args"]["Total Allocated"].as_i64())
        .max()
        .unwrap() as f64
}

/// The predicted peak the pane shows, bytes (its headline's first number, in MB).
fn shown_prediction(h: &mut egui_kittest::Harness<'static, MemsightApp>) -> f64 {
    let prefix = whatif::PREDICTED
        .get(h.state().tr())
        .split("{predicted}")
        .next()
        .unwrap()
        .to_string();
    // One frame for the pane to see the levers as they are now (a lever changed in the last
    // frame shows the old prediction until then), then the replay: while it runs the pane
    // shows a spinner in place of the prediction. Not `run`: it fails when the replay wakes the
    // UI for longer than its step limit, as on a busy machine.
    h.step();
    common::step_until(h, "the replay", |h| {
        h.query_all_by_label_contains(&prefix).next().is_some()
    });
    let node = h.query_all_by_label_contains(&prefix).next().unwrap();
    let a = node.accesskit_node();
    let label = a.label().or_else(|| a.value()).unwrap().to_string();
    let number: String = label[prefix.len()..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
        .filter(|c| *c != ',')
        .collect();
    let unit = if label[prefix.len()..].contains(" GB") {
        1024.0 * 1024.0 * 1024.0
    } else {
        1024.0 * 1024.0
    };
    number.parse::<f64>().unwrap() * unit
}

fn open(lang: Lang) -> egui_kittest::Harness<'static, MemsightApp> {
    let mut h = common::app_at_720p(&run("gpt_b4"), lang);
    let title = whatif::TITLE.get(h.state().tr());
    h.get_by_label(title).click();
    // One frame: the replay's spinner repaints until its job is done (`run` would wait on it).
    h.step();
    assert_eq!(h.state().view_state().tab, whatif::TAB, "{lang:?}");
    h
}

#[test]
fn the_levers_predict_the_runs_made_with_them() {
    let measured = raw_peak("gpt_b4");
    for lang in [Lang::En, Lang::Zh] {
        let mut h = open(lang);
        // As profiled: the measured peak (to the 0.01 MB shown).
        let p = shown_prediction(&mut h);
        assert!(
            (p - measured).abs() <= 0.006 * 1024.0 * 1024.0,
            "{lang:?}: {p} {measured}"
        );
        // Every Block checkpointed: the checkpointed run's peak.
        h.get_by_label("Block").click();
        h.step();
        assert!(
            h.state()
                .view_state()
                .choice::<WhatifLevers>()
                .checkpoint
                .contains("Block"),
            "{lang:?}"
        );
        let p = shown_prediction(&mut h);
        let want = raw_peak("gpt_b4_ckpt");
        assert!((p - want).abs() <= 0.10 * want, "{lang:?}: {p} vs {want}");
        assert!(p < measured, "{lang:?}");
        // Twice the micro-batch, Block no longer checkpointed.
        h.get_by_label("Block").click();
        h.step();
        h.state_mut()
            .apply(memsight::ui::Command::choose(|l: &mut WhatifLevers| {
                l.micro_batch = 2.0
            }));
        h.step();
        let p = shown_prediction(&mut h);
        let want = raw_peak("gpt_b8");
        assert!((p - want).abs() <= 0.10 * want, "{lang:?}: {p} vs {want}");
        // The assumptions, in the UI's language: what scales with the batch.
        let t = h.state().tr();
        h.get_by_label(whatif::ASSUMPTIONS.get(t)).click();
        h.run();
        let scaled = format!("• {}", whatif::A_MICRO_BATCH.get(t).replace("{k}", "2"));
        assert!(h.query_by_label(&scaled).is_some(), "{lang:?}: {scaled}");
        let english = format!(
            "• {}",
            memsight::analysis::whatif::Assumption::MicroBatch(2.0)
        );
        assert_eq!(
            h.query_by_label_contains("scale with the batch").is_some(),
            lang == Lang::En,
            "{lang:?}: {english}"
        );
        if lang == Lang::Zh {
            assert!(
                h.query_by_label("Micro-batch ×").is_none(),
                "no English lever"
            );
            assert!(
                h.query_all_by_label(whatif::MICRO_BATCH.zh)
                    .next()
                    .is_some()
            );
        }
    }
}

/// Checkpointing by name (issue 87): a glob typed into the What if tab (`Block_[0-2]`, which no
/// class can say) checkpoints exactly the modules it names, the tab lists them, and the peak
/// lies between none and every Block checkpointed, in English and Chinese. The module names
/// are the trace's own `nn.Module` spans.
#[test]
fn a_glob_checkpoints_the_modules_it_names_and_says_which() {
    let blocks = common::trace_modules(&run("gpt_b4"), "Block_");
    assert!(blocks.len() > 3, "{blocks:?}");
    let none = raw_peak("gpt_b4");
    for lang in [Lang::En, Lang::Zh] {
        let mut h = open(lang);
        let t = h.state().tr();
        let label = whatif::CHECKPOINT_GLOB.get(t);
        // Steps, not `run`: the replay's spinner keeps asking for frames.
        let role = egui::accesskit::Role::TextInput;
        // As profiled first: the levers show once the tab has read the rank.
        assert!(shown_prediction(&mut h) > 0.0);
        h.get_by_role_and_label(role, label).click();
        h.step();
        h.get_by_role_and_label(role, label)
            .type_text("Block_[0-2]");
        h.step();
        h.step();
        assert_eq!(
            h.state()
                .view_state()
                .choice::<WhatifLevers>()
                .checkpoint_glob,
            "Block_[0-2]"
        );
        let p = shown_prediction(&mut h);
        let prefix = whatif::CHECKPOINTED.get(t).replace("{modules}", "");
        let node = h.get_by_label_contains(&prefix);
        let a = node.accesskit_node();
        let text = a
            .label()
            .or_else(|| a.value())
            .unwrap_or_default()
            .to_string();
        let named: Vec<&str> = text[prefix.len()..]
            .split(", ")
            .map(|p| p.rsplit('/').next().unwrap())
            .collect();
        assert_eq!(named, ["Block_0", "Block_1", "Block_2"], "{lang:?}: {text}");
        assert!(p < none, "{lang:?}: {p} < {none}");
    }
}
