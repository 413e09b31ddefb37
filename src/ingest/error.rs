//! Why a rank could not be loaded at all: the error every loading stage returns, kept apart
//! from the stages so that none of them imports another for it.

/// Why a rank could not be loaded at all.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The user cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The rank has no usable memory data; the message says what was tried.
    #[error("rank {rank}: {reason}")]
    NoData {
        /// The rank id.
        rank: String,
        /// What went wrong.
        reason: String,
    },
}
