//! `memsight explain PATH`: one short verdict an engineer or an AI assistant reads first, for a
//! profile's rank, an allocator snapshot or a cluster summary (docs/explain.md has the schema).
//!
//! Every figure is copied from the JSON of the command it comes from (`inspect`, `steps`,
//! `roles`, `modules`, `stacks`, `whatif`, `snapshot`): a profile's rank is loaded once and
//! those commands' reports ([`crate::reports`]) are computed on it, so that the verdict and the
//! command never disagree; each part names that command, to dig further. The JSON stays under [`MAX_JSON_BYTES`] and the text under [`MAX_TEXT_LINES`].
//!
//! - [`profile`]: a rank of a profile (folder, `.db`, PyTorch trace);
//! - [`snapshot`]: an allocator snapshot (`.pickle`);
//! - [`summary`]: a cluster summary file (`memsight summarize`);
//! - [`text`]: the verdict as lines of text.

pub mod profile;
pub mod snapshot;
pub mod summary;
pub mod text;

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use crate::model::{Lang, SourceChoice};

/// The verdict's schema name and version, its `schema` field.
pub const SCHEMA: &str = "memsight.explain/1";

/// The most bytes of JSON a verdict takes.
pub const MAX_JSON_BYTES: usize = 5 * 1024;

/// The most lines of text a verdict takes.
pub const MAX_TEXT_LINES: usize = 40;

/// `memsight explain`'s options.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ExplainArgs {
    /// Rank id (a profile); default the rank with the highest peak.
    #[arg(long, allow_hyphen_values = true)]
    pub rank: Option<String>,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The text's language (the JSON has none): en or zh; default the locale's (LC_ALL,
    /// LC_MESSAGES, LANG).
    #[arg(long, value_parser = crate::reports::parse_lang)]
    pub lang: Option<Lang>,
}

/// Runs `explain`; returns the exit code.
pub fn explain(
    path: &Path,
    source: SourceChoice,
    args: &ExplainArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let mut run = || -> Result<(), String> {
        let v = made(path, source, args.rank.as_deref())?;
        let written = if args.json {
            writeln!(out, "{}", compact(&v.json))
        } else {
            let lang = args.lang.unwrap_or_else(crate::reports::default_lang);
            write!(out, "{}", text::render(&v.json, lang, &v.chinese))
        };
        written.map_err(|e| e.to_string())
    };
    super::finish(run(), err)
}

/// The verdict for `path`: a snapshot's, a summary's or a profile rank's.
pub fn verdict(path: &Path, source: SourceChoice, rank: Option<&str>) -> Result<Value, String> {
    made(path, source, rank).map(|v| v.json)
}

/// A verdict, and the Chinese of the domain texts its JSON holds in English.
pub struct Verdict {
    /// The verdict (`memsight.explain/1`).
    pub json: Value,
    /// The Chinese of its advice and fixes.
    pub chinese: Chinese,
}

/// Each domain text a verdict's JSON holds in English (advice, fixes, how to hold less), whole
/// and in Chinese, rendered from its typed value when the verdict is made, keyed by the
/// English: the text says it whole (the JSON cuts a long one to [`MAX_NAME_CHARS`]), in
/// either language.
#[derive(Debug, Default)]
pub struct Chinese(rustc_hash::FxHashMap<String, String>);

impl Chinese {
    /// Records `zh` as the Chinese of `en`.
    pub fn add(&mut self, en: String, zh: String) {
        self.0.insert(en, zh);
    }

    /// The text the verdict holds as `shown` (whole, or cut with `…`), whole and in `lang`;
    /// `shown` itself when none was recorded.
    pub fn of<'a>(&'a self, lang: Lang, shown: &'a str) -> &'a str {
        let found = self.0.get_key_value(shown).or_else(|| {
            let head = shown.strip_suffix('…')?;
            self.0.iter().find(|(en, _)| en.starts_with(head))
        });
        match (found, lang) {
            (Some((en, _)), Lang::En) => en,
            (Some((_, zh)), Lang::Zh) => zh,
            (None, _) => shown,
        }
    }
}

/// The verdict for `path` with its Chinese texts.
fn made(path: &Path, source: SourceChoice, rank: Option<&str>) -> Result<Verdict, String> {
    let mut chinese = Chinese::default();
    let mut v = if crate::ingest::is_snapshot_path(path) {
        snapshot::verdict(path, &mut chinese)?
    } else if crate::export::cluster_db::is_summary(path) {
        summary::verdict(path)?
    } else {
        profile::verdict(path, source, rank, &mut chinese)?
    };
    cut_names(&mut v, "");
    shrink(&mut v);
    Ok(Verdict { json: v, chinese })
}

/// The most characters a name keeps in a verdict (a phase, module, operator or frame):
/// longer ones are cut with `…`, so that one long name cannot take the verdict's whole size.
pub const MAX_NAME_CHARS: usize = 160;

/// Cuts every string of `v` to [`MAX_NAME_CHARS`], except the paths and commands (`path`,
/// `next`), which must stay whole to be used.
fn cut_names(v: &mut Value, key: &str) {
    match v {
        Value::String(t) if key != "path" && key != "next" => {
            if let Some((at, _)) = t.char_indices().nth(MAX_NAME_CHARS - 1) {
                t.truncate(at);
                t.push('…');
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| cut_names(x, key)),
        Value::Object(o) => o.iter_mut().for_each(|(k, x)| cut_names(x, k)),
        _ => {}
    }
}

/// The verdict as one line of JSON.
pub fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Drops list entries from the end of the longest lists until the JSON fits
/// [`MAX_JSON_BYTES`] (each part already keeps only its first few; this is the last guard, for
/// long names).
fn shrink(v: &mut Value) {
    while compact(v).len() > MAX_JSON_BYTES {
        if !pop_longest_list(v) {
            break;
        }
    }
}

/// Removes the last entry of the longest non-empty list (by its JSON length) in `v`; false
/// when no list has one.
fn pop_longest_list(v: &mut Value) -> bool {
    /// Every non-empty list under `v`: (its JSON length, its JSON pointer).
    fn lists(v: &Value, at: String, found: &mut Vec<(usize, String)>) {
        match v {
            Value::Array(a) => {
                if !a.is_empty() {
                    found.push((compact(v).len(), at.clone()));
                }
                for (i, x) in a.iter().enumerate() {
                    lists(x, format!("{at}/{i}"), found);
                }
            }
            Value::Object(o) => {
                for (k, x) in o {
                    let key = k.replace('~', "~0").replace('/', "~1");
                    lists(x, format!("{at}/{key}"), found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    lists(v, String::new(), &mut found);
    // The longest; the first found on ties.
    let Some((_, at)) = found.into_iter().rev().max_by_key(|(n, _)| *n) else {
        return false;
    };
    v.pointer_mut(&at)
        .and_then(Value::as_array_mut)
        .is_some_and(|a| a.pop().is_some())
}

/// A subcommand's options parsed from `argv` as its command line would give them.
pub(crate) fn parsed<T: clap::Args>(argv: &[&str]) -> Result<T, String> {
    #[derive(clap::Parser)]
    struct Wrap<T: clap::Args> {
        #[command(flatten)]
        inner: T,
    }
    use clap::Parser;
    let all = std::iter::once("memsight").chain(argv.iter().copied());
    Wrap::<T>::try_parse_from(all)
        .map(|w| w.inner)
        .map_err(|e| e.to_string())
}

/// The first `n` entries of a JSON list (an empty list for anything else).
pub(crate) fn first(v: &Value, n: usize) -> Vec<Value> {
    v.as_array()
        .map(|a| a.iter().take(n).cloned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_verdict_is_cut_to_its_limit_from_its_longest_list() {
        let long: Vec<Value> = (0..400)
            .map(|i| serde_json::json!({"name": format!("op{i}"), "mib": i}))
            .collect();
        let mut v = serde_json::json!({"schema": SCHEMA, "short": [1, 2], "long": long});
        shrink(&mut v);
        let n = compact(&v).len();
        assert!(n <= MAX_JSON_BYTES, "{n}");
        assert_eq!(v["short"], serde_json::json!([1, 2]));
        assert_eq!(v["long"][0]["name"], "op0");
    }
}
