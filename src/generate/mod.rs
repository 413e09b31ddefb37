//! A seeded generator of realistic profiling folders in every layout memsight reads: torch_npu
//! CSV and DB, MindSpore (with its unit quirk and legacy trailing-comma variant), msprof (with
//! slices), plus a malformed set. Fixtures, the demo profile and benchmarks all come from here.

pub mod hostile;
mod malformed;
mod phases;
mod rng;
mod sim;
mod write_csv;
mod write_db;
mod write_imported;

use std::io;
use std::path::{Path, PathBuf};

pub use malformed::write_malformed;
use rng::Rng;
pub use sim::LEAK_OP;
use sim::{Alloc, GE_OPS, MODULES, OPS, Sample, make_allocs, simulate};
pub use write_imported::{inefficient as memscope_inefficient, owner as memscope_owner};

use crate::model::Format;

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenOptions {
    /// Number of ranks.
    pub ranks: usize,
    /// PTA (or MindSpore) allocations per rank; memory_record gets about 4× as many rows.
    pub allocs: usize,
    /// Seed: the same options and seed give byte-identical files.
    pub seed: u64,
    /// Which profiler's layout.
    pub format: Format,
    /// Write the SQLite export (torch_npu layout) instead of CSVs; `both` writes both.
    pub db: DbMode,
    /// Streams per rank.
    pub streams: usize,
    /// Add a GE allocator (GE and combined rows).
    pub ge: bool,
    /// Add WORKSPACE rows.
    pub workspace: bool,
    /// Static graphs (static_op_mem.csv) per rank; 0 for none.
    pub static_graphs: usize,
    /// CRLF line endings.
    pub crlf: bool,
    /// Fraction of allocations never released.
    pub unreleased_frac: f64,
    /// One APP sample every this many pool events.
    pub app_every: usize,
    /// Split each msprof file into this many slices (msprof only; 0 or 1 = no slices).
    pub slices: usize,
    /// Ranks per host (hosts are named node0, node1, …).
    pub ranks_per_host: usize,
    /// Training steps (`ProfilerStep#N` in trace_view.json, `STEP_TIME` in the DB); 0 for none.
    pub steps: usize,
    /// Bytes the leaking operator ([`sim::LEAK_OP`]) allocates and never frees in each step.
    pub leak_per_step: i64,
    /// Record the host ops and their Python call stacks (`with_stack=True`): `cpu_op` events in
    /// trace_view.json, `PYTORCH_API`/`PYTORCH_CALLCHAINS` in the DB.
    pub stacks: bool,
    /// Training phases in each step (with `steps` and `stacks`): a DataLoader span, forward ops
    /// with sequence numbers, backward nodes on an autograd thread, `Optimizer.step#` and
    /// `Optimizer.zero_grad#` spans, and blocks whose lifetimes follow them (inputs, activations
    /// freed in backward, gradients kept to the next zero_grad, optimizer state made in the
    /// first step, temporaries); trace_view.json only.
    pub phases: bool,
    /// The never-released blocks (`unreleased_frac`) of every step stay alive (the committed
    /// fixtures' shape); `false`: only the first step's do, the later steps free theirs at their
    /// end, so that a profile without `leak_per_step` is flat step over step (a clean control)
    /// and one with it grows by exactly the leak (`memsight generate`).
    pub survivors_every_step: bool,
}

/// Whether to write a DB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbMode {
    /// CSV files only.
    No,
    /// The DB only.
    Only,
    /// The DB and the CSV files beside it.
    Both,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            ranks: 1,
            allocs: 1000,
            seed: 1234,
            format: Format::TorchNpu,
            db: DbMode::No,
            streams: 2,
            ge: true,
            workspace: true,
            static_graphs: 0,
            crlf: false,
            unreleased_frac: 0.01,
            app_every: 50,
            slices: 0,
            ranks_per_host: 8,
            steps: 0,
            survivors_every_step: true,
            leak_per_step: 0,
            stacks: false,
            phases: false,
        }
    }
}

/// One record row as a writer sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecRow {
    pub comp: &'static str,
    pub t: i64,
    pub allocated: Option<i64>,
    pub reserved: i64,
    pub active: Option<i64>,
    pub stream: Option<u64>,
}

/// A static_op_mem row.
#[derive(Debug, Clone)]
pub(crate) struct StaticRow {
    pub graph: usize,
    pub op: String,
    pub start: i64,
    pub end: i64,
    pub size: i64,
}

/// Everything simulated for one rank.
pub(crate) struct RankSim {
    pub rank: usize,
    pub device: usize,
    pub host: String,
    pub pta: Vec<Alloc>,
    pub ge: Vec<Alloc>,
    /// Allocator rows (framework, GE, combined, WORKSPACE) in time order.
    pub rows: Vec<RecRow>,
    /// APP samples: (t, reserved).
    pub app: Vec<(i64, i64)>,
    /// npu_module_mem: (module index, t, reserved).
    pub modules: Vec<(usize, i64, i64)>,
    pub statics: Vec<StaticRow>,
    pub stream_ptrs: Vec<u64>,
    /// Training steps: (id, start ns, end ns).
    pub steps: Vec<(i64, i64, i64)>,
    /// Host ops and call stacks (empty unless `GenOptions::stacks`).
    pub host_ops: HostSim,
    /// Memory of other processes on the device (for the device total), bytes.
    pub other_processes: i64,
}

const STREAM_BASE: u64 = 187_651_522_637_632;
const END_OF_GRAPH: i64 = 4_294_967_295;

fn simulate_rank(opts: &GenOptions, rank: usize) -> RankSim {
    let mut rng = Rng::new(opts.seed.wrapping_mul(1_000_003).wrapping_add(rank as u64));
    let t0 = 1_700_000_000_000_000_000 + rank as i64 * 1_000_007;
    // MindSpore's KiB/1000 "MB" is exact only for whole KiB.
    let align = if opts.format == Format::MindSpore {
        1024
    } else {
        512
    };
    let fw_name = if opts.format == Format::MindSpore {
        "MindSpore"
    } else {
        "PTA"
    };
    let sum_name = if opts.format == Format::MindSpore {
        "MindSpore+GE"
    } else {
        "PTA+GE"
    };
    let msprof = opts.format == Format::Msprof;
    let stream_ptrs: Vec<u64> = (0..opts.streams.max(1))
        .map(|s| STREAM_BASE + s as u64 * 173_140)
        .collect();

    let mut pta = if msprof {
        Vec::new()
    } else {
        make_allocs(&mut rng, opts.allocs, t0, opts, OPS.len(), align)
    };
    let steps = step_spans(&pta, opts.steps);
    let phases = if opts.phases && opts.stacks && !msprof {
        phases::shape(&mut rng, &mut pta, &steps)
    } else {
        Vec::new()
    };
    if phases.is_empty() {
        free_by_step_end(&mut pta, &steps, opts.survivors_every_step);
    }
    if opts.leak_per_step > 0 && !msprof {
        add_leak(&mut pta, &steps, opts.leak_per_step);
    }
    let pta_samples = simulate(&mut rng, &mut pta, 2 << 30, 20 << 20);
    let n_ge = if msprof {
        opts.allocs
    } else if opts.ge {
        (opts.allocs / 20).max(3)
    } else {
        0
    };
    let mut ge = make_allocs(&mut rng, n_ge, t0 + 3_000, opts, GE_OPS.len(), align);
    if msprof {
        for a in &mut ge {
            a.stream = 0;
        }
    }
    free_by_step_end(&mut ge, &steps, opts.survivors_every_step);
    let ge_samples = simulate(&mut rng, &mut ge, 256 << 20, 64 << 20);
    let mut ws_allocs = if opts.workspace && !msprof {
        make_allocs(
            &mut rng,
            (opts.allocs / 50).max(2),
            t0 + 7_000,
            opts,
            1,
            align,
        )
    } else {
        Vec::new()
    };
    for a in &mut ws_allocs {
        a.t_free = Some(a.t_alloc + 50_000); // workspaces are short-lived
    }
    let ws_samples = simulate(&mut rng, &mut ws_allocs, 0, 2 << 20);

    // Merge framework and GE events by time (framework first on ties), emitting the component
    // row then the combined row, like torch_npu's _add_pta_ge_record_data.
    let mut rows =
        Vec::with_capacity((pta_samples.len() + ge_samples.len()) * 2 + ws_samples.len());
    let (mut i, mut j, mut k) = (0, 0, 0);
    let mut last_pta: Option<Sample> = None;
    let mut last_ge: Option<Sample> = None;
    let mut app = Vec::new();
    let mut events = 0usize;
    loop {
        let tp = pta_samples.get(i).map(|s| s.t);
        let tg = ge_samples.get(j).map(|s| s.t);
        let tw = ws_samples.get(k).map(|s| s.t);
        let Some(next) = [tp, tg, tw].into_iter().flatten().min() else {
            break;
        };
        if tw == Some(next) && tp != Some(next) && tg != Some(next) {
            let s = ws_samples[k];
            k += 1;
            rows.push(RecRow {
                comp: "WORKSPACE",
                t: s.t,
                allocated: Some(s.allocated),
                reserved: s.reserved,
                active: None,
                stream: None,
            });
            continue;
        }
        let from_pta = tp == Some(next);
        let (s, comp) = if from_pta {
            i += 1;
            (pta_samples[i - 1], fw_name)
        } else {
            j += 1;
            (ge_samples[j - 1], "GE")
        };
        if from_pta {
            last_pta = Some(s);
            rows.push(RecRow {
                comp,
                t: s.t,
                allocated: Some(s.allocated),
                reserved: s.reserved,
                active: Some(s.active),
                stream: Some(stream_ptrs[s.stream]),
            });
        } else {
            last_ge = Some(s);
            rows.push(RecRow {
                comp,
                t: s.t,
                allocated: Some(s.allocated),
                reserved: s.reserved,
                active: None,
                stream: None,
            });
        }
        if !msprof {
            let (pa, pr) = last_pta.map_or((0, 0), |p| (p.allocated, p.reserved));
            let (ga, gr) = last_ge.map_or((0, 0), |g| (g.allocated, g.reserved));
            rows.push(RecRow {
                comp: sum_name,
                t: s.t,
                allocated: Some(pa + ga),
                reserved: pr + gr,
                active: last_pta.map(|p| p.active),
                stream: last_pta.map(|p| stream_ptrs[p.stream]),
            });
        }
        if events.is_multiple_of(opts.app_every.max(1)) {
            let pr = last_pta.map_or(0, |p| p.reserved);
            let gr = last_ge.map_or(0, |g| g.reserved);
            app.push((
                s.t,
                pr + gr + 1500 * (1 << 20) + (rng.below(64) as i64) * (1 << 20),
            ));
        }
        events += 1;
    }
    let t_end = rows.last().map_or(t0, |r| r.t);

    // npu_module_mem: every module sampled every ~20 ms; HCCL goes 900 → 1200 → 95 MiB, the
    // pattern that a string comparison gets wrong.
    let mut modules = Vec::new();
    let samples = ((t_end - t0) / 20_000_000).clamp(3, 400);
    for k in 0..samples {
        let t = t0 + k * (t_end - t0) / samples + 1;
        for (m, name) in MODULES.iter().enumerate() {
            let mib = match *name {
                "HCCL" => [900, 1200, 95][(k * 3 / samples) as usize],
                "APP" => 2048 + k % 7,
                _ => (m as i64 * 37 + k * 3) % 160,
            };
            modules.push((m, t, mib * (1 << 20)));
        }
    }

    let mut statics = Vec::new();
    for g in 0..opts.static_graphs {
        let n_ops = 12 + opts.allocs / 2000;
        let nodes = (n_ops * 2) as i64;
        let mut diff = vec![0i64; nodes as usize + 2];
        for o in 0..n_ops {
            let start = rng.below(nodes as u64) as i64;
            let end = if rng.chance(0.1) {
                END_OF_GRAPH
            } else {
                (start + 1 + rng.below((nodes / 4) as u64) as i64).min(nodes)
            };
            let size = (rng.below(4096) as i64 + 1) * 512;
            diff[start as usize] += size;
            if end != END_OF_GRAPH {
                diff[end as usize] -= size;
            }
            statics.push(StaticRow {
                graph: g,
                op: format!(
                    "Default/network-Graph{g}/{}-op{o}",
                    GE_OPS[o % GE_OPS.len()]
                ),
                start,
                end,
                size,
            });
        }
        let mut run = 0i64;
        let mut peak = 0i64;
        for d in &diff {
            run += d;
            peak = peak.max(run);
        }
        statics.push(StaticRow {
            graph: g,
            op: "TOTAL".into(),
            start: 1,
            end: END_OF_GRAPH,
            size: (peak / (1 << 20) + 1) * (1 << 20),
        });
    }

    let host_ops = if opts.stacks {
        let mut h = host_ops(&pta);
        phases::mark(&mut h, &phases);
        h
    } else {
        HostSim::default()
    };
    RankSim {
        host_ops,
        rank,
        device: rank,
        host: format!("node{}", rank / opts.ranks_per_host.max(1)),
        pta,
        ge,
        rows,
        app,
        modules,
        statics,
        stream_ptrs,
        steps,
        other_processes: 3 << 30,
    }
}

/// The host's framework ops with their call stacks (`GenOptions::stacks`).
#[derive(Debug, Default)]
pub(crate) struct HostSim {
    /// (start ns, end ns, operator index, stack index): one op per named framework
    /// allocation, starting at it and ending before the next allocation.
    pub ops: Vec<(i64, i64, usize, usize)>,
    /// Distinct call stacks, innermost frame first.
    pub stacks: Vec<Vec<String>>,
    /// Per op: on the autograd thread (backward) rather than the main one.
    pub op_autograd: Vec<bool>,
    /// Per op: its autograd sequence number (forward ops), else -1.
    pub op_seq: Vec<i64>,
    /// Phase spans as ops: (name, start ns, end ns, on the autograd thread).
    pub markers: Vec<(&'static str, i64, i64, bool)>,
}

fn host_ops(pta: &[Alloc]) -> HostSim {
    let mut times: Vec<i64> = pta.iter().map(|a| a.t_alloc).collect();
    times.sort_unstable();
    let mut out = HostSim::default();
    let mut ids: std::collections::HashMap<(usize, usize), usize> = Default::default();
    for (k, a) in pta.iter().enumerate() {
        let Some(op) = a.name else { continue };
        let next = times.partition_point(|&t| t <= a.t_alloc);
        let gap = times.get(next).map_or(300, |&t| t - a.t_alloc - 1);
        let variant = k % 2;
        let stack = *ids.entry((op, variant)).or_insert_with(|| {
            out.stacks.push(sim::call_stack(op, variant));
            out.stacks.len() - 1
        });
        out.ops
            .push((a.t_alloc, a.t_alloc + gap.clamp(0, 300), op, stack));
    }
    out.ops.sort_unstable_by_key(|o| o.0);
    out.op_autograd = vec![false; out.ops.len()];
    out.op_seq = vec![-1; out.ops.len()];
    out
}

/// First step id written (`ProfilerStep#10`, …): real runs seldom profile from step 0.
const FIRST_STEP: i64 = 10;

/// `n` contiguous steps over the framework allocations' span, 1 µs apart: (id, start, end).
fn step_spans(pta: &[Alloc], n: usize) -> Vec<(i64, i64, i64)> {
    let (Some(t0), Some(last)) = (
        pta.iter().map(|a| a.t_alloc).min(),
        pta.iter().map(|a| a.t_alloc).max(),
    ) else {
        return Vec::new();
    };
    let last = last + 1_000;
    let n = n as i64;
    let span = (last - t0).max(1);
    (0..n)
        .map(|k| {
            let start = t0 + k * span / n;
            let end = t0 + (k + 1) * span / n - 1_000;
            (FIRST_STEP + k, start, end.max(start))
        })
        .collect()
}

/// A training step frees what it allocated: a block released after its step's end is released
/// at the end instead. Blocks never released stay so (the step's survivors), in every step with
/// `survivors_every_step`, else in the first step only.
fn free_by_step_end(pta: &mut [Alloc], steps: &[(i64, i64, i64)], survivors_every_step: bool) {
    for a in pta.iter_mut() {
        let k = steps.partition_point(|s| s.1 <= a.t_alloc);
        if k == 0 {
            continue;
        }
        let end = steps[k - 1].2;
        match &mut a.t_free {
            Some(f) if *f > end => *f = end.max(a.t_alloc + 1),
            None if !survivors_every_step && k > 1 => a.t_free = Some(end.max(a.t_alloc + 1)),
            _ => {}
        }
    }
}

/// The leaking operator: in every step, two blocks of half `per_step` each at 30% and 60% of the
/// step, never freed. Allocations stay sorted by time.
fn add_leak(pta: &mut Vec<Alloc>, steps: &[(i64, i64, i64)], per_step: i64) {
    let half = (per_step / 2 / 512).max(1) * 512;
    for &(_, s, e) in steps {
        for frac in [3, 6] {
            pta.push(Alloc {
                name: Some(OPS.len()),
                size: half,
                t_alloc: s + (e - s) * frac / 10,
                t_free: None,
                stream: 0,
                at_alloc: (0, 0, 0),
                at_free: None,
            });
        }
    }
    pta.sort_by_key(|a| a.t_alloc);
}

/// Writes a profile under `out` and returns the rank folders written.
pub fn generate(out: &Path, opts: &GenOptions) -> io::Result<Vec<PathBuf>> {
    if let Format::Imported(name) = opts.format {
        // The imported sources: a file per rank, from the same simulation.
        let mut files = Vec::new();
        for rank in 0..opts.ranks {
            let sim = simulate_rank(opts, rank);
            files.push(match name {
                crate::ingest::pytorch::trace::NAME => {
                    write_imported::write_pytorch_trace(out, &sim, opts)?
                }
                crate::ingest::msmemscope::NAME => write_imported::write_memscope(out, &sim)?,
                _ => {
                    return Err(io::Error::other(format!(
                        "the generator does not write {name} files"
                    )));
                }
            });
        }
        return Ok(files);
    }
    let mut dirs = Vec::new();
    for rank in 0..opts.ranks {
        let sim = simulate_rank(opts, rank);
        let dir = match opts.format {
            Format::TorchNpu => out.join(format!(
                "{}_{}_{}_ascend_pt",
                sim.host,
                4000 + rank,
                20261121000000000u64 + rank as u64
            )),
            Format::MindSpore => out.join(format!(
                "{}_{}_{}_ascend_ms",
                sim.host,
                5000 + rank,
                20261121000000000u64 + rank as u64
            )),
            Format::Msprof | Format::Imported(_) => {
                out.join(format!("PROF_{:06}_20261121000000000_RANK{rank}", rank + 1))
            }
        };
        if opts.db != DbMode::Only {
            write_csv::write_rank(&dir, &sim, opts)?;
        }
        match (opts.db, opts.format) {
            (DbMode::No, _) => {}
            (_, Format::Msprof) => write_db::write_msprof_rank(&dir, &sim)?,
            _ => write_db::write_rank(&dir, &sim, opts)?,
        }
        dirs.push(dir);
    }
    Ok(dirs)
}

/// Steps in the demo profile.
pub const DEMO_STEPS: usize = 8;
/// What the demo's leaking operator keeps each step (it shows what a leak looks like).
pub const DEMO_LEAK_PER_STEP: i64 = 32 << 20;

/// Bumped whenever [`demo_options`] change what the demo holds.
pub const DEMO_VERSION: u32 = 2;

/// The demo profile: two ranks of 4,000 allocations, eight steps, a leak, call stacks.
pub fn demo_options() -> GenOptions {
    GenOptions {
        ranks: 2,
        allocs: 4000,
        seed: 42,
        steps: DEMO_STEPS,
        leak_per_step: DEMO_LEAK_PER_STEP,
        stacks: true,
        ..Default::default()
    }
}

/// The committed fixture set and the demo profile, written under `root`.
pub fn write_fixtures(root: &Path) -> io::Result<()> {
    let base = GenOptions {
        allocs: 300,
        ..Default::default()
    };
    generate(
        &root.join("torch_cluster"),
        &GenOptions {
            ranks: 2,
            streams: 2,
            ..base.clone()
        },
    )?;
    generate(
        &root.join("torch_crlf"),
        &GenOptions {
            crlf: true,
            seed: 7,
            streams: 1,
            workspace: false,
            ..base.clone()
        },
    )?;
    generate(
        &root.join("mindspore"),
        &GenOptions {
            ranks: 2,
            format: Format::MindSpore,
            static_graphs: 2,
            streams: 1,
            workspace: false,
            ..base.clone()
        },
    )?;
    generate(
        &root.join("msprof"),
        &GenOptions {
            format: Format::Msprof,
            slices: 2,
            ge: true,
            workspace: false,
            ..base.clone()
        },
    )?;
    generate(
        &root.join("msprof_plain"),
        &GenOptions {
            format: Format::Msprof,
            seed: 9,
            ..base.clone()
        },
    )?;
    generate(
        &root.join("db"),
        &GenOptions {
            db: DbMode::Both,
            stacks: true,
            ..base.clone()
        },
    )?;
    generate(
        &root.join("db_only"),
        &GenOptions {
            db: DbMode::Only,
            ranks: 2,
            seed: 5,
            ..base.clone()
        },
    )?;
    write_malformed(&root.join("malformed"))?;
    generate(&root.join("demo"), &demo_options())?;
    Ok(())
}
