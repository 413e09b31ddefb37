//! Files being written that must not outlive a killed process: `summarize` writes its summary
//! to a temporary file beside `--out` and renames it into place; a batch scheduler that stops
//! the job (SIGTERM, SIGHUP, Ctrl+C) would otherwise leave that file behind, up to 50 MB.
//!
//! A writer registers its temporary file for as long as it exists ([`Pending`]); the CLI installs
//! [`remove_on_termination`], whose handler removes every registered file and exits. SIGKILL
//! cannot be caught: that one file can still be left, named `.memsight-summary-*.db`.

use std::path::PathBuf;
use std::sync::Mutex;

static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The exit status after a termination signal (128 + SIGTERM's number, as shells report it).
pub const TERMINATED: i32 = 143;

/// A file registered while it is written; dropping it unregisters the file.
pub struct Pending(PathBuf);

impl Pending {
    /// Registers `path` for removal if the process is terminated before this is dropped.
    pub fn new(path: PathBuf) -> Pending {
        if let Ok(mut p) = PENDING.lock() {
            p.push(path.clone());
        }
        Pending(path)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Ok(mut p) = PENDING.lock()
            && let Some(i) = p.iter().position(|x| *x == self.0)
        {
            p.swap_remove(i);
        }
    }
}

/// Removes every registered file (the termination handler calls it).
pub fn remove_all() {
    if let Ok(p) = PENDING.lock() {
        for path in p.iter() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Installs, once per process, a handler for SIGINT, SIGTERM and SIGHUP (Ctrl+C and closing
/// the console on Windows) that removes the registered files and exits with [`TERMINATED`].
/// For the CLI's writing commands only: the app keeps the default behaviour.
pub fn remove_on_termination() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            remove_all();
            std::process::exit(TERMINATED);
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_file_is_removed_until_it_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        let kept = Pending::new(a.clone());
        drop(Pending::new(b.clone()));
        remove_all();
        assert!(!a.exists(), "registered: removed");
        assert!(b.exists(), "unregistered when dropped: kept");
        drop(kept);
    }
}
