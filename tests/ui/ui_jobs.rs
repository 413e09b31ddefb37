//! A background job that panics is a failed job the user is told about, not a dead app: a
//! panicking job of each kind (rayon pool, own thread) is injected into the running app, which
//! must say so in the UI's language and keep working (the table still pages).

use crate::common;

use common::fixtures;
use egui_kittest::kittest::{NodeT, Queryable};
use memsight::ui::i18n::Lang;
use memsight::ui::jobs::{Job, JobKey, Place};
use memsight::ui::{Command, MemsightApp};

#[test]
fn a_panicking_job_of_each_kind_is_shown_and_the_app_goes_on() {
    for (lang, task, cause_word) in [
        (Lang::En, "exporting CSV", "Cause"),
        (Lang::Zh, "导出 CSV", "原因"),
    ] {
        let dir = common::first_subdir(&fixtures().join("torch_cluster"));
        let mut app = MemsightApp::new(Some(dir), Vec::new(), None);
        app.wait_for_load();
        app.set_language(lang);
        let mut handles: Vec<Job<u32>> = Vec::new();
        for place in [Place::Pool, Place::Thread] {
            handles.push(app.jobs_mut().run(
                JobKey::new(memsight::ui::panes::export_csv::EXPORT_JOB),
                place,
                move |_| panic!("injected panic on {place:?}"),
            ));
            // One at a time: a second job under the same key would cancel a queued first one.
            let job = handles.last().expect("just pushed");
            assert_eq!(job.wait(), None);
            while !job.control().is_done() {
                std::thread::yield_now();
            }
        }
        let mut h = common::harness(app);
        h.run();
        for place in ["Pool", "Thread"] {
            let needle = format!("injected panic on {place}");
            let node = h.get_by_label_contains(&needle);
            let node = node.accesskit_node();
            let text = format!("{:?} {:?}", node.label(), node.value());
            assert!(text.contains(task), "{text}");
            assert!(text.contains(cause_word), "{text}");
        }
        // The app still works: the rank is on screen and → turns the table's page.
        assert!(h.state().view().is_some(), "{:?}", h.state().error());
        h.state_mut().apply(Command::SetPageSize(10));
        h.run();
        h.key_press(egui::Key::ArrowRight);
        h.run();
        assert_eq!(
            h.state()
                .view_state()
                .page(memsight::ui::panes::details_table::DETAILS),
            1
        );
        // Dismiss closes the lines.
        let dismiss = if lang == Lang::En {
            "Dismiss"
        } else {
            "关闭"
        };
        h.get_by_label(dismiss).click();
        h.run();
        assert!(h.state().failures().is_empty());
        assert!(
            h.query_by_label_contains("injected panic").is_none(),
            "dismissed"
        );
        drop(handles);
    }
}
