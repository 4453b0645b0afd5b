"""Issue 15's acceptance, server by server: against servers nobody here wrote (the reference server-everything over
stdio, Streamable HTTP and SSE; mcp-server-time) and our SDK (both eras) and hand-written fixtures, `check` finds no
mistake where the server has none (exit 0, no warning recorded), and a replay of its recording against the same,
unchanged server is clean (exit 0)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, everything_command, fixture_command, read_records

CHILD_TIMEOUT = 150
TIME_SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "Europe/Zurich"]


def mcp(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector.cli", *args], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


SERVERS = {
    "everything-stdio": lambda urls: ["--", *everything_command()],
    "everything-streamableHttp": lambda urls: ["--url", urls["streamableHttp"]],
    "everything-sse": lambda urls: ["--url", urls["sse"]],
    "mcp-server-time": lambda urls: ["--", *TIME_SERVER],
    "sdk-modern": lambda urls: ["--protocol", "auto", "--", *fixture_command("sdk_server")],
    "sdk-legacy": lambda urls: ["--protocol", "legacy", "--", *fixture_command("sdk_server")],
    "raw-2024-11-05": lambda urls: ["--", *fixture_command("raw_server")],
}


@pytest.fixture
def urls(request):
    """The HTTP servers, only for the cases that need them (the rest run without node)."""
    return request.getfixturevalue("everything_urls") if request.node.callspec.id.startswith("everything") else {}


@pytest.mark.parametrize("server", list(SERVERS))
def test_check_is_clean_and_the_recording_replays_clean(tmp_path, urls, server):
    target = SERVERS[server](urls)
    recording = tmp_path / "check.jsonl"
    checked = mcp("check", "--json", "--record", str(recording), *target)
    report = json.loads(checked.stdout)
    assert checked.returncode == 0 and report["warnings"] == [], checked.stdout + checked.stderr
    assert not [r for r in read_records(recording) if r.get("kind") == "event" and r.get("event") == "warning"]
    # The same server, unchanged: every step of the recording is answered the same way.
    replayed = mcp("replay", str(recording), "--json", *target)
    steps = json.loads(replayed.stdout)["steps"] if replayed.stdout.strip() else []
    assert replayed.returncode == 0, [s for s in steps if s.get("status") != "same"] or replayed.stderr
    assert steps and all(step["status"] == "same" for step in steps)
