"""Replay is clean against an unchanged server (issue 15, item 2): files an editor touched, exit codes that mean
what README says, the page's own long-lived streams, and requests the server makes over an HTTP GET stream."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, fixture_command, records_in, start_inspector, wait_for

PY = sys.executable


def mcp(args: list[str], cwd, timeout: float = 90) -> subprocess.CompletedProcess:
    """Run `mcp-inspect ARGS` as a child process."""
    return subprocess.run([PY, "-m", "inspector.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.fixture(scope="module")
def raw_recording(tmp_path_factory) -> Path:
    """A session of the raw fixture server recorded by the real inspector, with one tool call made from the page."""
    base = tmp_path_factory.mktemp("raw")
    inspector = start_inspector(base, fixture_command("raw_server"))
    try:
        wait_for(lambda: inspector.post("/tools/echo/call", {"arguments": '{"text":"x"}'})[0] == 200, 30,
                 message="the echo tool listed")
        wait_for(lambda: any(r.get("kind") == "message" and r["dir"] == "from_server" and
                             "content" in (r["msg"].get("result") or {}) for r in records_in(inspector.record)),
                 30, message="the call's result")
    finally:
        inspector.stop()
    return inspector.record


# -- a file an editor touched is not damaged -------------------------------------------------------------------------

@pytest.mark.parametrize("edit", [
    pytest.param(lambda data: data + b"\n", id="trailing-blank-line"),
    pytest.param(lambda data: data + b"\r\n  \n", id="trailing-whitespace-lines"),
    pytest.param(lambda data: b"\xef\xbb\xbf" + data, id="utf8-bom"),
    pytest.param(lambda data: b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n") + b"\r\n", id="bom-crlf-blank"),
])
def test_a_blank_line_or_a_bom_is_not_damage_to_view_replay_or_export(raw_recording, tmp_path, edit):
    from inspector.recording.files import RecordingWriter
    from inspector.recording.store import Store

    path = tmp_path / "edited.jsonl"
    path.write_bytes(edit(raw_recording.read_bytes()))
    # view reads through the Store: the same header, no problems
    store = Store(RecordingWriter.open_existing(path))
    head, problems = store.load_existing()
    assert head is not None and head["format"] == "mcp-inspect-recording" and problems == []
    exported = mcp(["export", str(path), "-o", str(tmp_path / "out.jsonl")], tmp_path)
    assert exported.returncode == 0 and "warning" not in exported.stderr, exported.stderr
    replayed = mcp(["replay", str(path), "--", *fixture_command("raw_server")], tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "warning" not in replayed.stderr and "damaged" not in replayed.stderr
