//! memsight: a fast viewer for Ascend NPU memory profiles.
//!
//! Data flows one way, `ingest -> model -> analysis -> ui`:
//!
//! - [`ingest`]: finds ranks under a path ([`ingest::discover`]) reading only names, headers and
//!   `profiler_info`, then loads one rank on demand ([`ingest::load_rank`]) from CSV (chunked,
//!   parallel) or the SQLite export (never written beside). Only regular files are opened and
//!   every read is bounded ([`ingest::safe_fs`]); bad rows are skipped and reported, never fatal.
//!   Training steps and the device total come from the DB, a streamed `trace_view.json`
//!   ([`ingest::trace_view`]) or `kernel_details.csv`; call stacks ([`ingest::stacks`]) from the
//!   DB's `PYTORCH_API` or trace_view's `cpu_op` events, each allocation matched to the host op
//!   running when it was made; the training phases those ops show ([`ingest::roles`]: each
//!   block's role, input to temporary).
//! - [`model`]: plain columnar data: [`model::RankData`] with its `MemoryRecords`,
//!   `OperatorMemory`, `ModuleMemory` and `StaticOpMemory` tables and its [`model::LoadReport`];
//!   i64 ns and bytes, names interned; [`model::TimeWindow`] and the one ms/ns conversion; a
//!   cluster summary's rows ([`model::cluster`]); the memory budget every builder that a
//!   hostile file could make copy a shared object draws from ([`model::budget`]). Imports
//!   nothing from the other modules.
//! - [`analysis`]: pure functions over the model: the curves of each Group By and their LOD
//!   pyramids, peaks, table queries, live-at-time, static graphs, the memory chart as data
//!   ([`analysis::chart`]), memory per training step ([`analysis::steps`]) and where the memory
//!   is at a time ([`analysis::breakdown`]), memory by call stack, source line or host operator
//!   and the flame tree ([`analysis::stacks`]), memory by training role and what would lower
//!   the peak ([`analysis::roles`]), what a cluster summary shows across its ranks
//!   ([`analysis::cluster`]); [`analysis::RankView`] holds what was computed for one loaded
//!   rank.
//! - [`export`]: text out: the `inspect` summary (readable and JSON), TSV and CSV of table rows,
//!   the cluster summary file of `memsight summarize` (`export::cluster_db`), and the temporary
//!   files a terminated `summarize` removes (`export::pending_files`).
//! - [`cli`]: the command line (`cli::command_line`: its arguments and `run`) and the headless
//!   subcommands (`inspect`, `curve`, `table`, `live`, `steps`, `stacks`, `roles`, `modules`,
//!   `whatif`, `compare`, `snapshot`, `summarize`), each with `--source` for ranks that have a
//!   DB and CSV files; `explain` composes one verdict from the others' JSON (`cli::explain`);
//!   every command line printed for a person to run is quoted by [`model::shell`].
//! - `mcp` (cargo feature `mcp`, on by default): `memsight mcp`, a Model Context Protocol server
//!   on stdio whose tools run the headless commands.
//! - [`snapshot`]: allocator snapshots (`.pickle`): a data-only unpickler (nothing in a file is
//!   ever run), the typed snapshot, its summary, the segments at any event, and the
//!   active-memory bands.
//! - [`fuzzing`]: the entry points of the cargo-fuzz targets (`fuzz/`), replayed on every input
//!   in `fuzz/regressions/` by a stable test.
//! - [`generate`]: a seeded generator of realistic profiles (fixtures, demo, benchmarks), and
//!   the hostile inputs tests and fuzz seeds build ([`generate::hostile`]).
//! - `ui` (cargo feature `gui`, on by default): the desktop app (egui/eframe/egui_plot), the only
//!   module importing egui: a session of loaded ranks, the view state changed only by commands,
//!   one job runner, and panes; a cluster summary file opens in a view of its own
//!   (`ui::summary`). `--no-default-features` builds the headless CLI alone.
//!
//! Only `ui` imports egui; everything else is testable without a window.

pub mod analysis;
pub mod cli;
pub mod export;
pub mod fuzzing;
pub mod generate;
pub mod ingest;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod model;
pub mod reports;
pub mod snapshot;
#[cfg(feature = "gui")]
pub mod ui;
