//! The top of the window and the start page: the File, View and Help menus, the parameter bar
//! (host, rank, Group By, static graph, warnings, load progress), the path field, the keyboard
//! help and the placeholder shown before a rank is on screen. All of it reads state and pushes
//! commands.

use crate::model::SourceChoice;
use std::path::PathBuf;
use std::sync::Arc;

use super::command::{Command, PickKind};
use super::i18n::{Lang, Tr};
use super::loading::Loading;
use super::prefs::{Prefs, ThemePref};
use super::session::Session;
use super::state::ViewState;
use crate::analysis::{GroupBy, RankView};

/// A path field and its Open button: a path can always be typed or pasted, whatever dialogs the
/// desktop has.
fn path_field(ui: &mut egui::Ui, t: &Tr, text: &mut String, focus: bool, out: &mut Vec<Command>) {
    ui.horizontal(|ui| {
        let label = ui.label(t.path);
        let r = ui
            .add(
                egui::TextEdit::singleline(text)
                    .hint_text(t.path_hint)
                    .desired_width(360.0),
            )
            .labelled_by(label.id);
        if focus {
            r.request_focus();
            // Ctrl+L selects what the field holds: a pasted path replaces it (appended to the
            // previous one, it became `old/new` and failed to open).
            let mut state = egui::TextEdit::load_state(ui.ctx(), r.id).unwrap_or_default();
            state
                .cursor
                .set_char_range(Some(egui::text::CCursorRange::select_all_str(text)));
            egui::TextEdit::store_state(ui.ctx(), r.id, state);
        }
        let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if (ui.button(t.open).clicked() || enter) && !text.trim().is_empty() {
            out.push(Command::Open(PathBuf::from(text.trim())));
        }
    });
}

/// Open path… (File menu, Ctrl+L): a small dialog with the path field, focused, so a path can
/// be typed or pasted (a text field inside the menu closed the menu on the first click).
/// `focus` puts the cursor into the field (the frame it opens). Opening anything closes it.
pub fn path_dialog(
    ctx: &egui::Context,
    t: &Tr,
    text: &mut String,
    focus: bool,
    out: &mut Vec<Command>,
) {
    let modal = egui::Modal::new(egui::Id::unique("path_dialog")).show(ctx, |ui| {
        ui.strong(t.open_path_title);
        ui.add_space(4.0);
        path_field(ui, t, text, focus, out);
        ui.add_space(4.0);
        ui.weak(t.path_dialog_hint);
        ui.add_space(4.0);
        ui.button(t.cancel).clicked()
    });
    if modal.inner || modal.should_close() {
        out.push(Command::ShowPathDialog(false));
    }
}

/// The menu bar: File (open, path, recent, quit), View (language, theme), Help.
pub fn menu_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    prefs: &Prefs,
    no_cjk_font: bool,
    status: Status<'_>,
    out: &mut Vec<Command>,
) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button(t.file, |ui| {
            if ui.button(t.open_folder_menu).clicked() {
                out.push(Command::Pick(PickKind::Folder));
                ui.close();
            }
            if ui.button(t.open_db).clicked() {
                out.push(Command::Pick(PickKind::Database));
                ui.close();
            }
            if ui.button(t.compare_with_menu).clicked() {
                out.push(Command::Pick(PickKind::Baseline));
                ui.close();
            }
            if ui.button(t.compare_with_file_menu).clicked() {
                out.push(Command::Pick(PickKind::File(
                    &crate::ui::baseline::PICK_FILE,
                )));
                ui.close();
            }
            if ui.button(t.open_path_menu).clicked() {
                out.push(Command::ShowPathDialog(true));
                ui.close();
            }
            if ui.button(t.save_chart).clicked() {
                out.push(Command::SaveChart);
                ui.close();
            }
            ui.menu_button(t.recent, |ui| {
                if prefs.recent.is_empty() {
                    ui.label(t.none_yet);
                }
                for r in &prefs.recent {
                    if ui.button(r.as_str()).clicked() {
                        out.push(Command::Open(PathBuf::from(r)));
                        ui.close();
                    }
                }
            });
            ui.separator();
            if ui.button(t.quit).clicked() {
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            }
        });
        ui.menu_button(t.view, |ui| {
            ui.label(t.language);
            for lang in Lang::ALL {
                if ui.radio(prefs.lang == lang, lang.name()).clicked() {
                    out.push(Command::SetLanguage(lang));
                }
            }
            if no_cjk_font {
                ui.colored_label(ui.visuals().warn_fg_color, t.no_cjk_font);
            }
            ui.separator();
            let mut reopen = prefs.reopen_last;
            if ui.checkbox(&mut reopen, t.reopen_last).changed() {
                out.push(Command::SetReopenLast(reopen));
            }
            ui.separator();
            ui.label(t.theme);
            for (theme, name) in [
                (ThemePref::System, t.theme_system),
                (ThemePref::Light, t.theme_light),
                (ThemePref::Dark, t.theme_dark),
            ] {
                if ui.radio(prefs.theme == theme, name).clicked() {
                    out.push(Command::SetTheme(theme));
                }
            }
        });
        ui.menu_button(t.help, |ui| {
            if ui.button(t.shortcuts_menu).clicked() {
                out.push(Command::ShowHelp(true));
                ui.close();
            }
        });
        if let Some(name) = status.back {
            ui.separator();
            if ui
                .button((t.back_to)(name))
                .on_hover_text("Alt+←")
                .clicked()
            {
                out.push(Command::Back);
            }
        }
        if status.notice.is_some() || status.progress.is_some() {
            ui.separator();
            status_ui(ui, t, status, out);
        }
    });
}

/// Above the demo: that it is one, and how to open your own data.
pub fn demo_banner(ui: &mut egui::Ui, t: &Tr, out: &mut Vec<Command>) {
    ui.horizontal_wrapped(|ui| {
        ui.colored_label(ui.visuals().warn_fg_color, t.demo_banner);
        if ui.small_button(t.open_folder_menu).clicked() {
            out.push(Command::Pick(PickKind::Folder));
        }
        if ui.small_button(t.open_path_menu).clicked() {
            out.push(Command::ShowPathDialog(true));
        }
        ui.weak(t.demo_drop_hint);
    });
}

/// The keyboard and mouse help (F1).
pub fn help_window(ctx: &egui::Context, t: &Tr, out: &mut Vec<Command>) {
    let mut open = true;
    egui::Window::new(t.shortcuts_title)
        .open(&mut open)
        .collapsible(false)
        .resizable(false)
        .show(ctx, |ui| {
            egui::Grid::new("shortcuts")
                .striped(true)
                .num_columns(2)
                .show(ui, |ui| {
                    for (keys, what) in t.shortcuts {
                        ui.strong(*keys);
                        ui.label(*what);
                        ui.end_row();
                    }
                });
        });
    if !open {
        out.push(Command::ShowHelp(false));
    }
}

/// The parameter bar: Host Name, Rank ID, Group By, the static graph and warnings (the load's
/// progress is in the menu bar, [`menu_ui`]).
pub fn parameters_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    session: &Session,
    view: Option<&Arc<RankView>>,
    state: &ViewState,
    baseline: &crate::ui::baseline::BaselineSlot,
    out: &mut Vec<Command>,
) {
    ui.horizontal_wrapped(|ui| {
        let Some(profile) = session.profile.clone() else {
            ui.label(t.no_profile);
            return;
        };
        if profile.ranks.len() > 1
            && ui
                .selectable_label(state.show_overview, t.overview_button)
                .on_hover_text(t.overview_hover)
                .clicked()
        {
            out.push(Command::ShowOverview(!state.show_overview));
        }
        host_picker(ui, t, &profile, state, out);
        rank_picker(ui, t, &profile, view, state, out);
        if profile
            .ranks
            .get(state.rank)
            .is_some_and(|r| r.has_both_sources())
        {
            source_ui(ui, t, state.source, out);
        }
        group_by_picker(ui, t, state, out);
        if let Some(view) = view {
            compare_ui(ui, t, &profile, Some(view), state, baseline, out);
            static_graph_picker(ui, t, view, state, out);
            warnings_button(ui, t, &profile, view, out);
        }
    });
}

/// Host Name (profiles whose ranks name hosts): picking a host shows one of its ranks when the
/// rank on screen is elsewhere.
fn host_picker(
    ui: &mut egui::Ui,
    t: &Tr,
    profile: &crate::ingest::Profile,
    state: &ViewState,
    out: &mut Vec<Command>,
) {
    let hosts = profile.hosts();
    if hosts.is_empty() {
        return;
    }
    let label = ui.label(t.host_name);
    egui::ComboBox::from_id_salt("host")
        .selected_text(state.host.clone().unwrap_or_else(|| t.all_hosts.into()))
        .show_ui(ui, |ui| {
            if ui
                .selectable_label(state.host.is_none(), t.all_hosts)
                .clicked()
            {
                out.push(Command::SetHost(None));
            }
            for h in &hosts {
                if ui
                    .selectable_label(state.host.as_ref() == Some(h), h.as_str())
                    .clicked()
                {
                    out.push(Command::SetHost(Some(h.clone())));
                    // Show a rank of that host when the one on screen is elsewhere.
                    let shown = profile.ranks.get(state.rank).and_then(|r| r.host.as_ref());
                    if shown != Some(h)
                        && let Some(&first) = profile.ranks_on(Some(h)).first()
                    {
                        out.push(Command::SelectRank(first));
                    }
                }
            }
        })
        .response
        .labelled_by(label.id);
}

/// Rank ID: the ranks of the chosen host.
fn rank_picker(
    ui: &mut egui::Ui,
    t: &Tr,
    profile: &crate::ingest::Profile,
    view: Option<&Arc<RankView>>,
    state: &ViewState,
    out: &mut Vec<Command>,
) {
    let current = profile
        .ranks
        .get(state.rank)
        .map(|r| r.label())
        .unwrap_or_default();
    let label = ui.label(t.rank_id);
    egui::ComboBox::from_id_salt("rank")
        .selected_text(current)
        .width(260.0)
        .show_ui(ui, |ui| {
            for i in profile.ranks_on(state.host.as_deref()) {
                let rank = &profile.ranks[i];
                if ui
                    .selectable_label(i == state.rank, rank.label())
                    .on_hover_ui(|ui| {
                        ui.label(rank.read_from().display().to_string());
                    })
                    .clicked()
                    && (i != state.rank || view.is_none())
                {
                    out.push(Command::SelectRank(i));
                }
            }
        })
        .response
        .labelled_by(label.id);
}

/// Group By.
fn group_by_picker(ui: &mut egui::Ui, t: &Tr, state: &ViewState, out: &mut Vec<Command>) {
    let label = ui.label(t.group_by);
    egui::ComboBox::from_id_salt("group_by")
        .selected_text(group_name(t, state.group_by))
        .show_ui(ui, |ui| {
            for g in GroupBy::ALL {
                if ui
                    .selectable_label(state.group_by == g, group_name(t, g))
                    .clicked()
                {
                    out.push(Command::SetGroupBy(g));
                }
            }
        })
        .response
        .labelled_by(label.id);
}

/// The static graph's switch and, when it is on, its Graph ID (ranks with static graphs).
fn static_graph_picker(
    ui: &mut egui::Ui,
    t: &Tr,
    view: &RankView,
    state: &ViewState,
    out: &mut Vec<Command>,
) {
    let graphs = view.static_graphs();
    if graphs.is_empty() {
        return;
    }
    ui.separator();
    let mut on = state.static_view;
    if ui.checkbox(&mut on, t.static_graph).changed() {
        out.push(Command::SetStaticView(on));
    }
    if state.static_view {
        let current = graphs
            .get(state.graph)
            .map(|g| g.graph_id.clone())
            .unwrap_or_default();
        let label = ui.label(t.graph_id);
        egui::ComboBox::from_id_salt("graph_id")
            .selected_text(current)
            .show_ui(ui, |ui| {
                for (i, g) in graphs.iter().enumerate() {
                    if ui
                        .selectable_label(i == state.graph, g.graph_id.as_str())
                        .clicked()
                    {
                        out.push(Command::SetGraph(i));
                    }
                }
            })
            .response
            .labelled_by(label.id);
    }
}

/// The warnings button: problems count as ⚠ warnings; notes (which source was read, the newest
/// of several files) only open the same window when nothing is wrong.
fn warnings_button(
    ui: &mut egui::Ui,
    t: &Tr,
    profile: &crate::ingest::Profile,
    view: &RankView,
    out: &mut Vec<Command>,
) {
    let report = &view.data.report;
    let (notes, problems): (Vec<_>, Vec<_>) = profile
        .notes
        .iter()
        .chain(&report.warnings)
        .partition(|m| m.is_note());
    let warnings = problems.len() + report.warning_count() - report.warnings.len();
    let label = if warnings > 0 {
        Some((t.warnings)(warnings))
    } else if !notes.is_empty() {
        Some((t.notes)(notes.len()))
    } else {
        None
    };
    if let Some(label) = label {
        ui.separator();
        if ui.button(label).clicked() {
            out.push(Command::ShowWarnings(true));
        }
    }
}

/// What the menu bar's status shows.
#[derive(Clone, Copy)]
pub struct Status<'a> {
    /// The last notice (a chart saved, or why not).
    pub notice: Option<&'a str>,
    /// The running load, once its ranks are known (before, the start page shows its
    /// progress).
    pub progress: Option<&'a Loading>,
    /// The name of the document Back returns to, when there is one.
    pub back: Option<&'a str>,
}

/// The status, in the menu bar's free room (a line that came and went above the chart moved
/// the whole window): the running load's progress and Cancel, then the last notice, cut to
/// the width with the whole of it on hover.
fn status_ui(ui: &mut egui::Ui, t: &Tr, status: Status<'_>, out: &mut Vec<Command>) {
    if let Some(l) = status.progress {
        progress_ui(ui, t, l, out);
    }
    if let Some(n) = status.notice {
        ui.add(egui::Label::new(egui::RichText::new(n).weak()).truncate())
            .on_hover_text(n);
    }
}

/// The running load's progress (files and bytes read) and its Cancel button. The bar is as wide
/// as its text, so the text is never cut.
fn progress_ui(ui: &mut egui::Ui, t: &Tr, loading: &Loading, out: &mut Vec<Command>) {
    let p = &loading.job.control().progress;
    let (done, total) = (p.bytes_done(), p.bytes_total());
    let frac = if total > 0 {
        done as f32 / total as f32
    } else {
        0.0
    };
    let text = (t.loading_progress)(
        &loading.what,
        p.files_done(),
        done >> 20,
        total >> 20,
        loading.mb_per_s(),
    );
    let font = egui::TextStyle::Body.resolve(ui.style());
    let width = ui
        .fonts_mut(|f| f.layout_no_wrap(text.clone(), font, egui::Color32::WHITE))
        .size()
        .x
        + 24.0;
    ui.add(
        egui::ProgressBar::new(frac)
            .desired_width(width.max(220.0))
            .text(text.clone()),
    )
    .on_hover_text(text);
    if ui.button(t.cancel).clicked() {
        out.push(Command::CancelLoad);
    }
}

/// The central area before a rank is on screen: the error, the load's progress, or how to
/// start; with the Open button and a path field.
pub fn placeholder_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    path_text: &mut String,
    error: Option<&str>,
    loading: Option<&Loading>,
    (discovered, can_retry): (bool, bool),
    out: &mut Vec<Command>,
) {
    ui.vertical_centered(|ui| {
        ui.add_space(80.0);
        if let Some(e) = error {
            ui.heading(t.nothing_to_show);
            ui.colored_label(ui.visuals().error_fg_color, e);
            // A cancelled or failed load can be started again (the files may be there now).
            if can_retry && ui.button(t.retry).on_hover_text(t.retry_hover).clicked() {
                out.push(Command::Retry);
            }
        } else if let Some(l) = loading {
            ui.heading(t.loading);
            ui.horizontal(|ui| {
                crate::ui::spinner::spinner(ui);
                // Once the ranks are known the parameter bar shows it.
                if !discovered {
                    progress_ui(ui, t, l, out);
                }
            });
        } else {
            ui.heading("memsight");
            ui.label(t.welcome);
        }
        ui.add_space(12.0);
        open_controls(ui, t, path_text, out);
    });
}

/// What opens something else from a page that shows nothing (the start page, a file that
/// could not be read): Open folder, Open file, and the path field.
pub fn open_controls(ui: &mut egui::Ui, t: &Tr, path_text: &mut String, out: &mut Vec<Command>) {
    ui.horizontal(|ui| {
        if ui.button(t.open_folder).clicked() {
            out.push(Command::Pick(PickKind::Folder));
        }
        if ui.button(t.open_db).clicked() {
            out.push(Command::Pick(PickKind::Database));
        }
    });
    ui.add_space(8.0);
    ui.scope(|ui| {
        ui.set_max_width(520.0);
        path_field(ui, t, path_text, false, out);
    });
}

/// Compare with: a rank of this profile, another profile (File ▸ Compare with…), or nothing;
/// and, when both sides have steps, where to align the baseline.
fn compare_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    profile: &crate::ingest::Profile,
    view: Option<&Arc<RankView>>,
    state: &ViewState,
    baseline: &crate::ui::baseline::BaselineSlot,
    out: &mut Vec<Command>,
) {
    ui.separator();
    let label = ui.label(t.compare_with);
    let current = match (&baseline.loaded, baseline.is_loading()) {
        (_, true) => t.baseline_loading.to_string(),
        (Some(b), false) => b.label.clone(),
        (None, false) => t.compare_none.to_string(),
    };
    egui::ComboBox::from_id_salt("compare_with")
        .selected_text(current)
        .width(220.0)
        .show_ui(ui, |ui| {
            if ui
                .selectable_label(baseline.loaded.is_none(), t.compare_none)
                .clicked()
            {
                out.push(Command::StopCompare);
            }
            // Every rank but the one on screen (a rank compared with itself shows nothing).
            for (i, r) in profile
                .ranks
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != state.rank)
            {
                if ui.selectable_label(false, r.label()).clicked() {
                    out.push(Command::CompareRank(i));
                }
            }
            if ui.selectable_label(false, t.compare_with_menu).clicked() {
                out.push(Command::Pick(PickKind::Baseline));
            }
            if ui
                .selectable_label(false, t.compare_with_file_menu)
                .clicked()
            {
                out.push(Command::Pick(PickKind::File(
                    &crate::ui::baseline::PICK_FILE,
                )));
            }
        })
        .response
        .labelled_by(label.id);
    if let Some(e) = &baseline.error {
        ui.colored_label(ui.visuals().error_fg_color, (t.baseline_failed)(e));
    }
    if let (Some(b), Some(view)) = (&baseline.loaded, view) {
        let ids: Vec<i64> = view
            .data
            .steps
            .as_ref()
            .map(|s| s.steps.iter().map(|x| x.id).collect())
            .unwrap_or_default();
        let theirs = |id: i64| {
            b.view
                .data
                .steps
                .as_ref()
                .is_some_and(|s| s.steps.iter().any(|x| x.id == id))
        };
        let common: Vec<i64> = ids.into_iter().filter(|&id| theirs(id)).collect();
        if !common.is_empty() {
            let label = ui.label(t.align_at);
            let shown = state
                .align_step
                .map_or_else(|| t.align_origins.to_string(), |s| (t.align_step)(s));
            egui::ComboBox::from_id_salt("align_at")
                .selected_text(shown)
                .show_ui(ui, |ui| {
                    if ui
                        .selectable_label(state.align_step.is_none(), t.align_origins)
                        .clicked()
                    {
                        out.push(Command::SetAlignStep(None));
                    }
                    for id in common {
                        if ui
                            .selectable_label(state.align_step == Some(id), (t.align_step)(id))
                            .clicked()
                        {
                            out.push(Command::SetAlignStep(Some(id)));
                        }
                    }
                })
                .response
                .labelled_by(label.id);
        }
    }
}

/// DB or CSV, for a rank that has both (the DB by default).
fn source_ui(ui: &mut egui::Ui, t: &Tr, current: SourceChoice, out: &mut Vec<Command>) {
    let csv = current == SourceChoice::Csv;
    ui.label(t.source_label).on_hover_text(t.source_hover);
    for (on, text, choice) in [
        (!csv, "DB", SourceChoice::Db),
        (csv, "CSV", SourceChoice::Csv),
    ] {
        if ui
            .selectable_label(on, text)
            .on_hover_text(t.source_hover)
            .clicked()
            && !on
        {
            out.push(Command::SetSource(choice));
        }
    }
}

/// A Group By choice in the UI's language.
pub fn group_name(t: &Tr, g: GroupBy) -> &'static str {
    let i = GroupBy::ALL.iter().position(|&x| x == g).unwrap_or(0);
    t.group_names.get(i).copied().unwrap_or_else(|| g.label())
}
