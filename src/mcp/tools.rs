//! The MCP tools: each is one headless command with `--json`. A tool's arguments are read from
//! that command's own clap definition (its flags, their types, help and choices), so that a
//! flag added to a command shows in its tool with no table to keep; a call is turned into the
//! command's own command line, so that a tool answers exactly what the command prints. None of
//! the commands offered writes a file.

use clap::CommandFactory;
use serde_json::{Map, Value, json};

/// The kinds of value a tool argument takes, as its JSON schema names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Text (a rank id, a glob, a path, a choice).
    String,
    /// A number (ms, a multiple).
    Number,
    /// A whole number (a count, a stage, a device).
    Integer,
    /// A switch.
    Boolean,
}

impl Kind {
    /// Its JSON schema name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::Number => "number",
            Kind::Integer => "integer",
            Kind::Boolean => "boolean",
        }
    }
}

/// One argument of a tool, read from its command's clap argument.
#[derive(Debug, Clone)]
pub struct Param {
    /// The argument's name in the tool call: the clap id (`at_ms`).
    pub name: String,
    /// The type of its value (of each value, when it repeats).
    pub kind: Kind,
    /// The flag it becomes (`--at-ms`); `None` for a positional argument.
    pub flag: Option<String>,
    /// Where a positional argument goes among the others (clap's index).
    pub index: usize,
    /// A file or folder to read (its value is a path): checked against the granted roots.
    pub path: bool,
    /// Whether the call must give it.
    pub required: bool,
    /// Whether it repeats (a list of values).
    pub many: bool,
    /// What it means: the command's `--help` line.
    pub about: String,
    /// The values it may take (a JSON schema `enum`); empty: any of its type.
    pub choices: Vec<String>,
}

/// One tool: its name, the subcommand it runs, and what it answers when the subcommand's own
/// summary is not what an assistant needs to hear.
pub struct Tool {
    /// The tool's name.
    pub name: &'static str,
    /// The `memsight` subcommand it runs (with `--json`); its arguments are the tool's.
    pub command: &'static str,
    /// What it answers, for the assistant; `None`: the subcommand's own summary.
    pub about: Option<&'static str>,
}

/// The argument every tool takes besides its own: the answer whole, however large.
pub const FULL: &str = "full";

/// The flags a tool does not take: `--json` (a tool always answers JSON), `--lang` (the text's
/// language: JSON has none) and clap's own.
const NOT_OFFERED: &[&str] = &["json", "lang", "help", "version"];

/// Every tool the server offers: the commands that answer a question about what they read.
pub const TOOLS: &[Tool] = &[
    Tool {
        name: "inspect",
        command: "inspect",
        about: Some(
            "Every rank of a profile: row counts, peaks (MiB and when), the largest allocation, steps, call stacks and warnings.",
        ),
    },
    Tool {
        name: "explain",
        command: "explain",
        about: Some(
            "One short verdict (under 5 KB): the peak with its time and step, what it is made of (roles, modules, source lines), the leak verdict, the OOM cause, advice and replayed what-if numbers. Works on a profile (the rank with the highest peak unless `rank` is given), an allocator snapshot (.pickle) or a cluster summary (.db from `memsight summarize`). Start here.",
        ),
    },
    Tool {
        name: "live",
        command: "live",
        about: None,
    },
    Tool {
        name: "steps",
        command: "steps",
        about: Some(
            "Each training step: peak, end value, survivors; and whether memory grows step over step (the leak check).",
        ),
    },
    Tool {
        name: "roles",
        command: "roles",
        about: None,
    },
    Tool {
        name: "modules",
        command: "modules",
        about: None,
    },
    Tool {
        name: "stacks",
        command: "stacks",
        about: Some(
            "Memory by call stack, source line, host op or training role, over the whole run or alive at a time.",
        ),
    },
    Tool {
        name: "whatif",
        command: "whatif",
        about: None,
    },
    Tool {
        name: "compare",
        command: "compare",
        about: None,
    },
    Tool {
        name: "snapshot",
        command: "snapshot",
        about: Some(
            "An allocator snapshot (.pickle): each device's peak, the OOM cause, fragmentation by cause and its fix, who holds the memory, the phases, and the operators of a profile of the same run beside it.",
        ),
    },
    Tool {
        name: "summary",
        command: "explain",
        about: Some(
            "A cluster summary (.db written by `memsight summarize`): the spread of the ranks' peaks, the outlier ranks and why they differ, the leak suspects and the ranks that failed.",
        ),
    },
];

/// The tool named `name`.
pub fn tool(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The clap definition of `command`, a subcommand of `memsight`.
fn subcommand(command: &str) -> Option<clap::Command> {
    crate::cli::command_line::Args::command()
        .find_subcommand(command)
        .cloned()
}

/// What `t` answers: its own words, else its subcommand's summary.
pub fn about(t: &Tool) -> String {
    t.about.map(str::to_string).unwrap_or_else(|| {
        subcommand(t.command)
            .and_then(|c| c.get_about().map(ToString::to_string))
            .unwrap_or_default()
    })
}

/// The arguments of `t`: its subcommand's, less `--json`, `--lang` and `--help`, positional ones first in
/// their order.
pub fn params(t: &Tool) -> Vec<Param> {
    let Some(cmd) = subcommand(t.command) else {
        return Vec::new();
    };
    let mut out: Vec<Param> = cmd
        .get_arguments()
        .filter(|a| !NOT_OFFERED.contains(&a.get_id().as_str()))
        .map(param)
        .collect();
    out.sort_by_key(|p| (p.flag.is_some(), p.index));
    out
}

/// One clap argument as a tool argument.
fn param(a: &clap::Arg) -> Param {
    use std::any::TypeId;
    let parser = a.get_value_parser();
    let id = parser.type_id();
    let takes_value = a.get_action().takes_values();
    let kind = if !takes_value {
        Kind::Boolean
    } else if id == TypeId::of::<f64>() || id == TypeId::of::<f32>() {
        Kind::Number
    } else if [
        TypeId::of::<u8>(),
        TypeId::of::<u16>(),
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<usize>(),
        TypeId::of::<i64>(),
        TypeId::of::<i32>(),
    ]
    .iter()
    .any(|t| id == *t)
    {
        Kind::Integer
    } else {
        Kind::String
    };
    Param {
        name: a.get_id().to_string(),
        kind,
        flag: a.get_long().map(|l| format!("--{l}")),
        index: a.get_index().unwrap_or(usize::MAX),
        path: id == TypeId::of::<std::path::PathBuf>(),
        required: a.is_required_set(),
        many: matches!(a.get_action(), clap::ArgAction::Append),
        about: a.get_help().map(ToString::to_string).unwrap_or_default(),
        choices: if takes_value {
            a.get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect()
        } else {
            Vec::new()
        },
    }
}

/// A tool's arguments as a JSON schema object.
pub fn schema(t: &Tool) -> Map<String, Value> {
    let params = params(t);
    let properties: Map<String, Value> = params
        .iter()
        .map(|p| {
            let mut one = json!({"type": p.kind.as_str()});
            if !p.choices.is_empty() {
                one["enum"] = json!(p.choices);
            }
            let about = json!(p.about);
            let v = if p.many {
                json!({"type": "array", "items": one, "description": about})
            } else {
                one["description"] = about;
                one
            };
            (p.name.clone(), v)
        })
        .chain(std::iter::once((
            FULL.to_string(),
            json!({
                "type": "boolean",
                "description": "The whole answer, however large (by default lists are cut to keep it under 4 KB, and `cut` says which)",
            }),
        )))
        .collect();
    let required: Vec<&str> = params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name.as_str())
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

/// One value of `p` as command-line text; an error names what is wrong.
fn value_text(t: &Tool, p: &Param, v: &Value) -> Result<String, String> {
    let text = match (p.kind, v) {
        (Kind::String, Value::String(s)) => s.clone(),
        (Kind::Number, Value::Number(n)) => n.to_string(),
        (Kind::Integer, Value::Number(n)) if n.is_u64() || n.is_i64() => n.to_string(),
        _ => {
            return Err(format!(
                "{}: {:?} must be a {}",
                t.name,
                p.name,
                p.kind.as_str()
            ));
        }
    };
    if !p.choices.is_empty() && !p.choices.contains(&text) {
        return Err(format!(
            "{}: {:?} must be one of {}",
            t.name,
            p.name,
            p.choices.join(", ")
        ));
    }
    Ok(text)
}

/// The command line a call of `t` with `args` runs (after `memsight`), and the paths it reads;
/// an error names the argument that is wrong.
pub fn command_line(
    t: &Tool,
    args: &Map<String, Value>,
) -> Result<(Vec<String>, Vec<std::path::PathBuf>), String> {
    let params = params(t);
    if let Some(k) = args
        .keys()
        .find(|k| k.as_str() != FULL && params.iter().all(|p| &p.name != *k))
    {
        return Err(format!("{}: no argument named {k:?}", t.name));
    }
    let mut argv = vec![t.command.to_string()];
    let mut paths = Vec::new();
    for p in &params {
        let Some(v) = args.get(&p.name).filter(|v| !v.is_null()) else {
            if p.required {
                return Err(format!("{}: the argument {:?} is required", t.name, p.name));
            }
            continue;
        };
        if p.kind == Kind::Boolean {
            match v {
                Value::Bool(true) => argv.extend(p.flag.clone()),
                Value::Bool(false) => {}
                _ => return Err(format!("{}: {:?} must be a boolean", t.name, p.name)),
            }
            continue;
        }
        let values: Vec<&Value> = match v {
            Value::Array(items) if p.many => items.iter().collect(),
            one => vec![one],
        };
        for v in values {
            let text = value_text(t, p, v)?;
            if p.path {
                paths.push(std::path::PathBuf::from(&text));
            }
            match &p.flag {
                // One argument, `--rank=-1`: a value starting with `-` is never read as a flag.
                Some(flag) => argv.push(format!("{flag}={text}")),
                // A path starting with `-` is the same file as `./-…`, and no flag.
                None if text.starts_with('-') => argv.push(format!("./{text}")),
                None => argv.push(text),
            }
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
            for p in params(t) {
                assert!(s["properties"].get(&p.name).is_some(), "{}", t.name);
                if p.required {
                    assert!(
                        s["required"].as_array().unwrap().contains(&json!(p.name)),
                        "{}",
                        t.name
                    );
                }
            }
        }
    }
}
