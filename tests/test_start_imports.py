"""What a start imports: each path loads only what it needs (issue 14 item 5). Real child processes; the modules
are read from the child's own sys.modules after it did its work."""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess

from conftest import PYTHON, ROOT, _readline_with_timeout, fixture_command
from inspector.protocol.secrets import is_secret_name

# The page's libraries, httpx, and the protocol checker's models and schemas: `call` needs none of them for a stdio
# server.
CHECKER = {"pydantic", "pydantic_core", "mcp_types", "jsonschema"}
PAGE_AND_CHECKER = {"flask", "werkzeug", "jinja2", "markupsafe", "simple_websocket", "httpx", "httpcore", *CHECKER}
# The standard library a bare client does without and `call` once imported at start, each milliseconds of a run
# meant to be within 1.2x of a bare client (bench/call.py): dataclasses (and through it inspect, ast, dis), typing,
# pathlib, shutil (bz2, lzma), datetime, tempfile; urllib.parse and base64 too while no URL or secret is handled.
BARE_CLIENT_NEVER = {"dataclasses", "inspect", "ast", "dis", "typing", "pathlib", "shutil", "bz2", "lzma", "datetime",
                     "tempfile", "urllib", "base64"}

RUN_CLI = """
import json, sys
from inspector.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""


def _modules_after(tmp_path, *argv: str, environ: dict | None = None) -> tuple[int, set[str]]:
    """Run `mcp-inspect ARGV` in a child interpreter; its exit code and the top-level packages it had imported."""
    report = tmp_path / "modules.json"
    result = subprocess.run([PYTHON, "-c", RUN_CLI, str(report), *argv], cwd=tmp_path, capture_output=True,
                            text=True, timeout=90, env={**(os.environ if environ is None else environ),
                                                        "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    data = json.loads(report.read_text())
    return data["code"], {name.split(".")[0] for name in data["modules"]}


def test_call_over_stdio_imports_neither_the_page_nor_httpx_nor_the_checkers_models(tmp_path):
    code, modules = _modules_after(tmp_path, "call", "tools/list", "--", *fixture_command("raw_server"))
    assert code == 0
    assert "inspector" in modules  # it did run
    assert not modules & PAGE_AND_CHECKER, sorted(modules & PAGE_AND_CHECKER)


def test_call_over_stdio_imports_only_the_standard_library_a_bare_client_needs(tmp_path):
    # Without secret-named variables in its environment (a CI's token would be a secret to mask, base64 and all),
    # and with the server found on PATH, as users write it.
    environ = {key: value for key, value in os.environ.items() if not is_secret_name(key)}
    environ["PATH"] = os.pathsep.join([os.path.dirname(PYTHON), environ.get("PATH", "")])
    command = [os.path.basename(PYTHON), *fixture_command("raw_server")[1:]]
    code, modules = _modules_after(tmp_path, "call", "tools/list", "--", *command, environ=environ)
    assert code == 0
    assert "inspector" in modules and "subprocess" in modules  # it did run, and spawned
    assert not modules & BARE_CLIENT_NEVER, sorted(modules & BARE_CLIENT_NEVER)


# Notes the inspector's modules loaded when the first process is spawned (an audit hook sees every Popen).
SPAWN_WATCH = """
import json, sys
seen = []
def hook(event, args):
    if event == "subprocess.Popen" and not seen:
        seen.append(sorted(name for name in sys.modules if name.startswith("inspector")))
sys.addaudithook(hook)
from inspector.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "at_spawn": seen[0] if seen else None}, out)
"""


def test_call_starts_the_server_before_it_loads_the_client_and_the_recording(tmp_path):
    """The server's own start-up (an interpreter's, for a Python server) overlaps the import of the client, the
    recording, the secrets' patterns and the handshake: bench/call.py's ratio to a bare client rests on it."""
    report = tmp_path / "spawn.json"
    result = subprocess.run([PYTHON, "-c", SPAWN_WATCH, str(report), "call", "tools/list", "--record",
                             str(tmp_path / "call.jsonl"), "--", *fixture_command("raw_server")],
                            cwd=tmp_path, capture_output=True, text=True, timeout=90,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    data = json.loads(report.read_text())
    assert data["code"] == 0 and data["at_spawn"] is not None
    loaded = set(data["at_spawn"])
    assert "inspector.commands.call" in loaded and "inspector.transport.stdio" in loaded
    late = {"inspector.client.rpc", "inspector.client.handshake", "inspector.client.connect",
            "inspector.recording.files", "inspector.protocol.records", "inspector.protocol.secrets",
            "inspector.protocol.json"}
    assert not loaded & late, sorted(loaded & late)
    # And nothing is lost by it: the recording holds the header, then the spawn, then the handshake in order.
    kinds = [json.loads(line).get("event") or json.loads(line)["kind"]
             for line in (tmp_path / "call.jsonl").read_text().splitlines()]
    assert kinds[:3] == ["header", "spawn", "message"], kinds[:5]


def test_export_imports_neither_the_page_nor_httpx_and_a_copy_not_the_checker(tmp_path):
    recording = tmp_path / "in.jsonl"
    code, _ = _modules_after(tmp_path, "call", "tools/list", "--record", str(recording), "--",
                             *fixture_command("raw_server"))
    assert code == 0
    for fmt in ("jsonl", "md", "html"):
        code, modules = _modules_after(tmp_path, "export", str(recording), "-o", str(tmp_path / f"out.{fmt}"),
                                       "--format", fmt)
        assert code == 0
        # The reports review the recording with the protocol checker (jsonschema); a jsonl copy does not.
        unwanted = PAGE_AND_CHECKER if fmt == "jsonl" else PAGE_AND_CHECKER - CHECKER
        assert not modules & unwanted, (fmt, sorted(modules & unwanted))


# Says on stdout when something first imports Flask, so the order of that and the URL line can be seen.
FLASK_WATCH = """
import sys


class FlaskWatch:
    def find_spec(self, name, path=None, target=None):
        if name == "flask":
            sys.meta_path.remove(self)
            print("importing flask", flush=True)
        return None


sys.meta_path.insert(0, FlaskWatch())
"""


def test_the_url_line_comes_before_flask_and_its_first_request_is_answered(tmp_path):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(FLASK_WATCH)
    proc = subprocess.Popen([PYTHON, "-m", "inspector.cli", "--no-open", "--port", "0", "--no-record", "--",
                             *fixture_command("raw_server")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT)])})
    try:
        url = _readline_with_timeout(proc, 60)
        match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)\n", url)
        assert match, f"the first line on stdout is the URL line, got {url!r}"
        port, token = int(match.group(1)), match.group(2)
        # At once, while the page may still be building: the bound socket holds it until it can be answered.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=90)
        conn.request("GET", f"/?token={token}", headers={"Host": f"127.0.0.1:{port}"})
        response = conn.getresponse()
        response.read()
        conn.close()
        # The page's answer to the token in the URL: the cookie set, and off to the page without the token.
        assert response.status == 302 and response.getheader("Set-Cookie"), response.status
        assert _readline_with_timeout(proc, 60) == "importing flask\n"
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
