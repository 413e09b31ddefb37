//! Loading off the UI thread: discovery and one rank at a time, with progress and cancel.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError, channel};

use crate::analysis::{Column, GroupBy, RankView, SortDir};
use crate::ingest::{LoadControl, LoadError, Profile, discover, load_rank};

/// What a load job reports.
pub enum LoadMsg {
    /// Discovery finished.
    Discovered(Arc<Profile>),
    /// The rank is loaded and its Overall curves are ready to draw.
    Loaded {
        /// Index of the rank.
        rank: usize,
        /// The view.
        view: Arc<RankView>,
    },
    /// Nothing could be shown; the message says why.
    Failed(String),
    /// The user cancelled.
    Cancelled,
}

/// What [`LoadJob::poll`] found.
pub enum Poll {
    /// A message.
    Msg(LoadMsg),
    /// Nothing yet; the job still runs.
    Pending,
    /// The job is over and has nothing more to say.
    Finished,
}

/// A running job.
pub struct LoadJob {
    rx: Receiver<LoadMsg>,
    /// Progress and cancel.
    pub control: Arc<LoadControl>,
    /// What is being loaded, for the progress line.
    pub what: String,
}

impl LoadJob {
    /// Discovers `path` (when `profile` is None) and loads rank `rank`, on a worker thread.
    /// `wake` is called after each message (the app passes a repaint request).
    pub fn start(
        path: PathBuf,
        profile: Option<Arc<Profile>>,
        rank: usize,
        wake: impl Fn() + Send + 'static,
    ) -> LoadJob {
        let (tx, rx) = channel();
        let control = Arc::new(LoadControl::new());
        let ctl = control.clone();
        let what = profile
            .as_ref()
            .and_then(|p| p.ranks.get(rank))
            .map_or_else(|| path.display().to_string(), |r| r.label());
        let spawned = std::thread::Builder::new()
            .name("memsight-load".into())
            .spawn(move || {
                let send = |m: LoadMsg| {
                    let _ = tx.send(m);
                    wake();
                };
                let profile = match profile {
                    Some(p) => p,
                    None => match discover(&path) {
                        Ok(p) => {
                            let p = Arc::new(p);
                            send(LoadMsg::Discovered(p.clone()));
                            p
                        }
                        Err(e) => return send(LoadMsg::Failed(e.to_string())),
                    },
                };
                let Some(info) = profile.ranks.get(rank) else {
                    return send(LoadMsg::Failed(format!("no rank at index {rank}")));
                };
                match load_rank(info, &ctl) {
                    Ok(data) => {
                        let view = Arc::new(RankView::new(data));
                        view.series(GroupBy::Overall); // the first frame needs these
                        view.time_extent();
                        send(LoadMsg::Loaded {
                            rank,
                            view: view.clone(),
                        });
                        // Warm what the user is likely to ask next, still off the UI thread.
                        view.sort_cache
                            .order(&view.data, Column::Size, SortDir::Desc);
                        view.sort_cache
                            .order(&view.data, Column::Size, SortDir::Asc);
                        view.live_index();
                    }
                    Err(LoadError::Cancelled) => send(LoadMsg::Cancelled),
                    Err(e) => send(LoadMsg::Failed(e.to_string())),
                }
            });
        if let Err(e) = spawned {
            let (tx2, rx2) = channel();
            let _ = tx2.send(LoadMsg::Failed(format!(
                "cannot start a loader thread: {e}"
            )));
            return LoadJob {
                rx: rx2,
                control,
                what,
            };
        }
        LoadJob { rx, control, what }
    }

    /// The next message, if any.
    pub fn poll(&self) -> Poll {
        match self.rx.try_recv() {
            Ok(m) => Poll::Msg(m),
            Err(TryRecvError::Empty) => Poll::Pending,
            Err(TryRecvError::Disconnected) => Poll::Finished,
        }
    }

    /// Waits for the next message (tests and headless runs).
    pub fn wait(&self) -> Option<LoadMsg> {
        self.rx.recv().ok()
    }
}
