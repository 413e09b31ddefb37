//! Why a file could not be read, typed: what happened ([`CauseKind`]), which file, and the
//! English words of whoever reported it (the OS, SQLite, a parser). English shows those words
//! as they are; Chinese says the kind in Chinese and keeps the file's name, so no code swaps
//! phrases of an English text.

use std::fmt;
use std::io;

use super::Lang;

/// What happened, as far as both languages can say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CauseKind {
    /// No such file or folder.
    NotFound,
    /// The OS refused access.
    PermissionDenied,
    /// A folder where a file was expected.
    IsADirectory,
    /// A file where a folder was expected (a path component).
    NotADirectory,
    /// A read-only file system.
    ReadOnly,
    /// No space left on the device.
    NoSpace,
    /// The file is empty (0 bytes).
    Empty,
    /// Not a regular file: what it is (`a FIFO`, as [`NotRegularFile`] says).
    NotRegular(&'static str),
    /// SQLite: the file is not a database.
    NotADatabase,
    /// SQLite: the database is malformed.
    Corrupt,
    /// SQLite: the database could not be opened.
    CannotOpen,
    /// Anything else: said in the reporter's words in both languages.
    Other,
}

impl CauseKind {
    /// The kind of an I/O error (a [`NotRegularFile`] inside it included).
    pub fn of_io(e: &io::Error) -> CauseKind {
        if let Some(n) = e.get_ref().and_then(|r| r.downcast_ref::<NotRegularFile>()) {
            return CauseKind::NotRegular(n.what);
        }
        match e.kind() {
            io::ErrorKind::NotFound => CauseKind::NotFound,
            io::ErrorKind::PermissionDenied => CauseKind::PermissionDenied,
            io::ErrorKind::IsADirectory => CauseKind::IsADirectory,
            io::ErrorKind::NotADirectory => CauseKind::NotADirectory,
            io::ErrorKind::ReadOnlyFilesystem => CauseKind::ReadOnly,
            io::ErrorKind::StorageFull => CauseKind::NoSpace,
            _ => CauseKind::Other,
        }
    }

    /// The kind in Chinese; `None` for [`CauseKind::Other`].
    fn zh(&self) -> Option<String> {
        Some(
            match self {
                CauseKind::NotFound => "找不到该文件或文件夹",
                CauseKind::PermissionDenied => "没有访问权限",
                CauseKind::IsADirectory => "这是一个文件夹",
                CauseKind::NotADirectory => "不是文件夹",
                CauseKind::ReadOnly => "文件系统只读",
                CauseKind::NoSpace => "磁盘空间不足",
                CauseKind::Empty => "文件为空",
                CauseKind::NotRegular(what) => {
                    return Some(format!(
                        "不是普通文件（而是{}）；已跳过",
                        zh_file_type(what)
                    ));
                }
                CauseKind::NotADatabase => "不是数据库文件",
                CauseKind::Corrupt => "数据库文件已损坏",
                CauseKind::CannotOpen => "无法打开数据库文件",
                CauseKind::Other => return None,
            }
            .to_string(),
        )
    }
}

/// What a non-regular file is (`a FIFO`, as [`crate::ingest::safe_fs::file_kind`] says), in
/// Chinese.
pub fn zh_file_type(what: &str) -> &str {
    match what {
        "a FIFO" => "命名管道 FIFO",
        "a character device" => "字符设备",
        "a block device" => "块设备",
        "a socket" => "套接字",
        "a folder" => "文件夹",
        other => other,
    }
}

/// The error inside an [`io::Error`] for a path that exists but is not a regular file.
#[derive(Debug, Clone, Copy)]
pub struct NotRegularFile {
    /// What it is (`a FIFO`, `a character device`, …).
    pub what: &'static str,
}

impl fmt::Display for NotRegularFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a regular file (it is {}); skipped", self.what)
    }
}

impl std::error::Error for NotRegularFile {}

/// Why something could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// The English text, as the CLI prints it.
    pub en: String,
    /// The file it names, when the Chinese text should name it too.
    pub path: Option<String>,
    /// What happened.
    pub kind: CauseKind,
}

impl Cause {
    /// A cause known only by its words: shown as written in both languages.
    pub fn said(en: impl Into<String>) -> Cause {
        Cause {
            en: en.into(),
            path: None,
            kind: CauseKind::Other,
        }
    }

    /// An I/O error: `en` as written, its kind from the error.
    pub fn io(en: impl Into<String>, path: Option<String>, e: &io::Error) -> Cause {
        Cause {
            en: en.into(),
            path,
            kind: CauseKind::of_io(e),
        }
    }

    /// The text in `lang`.
    pub fn render(&self, lang: Lang) -> String {
        match (lang, self.kind.zh()) {
            (Lang::Zh, Some(zh)) => match &self.path {
                Some(p) => format!("{p}：{zh}"),
                None => zh,
            },
            _ => self.en.clone(),
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.en)
    }
}

impl From<String> for Cause {
    fn from(en: String) -> Cause {
        Cause::said(en)
    }
}

impl From<io::Error> for Cause {
    fn from(e: io::Error) -> Cause {
        Cause::io(e.to_string(), None, &e)
    }
}

impl From<&str> for Cause {
    fn from(en: &str) -> Cause {
        Cause::said(en)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_os_error_is_said_in_chinese_by_its_kind_and_as_written_in_english() {
        let e = io::Error::from(io::ErrorKind::NotFound);
        let c = Cause::io(
            format!("cannot read /a.csv: {e}"),
            Some("/a.csv".into()),
            &e,
        );
        assert_eq!(c.render(Lang::En), format!("cannot read /a.csv: {e}"));
        assert_eq!(c.render(Lang::Zh), "/a.csv：找不到该文件或文件夹");
    }

    #[test]
    fn a_non_regular_file_is_known_through_the_io_error() {
        let e = io::Error::new(
            io::ErrorKind::InvalidInput,
            NotRegularFile { what: "a FIFO" },
        );
        assert_eq!(CauseKind::of_io(&e), CauseKind::NotRegular("a FIFO"));
        let c = Cause::io(e.to_string(), None, &e);
        assert_eq!(
            c.render(Lang::En),
            "not a regular file (it is a FIFO); skipped"
        );
        assert_eq!(
            c.render(Lang::Zh),
            "不是普通文件（而是命名管道 FIFO）；已跳过"
        );
    }

    #[test]
    fn words_nobody_typed_stay_as_written() {
        let c = Cause::said("line 3: bad JSON");
        assert_eq!(c.render(Lang::Zh), "line 3: bad JSON");
    }
}
