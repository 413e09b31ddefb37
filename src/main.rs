//! The `memsight` binary: parses the command line, then runs a headless subcommand or the app.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use memsight::cli::EXIT_FAILURE;
use memsight::cli::command_line::{Args, Command, run};

fn exit(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn main() -> ExitCode {
    let args = Args::parse();
    match args.command {
        // The MCP server speaks on stdout itself: no lock may be held on it.
        Some(Command::Mcp { root }) => exit(mcp(root)),
        Some(command) => {
            // Text answers speak the locale's language unless --lang says otherwise.
            memsight::reports::set_default_lang(
                memsight::model::Lang::from_env().unwrap_or_default(),
            );
            let mut out = std::io::stdout().lock();
            let mut err = std::io::stderr().lock();
            exit(run(command, &mut out, &mut err))
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

/// `memsight mcp`: the server, in a build with it.
#[cfg(feature = "mcp")]
fn mcp(roots: Vec<PathBuf>) -> i32 {
    memsight::mcp::serve(roots, &mut std::io::stderr())
}

/// `memsight mcp` in a build without it.
#[cfg(not(feature = "mcp"))]
fn mcp(_roots: Vec<PathBuf>) -> i32 {
    eprintln!("memsight: this build has no MCP server (built without the `mcp` feature)");
    EXIT_FAILURE
}
