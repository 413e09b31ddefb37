//! The `memsight` binary: parses the command line, then runs a headless subcommand or the app.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use memsight::cli::{self, CompareArgs, CurveArgs, EXIT_FAILURE, SnapshotArgs, TableArgs};
use memsight::generate::{self, DbMode, GenOptions};
use memsight::model::{Format, SourceChoice};

/// memsight: a fast viewer for Ascend NPU memory profiles.
#[derive(Parser)]
#[command(version, about, args_conflicts_with_subcommands = true)]
struct Args {
    /// Profiling folder, .db or allocator snapshot to open (default: the bundled demo profile).
    path: Option<PathBuf>,
    /// Compare it with this baseline (a folder or .db, its first rank; or, for a snapshot,
    /// another snapshot).
    #[arg(long, value_name = "BASELINE")]
    compare: Option<PathBuf>,
    /// Join it, an allocator snapshot, with this profile of the same run (a PyTorch trace) by
    /// time: its live blocks by the profile's operator and step.
    #[arg(long, value_name = "TRACE")]
    profile: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

/// `--source`, on the commands that read a profile (not `snapshot`, not `generate`, where it
/// would mean nothing).
#[derive(clap::Args, Clone, Copy)]
struct SourceOpt {
    /// Which files to read when a rank has both a DB and CSV files (default: the DB).
    #[arg(long, value_enum, default_value_t = SourceArg::Auto)]
    source: SourceArg,
}

impl SourceArg {
    fn choice(self) -> SourceChoice {
        match self {
            SourceArg::Auto => SourceChoice::Auto,
            SourceArg::Csv => SourceChoice::Csv,
            SourceArg::Db => SourceChoice::Db,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum SourceArg {
    /// The DB when there is one.
    Auto,
    /// The CSV files.
    Csv,
    /// The DB.
    Db,
}

#[derive(Subcommand)]
enum Command {
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
        args: cli::LiveArgs,
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
        /// Rank id; default the first rank.
        #[arg(long)]
        rank: Option<String>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Memory by training role (activations, gradients, optimizer state, inputs, temporaries)
    /// at the peak and per step, and what would lower the peak.
    Roles {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder, .db or PyTorch trace.
        path: PathBuf,
        #[command(flatten)]
        args: cli::RolesArgs,
    },
    /// Summarise every rank of many profiles into one SQLite file for the cluster overview
    /// (or, with --merge, merge such files).
    Summarize {
        #[command(flatten)]
        src: SourceOpt,
        #[command(flatten)]
        args: cli::SummarizeArgs,
    },
    /// Memory by call stack, source line or host op (profiles made with with_stack=True).
    Stacks {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder or .db.
        path: PathBuf,
        #[command(flatten)]
        args: cli::StacksArgs,
    },
    /// Memory by nn.Module: which module holds the memory at the peak (or a time), and what
    /// each allocated in forward and backward (profiles made with with_stack/with_modules).
    Modules {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder, .db or PyTorch trace.
        path: PathBuf,
        #[command(flatten)]
        args: cli::ModulesArgs,
    },
    /// What the peak would be with a larger micro-batch, checkpointed modules, ZeRO or an
    /// offloaded optimizer, replayed from the measured run.
    Whatif {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder, .db or PyTorch trace.
        path: PathBuf,
        #[command(flatten)]
        args: cli::WhatifArgs,
    },
    /// The Component table: CANN components whose reserved memory peaks at 100 MB or more.
    Components {
        #[command(flatten)]
        src: SourceOpt,
        /// Profiling folder or .db.
        path: PathBuf,
        /// Rank id; default the first rank.
        #[arg(long)]
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
        args: cli::StaticArgs,
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

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    TorchNpu,
    Mindspore,
    Msprof,
    /// A PyTorch profiler trace per rank (`worker{R}.{ts}.pt.trace.json`).
    PytorchTrace,
    /// An msMemScope dump per rank (`msmemscope_*_ascend/device_*/dump/memscope_dump_*.csv`).
    Memscope,
}

#[derive(Clone, Copy, ValueEnum)]
enum DbArg {
    No,
    Only,
    Both,
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    match args.command {
        Some(Command::Inspect { path, json, src }) => exit(cli::inspect(
            &path,
            src.source.choice(),
            json,
            &mut out,
            &mut err,
        )),
        Some(Command::Curve { path, args, src }) => exit(cli::curve(
            &path,
            src.source.choice(),
            &args,
            &mut out,
            &mut err,
        )),
        Some(Command::Table { path, args, src }) => exit(cli::table(
            &path,
            src.source.choice(),
            &args,
            &mut out,
            &mut err,
        )),
        Some(Command::Snapshot { path, args }) => {
            exit(cli::snapshot(&path, &args, &mut out, &mut err))
        }
        Some(Command::Compare { a, b, args, src }) => exit(cli::compare(
            &a,
            &b,
            src.source.choice(),
            &args,
            &mut out,
            &mut err,
        )),
        Some(Command::Roles { path, args, src }) => exit(cli::roles(
            &path,
            src.source.choice(),
            &args,
            &mut out,
            &mut err,
        )),
        Some(Command::Summarize { args, src }) => exit(cli::summarize(
            src.source.choice(),
            &args,
            &mut out,
            &mut err,
        )),
        Some(Command::Stacks { path, args, src }) => exit(cli::stacks(
            &path,
            src.source.choice(),
            &args,
            &mut out,
            &mut err,
        )),
        Some(Command::Modules { path, args, src }) => exit(cli::modules(
            &path,
            src.source.choice(),
            &args,
            &mut out,
            &mut err,
        )),
        Some(Command::Whatif { path, args, src }) => exit(cli::whatif(
            &path,
            src.source.choice(),
            &args,
            &mut out,
            &mut err,
        )),
        Some(Command::Steps {
            path,
            rank,
            json,
            src,
        }) => exit(cli::steps(
            &path,
            src.source.choice(),
            rank.as_deref(),
            json,
            &mut out,
            &mut err,
        )),
        Some(Command::Components {
            path,
            rank,
            json,
            src,
        }) => exit(cli::components(
            &path,
            src.source.choice(),
            rank.as_deref(),
            json,
            &mut out,
            &mut err,
        )),
        Some(Command::Static { path, args, src }) => exit(cli::static_graph(
            &path,
            src.source.choice(),
            &args,
            &mut out,
            &mut err,
        )),
        Some(Command::Live { path, args, src }) => exit(cli::live(
            &path,
            src.source.choice(),
            &args,
            &mut out,
            &mut err,
        )),
        Some(Command::Generate {
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
        }) => {
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
                            Format::Imported(memsight::ingest::pytorch::trace::NAME)
                        }
                        FormatArg::Memscope => Format::Imported(memsight::ingest::msmemscope::NAME),
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
                    ..Default::default()
                };
                generate::generate(&dir, &opts)
            };
            match result {
                Ok(dirs) => {
                    for d in dirs {
                        println!("{}", d.display());
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("memsight: cannot write {}: {e}", dir.display());
                    exit(EXIT_FAILURE)
                }
            }
        }
        None => {
            // --profile joins a snapshot with a profile: on anything else it would do nothing.
            let snapshot = args
                .path
                .as_deref()
                .is_some_and(memsight::ingest::is_snapshot_path);
            if args.profile.is_some() && !snapshot {
                eprintln!(
                    "memsight: --profile joins an allocator snapshot (.pickle, .pkl) with a \
                     profile of its run; give the snapshot as PATH"
                );
                return exit(EXIT_FAILURE);
            }
            run_app(args.path, args.compare, args.profile)
        }
    }
}

/// The window, on `path`; without one, on the last profile (when the user keeps that on) or
/// the demo.
#[cfg(feature = "gui")]
fn run_app(path: Option<PathBuf>, baseline: Option<PathBuf>, profile: Option<PathBuf>) -> ExitCode {
    match memsight::ui::run(path, baseline, profile) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // On a server (no display, no X11/Wayland/GL libraries) the CLI is what works.
            eprintln!(
                "memsight: cannot open a window: {e}\n\
                 memsight: without a display, the CLI works: `memsight inspect PATH`, \
                 `memsight --help`"
            );
            exit(EXIT_FAILURE)
        }
    }
}

#[cfg(not(feature = "gui"))]
fn run_app(
    path: Option<PathBuf>,
    _baseline: Option<PathBuf>,
    _profile: Option<PathBuf>,
) -> ExitCode {
    let path = path.map_or_else(|| "PATH".to_string(), |p| p.display().to_string());
    eprintln!(
        "memsight: this build has no GUI (built with --no-default-features); \
         try `memsight inspect {path}` or `memsight --help`"
    );
    exit(EXIT_FAILURE)
}
