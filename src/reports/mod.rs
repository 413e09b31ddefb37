//! The questions memsight answers about one rank of a profile, one module each, between
//! [`crate::analysis`] and every front end. A report is its arguments (clap, so the CLI and the
//! MCP tools take the same flags), a `compute` over a rank already loaded ([`RankInput`]), and
//! its answer rendered as JSON (`--json`, MCP, `explain`) and as text. The CLI loads a rank
//! once and runs one report on it ([`crate::cli::rank::run`]); `explain` runs several on the
//! same load.
//!
//! | module | question |
//! |---|---|
//! | [`steps`] | each training step's peak and survivors; does memory grow |
//! | [`roles`] | memory by training role at the peak, and what would lower it |
//! | [`modules`] | which `nn.Module` holds the memory at a time |
//! | [`live`] | what is alive at a time |
//! | [`stacks`] | memory by call stack, source line or host op |
//! | [`whatif`] | the peak of a run not made, replayed |
//! | [`text`] | plain-text tables shared by the reports |
//!
//! Adding a question: one file here implementing [`RankReport`], one `pub mod` line, and a
//! subcommand that runs it ([`crate::cli::command_line::Command`]); MCP offers it once it is
//! listed in [`crate::mcp::tools`]' registry, its schema read from the same clap arguments.

pub mod live;
pub mod modules;
pub mod roles;
pub mod stacks;
pub mod steps;
pub mod text;
pub mod whatif;

use crate::analysis::RankView;
use crate::model::Lang;

/// What a rank report is computed over: one loaded rank, and what its profile says around it.
pub struct RankInput<'a> {
    /// The rank, with its indexes built on first use (shared by every report run on it).
    pub view: &'a RankView,
    /// How many ranks train in data parallel (what sharding advice spreads over; a trace's CPU
    /// pseudo-rank is not one).
    pub parallel_ranks: usize,
}

/// The arguments every rank report has: which rank, and JSON or text.
pub trait RankArgs {
    /// The rank asked for (`--rank`); `None`: the rank a user means.
    fn rank(&self) -> Option<&str>;
    /// `--json`: the answer as JSON instead of text.
    fn json(&self) -> bool;
    /// `--lang`: the text's language; `None`, the default ([`default_lang`]).
    fn lang(&self) -> Option<Lang>;
}

/// Implements [`RankArgs`] for argument types with `rank: Option<String>`, `json: bool` and
/// `lang: Option<Lang>`.
macro_rules! rank_args {
    ($($t:ty),*) => {$(
        impl $crate::reports::RankArgs for $t {
            fn rank(&self) -> Option<&str> {
                self.rank.as_deref()
            }
            fn json(&self) -> bool {
                self.json
            }
            fn lang(&self) -> Option<Lang> {
                self.lang
            }
        }
    )*};
}

rank_args!(
    steps::StepsArgs,
    roles::RolesArgs,
    modules::ModulesArgs,
    live::LiveArgs,
    stacks::StacksArgs,
    whatif::WhatifArgs
);

/// The language a text answer takes when `--lang` is not given: the one the binary found in
/// the locale at start ([`set_default_lang`]); English in-process (tests, MCP, the API).
static DEFAULT_LANG: std::sync::OnceLock<Lang> = std::sync::OnceLock::new();

/// Sets the language text answers take by default (the binary: the locale's); once.
pub fn set_default_lang(lang: Lang) {
    let _ = DEFAULT_LANG.set(lang);
}

/// The language text answers take when `--lang` is not given.
pub fn default_lang() -> Lang {
    DEFAULT_LANG.get().copied().unwrap_or_default()
}

/// `--lang`'s value: `en` or `zh` (a locale tag such as `zh_CN` reads as Chinese).
pub fn parse_lang(s: &str) -> Result<Lang, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "en" => Ok(Lang::En),
        "zh" => Ok(Lang::Zh),
        other if Lang::from_locale(other) == Lang::Zh => Ok(Lang::Zh),
        other => Err(format!("{other:?}: en or zh")),
    }
}

/// One question about one rank of a profile.
pub trait RankReport {
    /// Its arguments.
    type Args: RankArgs;
    /// Its answer, which may borrow from the loaded rank.
    type Answer<'a>;
    /// Checks the arguments before anything is read: a bad one is refused without loading.
    fn check(_args: &Self::Args) -> Result<(), String> {
        Ok(())
    }
    /// The answer on `input`; the error is one line for the user.
    fn compute<'a>(input: &RankInput<'a>, args: &Self::Args) -> Result<Self::Answer<'a>, String>;
    /// The answer as JSON (its field names are a contract: scripts, MCP and `explain` read them).
    fn json(answer: &Self::Answer<'_>) -> serde_json::Value;
    /// The answer as text for a terminal in `lang`: each line written once in both languages,
    /// side by side.
    fn text(answer: &Self::Answer<'_>, lang: Lang) -> String;
}

/// `report`'s answer on `input`, as `--json` (one line) or text prints it.
pub fn render<R: RankReport>(input: &RankInput<'_>, args: &R::Args) -> Result<String, String> {
    let answer = R::compute(input, args)?;
    Ok(if args.json() {
        format!("{}\n", R::json(&answer))
    } else {
        R::text(&answer, args.lang().unwrap_or_else(default_lang))
    })
}

/// `report`'s answer on `input` as JSON.
pub fn json_of<R: RankReport>(
    input: &RankInput<'_>,
    args: &R::Args,
) -> Result<serde_json::Value, String> {
    R::check(args)?;
    R::compute(input, args).map(|a| R::json(&a))
}

/// Milliseconds (user input) as ns, rejecting non-finite values.
pub fn ms_to_ns(ms: f64, what: &str) -> Result<i64, String> {
    if !ms.is_finite() || ms.abs() > 9.0e12 {
        return Err(format!(
            "{what} must be a finite number of milliseconds, got {ms}"
        ));
    }
    Ok(crate::model::ms_to_ns(ms))
}
