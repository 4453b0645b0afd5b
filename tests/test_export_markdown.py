"""`mcp-inspect export --format md`: a Markdown report of a recording for an issue tracker, made by the real CLI from
real recordings; it masks what `export` masks, fits in GitHub's 65,000 characters and keeps its structure whatever
the server wrote."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import uuid

import pytest

from conftest import FIXTURES, ROOT
from markdown_check import check_markdown
from test_export import assert_gone, write_recording
from inspector.recording.reports.markdown import LIMIT, render_markdown
from inspector.recording.reports.summary import Problem, as_records, problems
from inspector.recording.reports.md_text import fence, inline, trim_value

PY = sys.executable
HOSTILE = "<details><summary>x</summary> ``` | cell | </details> <img src=x onerror=alert(1)> **b** [l](u) \\|"


def mcp(args: list[str], cwd, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `mcp-inspect ARGS` as a child process."""
    return subprocess.run([PY, "-m", "inspector.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def test_report_of_a_real_session_masks_the_env_secret_and_keeps_its_structure(tmp_path):
    secret = "sk-proj-" + uuid.uuid4().hex + "Zz9"
    note = "sk-proj-" + uuid.uuid4().hex + "Nn7"
    # The server (in "stderr" mode: a stderr line per message) leaks its -e secret and an inherited value under a
    # plain name on stderr at start. The recorder masks the -e value itself (security row 27); the other only
    # export's scan of key shapes can recognise.
    server = ["sh", "-c", f'echo "starting, key $API_KEY, note $PLAIN_NOTE" >&2; '
                          f'exec "{PY}" "{FIXTURES / "fake_server.py"}" stderr']
    recording = tmp_path / "session.jsonl"
    called = mcp(["call", "--tool", "echo", "--args", json.dumps({"text": HOSTILE}), "--record", str(recording),
                  "-e", f"API_KEY={secret}", "--", *server], tmp_path, env={"PLAIN_NOTE": note})
    assert called.returncode == 0, called.stderr
    recorded = recording.read_text()
    assert secret not in recorded and note in recorded

    report = tmp_path / "report.md"
    result = mcp(["export", str(recording), "--format", "md", "-o", str(report)], tmp_path)
    assert result.returncode == 0, result.stderr
    text = report.read_text()
    assert stat.S_IMODE(report.stat().st_mode) == 0o600
    for value in (secret, note):
        assert_gone(text, value)
        assert_gone(result.stderr, value)
    assert "masked openai-style-key" in result.stderr
    seen = check_markdown(text)
    assert seen["details"] == 3  # server/discover (refused), initialize, tools/call
    assert "| server | fake\\-stderr |" not in text and "| server | fake-stderr |" in text
    assert "| era | legacy (protocol 2025-11-25) |" in text and "| transport | stdio |" in text
    summary = re.search(r"<summary>#\d+ <code>tools/call</code> echo → ok, \d+ ms</summary>", text)
    assert summary, "the tool call's block names its tool, outcome and time"
    # Its stderr line is read from another pipe than the answer, so it may be recorded after it: in the block or not
    assert "fake: got tools/call id=3" in text
    assert "<img" not in text.replace(json.dumps(HOSTILE)[1:-1], "")  # markup only inside the fenced JSON


def test_every_slot_of_a_hand_made_recording_is_masked_in_the_report(tmp_path):
    sentinel = f"S3CR3T+{uuid.uuid4()}/x"
    header = {"target": {"transport": "stdio", "command": ["srv", "--api-token", sentinel], "cwd": str(tmp_path)},
              "env": {"API_KEY": sentinel}}
    records = [
        {"seq": 1, "t": 1.0, "kind": "event", "event": "handshake", "detail": {
            "era": "legacy", "protocolVersion": "2025-11-25", "serverInfo": {"name": f"srv {sentinel}"}}},
        {"seq": 2, "t": 2.0, "kind": "message", "dir": "to_server", "msg": {
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "login", "arguments": {"user": "ada", "Session_Secret": sentinel}}}},
        {"seq": 3, "t": 3.0, "kind": "stderr", "text": f"debug: headers={{'X-Api-Key': '{sentinel}'}}"},
        {"seq": 4, "t": 4.0, "kind": "message", "dir": "from_server", "msg": {
            "jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": f"bad key {sentinel}"}}},
        {"seq": 5, "t": 5.0, "kind": "event", "event": "exit", "detail": {"reason": f"died {sentinel}"}},
        {"seq": 6, "t": 6.0, "kind": "invalid", "dir": "from_server", "raw": f"leak {sentinel}", "error": "not JSON"},
    ]
    source = write_recording(tmp_path / "in.jsonl", header, records)
    result = mcp(["export", str(source), "--format", "md", "-o", "-", "--redact-key", "session_secret"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert_gone(result.stdout, sentinel)
    assert_gone(result.stderr, sentinel)
    assert check_markdown(result.stdout)["details"] == 1
    assert "masked key Session_Secret: record 2" in result.stderr and "[REDACTED]" in result.stdout


@pytest.mark.timeout(600)  # 100,000 records read, masked and paired by a child process on a loaded machine
def test_a_100k_message_recording_gives_a_report_that_fits_and_renders(tmp_path):
    records, seq = [], 0
    for n in range(50_000):
        long = "`" * (n % 7) + "x" * (5_000 if n % 1000 == 0 else 20)  # backtick runs and a few long values
        seq += 1
        records.append({"seq": seq, "t": float(seq), "kind": "message", "dir": "to_server",
                        "msg": {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                                "params": {"name": f"tool{n}", "arguments": {"q": long}}}})
        seq += 1
        answer = {"error": {"code": -32000, "message": "boom"}} if n == 40_000 else {"result": {"content": []}}
        records.append({"seq": seq, "t": float(seq), "kind": "message", "dir": "from_server",
                        "msg": {"jsonrpc": "2.0", "id": n, **answer}})
    source = write_recording(tmp_path / "big.jsonl", {"target": {"transport": "stdio", "command": ["srv"]}}, records)

    report = tmp_path / "report.md"
    result = mcp(["export", str(source), "--format", "md", "-o", str(report)], tmp_path, timeout=240)
    assert result.returncode == 0, result.stderr
    text = report.read_text()
    assert len(text) <= LIMIT
    seen = check_markdown(text)
    assert 10 < seen["details"] < 50_000
    assert f"### Calls ({seen['details']:,} of 50,000 shown)" in text
    assert f"did not fit in GitHub's {LIMIT:,}-character limit" in text
    assert "<summary>#80001 <code>tools/call</code> tool40000 → error -32000: boom" in text  # failures go first
    assert "characters trimmed]" in text and "Long values are trimmed in the middle" in text



def calls_recording(tmp_path, count: int):
    """A recording of `count` echo calls: call n is request 3n-2, a stderr line 3n-1 and its answer 3n."""
    records = []
    for n in range(1, count + 1):
        records.append({"seq": 3 * n - 2, "t": float(n), "kind": "message", "dir": "to_server", "msg": {
            "jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "echo", "arguments": {"n": n}}}})
        records.append({"seq": 3 * n - 1, "t": n + 0.1, "kind": "stderr", "text": f"handling call {n}"})
        records.append({"seq": 3 * n, "t": n + 0.2, "kind": "message", "dir": "from_server",
                        "msg": {"jsonrpc": "2.0", "id": n, "result": {"content": [{"type": "text", "text": f"{n}"}]}}})
    return write_recording(tmp_path / "calls.jsonl", {"target": {"transport": "stdio", "command": ["srv"]}}, records)


def test_seq_picks_the_calls_of_the_report_and_dash_writes_stdout(tmp_path):
    source = calls_recording(tmp_path, 40)
    picked = mcp(["export", str(source), "--format", "md", "-o", "-", "--seq", "30,61-62"], tmp_path)
    assert picked.returncode == 0, picked.stderr
    text = picked.stdout
    assert check_markdown(text)["details"] == 2
    assert re.findall(r"<summary>#(\d+) ", text) == ["28", "61"]  # seq 30 is call 10's answer: its call is in
    assert "handling call 21" in text and "handling call 11" not in text
    assert "| records | 3 of 120 |" in text and "### Calls (2 of 2 shown)" in text


def hostile_recording() -> tuple[dict, list[dict]]:
    """A recording whose every server-written slot holds Markdown, HTML and backtick runs."""
    header = {"kind": "header", "created": "2026-11-30T10:00:00.000Z", "inspector": "0.1.0",
              "target": {"transport": "stdio", "command": ["srv", HOSTILE]}}
    info = {"name": "a|b <i>x</i> `", "version": "1.0 | </details>"}
    records = [
        {"seq": 1, "t": 1.0, "kind": "event", "event": "handshake",
         "detail": {"era": "legacy", "protocolVersion": "2025-11-25", "serverInfo": info}},
        {"seq": 2, "t": 2.0, "kind": "message", "dir": "to_server",
         "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": HOSTILE}}},
        {"seq": 3, "t": 3.0, "kind": "stderr", "text": "``````\n</details>\n```"},
        {"seq": 4, "t": 4.0, "kind": "message", "dir": "from_server",
         "msg": {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": HOSTILE}}},
        {"seq": 5, "t": 5.0, "kind": "event", "event": "exit", "detail": {"reason": HOSTILE}},
        {"seq": 6, "t": 6.0, "kind": "invalid", "dir": "from_server", "raw": HOSTILE, "error": "not JSON"},
        {"seq": 7, "t": 7.0, "kind": "stderr", "text": "`" * 12},
    ]
    return header, records


def test_server_text_cannot_break_the_reports_structure():
    header, records = hostile_recording()
    text = render_markdown(header, records, problems(as_records(records), [f"line 9: {HOSTILE}"]))
    seen = check_markdown(text)
    assert seen["details"] == 1
    assert "### Problems (2)" in text and "stdout-not-json" in text  # the checker's finding and the skipped line
    assert "`" * 13 + "text\n" + "`" * 12 in text  # a fence longer than the stderr's backtick run
    block = text[text.index("<details>"):text.rindex("\n</details>\n")]
    assert "**stderr during the call** (1 line)\n\n```````text\n``````\n</details>\n```\n```````" in block


def test_fence_inline_and_trim_helpers():
    assert fence("a ```` b", "json") == "`````json\na ```` b\n`````\n"
    assert inline("a|b `c` <i>&") == "a\\|b \\`c\\` &lt;i&gt;&amp;"
    assert inline("\\|") == "\\\\\\|"  # a backslash of the server's cannot unescape our escape
    assert inline("ask @octocat or @org/team, mail a@b") == "ask @\u200boctocat or @\u200borg/team, mail a@\u200bb"
    assert fence("\x1b[31mred\x1b[0m \x07") == "```\nred \ufffd\n```\n"  # colours dropped, controls visible
    value, cut = trim_value({"s": "x" * 100, "l": list(range(30))}, text_limit=50, items_limit=10)
    assert cut and len(value["s"]) < 100 and "characters trimmed" in value["s"]
    assert value["l"] == [0, 1, 2, 3, 4, "…[20 items trimmed]…", 25, 26, 27, 28, 29]
    assert trim_value({"s": "short"}, text_limit=50, items_limit=10) == ({"s": "short"}, False)


def test_huge_server_text_in_every_slot_still_fits():
    huge = ("`| <b>@x " * 200_000)[:1_000_000]
    header = {"kind": "header", "created": huge, "inspector": huge, "target": {"transport": huge, "command": [huge]}}
    records = [{"seq": 1, "t": 1.0, "kind": "event", "event": "handshake", "detail": {
        "era": huge, "protocolVersion": huge, "serverInfo": {"name": huge, "version": huge}}}]
    records += [{"seq": n, "t": float(n), "kind": "event", "event": "exit", "detail": {"reason": huge}}
                for n in range(2, 40)]
    records += [{"seq": 40, "t": 40.0, "kind": "stderr", "text": huge}]
    problems = [Problem(n, huge, huge) for n in range(1, 2_000)]
    text = render_markdown(header, records, problems)
    assert len(text) <= LIMIT
    check_markdown(text)
    assert "- …and 1,9" in text and "characters trimmed" in text  # the problems that did not fit are counted


def test_dash_writes_the_jsonl_export_to_stdout_and_no_file(tmp_path):
    source = calls_recording(tmp_path, 2)
    result = mcp(["export", str(source), "-o", "-", "--seq", "1-3"], tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["kind"] == "header" and [r["seq"] for r in lines[1:]] == [1, 2, 3]
    assert not (tmp_path / "-").exists()


def test_lines_are_trimmed_in_the_middle_as_their_joined_text_would_be():
    """trim_lines_middle (the stderr outside calls: it may be a million lines) gives what trim_middle gives for the
    lines joined, without joining the middle it drops."""
    import random

    from inspector.recording.reports.md_text import trim_lines_middle, trim_middle

    rng = random.Random(14)
    for _ in range(300):
        lines = ["".join(rng.choice("ab\n`") for _ in range(rng.randrange(0, 30))).replace("\n", "")
                 for _ in range(rng.randrange(0, 60))]
        limit = rng.randrange(0, 400)
        assert trim_lines_middle(lines, limit) == trim_middle("\n".join(lines), limit), (lines, limit)
    text, dropped = trim_lines_middle(["x" * 10] * 1_000_000, 3_000)
    assert len(text) < 3_100 and dropped == 11 * 1_000_000 - 1 - 2 * 1_480
