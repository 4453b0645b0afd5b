"""Config files everywhere (issue 15 item 6): a Claude / Cursor / VS Code entry is a target for `call`, `check` and
`replay` (`--config FILE --server NAME`), a `url` entry without a type is auto-detected like `--url` (an SSE URL
works), and `-H` supplies a header the file leaves to a `${input:...}` prompt. Real config files, real servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import (
    ROOT, fixture_command, needs_everything, start_everything, stop_process_group, wait_tools_listed,
)
from inspector.client_configs import parse_config

PY = sys.executable


def run_command(args: list[str], cwd, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "inspector.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def write_config(tmp_path, flavour: str, servers: dict) -> str:
    """A config file where each client keeps it; `servers` in the mcpServers shape (VS Code's gets a type)."""
    if flavour == "vscode":
        path = tmp_path / ".vscode" / "mcp.json"
        body: dict = {"servers": {name: {"type": "stdio" if "command" in entry else "http", **entry}
                                  for name, entry in servers.items()}}
    else:
        path = tmp_path / (".cursor/mcp.json" if flavour == "cursor" else "claude_desktop_config.json")
        body = {"mcpServers": servers}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def everything_urls(tmp_path_factory):
    """server-everything over Streamable HTTP and over legacy SSE, shared by the module: {transport: url}."""
    log = tmp_path_factory.mktemp("everything") / "everything.log"
    started = [start_everything(transport, log) for transport in ("streamableHttp", "sse")]
    yield {"streamableHttp": started[0][1], "sse": started[1][1]}
    for proc, _ in started:
        stop_process_group(proc)


def tool_names(result: subprocess.CompletedProcess) -> set[str]:
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    return {tool["name"] for tool in json.loads(result.stdout)["tools"]}


@needs_everything
@pytest.mark.parametrize("flavour", ["claude", "cursor", "vscode"])
@pytest.mark.parametrize("transport", ["sse", "streamableHttp"])
def test_call_reaches_a_url_entry_of_each_flavour(tmp_path, everything_urls, flavour, transport):
    """A url entry with no type (claude, cursor) is auto-detected as --url is: its SSE URL no longer gets a 404."""
    entry = {"url": everything_urls[transport]}
    if flavour == "vscode" and transport == "sse":
        entry["type"] = "sse"
    config = write_config(tmp_path, flavour, {"other": {"command": "no-such-server"}, "everything": entry})
    result = run_command(["call", "tools/list", "--config", config, "--server", "everything"], tmp_path)
    assert "echo" in tool_names(result)


@needs_everything
def test_check_and_replay_take_a_config_entry(tmp_path, everything_urls):
    """`check` and `replay` use the entry --server names; a recording made through it replays through it."""
    config = write_config(tmp_path, "cursor", {"stdio-time": {"command": PY, "args": ["-m", "mcp_server_time"]},
                                               "everything": {"url": everything_urls["sse"]}})
    checked = run_command(["check", "--json", "--config", config, "--server", "everything"], tmp_path)
    assert checked.returncode in (0, 1), checked.stderr  # 2: it could not run (before: unrecognized arguments)
    summary = json.loads(checked.stdout)["summary"]
    assert summary["error"] is None and summary["server"]["name"] == "mcp-servers/everything", summary

    record = tmp_path / "time.jsonl"
    called = run_command(["call", "tools/list", "--record", str(record), "--config", config, "--server",
                          "stdio-time"], tmp_path)
    assert "get_current_time" in tool_names(called)
    replayed = run_command(["replay", str(record), "--json", "--config", config, "--server", "stdio-time"], tmp_path)
    assert replayed.returncode == 0, (replayed.stdout, replayed.stderr)
    assert json.loads(replayed.stdout)["summary"]["same"] >= 2


def test_a_file_of_several_servers_needs_server_and_names_them(tmp_path):
    config = write_config(tmp_path, "claude", {"a": {"command": "x"}, "b": {"url": "http://127.0.0.1:9/mcp"}})
    for args in (["call", "tools/list"], ["check"]):
        result = run_command([*args, "--config", config], tmp_path)
        assert result.returncode == 2 and "pick one with --server NAME: a, b" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    both = run_command(["call", "tools/list", "--config", config, "--server", "a", "--", PY, "s.py"], tmp_path)
    assert both.returncode == 2 and "--config and a command after -- cannot be used together" in both.stderr


def test_replay_names_the_config_entry_a_recording_was_made_with(tmp_path):
    """A page recording of a --config session (its header's command is [] once servers were switched): replay
    without a command says which --config/--server to give (headless-http.md finding 32)."""
    record = tmp_path / "page.jsonl"
    called = run_command(["call", "tools/list", "--record", str(record), "--", *fixture_command("fake_server", "ok")],
                         tmp_path)
    assert called.returncode == 0, called.stderr
    first, *rest = record.read_text(encoding="utf-8").splitlines()
    header = json.loads(first)
    header["target"].update(command=[], config={"file": ".vscode/mcp.json", "server": "my srv"})
    record.write_text("\n".join([json.dumps(header), *rest]) + "\n", encoding="utf-8")
    result = run_command(["replay", str(record)], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "--config .vscode/mcp.json --server 'my srv'" in result.stderr, result.stderr


VSCODE_INPUT = """{
  "inputs": [{"type": "promptString", "id": "token", "description": "Everything token", "password": true}],
  "servers": {"everything": {"type": "http", "url": "%s",
                             "headers": {"Authorization": "Bearer ${input:token}", "X-Team": "core"}}}
}"""


def test_dash_h_replaces_a_header_in_any_case_and_drops_its_problem():
    entry = parse_config(VSCODE_INPUT % "http://127.0.0.1:9/mcp", environ={})["everything"]
    assert not entry.startable and "-H 'Authorization: ...'" in entry.problems[0]
    fixed = entry.with_headers([("authorization", "Bearer s3cret")])
    assert fixed.startable
    assert fixed.headers == (("X-Team", "core"), ("authorization", "Bearer s3cret"))


@needs_everything
def test_vscode_input_header_is_supplied_with_dash_h(tmp_path, everything_urls):
    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text(VSCODE_INPUT % everything_urls["streamableHttp"], encoding="utf-8")
    asked = ["call", "tools/list", "--config", str(path), "--server", "everything"]

    refused = run_command(asked, tmp_path)
    assert refused.returncode == 2 and "set it with -H 'Authorization: ...'" in refused.stderr, refused.stderr

    record = tmp_path / "with-token.jsonl"
    result = run_command([*asked, "-H", "Authorization: Bearer s3cret-token", "--record", str(record)], tmp_path)
    assert "echo" in tool_names(result)
    header = json.loads(record.read_text(encoding="utf-8").splitlines()[0])
    assert header["target"]["headers"] == {"X-Team": "[REDACTED]", "Authorization": "[REDACTED]"}
    assert "s3cret-token" not in record.read_text(encoding="utf-8")


def test_dash_h_is_refused_for_a_command_entry(tmp_path):
    local = {"command": PY, "args": fixture_command("fake_server", "ok")[1:]}
    config = write_config(tmp_path, "cursor", {"local": local})
    result = run_command(["call", "tools/list", "--config", config, "-H", "A: b"], tmp_path)
    assert result.returncode == 2 and "--header and --transport are for servers reached over HTTP" in result.stderr


def test_the_page_takes_dash_h_for_an_input_header_too(tmp_path):
    """`mcp-inspect --config F --server S -H ...`: the page's target has the -H value in place of the prompt, once."""
    from inspector.cli import parse_config as parse_run

    path = tmp_path / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text(VSCODE_INPUT % "http://127.0.0.1:9/mcp", encoding="utf-8")
    config = parse_run(["--config", str(path), "--server", "everything", "-H", "Authorization: Bearer s3cret"])
    assert config.headers == (("X-Team", "core"), ("Authorization", "Bearer s3cret"))
    [entry] = config.config_entries
    assert entry.headers == config.headers and entry.startable


@needs_everything
def test_the_page_runs_a_cursor_sse_url_entry(page_factory, tmp_path, everything_urls):
    """headless-http.md finding 9 as found: the page's start of a Cursor `url` entry for an SSE server (was: 404)."""
    config = write_config(tmp_path, "cursor", {"everything-sse": {"url": everything_urls["sse"]}})
    inspector = page_factory([], "--config", config, "--server", "everything-sse")
    tools = wait_tools_listed(inspector, timeout=60)
    assert "echo" in {tool["name"] for tool in tools}
    assert inspector.session.http_transport == "sse"


@needs_everything
def test_replay_names_the_url_an_http_recording_was_made_with(tmp_path, everything_urls):
    record = tmp_path / "http.jsonl"
    url = everything_urls["streamableHttp"]
    called = run_command(["call", "tools/list", "--record", str(record), "--url", url], tmp_path)
    assert "echo" in tool_names(called)
    result = run_command(["replay", str(record)], tmp_path)
    assert result.returncode == 2 and f"the recording was made with --url {url}" in result.stderr, result.stderr
