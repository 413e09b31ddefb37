//! A cluster summary's plain rows (`memsight summarize`): who a rank is, its steps, the named
//! amounts at its peak and its downsampled curves, as the summary file stores them and the
//! app's summary overview reads them ([`ClusterRank`]).

/// Who a rank is: what matches a summary to its folder.
#[derive(Debug, Clone, PartialEq)]
pub struct RankIdentity {
    /// Host name, when known.
    pub host: Option<String>,
    /// Rank id, as `inspect` shows it.
    pub rank: String,
    /// Device id, when known.
    pub device: Option<String>,
    /// The rank's folder (or file), as given on the command line.
    pub path: String,
    /// `csv`, `db` or the importer's name.
    pub source: String,
    /// Which profiler wrote it.
    pub format: String,
    /// How many data files the rank's source names.
    pub files: i64,
    /// Their total size, bytes.
    pub files_bytes: i64,
    /// The newest modification time among them, ns since the Unix epoch.
    pub files_mtime_ns: i64,
}

impl RankIdentity {
    /// The key under which a merge keeps one summary of a rank.
    pub(crate) fn key(&self) -> (&Option<String>, &str, &Option<String>, &str) {
        (&self.host, &self.rank, &self.device, &self.path)
    }
}

/// One training step of a rank (`memsight steps`).
#[derive(Debug, Clone, PartialEq)]
pub struct StepRow {
    /// Step number.
    pub step: i64,
    /// Start, ms.
    pub start_ms: f64,
    /// End, ms.
    pub end_ms: f64,
    /// Operator Allocated's peak in the step, MiB.
    pub peak_allocated_mib: Option<f64>,
    /// When it was reached, ms.
    pub peak_at_ms: Option<f64>,
    /// Operator Allocated at the step's end, MiB.
    pub end_allocated_mib: Option<f64>,
    /// End value minus the previous step's, MiB.
    pub change_mib: Option<f64>,
    /// Blocks allocated in the step and still alive at its end.
    pub survivors: i64,
    /// Their size, KiB.
    pub survivors_kib: f64,
}

/// A named amount at the peak: a role, an operator or a source line.
#[derive(Debug, Clone, PartialEq)]
pub struct Amount {
    /// Role, operator or `file(line): function`.
    pub name: String,
    /// MiB alive at the peak.
    pub mib: f64,
    /// Blocks alive at the peak.
    pub blocks: i64,
}

/// A downsampled curve: its extent cut into `min_max.len()` equal buckets, and the lowest and
/// highest value (MiB) the curve held in each. Stored as one BLOB of little-endian f32 pairs
/// (8 bytes a bucket: a 4,096-bucket curve is 32 KiB).
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// Start of the first bucket, ms.
    pub start_ms: f64,
    /// End of the last bucket, ms.
    pub end_ms: f64,
    /// (min, max) MiB per bucket.
    pub min_max: Vec<(f32, f32)>,
}

impl Envelope {
    /// Bucket `k`'s span, ms.
    pub fn span(&self, k: usize) -> (f64, f64) {
        let n = self.min_max.len().max(1) as f64;
        let w = self.end_ms - self.start_ms;
        (
            self.start_ms + w * k as f64 / n,
            self.start_ms + w * (k + 1) as f64 / n,
        )
    }

    pub(crate) fn to_blob(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(self.min_max.len() * 8);
        for &(lo, hi) in &self.min_max {
            b.extend_from_slice(&lo.to_le_bytes());
            b.extend_from_slice(&hi.to_le_bytes());
        }
        b
    }

    pub(crate) fn from_blob(start_ms: f64, end_ms: f64, blob: &[u8]) -> Envelope {
        let f = |c: &[u8]| f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        Envelope {
            start_ms,
            end_ms,
            min_max: blob
                .chunks_exact(8)
                .map(|c| (f(&c[..4]), f(&c[4..])))
                .collect(),
        }
    }
}

/// One rank as the app's summary overview reads it: its `ranks` row (identity, error, peaks),
/// its steps and the operator holding most at its peak. The JSON columns and the curves stay
/// in the file (curves are read on demand), so 10,000 ranks take a few MB.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterRank {
    /// Its `ranks.id` in the file (the key of its curves).
    pub id: i64,
    /// Who it is.
    pub identity: RankIdentity,
    /// Why it could not be summarised.
    pub error: Option<String>,
    /// Operator Allocated's peak, MiB.
    pub peak_allocated_mib: Option<f64>,
    /// When, ms from the rank's origin.
    pub peak_allocated_at_ms: Option<f64>,
    /// Operator Reserved's peak, MiB.
    pub peak_reserved_mib: Option<f64>,
    /// APP Reserved's peak, MiB.
    pub peak_app_reserved_mib: Option<f64>,
    /// Blocks never released.
    pub unreleased: Option<i64>,
    /// Each step, in step order.
    pub steps: Vec<StepRow>,
    /// The operator holding the most at the peak.
    pub top_operator: Option<Amount>,
}

/// A summary file as the overview reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterSummary {
    /// The ranks, in the file's order (by identity).
    pub ranks: Vec<ClusterRank>,
    /// What the merges decided.
    pub notes: Vec<String>,
    /// The machine that summarised the ranks (`None`: unknown, or several).
    pub summarised_on: Option<String>,
}

/// A column of a cluster summary's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryColumn {
    /// Rank id.
    Rank,
    /// Host.
    Host,
    /// Device id.
    Device,
    /// Peak Operator Allocated.
    PeakAllocated,
    /// When it was reached.
    PeakAt,
    /// Peak Operator Reserved.
    PeakReserved,
    /// Steps recorded.
    Steps,
    /// Growth of the step-end value over the steps.
    Growth,
    /// The operator holding most at the peak.
    TopOperator,
    /// In a comparison: the same rank's peak in the other summary.
    Before,
    /// In a comparison: this peak minus that one.
    Delta,
    /// The rank's folder, or why it could not be summarised.
    Folder,
}

impl SummaryColumn {
    /// The columns of a summary on its own, in table order.
    pub const PLAIN: [SummaryColumn; 10] = [
        SummaryColumn::Rank,
        SummaryColumn::Host,
        SummaryColumn::Device,
        SummaryColumn::PeakAllocated,
        SummaryColumn::PeakAt,
        SummaryColumn::PeakReserved,
        SummaryColumn::Steps,
        SummaryColumn::Growth,
        SummaryColumn::TopOperator,
        SummaryColumn::Folder,
    ];
    /// The columns in a comparison, in table order.
    pub const COMPARED: [SummaryColumn; 12] = [
        SummaryColumn::Rank,
        SummaryColumn::Host,
        SummaryColumn::Device,
        SummaryColumn::PeakAllocated,
        SummaryColumn::Before,
        SummaryColumn::Delta,
        SummaryColumn::PeakAt,
        SummaryColumn::PeakReserved,
        SummaryColumn::Steps,
        SummaryColumn::Growth,
        SummaryColumn::TopOperator,
        SummaryColumn::Folder,
    ];
}
