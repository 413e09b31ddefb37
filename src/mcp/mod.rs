//! `memsight mcp`: a Model Context Protocol server over stdio, for AI assistants. Its tools
//! ([`tools::TOOLS`]) are the headless commands with `--json`, run in-process on the command
//! line a call becomes, so a tool's answer is the command's JSON.
//!
//! Paths: a tool reads only paths under the roots the client grants (`roots/list`, when the
//! client offers roots) or, when it does not, the roots given on the command line
//! (`memsight mcp --root DIR`, default the folder it was started in). A root holds the files
//! whose real path lies under it: every file and folder a call opens is checked after its
//! links are resolved (`ingest::safe_fs::confine_reads`), not only the path the call names,
//! so a link inside a root to a file outside is refused. Nothing is written.
//!
//! Calls run at most [`concurrent_calls`] at a time (the cores, at least 2); the others wait
//! their turn, so 300 calls at once take no more memory than that many.
//! An answer is the command's JSON once, as text (no second, structured copy), cut to under
//! [`fit::ANSWER_BYTES`] unless the call asks for it whole (`full: true`). A failed command, a
//! path outside the roots and a bad argument are tool results with `isError` and the command's
//! own message, which the model reads and can act on; only an unknown tool is a JSON-RPC error.

pub mod fit;
pub mod tools;

use std::path::{Path, PathBuf};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

/// The server: the roots to fall back on when the client grants none.
#[derive(Debug, Clone)]
pub struct Server {
    roots: Vec<PathBuf>,
    /// One permit a running call: the calls beyond [`concurrent_calls`] wait.
    running: std::sync::Arc<tokio::sync::Semaphore>,
}

/// How many calls run at once: the machine's cores, at least 2 (so a short call is answered
/// while a long one reads).
pub fn concurrent_calls() -> usize {
    std::thread::available_parallelism()
        .map_or(2, std::num::NonZeroUsize::get)
        .max(2)
}

impl Server {
    /// A server reading under `roots` unless the client grants its own.
    pub fn new(roots: Vec<PathBuf>) -> Server {
        Server {
            roots,
            running: std::sync::Arc::new(tokio::sync::Semaphore::new(concurrent_calls())),
        }
    }

    /// The roots for this call: the client's, when it offers roots; else the server's own.
    /// (`roots/list` is deprecated by SEP-2577 and the 2026-07-28 revision forbids a server's
    /// requests: a client on it grants none, and `--root` decides.)
    #[allow(deprecated)]
    async fn roots(&self, cx: &RequestContext<RoleServer>) -> Vec<PathBuf> {
        let offers = cx
            .peer
            .peer_info()
            .is_some_and(|i| i.capabilities.roots.is_some());
        if offers && let Ok(r) = cx.peer.list_roots().await {
            let granted: Vec<PathBuf> = r
                .roots
                .iter()
                .filter_map(|r| file_uri_path(&r.uri))
                .collect();
            if !granted.is_empty() {
                return granted;
            }
        }
        self.roots.clone()
    }
}

/// The path of a `file://` URI (percent-decoded); `None` for any other URI.
fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///C:/x` on Windows: drop the slash before the drive.
    let rest = match rest.as_bytes() {
        [b'/', _, b':', ..] if cfg!(windows) => &rest[1..],
        _ => rest,
    };
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok().map(PathBuf::from)
}

/// Whether `path` lies under one of `roots` (both resolved: `..` and links cannot step out).
pub fn under_roots(path: &Path, roots: &[PathBuf]) -> bool {
    crate::ingest::safe_fs::resolves_under(path, roots)
}

/// One tool call, whole, as the server answers it (the fuzz target `mcp_request` calls it too):
/// the tool by name, its arguments turned into its command line, every path it names checked
/// against `roots`, then the command run with every file it opens confined to `roots`. Its
/// JSON, or the message of what is wrong.
pub fn answer(
    name: &str,
    args: &serde_json::Map<String, serde_json::Value>,
    roots: &[PathBuf],
) -> Result<serde_json::Value, String> {
    let tool = tools::tool(name).ok_or_else(|| format!("no tool named {name:?}"))?;
    let (argv, paths) = tools::command_line(tool, args)?;
    if let Some(p) = paths.iter().find(|p| !under_roots(p, roots)) {
        let granted: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        return Err(format!(
            "{} is not under a granted root ({}), or does not exist",
            p.display(),
            granted.join(", ")
        ));
    }
    // Every file the command opens is checked against the roots, links resolved.
    let _confined = crate::ingest::safe_fs::confine_reads(roots);
    let v = run_command(&argv)?;
    let whole = args.get(tools::FULL).and_then(serde_json::Value::as_bool) == Some(true);
    Ok(if whole {
        v
    } else {
        fit::fit(v, fit::ANSWER_BYTES)
    })
}

/// Runs `argv` (after `memsight`) as the command line would, in-process; its JSON, or its
/// error message.
fn run_command(argv: &[String]) -> Result<serde_json::Value, String> {
    use clap::Parser;
    let args = crate::cli::command_line::Args::try_parse_from(
        std::iter::once("memsight".to_string()).chain(argv.iter().cloned()),
    )
    .map_err(|e| e.to_string())?;
    let Some(command) = args.command else {
        return Err("no command".into());
    };
    json_of(|o, e| crate::cli::command_line::run(command, o, e))
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("memsight", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "memsight reads Ascend NPU and PyTorch memory profiles, allocator snapshots and \
                 cluster summaries. Start with `explain` on a path; dig further with the tool \
                 it names. Sizes are MiB (profiles) or bytes (snapshots); times are ms.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let list = tools::TOOLS
            .iter()
            .map(|t| rmcp::model::Tool::new(t.name, tools::about(t), tools::schema(t)))
            .collect();
        Ok(ListToolsResult::with_all_items(list))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if tools::tool(&name).is_none() {
            return Err(ErrorData::invalid_params(
                format!("no tool named {name:?}"),
                None,
            ));
        }
        let args = request.arguments.clone().unwrap_or_default();
        let roots = self.roots(&context).await;
        // At most `concurrent_calls` at once; the rest wait here, holding nothing.
        let permit = std::sync::Arc::clone(&self.running)
            .acquire_owned()
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        // The commands are synchronous and may read for seconds: off the runtime's thread.
        // Every file they open is checked against the roots, links resolved.
        let answer = tokio::task::spawn_blocking(move || {
            let answer = answer(&name, &args, &roots);
            drop(permit);
            answer
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let text = |t: String| vec![rmcp::model::ContentBlock::text(t)];
        Ok(match answer {
            Ok(v) => CallToolResult::success(text(v.to_string())),
            Err(e) => CallToolResult::error(text(e)),
        }
        .into())
    }
}

/// Serves MCP on stdin/stdout until the client closes it; the exit code.
pub fn serve(roots: Vec<PathBuf>, err: &mut dyn std::io::Write) -> i32 {
    let roots = match roots.is_empty() {
        true => std::env::current_dir().into_iter().collect(),
        false => roots,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "memsight: cannot start the MCP server: {e}");
            return crate::cli::EXIT_FAILURE;
        }
    };
    let result: Result<(), String> = runtime.block_on(async {
        let service = Server::new(roots)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| e.to_string())?;
        service.waiting().await.map_err(|e| e.to_string())?;
        Ok(())
    });
    crate::cli::finish(result, err)
}

/// Runs a subcommand in-process (`f` writes its JSON to the first stream, its error to the
/// second) and parses its JSON; its error line when it fails.
fn json_of(
    f: impl FnOnce(&mut dyn std::io::Write, &mut dyn std::io::Write) -> i32,
) -> Result<serde_json::Value, String> {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    if f(&mut out, &mut err) != 0 {
        let e = String::from_utf8_lossy(&err);
        let line = e.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(line.trim_start_matches("memsight: ").to_string());
    }
    serde_json::from_slice(&out).map_err(|e| format!("a command's JSON did not parse: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_uri_is_a_path() {
        assert_eq!(
            file_uri_path("file:///home/a%20b/x"),
            Some(PathBuf::from("/home/a b/x"))
        );
        assert_eq!(file_uri_path("https://x"), None);
    }

    #[test]
    fn only_paths_under_a_root_are_read() {
        let d = tempfile::tempdir().unwrap();
        let inside = d.path().join("in");
        std::fs::create_dir(&inside).unwrap();
        let roots = vec![inside.clone()];
        assert!(under_roots(&inside, &roots));
        // `..` resolves out of the root.
        assert!(!under_roots(&inside.join(".."), &roots));
        assert!(!under_roots(d.path(), &roots));
        assert!(!under_roots(&inside.join("missing"), &roots));
    }
}
