//! The top of the window and the start page: the File menu, the parameter bar (host, rank,
//! Group By, static graph, warnings, load progress) and the placeholder shown before a rank is
//! on screen. All of it reads state and pushes commands.

use std::path::PathBuf;
use std::sync::Arc;

use super::command::{Command, PickKind};
use super::loading::Loading;
use super::session::Session;
use super::state::ViewState;
use crate::analysis::{GroupBy, RankView};

/// The File menu.
pub fn menu_ui(ui: &mut egui::Ui, recent: &[String], out: &mut Vec<Command>) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            if ui.button("Open folder…  (Ctrl+O)").clicked() {
                out.push(Command::Pick(PickKind::Folder));
                ui.close();
            }
            if ui.button("Open file (.db)…").clicked() {
                out.push(Command::Pick(PickKind::Database));
                ui.close();
            }
            ui.menu_button("Recent folders", |ui| {
                if recent.is_empty() {
                    ui.label("(none yet)");
                }
                for r in recent {
                    if ui.button(r.as_str()).clicked() {
                        out.push(Command::Open(PathBuf::from(r)));
                        ui.close();
                    }
                }
            });
            ui.separator();
            if ui.button("Quit").clicked() {
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            }
        });
    });
}

/// The parameter bar: Host Name, Rank ID, Group By, the static graph, warnings and progress.
pub fn parameters_ui(
    ui: &mut egui::Ui,
    session: &Session,
    view: Option<&Arc<RankView>>,
    state: &ViewState,
    loading: Option<&Loading>,
    out: &mut Vec<Command>,
) {
    ui.horizontal_wrapped(|ui| {
        let Some(profile) = session.profile.clone() else {
            ui.label("No profile open: use File, Open folder… or drop a folder here.");
            return;
        };
        let hosts = profile.hosts();
        if !hosts.is_empty() {
            let label = ui.label("Host Name");
            egui::ComboBox::from_id_salt("host")
                .selected_text(state.host.clone().unwrap_or_else(|| "All hosts".into()))
                .show_ui(ui, |ui| {
                    if ui
                        .selectable_label(state.host.is_none(), "All hosts")
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
                        }
                    }
                })
                .response
                .labelled_by(label.id);
        }
        let current = profile
            .ranks
            .get(state.rank)
            .map(|r| r.label())
            .unwrap_or_default();
        let label = ui.label("Rank ID");
        egui::ComboBox::from_id_salt("rank")
            .selected_text(current)
            .width(260.0)
            .show_ui(ui, |ui| {
                for i in profile.ranks_on(state.host.as_deref()) {
                    if ui
                        .selectable_label(i == state.rank, profile.ranks[i].label())
                        .clicked()
                        && (i != state.rank || view.is_none())
                    {
                        out.push(Command::SelectRank(i));
                    }
                }
            })
            .response
            .labelled_by(label.id);
        let label = ui.label("Group By");
        egui::ComboBox::from_id_salt("group_by")
            .selected_text(state.group_by.label())
            .show_ui(ui, |ui| {
                for g in GroupBy::ALL {
                    if ui
                        .selectable_label(state.group_by == g, g.label())
                        .clicked()
                    {
                        out.push(Command::SetGroupBy(g));
                    }
                }
            })
            .response
            .labelled_by(label.id);
        if let Some(view) = view {
            let graphs = view.static_graphs();
            if !graphs.is_empty() {
                ui.separator();
                let mut on = state.static_view;
                if ui.checkbox(&mut on, "Static graph").changed() {
                    out.push(Command::SetStaticView(on));
                }
                if state.static_view {
                    let current = graphs
                        .get(state.graph)
                        .map(|g| g.graph_id.clone())
                        .unwrap_or_default();
                    let label = ui.label("Graph ID");
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
            let n = view.data.report.warning_count() + profile.notes.len();
            if n > 0 {
                ui.separator();
                if ui.button(format!("⚠ {n} warnings")).clicked() {
                    out.push(Command::ShowWarnings(true));
                }
            }
        }
        if let Some(l) = loading {
            ui.separator();
            progress_ui(ui, l, out);
        }
    });
}

/// The running load's progress (files and bytes read) and its Cancel button.
fn progress_ui(ui: &mut egui::Ui, loading: &Loading, out: &mut Vec<Command>) {
    let p = &loading.job.control().progress;
    let (done, total) = (p.bytes_done(), p.bytes_total());
    let frac = if total > 0 {
        done as f32 / total as f32
    } else {
        0.0
    };
    let text = format!(
        "loading {}: {} files, {} of {} MB",
        loading.what,
        p.files_done(),
        done / (1 << 20),
        total / (1 << 20)
    );
    ui.add(
        egui::ProgressBar::new(frac)
            .desired_width(220.0)
            .text(text.clone()),
    )
    .on_hover_text(text);
    if ui.button("Cancel").clicked() {
        out.push(Command::CancelLoad);
    }
}

/// The central area before a rank is on screen: the error, the load's progress, or how to start.
pub fn placeholder_ui(
    ui: &mut egui::Ui,
    error: Option<&str>,
    loading: Option<&Loading>,
    discovered: bool,
    out: &mut Vec<Command>,
) {
    ui.vertical_centered(|ui| {
        ui.add_space(80.0);
        if let Some(e) = error {
            ui.heading("Nothing to show");
            ui.colored_label(ui.visuals().error_fg_color, e);
        } else if let Some(l) = loading {
            ui.heading("Loading…");
            ui.horizontal(|ui| {
                ui.spinner();
                // Once the ranks are known the parameter bar shows it.
                if !discovered {
                    progress_ui(ui, l, out);
                }
            });
        } else {
            ui.heading("memsight");
            ui.label("Open a profiling folder (*_ascend_pt, *_ascend_ms, PROF_*, a cluster folder) or an ascend_pytorch_profiler*.db.");
        }
        ui.add_space(12.0);
        if ui.button("Open folder…").clicked() {
            out.push(Command::Pick(PickKind::Folder));
        }
    });
}
