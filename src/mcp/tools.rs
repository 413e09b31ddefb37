//! The MCP tools: each is one headless command with `--json`, its arguments described by a
//! JSON schema and turned into that command's own command line, so that a tool answers exactly
//! what the command prints. None of them writes a file.

use serde_json::{Map, Value, json};

/// One argument of a tool: its JSON name, schema type, the command-line flag it becomes
/// (`None`: a positional path), whether it is a path and whether it is required.
pub struct Param {
    /// The argument's name in the tool call.
    pub name: &'static str,
    /// Its JSON schema type: `string`, `number`, `integer` or `boolean`.
    pub kind: &'static str,
    /// The flag it becomes (`--rank`); `None` for a positional argument.
    pub flag: Option<&'static str>,
    /// A file or folder to read: checked against the granted roots.
    pub path: bool,
    /// Whether the call must give it.
    pub required: bool,
    /// What it means, for the assistant.
    pub about: &'static str,
    /// The values it may take (a JSON schema `enum`); empty: any of its type.
    pub choices: &'static [&'static str],
}

/// One tool: its name, what it answers, the subcommand it runs and its arguments.
pub struct Tool {
    /// The tool's name.
    pub name: &'static str,
    /// What it answers, for the assistant.
    pub about: &'static str,
    /// The `memsight` subcommand it runs (with `--json`).
    pub command: &'static str,
    /// Its arguments.
    pub params: &'static [Param],
}

/// A path the tool reads, named `name` (positional, required, checked against the roots).
const fn named_path(name: &'static str, about: &'static str) -> Param {
    Param {
        name,
        kind: "string",
        flag: None,
        path: true,
        required: true,
        about,
        choices: &[],
    }
}

/// The tool's one path, `path`.
const fn path(about: &'static str) -> Param {
    named_path("path", about)
}

/// An optional flag: `name` in the call, `flag` on the command line.
const fn option(
    name: &'static str,
    kind: &'static str,
    flag: &'static str,
    about: &'static str,
) -> Param {
    Param {
        name,
        kind,
        flag: Some(flag),
        path: false,
        required: false,
        about,
        choices: &[],
    }
}

/// An optional flag naming a file to read (checked against the roots).
const fn path_option(name: &'static str, flag: &'static str, about: &'static str) -> Param {
    Param {
        path: true,
        ..option(name, "string", flag, about)
    }
}

/// An optional flag taking one of `choices`.
const fn choice(
    name: &'static str,
    flag: &'static str,
    choices: &'static [&'static str],
    about: &'static str,
) -> Param {
    Param {
        choices,
        ..option(name, "string", flag, about)
    }
}

/// A flag the call must give.
const fn required(
    name: &'static str,
    kind: &'static str,
    flag: &'static str,
    about: &'static str,
) -> Param {
    Param {
        required: true,
        ..option(name, kind, flag, about)
    }
}

/// Which rank of a profile.
const RANK: Param = option(
    "rank",
    "string",
    "--rank",
    "Rank id as `inspect` lists it; default the device rank with the highest peak (the answer's `rank` says which)",
);

/// The argument every tool takes besides its own: the answer whole, however large.
pub const FULL: &str = "full";

const PROFILE: &str = "A profiling folder, .db or PyTorch trace (.pt.trace.json[.gz])";

/// Every tool the server offers.
pub const TOOLS: &[Tool] = &[
    Tool {
        name: "inspect",
        about: "Every rank of a profile: row counts, peaks (MiB and when), the largest allocation, steps, call stacks and warnings.",
        command: "inspect",
        params: &[path(PROFILE)],
    },
    Tool {
        name: "explain",
        about: "One short verdict (under 5 KB): the peak with its time and step, what it is made of (roles, modules, source lines), the leak verdict, the OOM cause, advice and replayed what-if numbers. Works on a profile (the rank with the highest peak unless `rank` is given), an allocator snapshot (.pickle) or a cluster summary (.db from `memsight summarize`). Start here.",
        command: "explain",
        params: &[
            path("A profile, an allocator snapshot (.pickle) or a cluster summary (.db)"),
            RANK,
        ],
    },
    Tool {
        name: "live",
        about: "What is alive at a time: the largest live allocations and the totals per operator.",
        command: "live",
        params: &[
            path(PROFILE),
            RANK,
            required(
                "at_ms",
                "number",
                "--at-ms",
                "The time, ms from the rank's origin (as `inspect` and `explain` give times)",
            ),
            option("top", "integer", "--top", "How many allocations to list"),
        ],
    },
    Tool {
        name: "steps",
        about: "Each training step: peak, end value, survivors; and whether memory grows step over step (the leak check).",
        command: "steps",
        params: &[path(PROFILE), RANK],
    },
    Tool {
        name: "roles",
        about: "Memory by training role (activations, gradients, optimizer state, inputs, temporaries) at the peak and per step, and what would lower the peak.",
        command: "roles",
        params: &[path(PROFILE), RANK],
    },
    Tool {
        name: "modules",
        about: "Memory by nn.Module at the peak (or a time): which module holds it, and what each allocated in forward and backward.",
        command: "modules",
        params: &[
            path(PROFILE),
            RANK,
            option(
                "at_ms",
                "number",
                "--at-ms",
                "The time, ms; default the peak",
            ),
        ],
    },
    Tool {
        name: "stacks",
        about: "Memory by call stack, source line or host op, over the whole run or alive at a time.",
        command: "stacks",
        params: &[
            path(PROFILE),
            RANK,
            choice(
                "by",
                "--by",
                &["stack", "line", "op", "role"],
                "Group by call stack, source line, host op or training role",
            ),
            option(
                "at_ms",
                "number",
                "--at-ms",
                "Only what is alive at this time, ms (not with from_ms / to_ms)",
            ),
            option(
                "from_ms",
                "number",
                "--from-ms",
                "Only allocations from this time on, ms",
            ),
            option(
                "to_ms",
                "number",
                "--to-ms",
                "Only allocations up to this time, ms",
            ),
            option("top", "integer", "--top", "How many groups to list"),
        ],
    },
    Tool {
        name: "whatif",
        about: "The peak with a larger micro-batch, checkpointed modules, ZeRO or an offloaded optimizer, replayed from the measured run.",
        command: "whatif",
        params: &[
            path(PROFILE),
            RANK,
            option(
                "micro_batch",
                "number",
                "--micro-batch",
                "The micro-batch as a multiple of the profiled one (2: twice as large)",
            ),
            option(
                "batch_size",
                "integer",
                "--batch-size",
                "The micro-batch as a size (16), when the trace records the profiled one (its shapes); instead of micro_batch",
            ),
            option(
                "capacity_gib",
                "number",
                "--capacity-gib",
                "The card's memory, GiB (default: what a PyTorch trace records): the answer's `fit` says whether it fits and the headroom",
            ),
            option(
                "checkpoint",
                "string",
                "--checkpoint",
                "Checkpoint the modules matching this glob or class (`Block`)",
            ),
            option(
                "zero",
                "integer",
                "--zero",
                "ZeRO stage 1, 2 or 3 (needs `ranks`)",
            ),
            option(
                "ranks",
                "integer",
                "--ranks",
                "Ranks the ZeRO stage shards over",
            ),
            option(
                "offload_optimizer",
                "boolean",
                "--offload-optimizer",
                "Optimizer state on the host",
            ),
        ],
    },
    Tool {
        name: "compare",
        about: "Two ranks (of one profile or two runs): peak deltas and what each operator allocated; or two allocator snapshots: reserved, allocated and fragmentation deltas and which stacks grew.",
        command: "compare",
        params: &[
            named_path("a", "The baseline: a profile or an allocator snapshot"),
            named_path("b", "The run compared with it (the same kind as a)"),
            option(
                "rank_a",
                "string",
                "--rank-a",
                "Profiles: the rank of a (default its device rank with the highest peak)",
            ),
            option(
                "rank_b",
                "string",
                "--rank-b",
                "Profiles: the rank of b (default its device rank with the highest peak)",
            ),
            option(
                "at_a",
                "string",
                "--at-a",
                "Snapshots: where a is read, `peak`, `end` or an event index (default peak)",
            ),
            option(
                "at_b",
                "string",
                "--at-b",
                "Snapshots: where b is read, `peak`, `end` or an event index (default peak)",
            ),
            option(
                "device",
                "integer",
                "--device",
                "Snapshots: the device compared (default each one's OOM device)",
            ),
        ],
    },
    Tool {
        name: "snapshot",
        about: "An allocator snapshot (.pickle): each device's peak, the OOM cause, fragmentation by cause and its fix, who holds the memory, the phases, and the operators of a profile of the same run beside it.",
        command: "snapshot",
        params: &[
            path("An allocator snapshot (.pickle / .pkl)"),
            option(
                "at_event",
                "integer",
                "--at-event",
                "The state just after this event (0-based)",
            ),
            option(
                "device",
                "integer",
                "--device",
                "The device (default the one that ran out, else the first with events)",
            ),
            path_option(
                "profile",
                "--profile",
                "A PyTorch trace of the same run: the live blocks by its operators and steps",
            ),
            option("top", "integer", "--top", "How many stacks to list"),
        ],
    },
    Tool {
        name: "summary",
        about: "A cluster summary (.db written by `memsight summarize`): the spread of the ranks' peaks, the outlier ranks and why they differ, the leak suspects and the ranks that failed.",
        command: "explain",
        params: &[path("A cluster summary file (.db)")],
    },
];

/// The tool named `name`.
pub fn tool(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// A tool's arguments as a JSON schema object.
pub fn schema(t: &Tool) -> Map<String, Value> {
    let properties: Map<String, Value> = t
        .params
        .iter()
        .map(|p| {
            let mut about = json!({"type": p.kind, "description": p.about});
            if !p.choices.is_empty() {
                about["enum"] = json!(p.choices);
            }
            (p.name.to_string(), about)
        })
        .chain(std::iter::once((
            FULL.to_string(),
            json!({
                "type": "boolean",
                "description": "The whole answer, however large (by default lists are cut to keep it under 4 KB, and `cut` says which)",
            }),
        )))
        .collect();
    let required: Vec<&str> = t
        .params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name)
        .collect();
    let v = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    });
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The command line a call of `t` with `args` runs (after `memsight`), and the paths it reads;
/// an error names the argument that is wrong.
pub fn command_line(
    t: &Tool,
    args: &Map<String, Value>,
) -> Result<(Vec<String>, Vec<std::path::PathBuf>), String> {
    if let Some(k) = args
        .keys()
        .find(|k| k.as_str() != FULL && t.params.iter().all(|p| p.name != k.as_str()))
    {
        return Err(format!("{}: no argument named {k:?}", t.name));
    }
    let mut argv = vec![t.command.to_string()];
    let mut paths = Vec::new();
    for p in t.params {
        let Some(v) = args.get(p.name).filter(|v| !v.is_null()) else {
            if p.required {
                return Err(format!("{}: the argument {:?} is required", t.name, p.name));
            }
            continue;
        };
        let text = match (p.kind, v) {
            ("string", Value::String(s)) => s.clone(),
            ("number", Value::Number(n)) => n.to_string(),
            ("integer", Value::Number(n)) if n.is_u64() => n.to_string(),
            ("boolean", Value::Bool(b)) => {
                if *b {
                    argv.extend(p.flag.map(str::to_string));
                }
                continue;
            }
            _ => return Err(format!("{}: {:?} must be a {}", t.name, p.name, p.kind)),
        };
        if !p.choices.is_empty() && !p.choices.contains(&text.as_str()) {
            return Err(format!(
                "{}: {:?} must be one of {}",
                t.name,
                p.name,
                p.choices.join(", ")
            ));
        }
        if p.path {
            paths.push(std::path::PathBuf::from(&text));
        }
        match p.flag {
            // One argument, `--rank=-1`: a value starting with `-` is never read as a flag.
            Some(flag) => argv.push(format!("{flag}={text}")),
            // A path starting with `-` is the same file as `./-…`, and no flag.
            None if text.starts_with('-') => argv.push(format!("./{text}")),
            None => argv.push(text),
        }
    }
    argv.push("--json".into());
    Ok((argv, paths))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_becomes_its_commands_line() {
        let t = tool("whatif").unwrap();
        let args = json!({"path": "/p", "rank": "0", "micro_batch": 2, "offload_optimizer": true});
        let (argv, paths) = command_line(t, args.as_object().unwrap()).unwrap();
        assert_eq!(
            argv,
            [
                "whatif",
                "/p",
                "--rank=0",
                "--micro-batch=2",
                "--offload-optimizer",
                "--json"
            ]
        );
        assert_eq!(paths, [std::path::PathBuf::from("/p")]);
        let bad = json!({"path": "/p", "zero": "one"});
        let e = command_line(t, bad.as_object().unwrap()).unwrap_err();
        assert!(e.contains("\"zero\" must be a integer"), "{e}");
        let e = command_line(t, json!({"rank": "0"}).as_object().unwrap()).unwrap_err();
        assert!(e.contains("\"path\" is required"), "{e}");
        let e =
            command_line(t, json!({"path": "/p", "out": "x"}).as_object().unwrap()).unwrap_err();
        assert!(e.contains("no argument named \"out\""), "{e}");
    }

    #[test]
    fn every_tools_schema_names_its_required_arguments() {
        for t in TOOLS {
            let s = schema(t);
            assert_eq!(s["type"], "object");
            for p in t.params {
                assert!(s["properties"].get(p.name).is_some(), "{}", t.name);
            }
        }
    }
}
