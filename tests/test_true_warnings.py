"""No false warnings (issue 15, item 3) and a viewed recording's Problems (item 4), against servers nobody here
wrote (the reference server-everything over stdio, Streamable HTTP and SSE) and the mistakes fixture."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import (
    ROOT, build_in_process, everything_command, fixture_command, free_port, needs_everything,
    read_records, records_in, start_everything, stop_process_group, wait_for, wait_tools_listed,
)

CHILD_TIMEOUT = 110


def run_check(record, *args: str) -> tuple[int, dict, list[dict]]:
    done = subprocess.run([sys.executable, "-m", "inspector.commands.check", "--json", "--record", str(record), *args],
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    return done.returncode, json.loads(done.stdout), read_records(record)


def target(mode: str, urls: dict) -> list[str]:
    return ["--", *everything_command()] if mode == "stdio" else ["--url", urls[mode]]


@needs_everything
@pytest.mark.parametrize("mode", ["stdio", "streamableHttp", "sse"])
def test_check_finds_no_protocol_mistake_in_server_everything(tmp_path, everything_urls, mode):
    # Over Streamable HTTP the era probe is refused with HTTP 400 and an error whose id is null: an answer to our
    # own probe, never the server's mistake.
    code, out, records = run_check(tmp_path / "check.jsonl", *target(mode, everything_urls))
    assert out["warnings"] == [] and code == 0, out["warnings"]
    assert not [r for r in records if r["kind"] == "event" and r["event"] == "warning"]


def test_an_empty_success_to_the_era_probe_is_named_as_what_it_is(tmp_path):
    """A handshake-era server that answers every unknown method with {}: its server/discover answer is not judged
    by the 2026-07-28 schema; its real mistake has its own rule, on the row of that answer."""
    code, out, records = run_check(tmp_path / "check.jsonl", "--timeout", "5", "--",
                                   *fixture_command("mistakes_server", "success-for-unknown"))
    assert code == 1 and [w["rule"] for w in out["warnings"]] == ["success-for-unknown-method"], out["warnings"]
    warning = out["warnings"][0]
    answer = next(r for r in records if r.get("seq") == warning["seq"])
    asked = next(r for r in records if r["kind"] == "message" and r["dir"] == "to_server"
                 and r["msg"].get("id") == answer["msg"]["id"])
    assert asked["msg"]["method"] == "server/discover" and answer["msg"]["result"] == {}
    assert "-32601" in warning["text"] + warning["fix"] and "2026-07-28" not in warning["text"]


def problems_seen(inspector) -> list:
    """The page's problems once its checker has taken in every record so far."""
    problems = inspector.services.problems
    wait_for(problems._queue.empty, 30, message="the checker caught up")
    return [(w.rule, w.text) for w in problems.found]


@needs_everything
@pytest.mark.parametrize("mode", ["streamableHttp", "sse"])
def test_page_sessions_with_server_everything_over_http_have_no_problems(tmp_path, everything_urls, mode):
    inspector = build_in_process(tmp_path, [], "--url", everything_urls[mode])
    try:
        wait_tools_listed(inspector, 60)
        assert problems_seen(inspector) == []
        page = inspector.request("GET", "/")[2].decode()
        assert re.search(r"<summary>0 problems</summary>", page)
        if mode == "streamableHttp":  # the era probe is refused with HTTP 400 and an error whose id is null
            refusal = next(r for r in records_in(inspector.record) if (r.get("http") or {}).get("status") == 400)
            rows = inspector.request("GET", "/timeline/rows?before=1000000")[2].decode()
            row = re.search(rf'<details class="row ([^"]*)" id="r-{refusal["seq"]}".*?</summary>', rows, re.S)
            assert "kind-probe" in row.group(1) and "flag-unmatched" not in row.group(1), row.group(0)
            assert "server/discover" in row.group(0)
    finally:
        inspector.stop()


@needs_everything
def test_a_task_result_of_server_everything_is_no_result_schema_problem(tmp_path):
    """server-everything answers a task-augmented tools/call with a CreateTaskResult, as the spec says."""
    inspector = build_in_process(tmp_path, everything_command())
    try:
        wait_tools_listed(inspector, 60)
        inspector.post("/tools/simulate-research-query/call",
                       {"mode": "json", "arguments": '{"topic": "tides"}', "task": "on", "task_ttl": "60000"})

        def task_answer():
            for r in records_in(inspector.record):
                result = (r.get("msg") or {}).get("result") if r.get("kind") == "message" else None
                if isinstance(result, dict) and isinstance(result.get("task"), dict):
                    return r
            return None

        answer = wait_for(task_answer, 60, message="the CreateTaskResult")
        assert "content" not in answer["msg"]["result"]
        assert problems_seen(inspector) == []
    finally:
        inspector.stop()


def start_everything_on(port: int, log) -> subprocess.Popen:
    """server-everything over Streamable HTTP on a given port (to restart it where the page expects it)."""
    return start_everything("streamableHttp", log, port=port)[0]


@needs_everything
def test_a_restarted_http_server_refusing_our_session_pins_nothing_on_an_old_notification(tmp_path):
    """After the server restarts, it refuses our old session id with HTTP 400 and an error whose id is null: the
    answer to that POST, not to the notifications/initialized sent long before."""
    port, log = free_port(), tmp_path / "server.log"
    proc = start_everything_on(port, log)
    inspector = build_in_process(tmp_path, [], "--url", f"http://127.0.0.1:{port}/mcp")
    try:
        wait_tools_listed(inspector, 60)
        stop_process_group(proc)
        proc = start_everything_on(port, log)
        # The first start's server/discover probe was refused with a 400 too: look only after the restart.
        restarted_at = records_in(inspector.record)[-1]["seq"]
        inspector.post("/tools/echo/call", {"mode": "json", "arguments": '{"message": "hi"}'})

        def refused():
            return any(r.get("kind") == "message" and r.get("dir") == "from_server" and r["seq"] > restarted_at
                       and (r.get("http") or {}).get("status") == 400 for r in records_in(inspector.record))

        wait_for(refused, 60, message="the restarted server's HTTP 400")
        assert [rule for rule, _ in problems_seen(inspector)] == []
        refusal = [r for r in records_in(inspector.record)
                   if r.get("seq", 0) > restarted_at and (r.get("http") or {}).get("status") == 400][0]
        rows = inspector.request("GET", "/timeline/rows?before=1000000")[2].decode()
        row = re.search(rf'<details class="row ([^"]*)" id="r-{refusal["seq"]}".*?</summary>', rows, re.S).group(0)
        assert "tools/call" in row and "flag-unmatched" not in row  # paired with the call whose POST it refused
    finally:
        inspector.stop()
        stop_process_group(proc)


def test_a_viewed_recording_lists_the_problems_it_holds(tmp_path):
    """Whoever gets a recording sees what its sender saw: the Problems panel lists its warning events."""
    record = tmp_path / "noisy.jsonl"
    code, out, _ = run_check(record, "--timeout", "5", "--", *fixture_command("mistakes_server", "prints-stdout"))
    assert code == 1 and [w["rule"] for w in out["warnings"]] == ["stdout-not-json"]
    seq = out["warnings"][0]["seq"]
    viewer = build_in_process(tmp_path, [], view=record)
    try:
        page = viewer.request("GET", "/")[2].decode()
        problems = re.search(r'<details id="problems".*?</details>', page, re.S).group(0)
        assert "<summary>1 problem</summary>" in problems
        assert f'href="#r-{seq}"><code>stdout-not-json</code> on #{seq}' in problems
        assert "log to stderr instead" in problems  # the rule's fix, as in the live page
        assert problems.count("print() goes to stdout") == 1  # the text and its fix do not say it twice
        rows = viewer.request("GET", "/timeline/rows?before=1000000")[2].decode()
        row = re.search(rf'<details class="row[^"]*" id="r-{seq}".*?</summary>', rows, re.S).group(0)
        assert "⚠ problem" in row
    finally:
        viewer.stop()


def test_the_era_probe_refused_by_a_handshake_era_server_is_shown_as_the_probe_it_is(tmp_path):
    """Its -32601 is the expected answer to our own question: a quiet "probe" row, not a red error, no problem."""
    inspector = build_in_process(tmp_path, fixture_command("mistakes_server", "clean"))
    try:
        wait_tools_listed(inspector, 60)
        answer = next(r for r in records_in(inspector.record) if r.get("kind") == "message"
                      and r["dir"] == "from_server" and (r["msg"].get("error") or {}).get("code") == -32601)
        rows = inspector.request("GET", "/timeline/rows?before=1000000")[2].decode()
        row = re.search(rf'<details class="row ([^"]*)" id="r-{answer["seq"]}".*?</summary>', rows, re.S)
        assert "kind-probe" in row.group(1) and "kind-error" not in rows
        assert '<span class="badge k-probe"' in row.group(0) and "server/discover" in row.group(0)
        assert "expected: the era probe" in row.group(0)
        assert problems_seen(inspector) == []
        assert "<summary>0 problems</summary>" in inspector.request("GET", "/")[2].decode()
    finally:
        inspector.stop()


def test_a_tool_that_never_answers_is_not_blamed_on_a_missing_flush(tmp_path):
    """A server whose answers already arrived flushes its stdout: the silence rule says it ignores the call."""
    inspector = build_in_process(tmp_path, fixture_command("fake_server", "hang"), "--timeout", "2")
    try:
        wait_tools_listed(inspector, 60)
        inspector.post("/tools/echo/call", {"mode": "json", "arguments": '{"text": "hi"}', "timeout": "2"})
        wait_for(lambda: any(r.get("event") == "timeout" for r in records_in(inspector.record)), 60,
                 message="the call's timeout")
        silent = wait_for(lambda: [text for rule, text in problems_seen(inspector) if rule == "no-answer-silent"],
                          30, message="the silence warning")
        assert "tools/call" in silent[0] and "ignores this request" in silent[0] and "flush()" not in silent[0]
    finally:
        inspector.stop()
