//! Why a rank could not be loaded at all: the error every loading stage returns, kept apart
//! from the stages so that none of them imports another for it.

use crate::model::Cause;

/// Causes joined by `; `, as the CLI prints them.
fn join(causes: &[Cause]) -> String {
    let texts: Vec<&str> = causes.iter().map(|c| c.en.as_str()).collect();
    texts.join("; ")
}

impl LoadError {
    /// Why, as a cause a note can carry: in English the whole error; its kind (and file) when
    /// one file's reader said it, so that Chinese says it too.
    pub fn cause(&self) -> Cause {
        match self {
            LoadError::NoData {
                reason: NoDataReason::Unreadable { errors },
                ..
            } if errors.len() == 1 => Cause {
                en: self.to_string(),
                ..errors[0].clone()
            },
            _ => Cause::said(self.to_string()),
        }
    }
}

/// Why a rank could not be loaded at all.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The user cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The rank has no usable memory data; the reason says what was tried.
    #[error("rank {rank}: {reason}")]
    NoData {
        /// The rank id.
        rank: String,
        /// What went wrong.
        reason: NoDataReason,
    },
}

/// Why a rank has no usable memory data, with what varies in it (the CLI prints the English
/// text, the UI its own language).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoDataReason {
    /// Its files were read and hold no data rows.
    #[error("{files}: no data rows")]
    NoDataRows {
        /// The files, joined by `, `.
        files: String,
    },
    /// Its memory_record files could not be read (the errors, joined by `; `).
    #[error("{}", join(errors))]
    Unreadable {
        /// What each file's reader said.
        errors: Vec<Cause>,
    },
    /// Neither memory_record nor operator_memory rows.
    #[error("no memory_record or operator_memory rows")]
    NoRows,
    /// Its DB could not be read, and no CSV files are beside it.
    #[error("{path}: {cause}")]
    DbFailed {
        /// The DB.
        path: String,
        /// Why (boxed: it keeps every load's error small).
        cause: Box<Cause>,
    },
    /// A rank of an importer that is not there.
    #[error("no importer named {name}")]
    NoImporter {
        /// The importer's name.
        name: String,
    },
    /// An msMemScope dump that could not be read.
    #[error("{0}")]
    MemScope(crate::model::DumpProblem),
    /// An importer's own reason, as it words it.
    #[error("{0}")]
    Other(String),
}

impl From<String> for NoDataReason {
    fn from(t: String) -> NoDataReason {
        NoDataReason::Other(t)
    }
}

impl From<&str> for NoDataReason {
    fn from(t: &str) -> NoDataReason {
        NoDataReason::Other(t.to_string())
    }
}
