//! A job's folder of OOM bundles ([`crate::snapshot::cluster`]), opened when a folder holds
//! allocator snapshots and no profile: which ranks ran out (and how), and how close the others
//! came, a row per snapshot and device; a file name opens that snapshot; Copy gives the table
//! as `memsight snapshot DIR` prints it.

use std::path::PathBuf;

use crate::model::bytes_to_mib;
use crate::snapshot::cluster::{BundleCluster, MAX_FILES, bundle_cluster, cluster_tsv};
use crate::snapshot::oom::OomVerdict;
use crate::ui::command::Command;
use crate::ui::format::grouped;
use crate::ui::i18n::Tr;
use crate::ui::jobs::{Job, JobKey, Jobs, Place, Poll};

/// The folder's bundles, read in a job.
pub struct OomClusterView {
    /// The folder.
    pub dir: PathBuf,
    job: Option<Job<BundleCluster>>,
    /// The table, once read.
    pub cluster: Option<BundleCluster>,
    /// Why it could not be read (the job failed).
    pub error: Option<String>,
}

impl OomClusterView {
    /// Starts reading every snapshot under `dir` in a job.
    pub fn open(jobs: &mut Jobs, dir: PathBuf) -> OomClusterView {
        let d = dir.clone();
        let job = jobs.run(
            JobKey::new(crate::ui::loading::LOAD_JOB),
            Place::Thread,
            move |_| bundle_cluster(&d),
        );
        OomClusterView {
            dir,
            job: Some(job),
            cluster: None,
            error: None,
        }
    }

    /// Takes the job's result when it is there; true while still reading.
    pub fn poll(&mut self) -> bool {
        let Some(job) = &self.job else {
            return false;
        };
        match job.poll() {
            Poll::Msg(c) => self.cluster = Some(c),
            Poll::Failed(e) => self.error = Some(e),
            Poll::Finished => {}
            Poll::Pending => return true,
        }
        self.job = None;
        false
    }

    /// Blocks until the folder is read (tests).
    pub fn wait(&mut self) {
        while self.poll() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// The heading, the table and Copy; a click on a file opens it (`out`).
    pub fn ui(&mut self, ui: &mut egui::Ui, t: &Tr, out: &mut Vec<Command>) {
        if self.poll() {
            crate::ui::spinner::spinner(ui);
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(50));
            return;
        }
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
            return;
        }
        let Some(c) = &self.cluster else { return };
        let ran_out = c.rows.iter().filter(|r| r.verdict.is_some()).count();
        ui.heading((t.oom_cluster_title)(&self.dir.display().to_string()));
        let room = c.room_bytes.map(|b| grouped(bytes_to_mib(b), 2));
        ui.label((t.oom_cluster_summary)(
            ran_out,
            c.rows.len(),
            room.as_deref(),
        ));
        if ui.button(t.copy).clicked() {
            ui.ctx().copy_text(cluster_tsv(c));
        }
        ui.add_space(4.0);
        let mb = |b: Option<i64>| b.map_or(String::new(), |b| grouped(bytes_to_mib(b), 2));
        egui::ScrollArea::both().show(ui, |ui| {
            egui::Grid::new("oom_cluster_grid")
                .striped(true)
                .show(ui, |ui| {
                    for h in t.oom_cluster_headers {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for r in &c.rows {
                        if ui.link(&r.file).clicked() {
                            out.push(Command::Open(self.dir.join(&r.file)));
                        }
                        ui.label(format!("NPU:{}", r.device));
                        match r.verdict {
                            Some(v) => {
                                let text = match v {
                                    OomVerdict::Fragmentation => t.oom_fragmentation,
                                    OomVerdict::Exhaustion => t.oom_exhaustion,
                                    OomVerdict::ProcessLimit => t.oom_process_limit,
                                    OomVerdict::NoRequest => t.oom_no_request,
                                };
                                ui.colored_label(ui.visuals().warn_fg_color, text);
                            }
                            None => {
                                ui.label("");
                            }
                        }
                        for v in [
                            r.requested_bytes,
                            r.device_free_bytes,
                            Some(r.reserved_bytes),
                            Some(r.peak_allocated_bytes),
                            r.headroom_bytes,
                        ] {
                            ui.with_layout(
                                egui::Layout::right_to_left(egui::Align::Center),
                                |ui| {
                                    ui.label(mb(v));
                                },
                            );
                        }
                        ui.end_row();
                    }
                });
            for (file, why) in &c.unreadable {
                ui.colored_label(ui.visuals().warn_fg_color, format!("{file}: {why}"));
            }
            if c.left_out > 0 {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    (t.oom_cluster_left_out)(c.left_out, MAX_FILES),
                );
            }
        });
    }
}

/// A folder whose discovery found allocator snapshots and no profile opens as a job's OOM
/// bundles ([`crate::ui::documents::FROM_DISCOVERY`]).
pub fn from_discovery(
    e: &crate::ingest::DiscoverError,
    jobs: &mut Jobs,
) -> Option<Box<dyn crate::ui::document::Document>> {
    let crate::ingest::DiscoverError::NoMemoryData { path, notes, .. } = e else {
        return None;
    };
    let snapshots = notes
        .iter()
        .any(|n| matches!(n, crate::model::Message::SnapshotsInFolder { .. }));
    snapshots.then(|| Box::new(OomClusterView::open(jobs, PathBuf::from(path))) as _)
}

impl crate::ui::document::Document for OomClusterView {
    fn kind(&self) -> &'static str {
        "oom_folder"
    }

    fn path(&self) -> Option<&std::path::Path> {
        Some(&self.dir)
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut crate::ui::document::DocCx<'_>) {
        let (_, central) = crate::ui::document::panel_frames(ui.style());
        egui::CentralPanel::default().frame(central).show(ui, |ui| {
            OomClusterView::ui(self, ui, cx.t, cx.out);
        });
    }
}
