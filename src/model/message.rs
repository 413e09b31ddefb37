//! The load notes a user meets most, as values: ingest writes their English text (what the CLI
//! and JSON print), and the UI recognises the text again to show it in the user's language.
//! Any other note is shown as written.

/// A note ingest writes, with what varies in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// memory_record without operator_memory.
    NoOperatorMemory,
    /// No npu_module_mem file.
    NoModuleMem,
    /// No memory_record file.
    NoMemoryRecord,
    /// A DB and CSV files: the DB is read.
    UsingDb,
    /// A DB and CSV files: the CSV files are read, as the user asked.
    UsingCsv,
    /// Both sliced and unsliced files: the slices are read.
    UsingSlices,
    /// Files whose timestamps use scientific notation (joined by `, `).
    LossyTimestamps {
        /// The files, as written.
        files: String,
    },
    /// A file whose names are not UTF-8 and were decoded as GB18030.
    NamesNotUtf8 {
        /// The file.
        path: String,
    },
    /// A file decoded from another encoding (UTF-16).
    DecodedFrom {
        /// The file.
        path: String,
        /// The encoding's name.
        encoding: String,
    },
}

const NO_OPERATOR_MEMORY: &str =
    "no operator_memory*.csv beside memory_record: the details table is empty";
const NO_MODULE_MEM: &str = "no npu_module_mem*.csv: the component peak table is empty";
const NO_MEMORY_RECORD: &str = "no memory_record*.csv: no curves, only the details table (MindStudio Insight shows nothing here)";
// The two source notes are the rank's own constants: discovery and load compare with them.
use super::{USING_CSV_NOTE as USING_CSV, USING_DB_NOTE as USING_DB};
const USING_SLICES: &str = "both sliced and unsliced files present; using the slices";
const LOSSY_BEFORE: &str = "lossy timestamps: ";
const LOSSY_AFTER: &str = " use scientific notation (saved by Excel?); times there are approximate";
const NOT_UTF8_AFTER: &str =
    ": some names are not UTF-8 (GBK, as Chinese Excel saves CSV?); they were decoded as GB18030";
const DECODED_FROM: &str = ": decoded from ";

impl Message {
    /// The English text, as the CLI prints it.
    pub fn text(&self) -> String {
        match self {
            Message::NoOperatorMemory => NO_OPERATOR_MEMORY.into(),
            Message::NoModuleMem => NO_MODULE_MEM.into(),
            Message::NoMemoryRecord => NO_MEMORY_RECORD.into(),
            Message::UsingDb => USING_DB.into(),
            Message::UsingCsv => USING_CSV.into(),
            Message::UsingSlices => USING_SLICES.into(),
            Message::LossyTimestamps { files } => format!("{LOSSY_BEFORE}{files}{LOSSY_AFTER}"),
            Message::NamesNotUtf8 { path } => format!("{path}{NOT_UTF8_AFTER}"),
            Message::DecodedFrom { path, encoding } => format!("{path}{DECODED_FROM}{encoding}"),
        }
    }

    /// The message a note's text was written from, if it is one of these.
    pub fn recognize(text: &str) -> Option<Message> {
        let fixed = [
            (NO_OPERATOR_MEMORY, Message::NoOperatorMemory),
            (NO_MODULE_MEM, Message::NoModuleMem),
            (NO_MEMORY_RECORD, Message::NoMemoryRecord),
            (USING_DB, Message::UsingDb),
            (USING_CSV, Message::UsingCsv),
            (USING_SLICES, Message::UsingSlices),
        ];
        if let Some((_, m)) = fixed.into_iter().find(|(t, _)| *t == text) {
            return Some(m);
        }
        if let Some(files) = text
            .strip_prefix(LOSSY_BEFORE)
            .and_then(|t| t.strip_suffix(LOSSY_AFTER))
        {
            return Some(Message::LossyTimestamps {
                files: files.into(),
            });
        }
        if let Some(path) = text.strip_suffix(NOT_UTF8_AFTER) {
            return Some(Message::NamesNotUtf8 { path: path.into() });
        }
        let (path, encoding) = text.rsplit_once(DECODED_FROM)?;
        // Encoding names are one word (`UTF-16LE`); anything else is another note.
        (!encoding.is_empty() && !encoding.contains(char::is_whitespace)).then(|| {
            Message::DecodedFrom {
                path: path.into(),
                encoding: encoding.into(),
            }
        })
    }
}

impl From<Message> for String {
    fn from(m: Message) -> String {
        m.text()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Message> {
        vec![
            Message::NoOperatorMemory,
            Message::NoModuleMem,
            Message::NoMemoryRecord,
            Message::UsingDb,
            Message::UsingCsv,
            Message::UsingSlices,
            Message::LossyTimestamps {
                files: "/数据/a.csv, /b: c.csv".into(),
            },
            Message::NamesNotUtf8 {
                path: "C:\\性能 数据\\operator_memory.csv".into(),
            },
            Message::DecodedFrom {
                path: "/x: decoded from y/memory_record.csv".into(),
                encoding: "UTF-16LE".into(),
            },
        ]
    }

    #[test]
    fn every_message_is_recognised_from_its_text() {
        for m in all() {
            assert_eq!(
                Message::recognize(&m.text()),
                Some(m.clone()),
                "{}",
                m.text()
            );
        }
    }

    #[test]
    fn other_notes_are_not_recognised() {
        for t in [
            "",
            "rank 3: no data",
            "a.db: file is not a database; using the CSV files",
            "x: decoded from two words",
        ] {
            assert_eq!(Message::recognize(t), None, "{t}");
        }
    }
}
