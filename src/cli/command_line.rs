//! The command line: its arguments (clap) and the headless subcommands they run. The binary
//! parses [`Args`] and runs [`run`] on a subcommand (or opens the app without one); the MCP
//! server builds the same arguments from a tool call, so that a tool answers exactly what the
//! command prints.

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use super::{CompareArgs, CurveArgs, EXIT_FAILURE, SnapshotArgs, TableArgs};
use crate::generate::{self, DbMode, GenOptions};
use crate::model::{Format, SourceChoice};

/// memsight: a fast viewer for Ascend NPU memory profiles.
#[derive(Parser)]
#[command(version, about, args_conflicts_with_subcommands = true)]
pub struct Args {
    /// Profiling folder, .db or allocator snapshot to open (default: the bundled demo profile).
    pub path: Option<PathBuf>,
    /// Compare it with this baseline (a folder or .db, its first rank; or, for a snapshot,
    /// another snapshot).
    #[arg(long, value_name = "BASELINE")]
    pub compare: Option<PathBuf>,
    /// Join it, an allocator snapshot, with this profile of the same run (a PyTorch trace) by
    /// time: its live blocks by the profile's operator and step.
    #[arg(long, value_name = "TRACE")]
    pub profile: Option<PathBuf>,
    #[command(subcommand)]
    /// The headless subcommand; none opens the app.
    pub command: Option<Command>,
}

/// `--source`, on the commands that read a profile (not `snapshot`, not `generate`, where it
/// would mean nothing).
#[derive(clap::Args, Clone, Copy)]
pub struct SourceOpt {
    /// Which files to read when a rank has both a DB and CSV files (default: the DB).
    #[arg(long, value_enum, default_value_t = SourceArg::Auto)]
    pub source: SourceArg,
}

impl SourceArg {
    /// The ingest choice it names.
    pub fn choice(self) -> SourceChoice {
        match self {
            SourceArg::Auto => SourceChoice::Auto,
            SourceArg::Csv => SourceChoice::Csv,
            SourceArg::Db => SourceChoice::Db,
        }
    }
}

/// Which files a rank is read from when it has both a DB and CSV files.
#[derive(Clone, Copy, ValueEnum)]
pub enum SourceArg {
    /// The DB when there is one.
    Auto,
    /// The CSV files.
    Csv,
    /// The DB.
    Db,
}

/// The headless subcommands. Their fields are documented by their `--help` text; the
/// flattened groups (`src`, `args`) by their own types.
#[derive(Subcommand)]
#[allow(missing_docs)]
pub enum Command {
    /// Summarise every rank: counts, peaks, largest allocation, warnings.
    Inspect {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder or .db.
        path: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// One short verdict, for a person or an AI assistant: the peak (value, time, step), what
    /// it is made of, the OOM cause, the leak verdict and the what-if table (a profile's
    /// rank); or an allocator snapshot's, or a cluster summary's outliers.
    Explain {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder, .db, PyTorch trace, allocator snapshot or cluster summary.
        path: PathBuf,
        #[command(flatten)]
        args: super::ExplainArgs,
    },
    /// A Model Context Protocol server on stdin/stdout for AI assistants: the commands above
    /// as tools, reading only under the roots the client grants (or --root).
    Mcp {
        /// A folder the tools may read under, when the client grants no roots (repeatable;
        /// default the current folder).
        #[arg(long)]
        root: Vec<PathBuf>,
    },
    /// Print a rank's curves in a window: CSV `series,time_ms,mib` (or JSON).
    Curve {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder or .db.
        path: PathBuf,
        #[command(flatten)]
        args: CurveArgs,
    },
    /// Print the details table's rows as TSV with a header (the GUI's Copy); count on stderr.
    Table {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder or .db.
        path: PathBuf,
        #[command(flatten)]
        args: TableArgs,
    },
    /// What is alive at a time: the largest allocations and the totals per operator.
    Live {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder or .db.
        path: PathBuf,
        #[command(flatten)]
        args: super::LiveArgs,
    },
    /// Two ranks (of one profile or two runs): peak deltas and what each operator allocated.
    /// Or two allocator snapshots (.pickle): reserved, allocated and fragmentation deltas at
    /// their peaks, and which stacks, sizes and pools grew or shrank.
    Compare {
        #[command(flatten)]
        src: SourceOpt,
        /// A: the baseline (folder, .db, or an allocator snapshot).
        a: PathBuf,
        /// B: the run compared with it (the same kind as A).
        b: PathBuf,
        #[command(flatten)]
        args: CompareArgs,
    },
    /// Each training step: peak, end value, survivors; and whether memory grows step over step.
    Steps {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder or .db.
        path: PathBuf,
        #[command(flatten)]
        args: super::StepsArgs,
    },
    /// Memory by training role (activations, gradients, optimizer state, inputs, temporaries)
    /// at the peak and per step, and what would lower the peak.
    Roles {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder, .db or PyTorch trace.
        path: PathBuf,
        #[command(flatten)]
        args: super::RolesArgs,
    },
    /// Summarise every rank of many profiles into one SQLite file for the cluster overview
    /// (or, with --merge, merge such files).
    Summarize {
        #[command(flatten)]
        src: SourceOpt,
        #[command(flatten)]
        args: super::SummarizeArgs,
    },
    /// Memory by call stack, source line or host op (profiles made with with_stack=True).
    Stacks {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder or .db.
        path: PathBuf,
        #[command(flatten)]
        args: super::StacksArgs,
    },
    /// Memory by nn.Module: which module holds the memory at the peak (or a time), and what
    /// each allocated in forward and backward (profiles made with with_stack/with_modules).
    Modules {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder, .db or PyTorch trace.
        path: PathBuf,
        #[command(flatten)]
        args: super::ModulesArgs,
    },
    /// What the peak would be with a larger micro-batch, checkpointed modules, ZeRO or an
    /// offloaded optimizer, replayed from the measured run.
    Whatif {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder, .db or PyTorch trace.
        path: PathBuf,
        #[command(flatten)]
        args: super::WhatifArgs,
    },
    /// The Component table: CANN components whose reserved memory peaks at 100 MB or more.
    Components {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder or .db.
        path: PathBuf,
        /// Rank id; default the device rank with the highest peak.
        #[arg(long, allow_hyphen_values = true)]
        rank: Option<String>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The static-graph view (graph mode): a graph's ops, filtered and sorted, and its curve.
    Static {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder.
        path: PathBuf,
        #[command(flatten)]
        args: super::StaticArgs,
    },
    /// An allocator snapshot (`_dump_snapshot` .pickle): devices, peaks, who holds the memory.
    Snapshot {
        /// The .pickle / .pkl file.
        path: PathBuf,
        #[command(flatten)]
        args: SnapshotArgs,
    },
    /// Write a synthetic profile (or, with --fixtures, the committed fixture set).
    Generate {
        /// Output folder.
        out: PathBuf,
        /// Write the fixture set and demo profile instead of one profile.
        #[arg(long)]
        fixtures: bool,
        /// Ranks.
        #[arg(long, default_value_t = 1)]
        ranks: usize,
        /// Allocations per rank (memory_record gets about 4x as many rows).
        #[arg(long, default_value_t = 10_000)]
        allocs: usize,
        /// Seed.
        #[arg(long, default_value_t = 1234)]
        seed: u64,
        /// Layout.
        #[arg(long, value_enum, default_value_t = FormatArg::TorchNpu)]
        format: FormatArg,
        /// Write the SQLite export: `only` or `both` (DB and CSV).
        #[arg(long, value_enum, default_value_t = DbArg::No)]
        db: DbArg,
        /// Streams per rank.
        #[arg(long, default_value_t = 2)]
        streams: usize,
        /// No GE allocator rows.
        #[arg(long)]
        no_ge: bool,
        /// No WORKSPACE rows.
        #[arg(long)]
        no_workspace: bool,
        /// Static graphs per rank (static_op_mem.csv).
        #[arg(long, default_value_t = 0)]
        static_graphs: usize,
        /// CRLF line endings.
        #[arg(long)]
        crlf: bool,
        /// msprof: split each file into N slices.
        #[arg(long, default_value_t = 0)]
        slices: usize,
        /// Training steps (trace_view.json ProfilerStep#N; STEP_TIME in the DB).
        #[arg(long, default_value_t = 0)]
        steps: usize,
        /// MiB that a leaking operator allocates and never frees in each step.
        #[arg(long, default_value_t = 0)]
        leak_mib: i64,
        /// Record host ops with Python call stacks (with_stack=True).
        #[arg(long)]
        stacks: bool,
        /// Training phases in each step (DataLoader, forward, backward on the autograd thread,
        /// optimizer, zero_grad) with blocks whose lifetimes follow them; needs --steps and
        /// --stacks.
        #[arg(long)]
        phases: bool,
    },
}

/// The layout `generate` writes.
#[derive(Clone, Copy, ValueEnum)]
pub enum FormatArg {
    /// torch_npu's ASCEND_PROFILER_OUTPUT.
    TorchNpu,
    /// MindSpore's profiler output.
    Mindspore,
    /// msprof's PROF_* folders.
    Msprof,
    /// A PyTorch profiler trace per rank (`worker{R}.{ts}.pt.trace.json`).
    PytorchTrace,
    /// An msMemScope dump per rank (`msmemscope_*_ascend/device_*/dump/memscope_dump_*.csv`).
    Memscope,
}

/// Whether `generate` writes the SQLite export.
#[derive(Clone, Copy, ValueEnum)]
#[allow(missing_docs)]
pub enum DbArg {
    No,
    Only,
    Both,
}

/// Runs a headless subcommand, writing to `out` and `err`; returns the process exit code.
/// What it writes to `out` is drawn from the budget of what it reads ([`super::BoundedOut`]):
/// past it, the command fails with the refusal instead of writing on.
pub fn run(command: Command, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let inputs: u64 = input_paths(&command)
        .iter()
        .map(|p| super::bytes_under(p))
        .fold(0, u64::saturating_add);
    match inputs {
        0 => dispatch(command, out, err),
        n => dispatch(command, &mut super::BoundedOut::new(out, n), err),
    }
}

/// The files or folders a command reads its answer from; none for `generate`, `summarize` and
/// `mcp`, whose output is not drawn from one input.
fn input_paths(command: &Command) -> Vec<&std::path::Path> {
    match command {
        Command::Inspect { path, .. }
        | Command::Explain { path, .. }
        | Command::Curve { path, .. }
        | Command::Table { path, .. }
        | Command::Snapshot { path, .. }
        | Command::Roles { path, .. }
        | Command::Stacks { path, .. }
        | Command::Modules { path, .. }
        | Command::Whatif { path, .. }
        | Command::Steps { path, .. }
        | Command::Components { path, .. }
        | Command::Static { path, .. }
        | Command::Live { path, .. } => vec![path.as_path()],
        Command::Compare { a, b, .. } => vec![a.as_path(), b.as_path()],
        Command::Mcp { .. } | Command::Summarize { .. } | Command::Generate { .. } => Vec::new(),
    }
}

/// [`run`]'s dispatch to each subcommand.
fn dispatch(command: Command, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match command {
        Command::Inspect { path, json, src } => {
            super::inspect(&path, src.source.choice(), json, out, err)
        }
        Command::Explain { path, args, src } => {
            super::explain(&path, src.source.choice(), &args, out, err)
        }
        // The server owns stdin and stdout: the binary starts it (`main`), so that the command
        // line does not depend on the server that runs its commands.
        Command::Mcp { .. } => {
            let _ = writeln!(
                err,
                "memsight: the MCP server is started by the binary (`memsight mcp`), not in-process"
            );
            EXIT_FAILURE
        }
        Command::Curve { path, args, src } => {
            super::curve(&path, src.source.choice(), &args, out, err)
        }
        Command::Table { path, args, src } => {
            super::table(&path, src.source.choice(), &args, out, err)
        }
        Command::Snapshot { path, args } => super::snapshot(&path, &args, out, err),
        Command::Compare { a, b, args, src } => {
            super::compare(&a, &b, src.source.choice(), &args, out, err)
        }
        Command::Roles { path, args, src } => super::rank::run::<crate::reports::roles::Roles>(
            &path,
            src.source.choice(),
            &args,
            out,
            err,
        ),
        Command::Summarize { args, src } => super::summarize(src.source.choice(), &args, out, err),
        Command::Stacks { path, args, src } => super::rank::run::<crate::reports::stacks::Stacks>(
            &path,
            src.source.choice(),
            &args,
            out,
            err,
        ),
        Command::Modules { path, args, src } => {
            super::rank::run::<crate::reports::modules::Modules>(
                &path,
                src.source.choice(),
                &args,
                out,
                err,
            )
        }
        Command::Whatif { path, args, src } => super::rank::run::<crate::reports::whatif::Whatif>(
            &path,
            src.source.choice(),
            &args,
            out,
            err,
        ),
        Command::Steps { path, args, src } => super::rank::run::<crate::reports::steps::Steps>(
            &path,
            src.source.choice(),
            &args,
            out,
            err,
        ),
        Command::Components {
            path,
            rank,
            json,
            src,
        } => super::components(&path, src.source.choice(), rank.as_deref(), json, out, err),
        Command::Static { path, args, src } => {
            super::static_graph(&path, src.source.choice(), &args, out, err)
        }
        Command::Live { path, args, src } => super::rank::run::<crate::reports::live::Live>(
            &path,
            src.source.choice(),
            &args,
            out,
            err,
        ),
        Command::Generate {
            out: dir,
            fixtures,
            ranks,
            allocs,
            seed,
            format,
            db,
            streams,
            no_ge,
            no_workspace,
            static_graphs,
            crlf,
            slices,
            steps,
            leak_mib,
            stacks,
            phases,
        } => {
            let result = if fixtures {
                generate::write_fixtures(&dir).map(|()| vec![dir.clone()])
            } else {
                let opts = GenOptions {
                    ranks,
                    allocs,
                    seed,
                    format: match format {
                        FormatArg::TorchNpu => Format::TorchNpu,
                        FormatArg::Mindspore => Format::MindSpore,
                        FormatArg::Msprof => Format::Msprof,
                        FormatArg::PytorchTrace => {
                            Format::Imported(crate::ingest::pytorch::trace::NAME)
                        }
                        FormatArg::Memscope => Format::Imported(crate::ingest::msmemscope::NAME),
                    },
                    db: match db {
                        DbArg::No => DbMode::No,
                        DbArg::Only => DbMode::Only,
                        DbArg::Both => DbMode::Both,
                    },
                    streams,
                    ge: !no_ge,
                    workspace: !no_workspace,
                    static_graphs,
                    crlf,
                    slices,
                    steps,
                    leak_per_step: leak_mib.clamp(0, 1 << 20) << 20,
                    stacks,
                    phases,
                    // Without --leak-mib, flat step over step: a clean control.
                    survivors_every_step: false,
                    ..Default::default()
                };
                generate::generate(&dir, &opts)
            };
            match result {
                Ok(dirs) => {
                    for d in dirs {
                        let _ = writeln!(out, "{}", d.display());
                    }
                    0
                }
                Err(e) => {
                    let _ = writeln!(err, "memsight: cannot write {}: {e}", dir.display());
                    EXIT_FAILURE
                }
            }
        }
    }
}
