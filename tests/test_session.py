"""The session against real child processes over real pipes: handshake, traffic, faults, recording order."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, fixture_command, process_group_alive, read_records, wait_for
from inspector.recording.files import RecordingWriter, read_recording
from inspector.client.rpc import Client, RequestFailed
from inspector.session import Session
from inspector.recording.store import Store
from inspector.transport.stdio import StdioProcess


def make_session(tmp_path: Path, argv: list[str], *, timeout: float = 30.0, env: dict | None = None,
                 roots: list | None = None, protocol: str = "auto"):
    path = tmp_path / "rec.jsonl"
    writer = RecordingWriter.create(path)
    writer.write_header({"kind": "header", "format": "mcp-inspect-recording", "version": 1})
    store = Store(writer)
    session = Session(store, argv, env={**os.environ, **(env or {})}, timeout=timeout,
                      roots=roots if roots is not None else [{"uri": "file:///work", "name": "work"}],
                      protocol=protocol)
    return session, store, path


@pytest.fixture
def run_session(tmp_path):
    sessions = []

    def start(argv, **kwargs):
        session, store, path = make_session(tmp_path, argv, **kwargs)
        sessions.append(session)
        session.start()
        return session, store, path

    yield start
    for session in sessions:
        session.close()


def wait_running(session: Session, timeout: float = 60) -> None:
    wait_for(lambda: session.server.state == "running" and session.server.tools, timeout,
             message=f"server running with tools (state {session.server.state}, error {session.server.error!r})")


def messages(path: Path) -> list[dict]:
    return [r for r in read_records(path)[1:] if r["kind"] == "message"]


def methods_sent(path: Path) -> list[str]:
    return [r["msg"].get("method") for r in messages(path) if r["dir"] == "to_server" and "method" in r["msg"]]


def test_raw_server_handshake_and_call(run_session):
    session, store, path = run_session(fixture_command("raw_server"))
    wait_running(session)
    assert session.server.protocol_version == "2024-11-05"
    assert {tool["name"] for tool in session.server.tools} >= {"echo", "add"}
    result = session.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}}).wait(10)
    assert "42" in result["content"][0]["text"]
    # auto probes server/discover first; the raw server refuses it, so it is a handshake-era server (no restart).
    assert methods_sent(path)[:4] == ["server/discover", "initialize", "notifications/initialized", "tools/list"]
    assert session.server.era == "legacy" and "error -32601" in session.server.era_reason
    assert not [r for r in read_records(path) if r.get("event") == "stop"]
    # The raw server declares only tools: nothing else may be listed.
    assert "resources/list" not in methods_sent(path)
    records = read_records(path)
    assert [r["seq"] for r in records[1:]] == list(range(1, len(records)))
    handshake = next(r for r in records if r.get("event") == "handshake")
    assert handshake["detail"]["protocolVersion"] == "2024-11-05"
    assert handshake["detail"]["era"] == "legacy"


def test_sdk_server_lists_everything(run_session):
    session, store, path = run_session(fixture_command("sdk_server"))
    wait_running(session, 30)
    wait_for(lambda: session.server.prompts and session.server.resources, 10, message="prompts and resources listed")
    sent = methods_sent(path)
    # The SDK server speaks 2026-07-28: auto finds it modern, so there is no initialize at all.
    assert sent[0] == "server/discover" and "initialize" not in sent
    assert session.server.era == "modern" and session.server.protocol_version == "2026-07-28"
    assert session.server.server_info["name"] == "sdk-fixture"
    assert {"tools/list", "resources/list", "resources/templates/list", "prompts/list"} <= set(sent)
    result = session.request("tools/call", {"name": "echo", "arguments": {"text": "héllo"}}).wait(10)
    assert result["content"][0]["text"] == "héllo"
    # Every request carries the modern _meta keys.
    for record in messages(path):
        if record["dir"] == "to_server" and "method" in record["msg"] and "id" in record["msg"]:
            meta = record["msg"]["params"]["_meta"]
            assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
            assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcp-inspect"
            assert "io.modelcontextprotocol/clientCapabilities" in meta
    # Every request of ours was answered and paired, but the listen stream, which stays open.
    responses = {r["msg"]["id"] for r in messages(path) if r["dir"] == "from_server" and "id" in r["msg"]}
    requests = {r["msg"]["id"]: r["msg"]["method"] for r in messages(path)
                if r["dir"] == "to_server" and "method" in r["msg"] and "id" in r["msg"]}
    assert {i for i, m in requests.items() if m != "subscriptions/listen"} <= responses
    assert "subscriptions/listen" in requests.values()
    handshake = next(r for r in read_records(path) if r.get("event") == "handshake")
    assert handshake["detail"]["era"] == "modern" and handshake["detail"]["supportedVersions"] == ["2026-07-28"]


def test_a_server_that_says_nothing_is_timed_from_reading_the_probe(run_session):
    # No output at all: its sign of life is reading server/discover from its stdin; 3 s later it falls back,
    # long before the 30 s request timeout.
    started = time.monotonic()
    session, store, path = run_session(fixture_command("fake_server", "silent-discover"), timeout=30)
    wait_running(session, 20)
    assert time.monotonic() - started < 12
    assert session.server.era == "legacy" and "no answer to server/discover within 3" in session.server.era_reason
    requests = [m for m in methods_sent(path) if not m.startswith("notifications/")]
    assert requests[:2] == ["server/discover", "initialize"]


def test_a_late_discover_result_is_used_not_discarded(run_session, tmp_path):
    # A modern server that takes longer than the probe's few seconds to start (an SDK import on a loaded machine)
    # neither prints nor reads meanwhile: the probe waits for it, and the era is modern, with no restart.
    slow = tmp_path / "slow_start.py"
    slow.write_text("import runpy, sys, threading\n"
                    "threading.Event().wait(4)  # a slow import, without a word\n"
                    f"sys.argv = [{str(FIXTURES / 'sdk_server.py')!r}]\n"
                    f"runpy.run_path({str(FIXTURES / 'sdk_server.py')!r}, run_name='__main__')\n")
    session, store, path = run_session([sys.executable, str(slow)], timeout=30)
    wait_running(session, 40)
    assert session.server.era == "modern", session.server.era_reason
    assert [r.get("event") for r in read_records(path)].count("spawn") == 1


@pytest.mark.parametrize("protocol, era, first", [("legacy", "legacy", "initialize"),
                                                  ("2025-06-18", "legacy", "initialize"),
                                                  ("modern", "modern", "server/discover")])
def test_protocol_option_forces_the_era(tmp_path, protocol, era, first):
    session, store, path = make_session(tmp_path, fixture_command("sdk_server"), protocol=protocol)
    try:
        session.start()
        wait_running(session, 30)
        assert session.server.era == era
        assert methods_sent(path)[0] == first
        assert "server/discover" not in methods_sent(path)[1:]
        if protocol == "2025-06-18":
            assert methods_sent(path).count("initialize") == 1
            sent = next(r for r in messages(path) if r["msg"].get("method") == "initialize")
            assert sent["msg"]["params"]["protocolVersion"] == "2025-06-18"
        result = session.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}).wait(10)
        assert result["structuredContent"] == {"result": 3}
    finally:
        session.close()


def test_a_server_that_ignores_the_probe_is_found_legacy_three_seconds_after_its_first_output(run_session):
    started = time.monotonic()
    # It says something on stderr at start (a sign of life), then never answers server/discover.
    session, store, path = run_session(fixture_command("fake_server", "silent-discover+stderr"))
    wait_running(session, 15)
    took = time.monotonic() - started
    assert session.server.era == "legacy" and "no answer to server/discover" in session.server.era_reason
    assert took < 8, f"took {took:.1f} s"  # 3 s after its first output + restart; not the 30 s request timeout
    records = read_records(path)
    spawns = [r for r in records if r.get("event") == "spawn"]
    assert len(spawns) == 2, "the probe's process is replaced by a fresh one for initialize"
    stop = next(r for r in records if r.get("event") == "stop")
    assert "restarting it for the initialize handshake" in stop["detail"]["reason"]
    # The era found is kept: a restart goes straight to initialize.
    session.stop()
    session.start()
    wait_for(lambda: methods_sent(path).count("initialize") == 2 and session.server.state == "running", 15,
             message="second start")
    assert methods_sent(path).count("server/discover") == 1


def test_the_request_timeout_thread_ends_with_its_session(run_session):
    session, store, path = run_session(fixture_command("raw_server"))
    wait_running(session)
    session.request("ping").wait(10)
    assert session.client.deadlines.running  # started by the first request with a timeout
    session.close()
    session.client.deadlines.join(5)
    assert not session.client.deadlines.running


def invalid_rows_of_a_session_that_goes_on(run_session, mode: str) -> list[dict]:
    """Run the fake server in `mode`: it must still answer an echo; the invalid rows of the recording."""
    session, store, path = run_session(fixture_command("fake_server", mode))
    wait_running(session)
    result = session.request("tools/call", {"name": "echo", "arguments": {"text": "still here"}}).wait(10)
    assert result["content"][0]["text"] == "still here"
    return [r for r in read_records(path) if r["kind"] == "invalid"]


def test_nonjson_stdout_is_shown_and_session_continues(run_session):
    invalid = invalid_rows_of_a_session_that_goes_on(run_session, "nonjson")
    assert [r["raw"] for r in invalid][:1] == ["Hello"]
    assert invalid[0]["error"].startswith("not JSON")
    assert any(r["error"].startswith("not UTF-8") for r in invalid)
    assert all(r["dir"] == "from_server" for r in invalid)


def test_stderr_lines_are_recorded_in_order(run_session):
    session, store, path = run_session(fixture_command("fake_server", "stderr"))
    wait_running(session)
    session.request("ping").wait(10)
    stderr = [r for r in read_records(path) if r["kind"] == "stderr"]
    assert len(stderr) >= 2
    seqs = [r["seq"] for r in read_records(path)[1:]]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_crash_mid_call_fails_the_call_quickly_with_exit_and_stderr(run_session):
    session, store, path = run_session(fixture_command("fake_server", "crash"), timeout=60)
    wait_running(session)
    started = time.monotonic()
    pending = session.request("tools/call", {"name": "crash", "arguments": {}})
    with pytest.raises(RequestFailed) as failure:
        pending.wait(10)
    elapsed = time.monotonic() - started
    assert elapsed < 5, "a crash must fail the call at once, not at the 60 s timeout"
    assert failure.value.reason == "exited"
    assert "code 3" in str(failure.value)
    assert "fatal" in str(failure.value) or "crash" in str(failure.value)
    wait_for(lambda: session.server.state == "exited", 5, message="state exited")
    assert session.server.exit.code == 3
    exit_event = next(r for r in read_records(path) if r.get("event") == "exit")
    assert exit_event["detail"]["code"] == 3
    assert exit_event["detail"]["stderr_tail"]
    assert not process_group_alive(session.server.pid)


def test_crash_by_signal_names_the_signal(run_session):
    session, store, path = run_session(fixture_command("fake_server", "crash"))
    wait_running(session)
    with pytest.raises(RequestFailed) as failure:
        session.request("tools/call", {"name": "crash", "arguments": {"signal": True}}).wait(10)
    assert "SIGSEGV" in str(failure.value)


def test_timeout_sends_cancelled_and_flags_a_late_answer(run_session, tmp_path):
    log = tmp_path / "fake.log"
    # The short timeout is the call's own: the handshake keeps the default, so a loaded machine still connects.
    session, store, path = run_session(fixture_command("fake_server", "hang"),
                                       env={"FAKE_LOG": str(log), "FAKE_LATE": "1"})
    wait_running(session)
    pending = session.request("tools/call", {"name": "slow", "arguments": {}}, timeout=0.5)
    with pytest.raises(RequestFailed) as failure:
        pending.wait(5)
    assert failure.value.reason == "timeout"
    # With a 0.5 s timeout on every request, a loaded machine may also time out (and cancel) a handshake request:
    # look for the cancel of this call, not the first one.
    def cancelled_this_call():
        lines = log.read_text().splitlines() if log.exists() else []
        return [line for line in lines if "notifications/cancelled" in line
                and f'"requestId":{pending.id}' in line.replace(" ", "")]
    wait_for(cancelled_this_call, 30, message="notifications/cancelled of the call reached the server")
    # The server answers anyway after 1.5 s: shown, paired with its request, and flagged late.
    late_row = wait_for(lambda: next((row for row in store.newest(store_filters(), 50)
                                      if row.kind == "response" and row.late), None), 30, message="late row")
    assert late_row.pair_seq == pending.seq
    records = read_records(path)
    timeouts = [r for r in records if r.get("event") == "timeout" and r["detail"]["id"] == pending.id]
    assert len(timeouts) == 1 and timeouts[0]["detail"]["method"] == "tools/call"
    cancel = next(r for r in records if r.get("msg", {}).get("method") == "notifications/cancelled"
                  and r["msg"]["params"]["requestId"] == pending.id)
    assert timeouts[0]["seq"] < cancel["seq"]


def store_filters():
    from inspector.recording.store import Filters

    return Filters()


def test_server_ping_is_answered_and_other_requests_get_method_not_found(run_session, tmp_path):
    # The raw server has no server->client requests; drive the session's answering path with one that asks.
    script = tmp_path / "asker.py"
    script.write_text(
        "import json,sys\n"
        "for line in sys.stdin:\n"
        "    m=json.loads(line)\n"
        "    if m.get('method')=='initialize':\n"
        "        print(json.dumps({'jsonrpc':'2.0','id':0,'method':'ping'}),flush=True)\n"
        "        print(json.dumps({'jsonrpc':'2.0','id':1,'method':'sampling/createMessage','params':{}}),flush=True)\n"
        "        print(json.dumps({'jsonrpc':'2.0','id':2,'method':'roots/list'}),flush=True)\n"
        "        print(json.dumps({'jsonrpc':'2.0','id':m['id'],'result':{'protocolVersion':'2025-11-25',"
        "'capabilities':{'tools':{}},'serverInfo':{'name':'asker','version':'1'}}}),flush=True)\n"
        "    elif m.get('method')=='tools/list':\n"
        "        print(json.dumps({'jsonrpc':'2.0','id':m['id'],'result':{'tools':[{'name':'t','inputSchema':{'type':'object'}}]}}),flush=True)\n")
    session, store, path = run_session(["python3", str(script)])
    wait_running(session)
    answers = wait_for(lambda: [r["msg"] for r in messages(path) if r["dir"] == "to_server" and "method" not in r["msg"]]
                       if len([r for r in messages(path) if r["dir"] == "to_server" and "method" not in r["msg"]]) >= 3
                       else None, 5, message="three answers to the server's requests")
    by_id = {answer["id"]: answer for answer in answers}
    assert by_id[0] == {"jsonrpc": "2.0", "id": 0, "result": {}}
    assert by_id[1]["error"]["code"] == -32601
    assert by_id[2]["result"] == {"roots": session.roots}


def test_pagination_follows_next_cursor(run_session, tmp_path):
    script = tmp_path / "pager.py"
    script.write_text(
        "import json,sys\n"
        "for line in sys.stdin:\n"
        "    m=json.loads(line)\n"
        "    if 'id' not in m: continue\n"
        "    if m['method']=='initialize':\n"
        "        r={'protocolVersion':'2025-11-25','capabilities':{'tools':{}},'serverInfo':{'name':'pager','version':'1'}}\n"
        "    else:\n"
        "        page=int((m.get('params') or {}).get('cursor') or 0)\n"
        "        r={'tools':[{'name':f't{page}','inputSchema':{'type':'object'}}]}\n"
        "        if page<2: r['nextCursor']=str(page+1)\n"
        "    print(json.dumps({'jsonrpc':'2.0','id':m['id'],'result':r}),flush=True)\n")
    session, store, path = run_session(["python3", str(script)])
    wait_for(lambda: len(session.server.tools) == 3, 10, message="three pages of tools")
    assert [tool["name"] for tool in session.server.tools] == ["t0", "t1", "t2"]


def test_stderr_flood_does_not_block_responses(run_session):
    session, store, path = run_session(fixture_command("fake_server", "stderr-flood"))
    wait_running(session, 30)
    started = time.monotonic()
    result = session.request("tools/call", {"name": "echo", "arguments": {"text": "through"}}).wait(20)
    assert result["content"][0]["text"] == "through"
    assert time.monotonic() - started < 5
    assert sum(1 for r in read_records(path) if r["kind"] == "stderr") > 0


@pytest.mark.parametrize("argv, expected", [
    (["does-not-exist-xyz"], "command not found"),
    (["./not-executable.sh"], "not executable"),
])
def test_spawn_failures_are_shown_not_raised(run_session, tmp_path, argv, expected, monkeypatch):
    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    monkeypatch.chdir(tmp_path)
    session, store, path = run_session(argv)
    assert session.server.state == "failed"
    assert expected in session.server.error
    assert any(r.get("event") == "spawn-failed" for r in read_records(path))


def test_server_that_exits_at_start_keeps_its_stderr_tail(run_session):
    session, store, path = run_session(fixture_command("fake_server", "exit-at-start"))
    wait_for(lambda: session.server.state == "exited", 10, message="exited")
    assert session.server.exit.code == 1
    assert any("boom: missing config" in line for line in session.server.exit.stderr_tail)
    # It died before reading the probe, so not of it: no second start; the handshake's failure names the exit.
    wait_for(lambda: "initialize failed" in session.server.error, 10, message="the handshake failure is named")
    assert "exited with code 1" in session.server.error
    assert [r.get("event") for r in read_records(path)].count("spawn") == 1


def test_stop_kills_grandchildren_and_ignores_nothing(run_session, tmp_path):
    pids = tmp_path / "pids"
    session, store, path = run_session(fixture_command("fake_server", "grandchild+ignore-sigterm"),
                                       env={"FAKE_PIDS": str(pids)})
    wait_running(session)
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) >= 2, 5, message="pids file")
    pgid = session.server.pid
    assert process_group_alive(pgid)
    started = time.monotonic()
    session.stop(stdin_grace=0.3)
    assert time.monotonic() - started < 8
    assert not process_group_alive(pgid)
    for pid in map(int, pids.read_text().split()):
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
    records = read_records(path)
    assert [r.get("event") for r in records if r.get("event") in ("stop", "exit")] == ["stop", "exit"]


def test_restart_via_start_after_stop_keeps_one_timeline(run_session):
    session, store, path = run_session(fixture_command("fake_server", "ok"))
    wait_running(session)
    first_pid = session.server.pid
    session.stop(stdin_grace=0.3)
    session.start()
    wait_running(session)
    assert session.server.pid != first_pid
    assert not process_group_alive(first_pid)
    loaded = read_recording(path)
    assert [r.event for r in loaded.records if r.kind == "event"].count("spawn") == 2
    ids = [r.msg["id"] for r in loaded.records if r.kind == "message" and r.dir == "to_server" and "id" in r.msg]
    assert len(ids) == len(set(ids)), "our ids are never reused, even across restarts"


def test_progress_extends_the_timeout_and_cancel_reaches_the_server(run_session, tmp_path):
    from inspector.session.calls import Calls  # the page's tool calls, over the same session type the page uses

    # The timeout leaves a second beside slow_task's half-second steps: with 0.8 s, a loaded machine's scheduling
    # delays timed the call out between two steps.
    session, store, path = run_session([sys.executable, "-m", "inspector.demo.server"], timeout=1.5)
    calls = Calls(session)
    wait_running(session)
    # slow_task reports progress every half second for 3 s: twice the 1.5 s timeout, yet it finishes.
    call = calls.call_tool("slow_task", {"seconds": 3})
    assert call.done.wait(10)
    assert call.state == "result", call.message
    progress = [r for r in read_records(path) if r.get("kind") == "message"
                and r["msg"].get("method") == "notifications/progress"]
    assert progress and progress[0]["msg"]["params"]["progressToken"] == f"call-{call.id}"
    # Cancel: the server is told, and the call fails at once.
    slow = calls.call_tool("slow_task", {"seconds": 5})
    wait_for(lambda: slow.progress, 10, message="the slow call is under way")  # not a fixed wait
    assert calls.cancel_call(slow.id)
    assert slow.done.is_set() and slow.state == "failed" and "cancelled" in slow.message
    cancelled = [r["msg"] for r in read_records(path) if r.get("kind") == "message"
                 and r["msg"].get("method") == "notifications/cancelled"]
    assert cancelled[-1]["params"]["requestId"] == slow.request_id


def test_a_too_deeply_nested_stdout_line_is_invalid_and_the_session_goes_on(run_session):
    # Security rows 8 and 13: json.loads raised RecursionError on the reader thread, which died; nothing from the
    # server was read again (the handshake's tools/list never answered).
    invalid = invalid_rows_of_a_session_that_goes_on(run_session, "deep")
    assert [r["raw"] for r in invalid] == ["[" * 100_000 + "]" * 100_000]
    assert invalid[0]["error"] == "not decoded: nested more than 128 levels deep" and invalid[0]["dir"] == "from_server"


class _Pipe:
    """A transport that keeps what is written (the client's side of a conversation, without a process)."""

    def __init__(self) -> None:
        self.exited = threading.Event()
        self.sent: list[dict] = []

    def send(self, data: bytes) -> None:
        self.sent.append(json.loads(data))


class _Sink:
    def __init__(self) -> None:
        self.records = []

    def add(self, record):
        record.seq = len(self.records) + 1
        self.records.append(record)
        return record


def test_hand_made_request_ids_never_take_over_our_requests():
    # Security row 21, without a process: every step is a direct call, so the order is exact.
    client, pipe = Client(_Sink()), _Pipe()
    client.attach(pipe)
    try:
        ours = client.request("tools/call", {"name": "slow"})
        assert ours.id == 1
        # client.rpc.RawRefused is a ValueError; matched by its message, so without it this fails as DID NOT RAISE
        with pytest.raises(ValueError, match=r"^Not sent: id 1 is taken by a tools/call request .* \(row #1\)"):
            client.send_line('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}')
        with pytest.raises(ValueError, match="^Not sent: id 1 is taken"):  # a batch holding that id too
            client.send_line('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
        assert [m["id"] for m in pipe.sent] == [1] and len(client.sink.records) == 1
        # A hand-made request under an id our counter has not reached yet: our next request skips that id ...
        assert client.send_line('{"jsonrpc":"2.0","id":2,"method":"ping"}') is not None
        ping = client.request("ping")
        assert ping.id == 3
        # ... and its answer is its own, not our request's.
        client.on_line(b'{"jsonrpc":"2.0","id":2,"result":{"hand":"made"}}')
        assert not ping.done.is_set() and not ours.done.is_set()
        client.on_line(b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}')
        assert ours.wait(1) == {"content": []}
        # Answered, the id is free again for whoever comes next; ids are never reused by us anyway.
        assert client.send_line('{"jsonrpc":"2.0","id":1,"method":"ping"}') is not None
    finally:
        client.close()
def _finishes(fn, within: float, *args) -> bool:
    """Run fn(*args) on a thread; whether it returned within `within` s (a hung fn must fail, not hang the test)."""
    thread = threading.Thread(target=fn, args=args, daemon=True)
    thread.start()
    thread.join(within)
    return not thread.is_alive()


def test_a_server_that_stops_reading_blocks_neither_send_nor_stop(tmp_path):
    """Security row 24: more than the pipe holds, to a server that never reads, must not hang send() or stop()."""
    exits = []
    process = StdioProcess(fixture_command("fake_server", "noread"), cwd=str(tmp_path), env=dict(os.environ),
                           on_stdout=lambda line: None, on_stderr=lambda text: None, on_exit=exits.append)
    pid = process.start()
    try:
        big = b'{"jsonrpc":"2.0","method":"x","params":"' + b"x" * (2 * 1024 * 1024) + b'"}\n'
        assert _finishes(process.send, 5, big), "send() waited for a server that does not read"
        assert _finishes(process.send, 5, b'{"jsonrpc":"2.0","method":"y"}\n'), "a small send after it waited too"
        assert process.unread_input() >= len(big), "what waits counts as unread (the era probe's sign of life)"
        started = time.monotonic()
        assert _finishes(process.stop, 10), "stop() waited for the blocked write"
        elapsed = time.monotonic() - started
        # The ladder: stdin closed at once (it reads nothing, so it stays), SIGTERM after the 2 s grace ends it.
        assert 1.5 < elapsed < 2.0 + 1.0 + 1.0, elapsed
        assert exits and exits[0].signal == "SIGTERM"
        assert not process_group_alive(pid)
        with pytest.raises(BrokenPipeError):
            process.send(b"{}\n")
    finally:
        if process_group_alive(pid):
            os.killpg(pid, signal.SIGKILL)
