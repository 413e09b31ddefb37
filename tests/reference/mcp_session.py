"""A real MCP client session with `memsight mcp` (issue 46): the Python `mcp` package's own
stdio client starts the server, lists its tools and calls each one given, as an AI assistant
would. The test (tests/cli/cli_mcp.rs) compares each answer with the CLI's JSON.

    python3 tests/reference/mcp_session.py MEMSIGHT_BIN CALLS.json [ROOT ...]

CALLS.json: [{"tool": name, "arguments": {...}}, ...]. The server is started as
`MEMSIGHT_BIN mcp --root ROOT ...`. Prints JSON: {"protocol": the negotiated version,
"tools": [{"name", "input_schema"}], "calls": [{"tool", "answer", "bytes", "structured"} or
{"tool", "error": {"code", "message"}}]}: "answer" is the result's text parsed as JSON, "bytes"
its length, "structured" its structured content (none: the answer is sent once); a tool result
with isError has code None, a JSON-RPC error its code.
"""
import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


async def session(binary, calls, roots):
    args = ["mcp"]
    for r in roots:
        args += ["--root", r]
    params = StdioServerParameters(command=binary, args=args)
    out = {"tools": [], "calls": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            out["protocol"] = getattr(init, "protocol_version", None)
            listed = await s.list_tools()
            for t in listed.tools:
                out["tools"].append({"name": t.name, "input_schema": t.input_schema})
            for c in calls:
                try:
                    r = await s.call_tool(c["tool"], c["arguments"])
                    if r.is_error:
                        text = r.content[0].text if r.content else ""
                        out["calls"].append({"tool": c["tool"], "error": {"code": None, "message": text}})
                    else:
                        text = "".join(getattr(b, "text", "") for b in r.content)
                        out["calls"].append({
                            "tool": c["tool"],
                            "answer": json.loads(text),
                            "bytes": len(text.encode("utf-8")),
                            "structured": r.structured_content,
                        })
                except MCPError as e:
                    err = getattr(e, "error", None)
                    out["calls"].append({
                        "tool": c["tool"],
                        "error": {"code": getattr(err, "code", None), "message": str(e)},
                    })
    return out


def main():
    binary, calls_path = sys.argv[1], sys.argv[2]
    with open(calls_path, encoding="utf-8") as f:
        calls = json.load(f)
    print(json.dumps(asyncio.run(session(binary, calls, sys.argv[3:]))))


if __name__ == "__main__":
    main()
