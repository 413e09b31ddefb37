//! `memsight mcp` (issue 46) through a real MCP client, the Python `mcp` package's stdio client
//! (`tests/reference/mcp_session.py`): it lists the tools, each with a JSON schema for its
//! arguments, and calls every one on real data (a real H100 training trace, a real snapshot
//! recorded with its profile, a cluster summary); each answer equals the CLI's `--json` for the
//! same arguments. A path outside the granted roots, a bad argument and a command that fails
//! are MCP errors, and nothing is written under the roots.

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
    let demo = common::fixtures().join("demo");
    let (code, _, err) = common::memsight(&[
        "summarize",
        &demo.display().to_string(),
        "--out",
        &summary.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    let before = common::files_under(&runs);

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
            "snapshot",
            json!({"path": s, "top": 3}),
            vec!["snapshot", &s, "--top", "3", "--json"],
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
    ];
    let mut list: Vec<Value> = calls
        .iter()
        .map(|(tool, args, _)| json!({"tool": tool, "arguments": args}))
        .collect();
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

    // Each answer is the CLI's JSON for the same question.
    let answers = session["calls"].as_array().unwrap();
    assert_eq!(answers.len(), calls.len() + 4);
    for ((tool, _, cli), got) in calls.iter().zip(answers) {
        assert_eq!(got["tool"], *tool);
        assert!(got.get("error").is_none(), "{tool}: {got}");
        assert_eq!(got["structured"], cli_json(cli), "{tool}");
    }
    // The errors are MCP errors with a reason.
    let errs = &answers[calls.len()..];
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
    for e in errs {
        assert_eq!(e["error"]["code"], -32602, "{e}");
    }
    // Nothing written under the root.
    assert_eq!(common::files_under(&runs), before);
}
