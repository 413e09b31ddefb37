//! Tests of what is process-wide, one at a time (a lock): the allocator's peak, and the MCP
//! server's confinement of every read to its roots.
//!
//! Issue 86: memory in proportion to the input, for every reader and output the hostile round
//! reached. A counting allocator (this test binary's own: no other test shares it) measures the
//! peak of each command run in-process on inputs that name the same data many times (a pickle's
//! memo), nest it deep (module spans, annotations) or repeat it, and each peak must stay under
//! `BYTES_PER_INPUT_BYTE` × the input plus the budget's floor and a fixed slack for the
//! process's own tables. Before the budget, the first case took 1.2 GB for 400 KB.
//!
//! The tests run one at a time (a lock): the peak is the process's.

// A counting global allocator is the one way to measure a peak in-process; it forwards every
// call to `System` unchanged.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::Parser;
use memsight::generate::hostile;
use memsight::model::budget::{BYTES_PER_INPUT_BYTE, FLOOR_BYTES};
use proptest::prelude::*;

/// Counts the bytes held and their peak since the last [`reset_peak`].
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) };
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.realloc(ptr, layout, new) };
        if !p.is_null() {
            if new >= layout.size() {
                let now =
                    HELD.fetch_add(new - layout.size(), Ordering::Relaxed) + new - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                HELD.fetch_sub(layout.size() - new, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The peak bytes held above what was held when `f` started.
fn peak_of(f: impl FnOnce()) -> usize {
    let base = HELD.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    f();
    PEAK.load(Ordering::Relaxed).saturating_sub(base)
}

/// What a reader may hold for `input` bytes: the budget's share and floor, and 32 MiB for the
/// process's own (thread stacks' tables, the CLI's buffers, a parsed JSON of a few MB).
fn bound(input: usize) -> usize {
    (input as u64 * BYTES_PER_INPUT_BYTE) as usize + FLOOR_BYTES as usize + (32 << 20)
}

/// Runs `memsight ARGS…` in-process; its stdout.
fn cli(args: &[&std::ffi::OsStr]) -> Vec<u8> {
    let all = std::iter::once(std::ffi::OsStr::new("memsight")).chain(args.iter().copied());
    let parsed = memsight::cli::command_line::Args::try_parse_from(all).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    memsight::cli::command_line::run(parsed.command.unwrap(), &mut out, &mut err);
    out
}

fn check(name: &str, input: usize, f: impl FnOnce()) {
    let peak = peak_of(f);
    assert!(
        peak <= bound(input),
        "{name}: {} MiB for {} KiB of input (bound {} MiB)",
        peak >> 20,
        input >> 10,
        bound(input) >> 20
    );
}

/// Each hostile snapshot, read and explained (text and JSON), in memory bounded by its size.
#[test]
fn hostile_snapshots_take_memory_in_proportion_to_their_size() {
    let _one = ONE_AT_A_TIME.lock();
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "shared frames",
            hostile::shared_frames_snapshot(4, 20_000, 2_000),
        ),
        ("fx frames", hostile::fx_frames_snapshot(2, 20_000, 100)),
        ("annotations", hostile::annotations_snapshot(50_000, 2_000)),
        (
            "nested annotations",
            hostile::annotations_snapshot(3_000, 64),
        ),
        ("many actions", hostile::many_actions_snapshot(50_000)),
        ("many ooms", hostile::many_ooms_snapshot(4_000, 8_000)),
    ];
    for (name, bytes) in &cases {
        let p = dir.path().join("s.pickle");
        std::fs::write(&p, bytes).unwrap();
        check(name, bytes.len(), || {
            let _ = memsight::snapshot::AllocatorSnapshot::from_bytes(bytes);
        });
        for args in [&["snapshot"][..], &["snapshot", "--json"], &["explain"]] {
            let mut argv: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
            argv.insert(1, p.as_os_str());
            check(&format!("{name}: {args:?}"), bytes.len(), || {
                let out = cli(&argv);
                assert!(out.len() <= bound(bytes.len()));
            });
        }
    }
}

/// 2 GB of zeros named `.pickle` (sparse: no disk) is refused from its head.
#[test]
fn a_huge_file_that_is_no_pickle_is_not_read_whole() {
    let _one = ONE_AT_A_TIME.lock();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("zeros.pickle");
    std::fs::File::create(&p).unwrap().set_len(2 << 30).unwrap();
    let peak = peak_of(|| {
        assert!(memsight::snapshot::AllocatorSnapshot::open(&p).is_err());
    });
    assert!(peak < 1 << 20, "{peak} bytes");
}

/// Module spans nested 12,000 deep: `modules` and `inspect` (the trace, its module tree, the
/// text with its indent) in memory bounded by the trace's size.
#[test]
fn deeply_nested_modules_take_memory_in_proportion_to_the_trace() {
    let _one = ONE_AT_A_TIME.lock();
    let dir = tempfile::tempdir().unwrap();
    let text = hostile::nested_modules_trace(12_000);
    let p = dir.path().join("deep.pt.trace.json");
    std::fs::write(&p, &text).unwrap();
    for args in [
        &["modules"][..],
        &["modules", "--json"],
        &["inspect", "--json"],
        &["explain", "--json"],
    ] {
        let mut argv: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        argv.insert(1, p.as_os_str());
        check(&format!("{args:?}"), text.len(), || {
            let out = cli(&argv);
            assert!(!out.is_empty(), "{args:?}");
        });
    }
}

/// The `mcp_request` fuzz target's regression inputs (`fuzz/regressions/mcp_request/`): each
/// call answered with reads confined to a root that links out, never reading outside it. Here
/// rather than with the other targets' replay: the confinement is the process's.
#[test]
fn mcp_request_regressions_run_clean() {
    let _one = ONE_AT_A_TIME.lock();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/mcp_request");
    let mut ran = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let data = std::fs::read(e.unwrap().path()).unwrap();
        assert!(memsight::fuzzing::run("mcp_request", &data));
        ran += 1;
    }
    assert!(ran >= 5, "{ran}");
}

/// A link inside a root to a file or folder outside it is outside: refused while a
/// confinement is held, read again once it is dropped.
#[cfg(unix)]
#[test]
fn a_confined_read_follows_no_link_out_of_its_roots() {
    use memsight::ingest::safe_fs::{confine_reads, open_regular, readable};
    let _one = ONE_AT_A_TIME.lock();
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.csv"), "x").unwrap();
    std::fs::write(root.join("own.csv"), "x").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.csv"), root.join("link.csv")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
    {
        let _confined = confine_reads(std::slice::from_ref(&root));
        assert!(open_regular(&root.join("own.csv")).is_ok());
        let e = open_regular(&root.join("link.csv")).unwrap_err();
        assert!(e.to_string().contains("outside the granted roots"), "{e}");
        assert!(open_regular(&root.join("linked/secret.csv")).is_err());
        assert!(!readable(&root.join("linked")));
        assert!(!readable(&root.join("..")));
        // Discovery does not walk into the linked folder.
        let found = memsight::ingest::safe_fs::files_under(&root, 3, &|_| true);
        assert_eq!(found, vec![root.join("own.csv")]);
    }
    assert!(open_regular(&root.join("link.csv")).is_ok(), "lifted");
}

fn run_snapshot_reader(bytes: &[u8], dir: &Path) {
    let p = dir.join("p.pickle");
    std::fs::write(&p, bytes).unwrap();
    check("snapshot text", bytes.len(), || {
        let _ = cli(&["snapshot".as_ref(), p.as_os_str()]);
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, .. ProptestConfig::default() })]

    /// Any mix of memo-shared frames, repeated annotations and nesting stays in proportion.
    #[test]
    fn memo_shared_nested_and_repeated_snapshots_stay_in_proportion(
        stacks in 1usize..6,
        refs in 1usize..30_000,
        name_len in 1usize..4_000,
        annotations in 1usize..30_000,
    ) {
        let _one = ONE_AT_A_TIME.lock();
        let dir = tempfile::tempdir().unwrap();
        run_snapshot_reader(&hostile::shared_frames_snapshot(stacks, refs, name_len), dir.path());
        run_snapshot_reader(&hostile::fx_frames_snapshot(stacks, refs / 10 + 1, name_len / 20 + 1), dir.path());
        run_snapshot_reader(&hostile::annotations_snapshot(annotations, name_len), dir.path());
    }

    /// Module nesting of any depth stays in proportion.
    #[test]
    fn nested_module_traces_stay_in_proportion(depth in 1usize..6_000) {
        let _one = ONE_AT_A_TIME.lock();
        let dir = tempfile::tempdir().unwrap();
        let text = hostile::nested_modules_trace(depth);
        let p = dir.path().join("t.pt.trace.json");
        std::fs::write(&p, &text).unwrap();
        check("modules", text.len(), || {
            let _ = cli(&["modules".as_ref(), p.as_os_str(), "--json".as_ref()]);
        });
    }
}

/// Issue 88: `explain` of one rank opens that rank once (it opened it 5 to 9 times, and every
/// other rank once more through `inspect`), and without `--rank` each rank once, to find the
/// highest peak. Counted through the loader every import goes through.
#[test]
fn explain_loads_the_rank_it_explains_once() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    for (profile, ranks) in [("demo", 2), ("torch_cluster", 2), ("pytorch/ddp", 2)] {
        let path = root.join(profile);
        let listed = memsight::ingest::discover(&path).expect("a profile").ranks;
        assert_eq!(listed.len(), ranks, "{profile}");
        for info in &listed {
            let before = memsight::ingest::rank_loads();
            let out = cli(&[
                "explain".as_ref(),
                path.as_os_str(),
                format!("--rank={}", info.rank).as_ref(),
                "--json".as_ref(),
            ]);
            let loads = memsight::ingest::rank_loads() - before;
            let v: serde_json::Value = serde_json::from_slice(&out).expect("explain's JSON");
            assert_eq!(v["rank"], info.rank.as_str(), "{profile}");
            assert_eq!(loads, 1, "{profile} rank {}: {loads} loads", info.rank);
        }
        let before = memsight::ingest::rank_loads();
        let out = cli(&["explain".as_ref(), path.as_os_str(), "--json".as_ref()]);
        let loads = memsight::ingest::rank_loads() - before;
        assert!(
            serde_json::from_slice::<serde_json::Value>(&out).is_ok(),
            "{profile}"
        );
        assert_eq!(
            loads, ranks as u64,
            "{profile}: each rank once, {loads} loads"
        );
    }
}
