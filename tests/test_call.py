"""`mcp-inspect call`: one request, the result on stdout, exit 0/1/2; and `copy_as_command`'s line."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
import time

import pytest

from conftest import FIXTURES, ROOT, fixture_command, read_records, records_in, wait_for
from inspector.command_line import copy_as_command
from inspector.commands.call import parse_call
from inspector.commands.common import UsageError, dumps, terminal_text

PY = sys.executable


def mcp(args: list[str], cwd, timeout: float = 90, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `mcp-inspect ARGS` as a child process."""
    return subprocess.run([PY, "-m", "inspector.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def page_call(inspector, tool: str, arguments: str) -> dict:
    """Call a tool from the page and return the response message the recording holds for it."""
    wait_for(lambda: inspector.post(f"/tools/{tool}/call", {"arguments": arguments})[0] == 200, 20,
             message=f"the page offering {tool}")  # 404 until tools/list is answered; nothing is sent then

    def response():
        records = records_in(inspector.record)
        ids = [r["msg"]["id"] for r in records if r.get("kind") == "message" and r["dir"] == "to_server"
               and r["msg"].get("method") == "tools/call"]
        return next((r["msg"] for r in records if ids and r.get("kind") == "message" and r["dir"] == "from_server"
                     and r["msg"].get("id") == ids[-1] and "method" not in r["msg"]), None)

    return wait_for(response, 20, message="the call's response in the recording")


@pytest.mark.parametrize("server, tool, arguments", [
    ("raw_server", "echo", '{"text": "x é"}'),
    ("sdk_server", "add", '{"a": 2, "b": 40}'),
])
def test_call_prints_exactly_the_result_the_page_recorded(inspector_factory, tmp_path, server, tool, arguments):
    inspector = inspector_factory(fixture_command(server))
    recorded = page_call(inspector, tool, arguments)
    result = mcp(["call", "--tool", tool, "--args", arguments, "--", *fixture_command(server)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == recorded["result"]
    assert result.stdout == json.dumps(recorded["result"], ensure_ascii=False, indent=2) + "\n"
    assert not (tmp_path / "recordings").exists()  # call records only with --record


@pytest.mark.parametrize("args, expected", [
    (["--uri", "fixture://greeting"], {"contents": [{"mimeType": "text/plain", "text": "Hello from the SDK fixture.",
                                                      "uri": "fixture://greeting"}]}),
    (["prompts/get", "--prompt", "review_code", "--prompt-args", '{"code": "x=1"}'],
     {"description": "Ask for a review of a code snippet.", "messages": [
         {"content": {"text": "Please review this python code:\n\nx=1", "type": "text"}, "role": "user"}]}),
])
def test_call_shorthands_for_resources_and_prompts(tmp_path, args, expected):
    result = mcp(["call", "--protocol", "legacy", *args, "--", *fixture_command("sdk_server")], tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == expected
    # In the modern era (what auto finds for the SDK server) the same answer carries the era's extra keys.
    modern = mcp(["call", *args, "--", *fixture_command("sdk_server")], tmp_path)
    assert modern.returncode == 0, modern.stderr
    answer = json.loads(modern.stdout)
    assert answer["resultType"] == "complete"
    assert answer["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "sdk-fixture"
    assert {key: answer[key] for key in expected} == expected


@pytest.mark.parametrize("protocol, first", [("auto", "server/discover"), ("legacy", "initialize"),
                                             ("modern", "server/discover")])
def test_call_protocol_option(tmp_path, protocol, first):
    path = tmp_path / f"{protocol}.jsonl"
    result = mcp(["call", "--protocol", protocol, "--record", str(path), "--tool", "add", "--args",
                  '{"a": 1, "b": 2}', "--", *fixture_command("sdk_server")], tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["structuredContent"] == {"result": 3}
    lines = read_records(path)
    assert lines[0]["protocol"] == protocol
    sent = [r["msg"] for r in lines[1:] if r.get("kind") == "message" and r["dir"] == "to_server"]
    assert sent[0]["method"] == first
    handshake = next(r for r in lines if r.get("event") == "handshake")
    assert handshake["detail"]["era"] == ("legacy" if protocol == "legacy" else "modern")
    call = next(m for m in sent if m.get("method") == "tools/call")
    assert ("_meta" in call["params"]) == (protocol != "legacy")


def test_call_rejects_an_unknown_protocol(tmp_path):
    result = mcp(["call", "--protocol", "newest", "tools/list", "--", "x"], tmp_path)
    assert_exit_2(result, "--protocol takes auto, legacy, modern or a revision date")


@pytest.mark.parametrize("args, code, stdout_has", [
    (["--tool", "nope", "--", *fixture_command("raw_server")], 1, '"isError": true'),
    (["no/such-method", "--params", "{}", "--", *fixture_command("raw_server")], 1, '"code": -32601'),
])
def test_call_exit_1_for_an_error_or_an_iserror_result(tmp_path, args, code, stdout_has):
    result = mcp(["call", *args], tmp_path)
    assert result.returncode == code, result.stderr
    assert stdout_has in result.stdout
    value = json.loads(result.stdout)
    assert value.get("isError") is True or set(value) == {"error"}


def assert_exit_2(result: subprocess.CompletedProcess, words: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    ours = [line for line in result.stderr.splitlines() if line.startswith("mcp-inspect: ")]
    assert len(ours) == 1 and words in ours[0], result.stderr
    assert "Traceback" not in result.stderr


def test_call_exit_2_when_the_command_does_not_exist(tmp_path):
    assert_exit_2(mcp(["call", "tools/list", "--", "does-not-exist-xyz"], tmp_path), "does-not-exist-xyz")


def test_call_exit_2_when_the_server_crashes_mid_call(tmp_path):
    started = time.monotonic()
    result = mcp(["call", "--tool", "crash", "--", *fixture_command("fake_server", "crash")], tmp_path)
    assert time.monotonic() - started < 10  # noticed at the exit, not at the 60 s timeout
    assert_exit_2(result, "exited with code 3")
    assert "fatal: about to crash" in result.stderr  # the server's own stderr is relayed


def test_call_exit_2_on_timeout_and_the_server_hears_the_cancel(tmp_path):
    log = tmp_path / "stdin.log"
    # --timeout covers the handshake's requests too, so it must leave a loaded machine time to start the server;
    # the message naming 3 s (not the default 60) is what shows the option was used.
    result = mcp(["call", "--timeout", "3", "--tool", "echo", "--args", '{"text": "x"}', "--",
                  *fixture_command("fake_server", "hang")], tmp_path, env={"FAKE_LOG": str(log)})
    assert_exit_2(result, "no answer within 3 s")
    sent = [json.loads(line) for line in log.read_text().splitlines()]
    call_id = next(m["id"] for m in sent if m.get("method") == "tools/call")
    assert any(m.get("method") == "notifications/cancelled" and m["params"]["requestId"] == call_id for m in sent)


def test_call_exit_2_when_the_server_dies_before_the_handshake(tmp_path):
    result = mcp(["call", "tools/list", "--", *fixture_command("fake_server", "exit-at-start")], tmp_path)
    assert_exit_2(result, "could not connect")
    assert "boom: missing config" in result.stderr


@pytest.mark.parametrize("args, words", [
    (["tools/list"], "after --"),
    ([], "give a METHOD"),
    (["--args", "{}", "--", "x"], "--args goes with --tool"),
    (["--tool", "a", "--args", "[1]", "--", "x"], "must be a JSON object"),
    (["--tool", "a", "--args", "{bad", "--", "x"], "not valid JSON"),
    (["--tool", "a", "--uri", "u", "--", "x"], "only one of"),
    (["resources/read", "--tool", "a", "--", "x"], "means tools/call"),
    (["--tool", "a", "--params", "{}", "--", "x"], "--params cannot"),
    (["x/y", "--params", "3", "--", "x"], "--params must be a JSON object or array"),
    (["x/y", "--timeout", "0", "--", "x"], "timeout"),
    (["x/y", "--bogus", "--", "x"], "--bogus"),
    (["x/y", "-e", "NOVALUE", "--", "x"], "KEY=VALUE"),
])
def test_call_usage_errors_exit_2(tmp_path, args, words):
    assert_exit_2(mcp(["call", *args], tmp_path), words)


def test_call_never_imports_the_web_ui(tmp_path):
    command = [PY, "-X", "importtime", "-m", "inspector.cli", "call", "tools/list", "--",
               *fixture_command("raw_server")]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=90,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert "inspector.client.rpc" in result.stderr  # the import log is really there
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in result.stderr.splitlines()
                if line.startswith("import time:")}
    assert not imported & {"flask", "werkzeug", "jinja2", "flask_sock", "simple_websocket", "markupsafe"}
    assert [t["name"] for t in json.loads(result.stdout)["tools"]] == ["echo", "add"]


def test_call_record_writes_a_private_recording_of_the_run(tmp_path):
    path = tmp_path / "call.jsonl"
    result = mcp(["call", "--record", str(path), "-e", "API_KEY=S3CR3T-call", "--tool", "add", "--args",
                  '{"a": 1, "b": 2}', "--", *fixture_command("raw_server")], tmp_path)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    lines = read_records(path)
    assert lines[0]["kind"] == "header" and lines[0]["env"] == {"API_KEY": "[REDACTED]"}
    assert "S3CR3T-call" not in path.read_text()
    methods = [r["msg"].get("method") for r in lines[1:] if r.get("kind") == "message" and r["dir"] == "to_server"]
    # auto: the raw server refuses server/discover (-32601), so it is spoken to in the handshake era.
    assert methods == ["server/discover", "initialize", "notifications/initialized", "tools/call"]
    assert [r.get("event") for r in lines if r.get("kind") == "event"] == ["spawn", "handshake", "stop", "exit",
                                                                           "session-end"]
    again = mcp(["call", "--record", str(path), "tools/list", "--", *fixture_command("raw_server")], tmp_path)
    assert_exit_2(again, "already exists")  # never overwrites


def test_a_recording_that_cannot_be_created_stops_the_server_started_before_it(tmp_path):
    """`call` starts the server before it opens the recording (the two start-ups overlap): when --record then
    fails, that server is stopped, even one that would outlive its closed stdin."""
    taken = tmp_path / "taken.jsonl"
    taken.write_text("mine\n")
    marker = f"mcp-inspect-test-{os.getpid()}-{time.monotonic_ns()}"
    result = mcp(["call", "--record", str(taken), "tools/list", "--", PY, "-c",
                  "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)", marker],
                 tmp_path)
    assert_exit_2(result, "already exists")
    assert taken.read_text() == "mine\n"
    assert not _processes_with(marker)  # discard reaps it before call returns: no wait needed


def _processes_with(word: str) -> list[int]:
    """The pids of running processes whose command line holds `word` (Linux /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if word.encode() in handle.read():
                    found.append(int(entry))
        except OSError:
            continue  # gone meanwhile, or not ours to read
    return found


def test_call_strips_terminal_escapes_from_the_servers_stderr(tmp_path):
    noisy = tmp_path / "noisy.py"
    noisy.write_text("import sys, runpy\n"
                     "sys.stderr.write('\\x1b]8;;http://e\\x07link\\x1b]8;;\\x07 \\x1b[31mred\\x1b[0m \\x9b2J<b>\\n')\n"
                     "sys.stderr.flush()\n"
                     f"runpy.run_path({str(FIXTURES / 'raw_server.py')!r}, run_name='__main__')\n")
    result = mcp(["call", "--tool", "echo", "--args", '{"text": "\\u009b\\u001b"}', "--", PY, str(noisy)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "link red 2J<b>" in result.stderr
    assert "\x1b" not in result.stderr and "\x9b" not in result.stderr and "\x07" not in result.stderr
    assert "\x9b" not in result.stdout and "\x1b" not in result.stdout
    assert json.loads(json.loads(result.stdout)["content"][0]["text"]) == {"text": "\x9b\x1b"}  # same value


def test_terminal_helpers_keep_values_and_drop_controls():
    assert terminal_text("a\x1b[1;31mb\x1b[0m\x07c\x9bd\te") == "abcd\te"
    value = {"t": "\x9b\x7f\u2028é"}
    assert json.loads(dumps(value)) == value and "\x9b" not in dumps(value) and "é" in dumps(value)


# -- copy as command -----------------------------------------------------------------------------------------------

SERVER = ["python", "my server.py", "--port", "9"]


@pytest.mark.parametrize("msg, expected", [
    ({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "it's é"}}},
     "mcp-inspect call tools/call --tool echo --args '{\"text\":\"it'\"'\"'s é\"}' -- python 'my server.py' --port 9"),
    ({"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "file:///a b.txt"}},
     "mcp-inspect call resources/read --uri 'file:///a b.txt' -- python 'my server.py' --port 9"),
    ({"jsonrpc": "2.0", "id": 6, "method": "prompts/get", "params": {"name": "review"}},
     "mcp-inspect call prompts/get --prompt review -- python 'my server.py' --port 9"),
    ({"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
     "mcp-inspect call tools/list -- python 'my server.py' --port 9"),
    ({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
      "params": {"name": "slow", "arguments": {}, "_meta": {"progressToken": 1}}},
     "mcp-inspect call tools/call --params '{\"name\":\"slow\",\"arguments\":{},\"_meta\":{\"progressToken\":1}}' "
     "-- python 'my server.py' --port 9"),
])
def test_copy_as_command_lines(msg, expected):
    assert copy_as_command(SERVER, msg) == expected


@pytest.mark.parametrize("msg", [
    {"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "$HOME `x` \"q\" \n"}}},
    {"method": "prompts/get", "params": {"name": "p", "arguments": {"code": "a;b"}}},
    {"method": "resources/read", "params": {"uri": "fixture://x?y=$z"}},
    {"method": "logging/setLevel", "params": {"level": "debug"}},
    {"method": "x/batchish", "params": [1, 2]},
    {"method": "tools/call", "params": {"name": "no-args"}},
])
def test_copy_as_command_parses_back_to_the_same_request(msg):
    line = copy_as_command(SERVER, {"jsonrpc": "2.0", "id": 1, **msg}, cwd="/srv dir", env_keys=["API_KEY"])
    words = shlex.split(line.replace('-e API_KEY="$API_KEY"', "-e API_KEY=value"))
    assert words[:2] == ["mcp-inspect", "call"]
    parsed = parse_call(words[2:])
    assert (parsed.method, parsed.params) == (msg["method"], msg["params"])
    assert parsed.command == SERVER and parsed.cwd == "/srv dir" and parsed.env == ("API_KEY=value",)


def test_copy_as_command_never_includes_env_values():
    line = copy_as_command(["srv"], {"method": "tools/list"}, env_keys=["API_KEY", "odd-key"])
    assert line == "mcp-inspect call tools/list -e API_KEY=\"$API_KEY\" -e odd-key=... -- srv"
    with pytest.raises(ValueError):
        copy_as_command(["srv"], {"id": 1, "result": {}})


def test_copied_command_runs_in_a_shell(tmp_path):
    bin_dir = tmp_path / "bin"  # an `mcp-inspect` on PATH, as pip would install it
    bin_dir.mkdir()
    (bin_dir / "mcp-inspect").write_text(f"#!/bin/sh\nexec {shlex.quote(PY)} -m inspector.cli \"$@\"\n")
    (bin_dir / "mcp-inspect").chmod(0o755)
    msg = {"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "it's $HOME `id`"}}}
    line = copy_as_command(fixture_command("raw_server"), msg, env_keys=["FIXTURE_KEY"])
    result = subprocess.run(["sh", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=90,
                            env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
                                 "FIXTURE_KEY": "v"})
    assert result.returncode == 0, result.stderr
    assert json.loads(json.loads(result.stdout)["content"][0]["text"]) == {"text": "it's $HOME `id`"}


def test_usage_error_class_is_ours():
    with pytest.raises(UsageError):
        parse_call(["--tool"])


def test_call_says_on_stderr_why_the_probe_fell_back_and_which_era_it_chose(tmp_path):
    # The server reads server/discover and never answers it: 0.5 s after it read it, call falls back, and says so.
    result = mcp(["call", "tools/list", "--probe-timeout", "0.5", "--",
                  *fixture_command("fake_server", "silent-discover")], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "mcp-inspect call: no answer to server/discover within 0.5 s; falling back to initialize" in result.stderr
    assert "mcp-inspect call: legacy era: no answer to server/discover" in result.stderr
    assert json.loads(result.stdout)["tools"]


def test_call_says_which_era_it_chose_for_a_modern_server(tmp_path):
    result = mcp(["call", "tools/list", "--", *fixture_command("sdk_server")], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "mcp-inspect call: modern era: server/discover answered" in result.stderr
