//! `memsight mcp` (issue 46) through a real MCP client, the Python `mcp` package's stdio client
//! (`tests/reference/mcp_session.py`): it lists the tools, each with a JSON schema for its
//! arguments, and calls every one on real data (a real H100 training trace, a real snapshot
//! recorded with its profile, a cluster summary); each answer equals the CLI's `--json` for the
//! same arguments (asked whole, `full: true`), sent once as text; by default under 4 KB, its
//! lists cut to the CLI's first entries. A path outside the granted roots, a bad argument and a
//! command that fails are tool results with `isError` (an unknown tool a JSON-RPC error), and
//! nothing is written under the roots.

use serde_json::{Value, json};

use crate::common;

fn cli_json(args: &[&str]) -> Value {
    let (code, out, err) = common::memsight(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn a_real_mcp_client_lists_and_calls_every_tool_and_gets_the_clis_answers() {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    // The run's own folder, with a trace of a real H100 training step and a snapshot recorded
    // with its profile; a cluster summary of the demo beside them.
    let runs = work.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    let trace = runs.join("gpt_b8.pt.trace.json.gz");
    std::fs::copy(
        root.join("cuda_h100/whatif/gpt_b8.pt.trace.json.gz"),
        &trace,
    )
    .unwrap();
    let trace16 = runs.join("gpt_b16.pt.trace.json.gz");
    std::fs::copy(
        root.join("cuda_h100/whatif/gpt_b16.pt.trace.json.gz"),
        &trace16,
    )
    .unwrap();
    let snaps = runs.join("snap");
    std::fs::create_dir(&snaps).unwrap();
    let fixture = common::fixtures().join("snapshots/cuda_join");
    let snap = snaps.join("run.pickle");
    std::fs::copy(fixture.join("run.pickle"), &snap).unwrap();
    std::fs::copy(
        fixture.join("run.pt.trace.json.gz"),
        snaps.join("run.pt.trace.json.gz"),
    )
    .unwrap();
    let summary = runs.join("demo_summary.db");
    // The ranks summarised lie under the root too: the verdict names their folders.
    let demo = runs.join("demo");
    common::copy_dir(&common::fixtures().join("demo"), &demo);
    let (code, _, err) = common::memsight(&[
        "summarize",
        &demo.display().to_string(),
        "--out",
        &summary.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    let before = common::files_under(&runs);

    let trace_join = snaps.join("run.pt.trace.json.gz").display().to_string();
    let (t, t16, s, db) = (
        trace.display().to_string(),
        trace16.display().to_string(),
        snap.display().to_string(),
        summary.display().to_string(),
    );
    let rank = "gpt_b8 cuda:0";
    let peak = cli_json(&["explain", &t, "--json"])["peak"]["at_ms"].clone();
    let at = peak.to_string();
    // (tool, arguments, the CLI's arguments for the same question)
    let calls: Vec<(&str, Value, Vec<&str>)> = vec![
        ("inspect", json!({"path": t}), vec!["inspect", &t, "--json"]),
        ("explain", json!({"path": t}), vec!["explain", &t, "--json"]),
        (
            "live",
            json!({"path": t, "rank": rank, "at_ms": peak, "top": 5}),
            vec![
                "live", &t, "--rank", rank, "--at-ms", &at, "--top", "5", "--json",
            ],
        ),
        (
            "steps",
            json!({"path": t, "rank": rank}),
            vec!["steps", &t, "--rank", rank, "--json"],
        ),
        (
            "roles",
            json!({"path": t, "rank": rank}),
            vec!["roles", &t, "--rank", rank, "--json"],
        ),
        (
            "modules",
            json!({"path": t, "rank": rank}),
            vec!["modules", &t, "--rank", rank, "--json"],
        ),
        (
            "stacks",
            json!({"path": t, "rank": rank, "by": "line", "top": 3}),
            vec![
                "stacks", &t, "--rank", rank, "--by", "line", "--top", "3", "--json",
            ],
        ),
        (
            "whatif",
            json!({"path": t, "rank": rank, "micro_batch": 2, "checkpoint": "Block"}),
            vec![
                "whatif",
                &t,
                "--rank",
                rank,
                "--micro-batch",
                "2",
                "--checkpoint",
                "Block",
                "--json",
            ],
        ),
        (
            "compare",
            json!({"a": t, "b": t16}),
            vec!["compare", &t, &t16, "--json"],
        ),
        (
            "compare",
            json!({"a": t, "b": t16, "rank_a": "gpt_b8 cpu", "rank_b": "gpt_b16 cuda:0"}),
            vec![
                "compare",
                &t,
                &t16,
                "--rank-a",
                "gpt_b8 cpu",
                "--rank-b",
                "gpt_b16 cuda:0",
                "--json",
            ],
        ),
        (
            "stacks",
            json!({"path": t, "by": "op", "from_ms": 0.0, "to_ms": 20.0, "top": 3}),
            vec![
                "stacks",
                &t,
                "--by",
                "op",
                "--from-ms",
                "0",
                "--to-ms",
                "20",
                "--top",
                "3",
                "--json",
            ],
        ),
        (
            "snapshot",
            json!({"path": s, "top": 3}),
            vec!["snapshot", &s, "--top", "3", "--json"],
        ),
        (
            "snapshot",
            json!({"path": s, "device": 0, "profile": trace_join, "top": 3}),
            vec![
                "snapshot",
                &s,
                "--device",
                "0",
                "--profile",
                &trace_join,
                "--top",
                "3",
                "--json",
            ],
        ),
        (
            "summary",
            json!({"path": db}),
            vec!["explain", &db, "--json"],
        ),
    ];
    let errors = vec![
        // Outside the granted root.
        json!({"tool": "inspect", "arguments": {"path": common::fixtures().join("demo").display().to_string()}}),
        // A bad argument.
        json!({"tool": "whatif", "arguments": {"path": t, "zero": "one"}}),
        // A command that fails: a rank the profile does not have.
        json!({"tool": "roles", "arguments": {"path": t, "rank": "no such rank"}}),
        json!({"tool": "no_such_tool", "arguments": {}}),
        // A value `by` does not take.
        json!({"tool": "stacks", "arguments": {"path": t, "by": "file"}}),
    ];
    let errors_sent = errors.len();
    // Each call twice: whole (`full`), and as an assistant calls it (cut under 4 KB).
    let mut list: Vec<Value> = calls
        .iter()
        .map(|(tool, args, _)| {
            let mut whole = args.clone();
            whole["full"] = json!(true);
            json!({"tool": tool, "arguments": whole})
        })
        .collect();
    list.extend(
        calls
            .iter()
            .map(|(tool, args, _)| json!({"tool": tool, "arguments": args})),
    );
    list.extend(errors);
    let calls_file = work.path().join("calls.json");
    std::fs::write(&calls_file, serde_json::to_string(&list).unwrap()).unwrap();
    let Some(session) = common::python_reference(
        "mcp_session.py",
        &[
            env!("CARGO_BIN_EXE_memsight").as_ref(),
            calls_file.as_os_str(),
            runs.as_os_str(),
        ],
    ) else {
        return;
    };

    // Every tool is listed, with a schema naming its arguments.
    let tools = session["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in [
        "inspect", "explain", "live", "roles", "modules", "whatif", "compare", "snapshot",
        "summary", "steps", "stacks",
    ] {
        assert!(names.contains(&want), "{names:?}");
    }
    for t in tools {
        let schema = &t["input_schema"];
        assert_eq!(schema["type"], "object", "{t}");
        assert!(
            schema["properties"]
                .as_object()
                .is_some_and(|p| !p.is_empty()),
            "{t}"
        );
    }
    let whatif = tools.iter().find(|t| t["name"] == "whatif").unwrap();
    assert_eq!(
        whatif["input_schema"]["properties"]["micro_batch"]["type"],
        "number"
    );

    // `by` takes one of its values, said in the schema.
    let stacks = tools.iter().find(|t| t["name"] == "stacks").unwrap();
    assert_eq!(
        stacks["input_schema"]["properties"]["by"]["enum"],
        json!(["stack", "line", "op", "role"])
    );

    // Each answer asked whole is the CLI's JSON for the same question, sent once (as text).
    let answers = session["calls"].as_array().unwrap();
    assert_eq!(answers.len(), 2 * calls.len() + errors_sent);
    for ((tool, _, cli), got) in calls.iter().zip(answers) {
        assert_eq!(got["tool"], *tool);
        assert!(got.get("error").is_none(), "{tool}: {got}");
        assert_eq!(got["answer"], cli_json(cli), "{tool}");
        assert_eq!(got["structured"], Value::Null, "{tool}: sent once");
    }
    // As an assistant asks: under 4 KB, each cut list the CLI's first entries.
    for ((tool, _, cli), got) in calls.iter().zip(&answers[calls.len()..]) {
        assert!(
            got["bytes"].as_u64().unwrap() <= 4096,
            "{tool}: {}",
            got["bytes"]
        );
        let whole = cli_json(cli);
        let answer = &got["answer"];
        for (pointer, n) in answer["cut"]["lists"].as_object().into_iter().flatten() {
            let (full, kept) = (
                whole.pointer(pointer).unwrap().as_array().unwrap(),
                answer.pointer(pointer).unwrap().as_array().unwrap(),
            );
            assert_eq!(full.len() as u64, n.as_u64().unwrap(), "{tool} {pointer}");
            assert!(
                !kept.is_empty() && kept.len() < full.len(),
                "{tool} {pointer}"
            );
        }
        if answer["cut"].is_null() {
            assert_eq!(*answer, whole, "{tool}: small enough to send whole");
        }
    }
    // The errors are tool results with a reason (isError), but an unknown tool.
    let errs = &answers[2 * calls.len()..];
    let message = |i: usize| errs[i]["error"]["message"].as_str().unwrap().to_string();
    assert!(
        message(0).contains("not under a granted root"),
        "{}",
        message(0)
    );
    assert!(
        message(1).contains("\"zero\" must be a integer"),
        "{}",
        message(1)
    );
    assert!(message(2).contains("no such rank"), "{}", message(2));
    assert!(message(3).contains("no tool named"), "{}", message(3));
    assert!(
        message(4).contains("\"by\" must be one of stack, line, op, role"),
        "{}",
        message(4)
    );
    for e in &errs[..3] {
        assert_eq!(
            e["error"]["code"],
            Value::Null,
            "a tool result with isError: {e}"
        );
    }
    assert_eq!(errs[3]["error"]["code"], -32602, "{}", errs[3]);
    // Nothing written under the root.
    assert_eq!(common::files_under(&runs), before);
}

/// Issue 86 item 3: a root holds the files whose real path is under it. Through the real
/// server: a link inside the root to a trace outside is not read, a linked folder is not
/// followed out when the root is inspected, and a snapshot's trace beside it that links out is
/// not joined; the same files inside the root are.
#[cfg(unix)]
#[test]
fn the_mcp_server_follows_no_link_out_of_its_roots() {
    let work = tempfile::tempdir().unwrap();
    let (root, outside) = (work.path().join("root"), work.path().join("outside"));
    std::fs::create_dir_all(root.join("inside")).unwrap();
    std::fs::create_dir_all(root.join("snap")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let fixture = common::fixtures().join("snapshots/cuda_join");
    let secret = outside.join("secret.pt.trace.json.gz");
    std::fs::copy(fixture.join("run.pt.trace.json.gz"), &secret).unwrap();
    let link = |target: &std::path::Path, at: std::path::PathBuf| {
        std::os::unix::fs::symlink(target, at).unwrap();
    };
    // A link to the outside trace, a link to the outside folder, and a snapshot whose trace
    // beside it is a link out.
    link(&secret, root.join("inside/link.pt.trace.json.gz"));
    link(&outside, root.join("linked"));
    std::fs::copy(fixture.join("run.pickle"), root.join("snap/run.pickle")).unwrap();
    link(&secret, root.join("snap/run.pt.trace.json.gz"));
    // The same snapshot with its real trace, inside: joined (the control).
    std::fs::create_dir_all(root.join("real")).unwrap();
    std::fs::copy(fixture.join("run.pickle"), root.join("real/run.pickle")).unwrap();
    std::fs::copy(
        fixture.join("run.pt.trace.json.gz"),
        root.join("real/run.pt.trace.json.gz"),
    )
    .unwrap();
    let before = common::files_under(&root);
    let p = |rel: &str| root.join(rel).display().to_string();
    let calls = json!([
        {"tool": "inspect", "arguments": {"path": p("inside")}},
        {"tool": "inspect", "arguments": {"path": p("linked")}},
        {"tool": "inspect", "arguments": {"path": p("")}},
        {"tool": "snapshot", "arguments": {"path": p("snap/run.pickle")}},
        {"tool": "snapshot", "arguments": {"path": p("real/run.pickle")}},
        {"tool": "explain", "arguments": {"path": p("inside/link.pt.trace.json.gz")}},
    ]);
    let calls_file = work.path().join("calls.json");
    std::fs::write(&calls_file, calls.to_string()).unwrap();
    let Some(session) = common::python_reference(
        "mcp_session.py",
        &[
            env!("CARGO_BIN_EXE_memsight").as_ref(),
            calls_file.as_os_str(),
            root.as_os_str(),
        ],
    ) else {
        return;
    };
    let answers = session["calls"].as_array().unwrap();
    let text = |i: usize| answers[i].to_string();
    // The folder holding only a link out has no profile; the linked folder is outside.
    assert!(answers[0].get("error").is_some(), "{}", text(0));
    assert!(answers[1].get("error").is_some(), "{}", text(1));
    // The root's own inspect finds the snapshots' folders only, never the outside trace.
    assert!(!text(2).contains("secret"), "{}", text(2));
    // The snapshot beside a link out is not joined; the one beside its real trace is.
    assert_eq!(
        answers[3]["answer"]["profile_join"],
        Value::Null,
        "{}",
        text(3)
    );
    assert!(
        answers[4]["answer"]["profile_join"].is_object(),
        "{}",
        text(4)
    );
    assert!(answers[5].get("error").is_some(), "{}", text(5));
    assert_eq!(common::files_under(&root), before, "nothing written");
}

/// The peak resident memory of a process (`VmHWM`), bytes.
#[cfg(target_os = "linux")]
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// Sends `calls` `explain` calls at once to a fresh `memsight mcp` over stdio (JSON-RPC, one
/// message a line), reads every answer, and returns the server's peak resident memory and the
/// answers' count.
#[cfg(target_os = "linux")]
fn concurrent_explains(
    root: &std::path::Path,
    trace: &std::path::Path,
    calls: usize,
) -> (u64, usize) {
    use std::io::{BufRead, Write};
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
        .args(["mcp", "--root"])
        .arg(root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut input = server.stdin.take().unwrap();
    let mut output = std::io::BufReader::new(server.stdout.take().unwrap());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "memsight-test", "version": "0"}}});
    writeln!(input, "{init}").unwrap();
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    writeln!(
        input,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    let mut batch = String::new();
    for id in 1..=calls {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "explain", "arguments": {"path": trace.display().to_string()}}});
        batch.push_str(&format!("{call}\n"));
    }
    input.write_all(batch.as_bytes()).unwrap();
    input.flush().unwrap();
    let mut answered = 0;
    while answered < calls {
        line.clear();
        if output.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let v: Value = serde_json::from_str(&line).unwrap();
        if v.get("id").is_some() {
            assert!(v.get("result").is_some(), "{v}");
            answered += 1;
        }
    }
    let peak = peak_rss(server.id());
    drop(input);
    let _ = server.wait();
    (peak, answered)
}

/// Issue 86 item 6: calls sent at once run at most the machine's cores at a time (at least 2):
/// many `explain`s at once take about the memory of that many, not of all of them (300 calls
/// took 2.2 GB where one takes 25 MB before the bound).
#[cfg(target_os = "linux")]
#[test]
fn concurrent_mcp_calls_are_bounded_by_the_cores() {
    let work = tempfile::tempdir().unwrap();
    let trace = work.path().join("cnn.pt.trace.json.gz");
    std::fs::copy(
        common::fixtures().join("pytorch/cnn_adam.pt.trace.json.gz"),
        &trace,
    )
    .unwrap();
    let cores = memsight::mcp::concurrent_calls();
    let (one, answered) = concurrent_explains(work.path(), &trace, 1);
    assert_eq!(answered, 1);
    let many = 8 * cores + 16;
    let (peak, answered) = concurrent_explains(work.path(), &trace, many);
    assert_eq!(answered, many, "every call answered");
    // A server idles at its binary and runtime; each running call adds what one adds.
    let bound = one * (cores as u64 + 2);
    assert!(
        peak <= bound,
        "{many} calls at once: {} MiB; one call: {} MiB; {cores} at a time",
        peak >> 20,
        one >> 20
    );
}

/// Issue 88: no hand-kept table. Every tool's schema names exactly the flags and arguments of
/// its command as the binary's own `--help` lists them (less `--json`, which a tool always
/// passes, `--lang`, the text's language, and `--help`), plus `full`: a flag added to a command shows in its tool. The help
/// text is read from the binary, not from the code that builds the schema.
#[test]
fn every_tools_schema_is_its_commands_flags() {
    use memsight::mcp::tools;
    assert!(tools::TOOLS.len() >= 10);
    for t in tools::TOOLS {
        let help = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
            .args([t.command, "--help"])
            .output()
            .expect("memsight runs");
        let help = String::from_utf8(help.stdout).expect("UTF-8 help");
        let mut from_help: Vec<String> = Vec::new();
        let mut section = "";
        for line in help.lines() {
            if line.trim().is_empty() {
                continue;
            }
            if !line.starts_with(' ') {
                section = line;
                continue;
            }
            let word = line.trim_start();
            if section.starts_with("Arguments") {
                if let Some(name) = word.strip_prefix('<').and_then(|w| w.split('>').next()) {
                    from_help.push(name.to_lowercase());
                }
            } else if section.starts_with("Options") {
                let word = word.strip_prefix("-h, ").unwrap_or(word);
                if let Some(flag) = word.strip_prefix("--") {
                    let flag = flag.split([' ', '=']).next().unwrap_or_default();
                    if !["json", "lang", "help"].contains(&flag) {
                        from_help.push(flag.replace('-', "_"));
                    }
                }
            }
        }
        from_help.sort();
        let schema = tools::schema(t);
        let mut offered: Vec<String> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| k.as_str() != tools::FULL)
            .cloned()
            .collect();
        offered.sort();
        assert_eq!(
            offered, from_help,
            "tool {} vs `memsight {} --help`",
            t.name, t.command
        );
        assert!(!tools::about(t).is_empty(), "{}", t.name);
    }
}
