"""The "editable server": a stdio MCP server written as one Python file that a test (or bench/restart.py) rewrites
and saves, to see the inspector restart, diff or replay against it.

The source is generated from plain values, so each save can change the tool list, the answer to a call or the
server's identity. Tools named `slow` (never answers within a test's patience) and `grow` (adds a tool and says
tools/list_changed) behave specially; every other call answers `answer` as text.
"""

from __future__ import annotations

from pathlib import Path

TEMPLATE = '''"""An editable server: written by tests/editable_server.py; the tests rewrite it and save."""
import json, sys, time
TOOLS = {tools!r}
INITIALIZED = {initialized!r}
ANSWER = {answer!r}
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = INITIALIZED
    elif m["method"] == "tools/list":
        r = {{"tools": TOOLS}}
    elif m["method"] != "tools/call":
        print(json.dumps({{"jsonrpc": "2.0", "id": m["id"], "error": {{"code": -32601, "message": "no"}}}}), flush=True)
        continue
    elif m["params"]["name"] == "slow":
        time.sleep(30)
        r = {{"content": []}}
    elif m["params"]["name"] == "grow":
        TOOLS.append({{"name": "grown", "description": "appeared", "inputSchema": {{"type": "object"}}}})
        print(json.dumps({{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}}), flush=True)
        r = {{"content": [{{"type": "text", "text": "grew"}}]}}
    else:
        r = {{"content": [{{"type": "text", "text": ANSWER}}]}}
    print(json.dumps({{"jsonrpc": "2.0", "id": m["id"], "result": r}}), flush=True)
'''


def tool(name: str, description: str | None = None, properties: dict | None = None) -> dict:
    """A tool whose input is an object with these properties (a `text` string unless told)."""
    entry: dict = {"name": name}
    if description is not None:
        entry["description"] = description
    entry["inputSchema"] = {"type": "object", "properties": properties or {"text": {"type": "string"}}}
    return entry


def source(tools: list[dict], *, answer: str = "ok", name: str = "editable", version: str = "1",
           protocol: str = "2025-11-25", list_changed: bool = True) -> str:
    """The server's Python source."""
    capabilities = {"tools": {"listChanged": True} if list_changed else {}}
    initialized = {"protocolVersion": protocol, "capabilities": capabilities,
                   "serverInfo": {"name": name, "version": version}}
    return TEMPLATE.format(tools=tools, initialized=initialized, answer=answer)


def write_server(folder: Path, tools: list[dict], **options) -> Path:
    """Write (or rewrite) folder/server.py; options as for source()."""
    path = folder / "server.py"
    path.write_text(source(tools, **options))
    return path
