//! The allocator simulation behind the generator: allocations with lifetimes, the pool totals
//! after every event, and the samples each profiler would write.

use super::GenOptions;
use super::rng::Rng;

/// Operator names in the style of torch_npu.
pub const OPS: &[&str] = &[
    "aten::empty_strided",
    "aten::empty",
    "aten::mm",
    "aten::add",
    "aten::mul",
    "aten::matmul",
    "aten::linear",
    "aten::addmm",
    "aten::bmm",
    "aten::cat",
    "aten::clone",
    "aten::contiguous",
    "aten::copy_",
    "aten::to",
    "aten::_to_copy",
    "aten::softmax",
    "aten::layer_norm",
    "aten::gelu",
    "aten::silu",
    "aten::dropout",
    "aten::zeros",
    "aten::embedding",
    "aten::npu_fusion_attention",
    "aten::npu_rms_norm",
    "npu::_npu_dtype_cast",
    "aten::mm_backward",
    "aten::_foreach_add_",
    "format_contiguousV2",
];
/// The operator that leaks in multi-step profiles (a block it allocates every step is never freed).
pub const LEAK_OP: &str = "aten::_cached_kv_append";

/// The name of framework operator `i`: [`OPS`], or [`LEAK_OP`] just past them.
pub fn op_label(i: usize) -> &'static str {
    OPS.get(i).copied().unwrap_or(LEAK_OP)
}

/// GE operator names (written with a `cann::` prefix in CSV, without it in the DB).
pub const GE_OPS: &[&str] = &[
    "MatMulV2",
    "Cast",
    "TransData",
    "Add",
    "ReduceSum",
    "FlashAttentionScore",
];
/// CANN module names for npu_module_mem.
pub const MODULES: &[&str] = &[
    "SLOG", "RUNTIME", "HCCL", "FMK", "GE", "AICPU", "DRV", "APP",
];

/// One block's life.
#[derive(Debug, Clone)]
pub struct Alloc {
    /// Index into [`OPS`] / [`GE_OPS`]; `None` for an unnamed block.
    pub name: Option<usize>,
    /// Bytes.
    pub size: i64,
    /// Allocation time, ns.
    pub t_alloc: i64,
    /// Release time, ns, if released within the capture.
    pub t_free: Option<i64>,
    /// Stream index.
    pub stream: usize,
    /// Pool (allocated, reserved, active) right after the allocation.
    pub at_alloc: (i64, i64, i64),
    /// Pool totals right after the release.
    pub at_free: Option<(i64, i64, i64)>,
}

/// A pool sample after one event.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// ns.
    pub t: i64,
    /// Allocated bytes.
    pub allocated: i64,
    /// Reserved bytes.
    pub reserved: i64,
    /// Active bytes.
    pub active: i64,
    /// Stream index of the event.
    pub stream: usize,
}

/// Makes `n` allocations starting at `t0`.
pub fn make_allocs(
    rng: &mut Rng,
    n: usize,
    t0: i64,
    opts: &GenOptions,
    names: usize,
    align: i64,
) -> Vec<Alloc> {
    let mut t = t0;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        t += rng.exp(5_000.0) as i64 + 1;
        let life = if rng.chance(0.9) {
            rng.exp(200_000.0)
        } else {
            rng.exp(50_000_000.0)
        } as i64
            + 1000;
        let lo = (512f64).ln();
        let hi = ((64i64 << 20) as f64).ln();
        let size = (((lo + rng.unit() * (hi - lo)).exp() as i64) / align + 1) * align;
        let never = rng.chance(opts.unreleased_frac);
        let name = if rng.chance(0.002) {
            None
        } else {
            Some(rng.below(names as u64) as usize)
        };
        out.push(Alloc {
            name,
            size,
            t_alloc: t,
            t_free: (!never).then_some(t + life),
            stream: rng.below(opts.streams.max(1) as u64) as usize,
            at_alloc: (0, 0, 0),
            at_free: None,
        });
    }
    // Blocks freed after the capture ends look unreleased (with steps, each step frees its
    // blocks instead: see `free_by_step_end`).
    let horizon = if opts.steps > 0 { i64::MAX } else { t + 10_000 };
    for a in &mut out {
        if a.t_free.is_some_and(|f| f > horizon) {
            a.t_free = None;
        }
    }
    out
}

/// Runs the pool over the allocations' events and fills their totals. `base` bytes are held
/// before the capture; reserved grows in `gran` steps and never shrinks.
pub fn simulate(rng: &mut Rng, allocs: &mut [Alloc], base: i64, gran: i64) -> Vec<Sample> {
    // (time, is_free, index): frees sort after allocations at the same time.
    let mut events: Vec<(i64, bool, usize)> = Vec::with_capacity(allocs.len() * 2);
    for (i, a) in allocs.iter().enumerate() {
        events.push((a.t_alloc, false, i));
        if let Some(f) = a.t_free {
            events.push((f, true, i));
        }
    }
    events.sort_unstable();
    let mut allocated = base;
    let mut reserved = 0i64;
    let mut out = Vec::with_capacity(events.len());
    for (t, is_free, i) in events {
        let a = &mut allocs[i];
        allocated += if is_free { -a.size } else { a.size };
        reserved = reserved.max((allocated + gran - 1) / gran * gran);
        let active = allocated + (rng.below(4) as i64) * (1 << 20);
        let totals = (allocated, reserved, active);
        if is_free {
            a.at_free = Some(totals);
        } else {
            a.at_alloc = totals;
        }
        out.push(Sample {
            t,
            allocated,
            reserved,
            active,
            stream: a.stream,
        });
    }
    out
}

/// The training script of the synthetic call stacks (every stack ends in it).
const SCRIPT: &str = "/workspace/llama/train.py";
/// The model file.
const MODEL: &str = "/workspace/llama/model.py";
/// Where torch lives in the synthetic stacks (a library frame: not a source line).
const TORCH: &str = "/usr/local/lib/python3.10/site-packages/torch";

/// The Python call stack (innermost frame first) behind an allocation by framework operator
/// `op`, as torch_npu records it with `with_stack=True`. `variant` picks one of the call sites
/// an operator has (attention and MLP layers call the same ops).
pub fn call_stack(op: usize, variant: usize) -> Vec<String> {
    let name = op_label(op);
    let torch = |file: &str, line: u32, func: &str| format!("{TORCH}/{file}({line}): {func}");
    let model = |line: u32, func: &str| format!("{MODEL}({line}): {func}");
    let mut frames: Vec<String> = Vec::new();
    let backward = name.contains("backward");
    let optimizer = name.starts_with("aten::_foreach");
    if name == LEAK_OP {
        frames.push("/workspace/llama/kv_cache.py(42): append".into());
        frames.push(model(231, "attention_forward"));
    } else if backward {
        frames.push(torch("autograd/__init__.py", 251, "backward"));
        frames.push(torch("_tensor.py", 522, "backward"));
    } else if optimizer {
        frames.push(torch("optim/adamw.py", 512, "_multi_tensor_adamw"));
        frames.push(torch("optim/optimizer.py", 373, "wrapper"));
    } else {
        let attention = matches!(
            name,
            "aten::bmm" | "aten::softmax" | "aten::npu_fusion_attention" | "aten::dropout"
        ) || (variant.is_multiple_of(2)
            && matches!(name, "aten::matmul" | "aten::mm" | "aten::linear"));
        let lib = match name {
            "aten::linear" | "aten::addmm" | "aten::mm" | "aten::matmul" => {
                torch("nn/modules/linear.py", 114, "forward")
            }
            "aten::layer_norm" | "aten::npu_rms_norm" => {
                torch("nn/functional.py", 2546, "layer_norm")
            }
            "aten::embedding" => torch("nn/functional.py", 2233, "embedding"),
            "aten::gelu" | "aten::silu" => torch("nn/functional.py", 2072, "silu"),
            _ => torch("_tensor.py", 1386, "__torch_function__"),
        };
        frames.push(lib);
        frames.push(torch("nn/modules/module.py", 1527, "_call_impl"));
        frames.push(if name == "aten::embedding" {
            model(98, "embed")
        } else if attention {
            model(212, "attention_forward")
        } else {
            model(156, "mlp_forward")
        });
        if name != "aten::embedding" {
            frames.push(model(301, "block_forward"));
        }
        frames.push(model(340, "forward"));
        frames.push(torch("nn/modules/module.py", 1527, "_call_impl"));
    }
    let step_line = if backward {
        88
    } else if optimizer {
        95
    } else {
        80
    };
    frames.push(format!("{SCRIPT}({step_line}): train_step"));
    frames.push(format!("{SCRIPT}(140): main"));
    frames.push(format!("{SCRIPT}(150): <module>"));
    frames
}
