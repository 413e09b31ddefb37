//! Opening the user's files without ever blocking, reading unboundedly or writing.
//!
//! A FIFO, socket or device under a data file's name (`memory_record.csv` → `/dev/zero`) would
//! block in `open(2)` or never end a read. Every file memsight reads goes through
//! [`open_regular`] (or [`ensure_regular`] before SQLite opens it): the type of the symlink's
//! target is checked, and on Unix the open itself cannot block (`O_NONBLOCK`, cleared again once
//! the file is known to be regular).
//!
//! **Confinement.** The MCP server reads only under the roots its client granted
//! ([`confine_reads`]). A root means the files whose real path (every link resolved) lies under
//! the root's real path: a link inside a root to a file or folder outside is outside. Every
//! open goes through [`open_regular`] / [`ensure_regular`], which check the real path of what
//! they open, and every walk of a folder skips what [`readable`] refuses, so no reader the
//! server reaches follows a link out.

use std::fs::{self, File, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

/// How many confinements are held, and the real paths reads are confined to; `None`:
/// anywhere (the app, the CLI).
static CONFINED: RwLock<(usize, Option<Vec<PathBuf>>)> = RwLock::new((0, None));

/// Reads are confined while one of these is held ([`confine_reads`]); the last one dropped
/// lifts the confinement.
#[derive(Debug)]
#[must_use = "reads are confined only while it is held"]
pub struct Confined(());

/// Confines every read of this process to the folders `roots` (their real paths) while the
/// returned guard is held. The MCP server holds one for each call it runs, with the call's
/// granted roots; calls of one client share its roots (a call started later sets the roots
/// the running ones read under too).
pub fn confine_reads(roots: &[PathBuf]) -> Confined {
    let real: Vec<PathBuf> = roots
        .iter()
        .filter_map(|p| fs::canonicalize(p).ok())
        .collect();
    let mut g = match CONFINED.write() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    g.0 += 1;
    g.1 = Some(real);
    Confined(())
}

impl Drop for Confined {
    fn drop(&mut self) {
        let mut g = match CONFINED.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        g.0 = g.0.saturating_sub(1);
        if g.0 == 0 {
            g.1 = None;
        }
    }
}

/// The error for a path whose real path lies outside the granted roots.
#[derive(Debug)]
pub struct OutsideRoots {
    /// The path as given.
    pub path: PathBuf,
    /// Where it really is.
    pub real: PathBuf,
}

impl std::fmt::Display for OutsideRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is outside the granted roots (it resolves to {}); not read",
            self.path.display(),
            self.real.display()
        )
    }
}

impl std::error::Error for OutsideRoots {}

/// Whether the real path of `path` lies under the real path of one of `roots`: what a root
/// means, for the MCP server's check of the paths a call names and for [`check_confined`].
pub fn resolves_under(path: &Path, roots: &[PathBuf]) -> bool {
    let Ok(real) = fs::canonicalize(path) else {
        return false;
    };
    roots
        .iter()
        .filter_map(|r| fs::canonicalize(r).ok())
        .any(|r| real.starts_with(r))
}

/// Whether `path` may be read now: always, unless reads are confined ([`confine_reads`]); then
/// only when its real path exists and lies under a root.
pub fn readable(path: &Path) -> bool {
    check_confined(path).is_ok()
}

/// [`readable`], as the error that says why not.
pub fn check_confined(path: &Path) -> io::Result<()> {
    let guard = match CONFINED.read() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    let Some(roots) = guard.1.as_ref() else {
        return Ok(());
    };
    let real = fs::canonicalize(path)?;
    if roots.iter().any(|r| real.starts_with(r)) {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        OutsideRoots {
            path: path.to_path_buf(),
            real,
        },
    ))
}

/// What a non-regular file is, for messages (`"a FIFO"`, `"a character device"`, …).
pub fn file_kind(meta: &Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        return "a folder";
    }
    if ft.is_file() {
        return "a regular file";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// The error for a path that exists but is not a regular file.
fn not_regular(meta: &Metadata) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        crate::model::NotRegularFile {
            what: file_kind(meta),
        },
    )
}

/// Checks that `path` (after following symlinks) is a regular file, without opening it.
pub fn ensure_regular(path: &Path) -> io::Result<Metadata> {
    check_confined(path)?;
    let meta = fs::metadata(path)?;
    if meta.is_file() {
        Ok(meta)
    } else {
        Err(not_regular(&meta))
    }
}

/// Opens `path` for reading if it is a regular file. Never blocks, whatever sits at the path.
pub fn open_regular(path: &Path) -> io::Result<File> {
    // Checked before opening (the common case: a clear message, no open at all) and again on
    // the opened handle (the path may have been swapped in between).
    ensure_regular(path)?;
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    // The path may have been swapped for a link out since the check: the opened file must
    // be one whose real path is still under a root.
    check_confined(path)?;
    make_blocking(&file)?;
    Ok(file)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// Clears `O_NONBLOCK` again: it means nothing for regular files on Linux and macOS, but a
/// network file system is free to honour it.
#[cfg(unix)]
#[allow(unsafe_code)] // two fcntl calls on our own descriptor: no safe std API clears O_NONBLOCK
fn make_blocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a file descriptor we own; F_GETFL/F_SETFL take and return plain ints.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(unix))]
fn make_blocking(_file: &File) -> io::Result<()> {
    Ok(())
}

/// Reads a small regular file whole, refusing one larger than `max` bytes.
pub fn read_small(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let mut buf = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {} KB; not read", max / 1024),
        ));
    }
    Ok(buf)
}

/// Copies the regular file `from` to `to` (a private temporary file), at most `from`'s size at
/// the time of the check: a file that grows meanwhile cannot make the copy unbounded.
pub fn copy_regular(from: &Path, to: &Path) -> io::Result<u64> {
    let file = open_regular(from)?;
    let len = file.metadata()?.len();
    let mut out = File::create(to)?;
    io::copy(&mut file.take(len), &mut out)
}

/// The regular files under `dir` (it included, down to `max_depth` folders below it) whose
/// names `wanted` accepts, sorted. Links are not followed (a link's own type is neither a
/// folder nor a regular file), so a link loop or a FIFO under a wanted name is never met.
pub fn files_under(dir: &Path, max_depth: usize, wanted: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, depth)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            if !readable(&e.path()) {
                continue;
            }
            if kind.is_dir() && depth < max_depth {
                stack.push((e.path(), depth + 1));
            } else if kind.is_file() && wanted(&e.file_name().to_string_lossy()) {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_open_and_others_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.csv");
        fs::write(&f, "x").unwrap();
        assert!(open_regular(&f).is_ok());
        let e = open_regular(dir.path()).unwrap_err();
        assert!(e.to_string().contains("a folder"), "{e}");
        assert!(open_regular(&dir.path().join("missing")).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_symlinks_to_them_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("memory_record.csv");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = open_regular(&link).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        assert!(read_small(&link, 1024).is_err());
    }

    #[test]
    fn read_small_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.json");
        fs::write(&f, vec![b'a'; 2000]).unwrap();
        assert_eq!(read_small(&f, 2000).unwrap().len(), 2000);
        assert!(read_small(&f, 1999).is_err());
    }
}
