//! `memsight modules`: which `nn.Module` holds the memory at a time (by default the peak of
//! Operator Allocated, which is PyTorch's Total Allocated), each module on its own and with the
//! modules under it, and what each allocated in forward and in backward.

use super::{RankInput, RankReport, ms_to_ns};
use crate::analysis::modules::{
    ModuleTree, ModulesHeld, NO_MODULES_HINT, Pass, RoleBytes, allocated_by_phase, held,
};
use crate::model::{Lang, RankData, Role, bytes_to_mib, ns_to_ms};

/// Why an msMemScope dump's rank has no module tree: msMemScope writes no module spans.
const NO_MODULES_IN_A_DUMP: &str = "an msMemScope dump names no module: record the run with \
     torch_npu.profiler.profile(with_stack=True, with_modules=True) and open its profile, whose \
     trace writes each module's forward as an `nn.Module: NAME` frame";

/// Options of `modules`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ModulesArgs {
    /// Rank id; default the device rank with the highest peak.
    #[arg(long, allow_hyphen_values = true)]
    pub rank: Option<String>,
    /// The blocks alive at this time (ms from the rank's origin); default the peak of
    /// Operator Allocated (PyTorch's Total Allocated).
    #[arg(long, allow_negative_numbers = true)]
    pub at_ms: Option<f64>,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The text's language (the JSON has none): en or zh; default the locale's (LC_ALL,
    /// LC_MESSAGES, LANG).
    #[arg(long, value_parser = super::parse_lang)]
    pub lang: Option<Lang>,
}

/// Which `nn.Module` holds the memory at a time, and what each allocated per pass.
pub struct Modules;

impl RankReport for Modules {
    type Args = ModulesArgs;
    type Answer<'a> = Report<'a>;

    fn check(args: &ModulesArgs) -> Result<(), String> {
        args.at_ms
            .map(|v| ms_to_ns(v, "--at-ms"))
            .transpose()
            .map(drop)
    }

    fn compute<'a>(input: &RankInput<'a>, args: &ModulesArgs) -> Result<Report<'a>, String> {
        let at = args.at_ms.map(|v| ms_to_ns(v, "--at-ms")).transpose()?;
        let data = &input.view.data;
        let rank = &data.info.rank;
        // An msMemScope dump records no module: the profiler's trace of the same run does.
        let hint = if super::stacks::is_memscope_dump(data) {
            NO_MODULES_IN_A_DUMP
        } else {
            NO_MODULES_HINT
        };
        let Some(stacks) = data.stacks.as_ref() else {
            return Err(format!("rank {rank}: {hint}"));
        };
        let tree = ModuleTree::new(stacks).map_err(|e| format!("rank {rank}: {e}"))?;
        if tree.is_empty() {
            return Err(format!("rank {rank}: {hint}"));
        }
        // The peak of Operator Allocated (first reached), as the chart and the pane mark it.
        let at = match at {
            Some(t) => t,
            None => input
                .view
                .operator_allocated()
                .and_then(crate::analysis::peak)
                .map(|p| p.time)
                .ok_or_else(|| {
                    format!("rank {rank}: no Operator Allocated curve to find the peak of")
                })?,
        };
        let rows = input
            .view
            .live_index()
            .alive_at(data.time_origin_ns.saturating_add(at));
        Ok(Report {
            data,
            held: held(data, stacks, &tree, &rows),
            allocated: allocated_by_phase(data, stacks, &tree),
            tree,
            at,
        })
    }

    fn json(a: &Report<'_>) -> serde_json::Value {
        a.json()
    }

    fn text(a: &Report<'_>, lang: Lang) -> String {
        a.text(lang)
    }
}

/// The modules of one rank at a time.
pub struct Report<'a> {
    data: &'a RankData,
    tree: ModuleTree,
    /// ns from the rank's origin.
    at: i64,
    held: ModulesHeld,
    /// Per node, `[forward, backward]` by role (empty without phases).
    allocated: Vec<[RoleBytes; 2]>,
}

impl Report<'_> {
    fn json(&self) -> serde_json::Value {
        let modules: Vec<serde_json::Value> = self
            .tree
            .depth_first()
            .into_iter()
            .map(|n| {
                let m = &self.tree.nodes[n as usize];
                let h = self.held.modules[n as usize];
                let mut item = serde_json::json!({
                    "path": m.path,
                    "name": m.name,
                    "class": m.class_name(),
                    "depth": m.depth,
                    "held_mib": bytes_to_mib(h.bytes),
                    "self_held_mib": bytes_to_mib(h.self_bytes),
                    "blocks": h.blocks,
                    "self_blocks": h.self_blocks,
                });
                if let Some(passes) = self.allocated.get(n as usize) {
                    let mut allocated = serde_json::Map::new();
                    for pass in Pass::ALL {
                        allocated
                            .insert(pass.as_str().into(), by_role_json(&passes[pass as usize]));
                    }
                    item["allocated_mib"] = allocated.into();
                }
                item
            })
            .collect();
        serde_json::json!({
            "rank": self.data.info.rank,
            "at_ms": ns_to_ms(self.at),
            "modules": modules,
            "unattributed_mib": bytes_to_mib(self.held.unattributed),
            "unattributed_blocks": self.held.unattributed_blocks,
            "live_mib": bytes_to_mib(self.held.total),
        })
    }

    fn text(&self, lang: Lang) -> String {
        use std::fmt::Write as _;
        let zh = lang == Lang::Zh;
        let mut s = String::new();
        let (rank, at, live, outside) = (
            &self.data.info.rank,
            ns_to_ms(self.at),
            bytes_to_mib(self.held.total),
            bytes_to_mib(self.held.unattributed),
        );
        let _ = if zh {
            writeln!(
                s,
                "rank {rank}：{at:.3} ms 时按模块的内存：存活内存块共 {live:.2} MB，其中 {outside:.2} MB 在所有模块之外分配"
            )
        } else {
            writeln!(
                s,
                "rank {rank}: memory by module at {at:.3} ms: {live:.2} MB live in blocks, \
                 {outside:.2} MB of it allocated outside every module"
            )
        };
        let with_passes = !self.allocated.is_empty();
        let heads: [&str; 6] = if zh {
            ["持有 MB", "自身 MB", "块数", "前向 MB", "反向 MB", "模块"]
        } else {
            ["held MB", "self MB", "blocks", "fwd MB", "bwd MB", "module"]
        };
        let pad = super::text::pad_start;
        let _ = write!(
            s,
            "\n{}  {}  {}",
            pad(heads[0], 10),
            pad(heads[1], 10),
            pad(heads[2], 7)
        );
        if with_passes {
            let _ = write!(s, "  {}  {}", pad(heads[3], 10), pad(heads[4], 10));
        }
        let _ = writeln!(s, "  {}", heads[5]);
        for n in self.tree.depth_first() {
            let m = &self.tree.nodes[n as usize];
            let h = self.held.modules[n as usize];
            let _ = write!(
                s,
                "{:>10.2}  {:>10.2}  {:>7}",
                bytes_to_mib(h.bytes),
                bytes_to_mib(h.self_bytes),
                h.blocks
            );
            if let Some(p) = self.allocated.get(n as usize) {
                let sum = |r: &RoleBytes| bytes_to_mib(r.iter().sum::<i64>());
                let _ = write!(s, "  {:>10.2}  {:>10.2}", sum(&p[0]), sum(&p[1]));
            }
            let indent = super::text::indent(m.depth as usize);
            let _ = writeln!(s, "  {indent}{}", super::text::one_line(&m.name));
        }
        if !with_passes {
            let _ = writeln!(
                s,
                "{}",
                if zh {
                    "\n（没有找到前向或反向阶段：各模块在每个阶段的分配量从略）"
                } else {
                    "\n(no forward or backward phases found: what each module allocated per pass is \
                     left out)"
                }
            );
        }
        s
    }
}

/// The non-zero roles of one pass, in MiB.
fn by_role_json(bytes: &RoleBytes) -> serde_json::Value {
    Role::ALL
        .iter()
        .zip(bytes)
        .filter(|&(_, &b)| b != 0)
        .map(|(r, &b)| (r.as_str().to_string(), serde_json::json!(bytes_to_mib(b))))
        .collect::<serde_json::Map<_, _>>()
        .into()
}
