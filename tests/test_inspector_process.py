"""mcp-inspect as a real process on a real port: the websocket timeline, shutdown by signal, crashes."""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path

import pytest

from conftest import fixture_command, process_group_alive, read_records, records_in, wait_for, wait_tools_listed
from inspector.protocol import bursts

ROW_ID = re.compile(r'id="r-(\d+)"')


def wait_handshake(inspector, timeout: float = 60) -> None:
    """Until the handshake and tools/list are recorded and the page knows the tools (the record comes first)."""
    wait_for(lambda: any(r.get("event") == "handshake" for r in records_in(inspector.record)) and
             any(r.get("kind") == "message" and "tools" in (r["msg"].get("result") or {})
                 for r in records_in(inspector.record)), timeout, message="handshake and tools/list")
    wait_tools_listed(inspector, timeout)


class Rows:
    """Collects the row seqs a websocket client receives, in order."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.seqs: list[int] = []
        self.frames: list[str] = []

    def until(self, want_seq: int, timeout: float = 10) -> list[int]:
        """Read frames until the row want_seq arrived; returns every seq received up to it."""
        deadline = time.monotonic() + timeout
        while want_seq not in self.seqs:
            if time.monotonic() > deadline:
                raise AssertionError(f"row {want_seq} never arrived; got {self.seqs[-5:]}")
            frame = self.ws.recv()
            self.frames.append(frame)
            self.seqs.extend(int(s) for s in ROW_ID.findall(frame))
        return self.seqs[:self.seqs.index(want_seq) + 1]


def call_tool(inspector, name: str, arguments: str) -> str:
    status, _, body = inspector.post(f"/tools/{name}/call", {"arguments": arguments})
    assert status == 200, body
    return body.decode()


def test_late_websocket_client_gets_backlog_then_live_without_gap_or_duplicate(inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "stderr"))
    wait_handshake(inspector)
    early = Rows(inspector.ws())
    early.until(len(records_in(inspector.record)) - 1)
    # Traffic while a second client is not connected yet, then it connects late.
    call_tool(inspector, "echo", '{"text": "one"}')
    wait_for(lambda: any(r.get("kind") == "message" and r["dir"] == "from_server" and
                         "one" in str(r["msg"].get("result")) for r in records_in(inspector.record)), 10,
             message="first call answered")
    late = Rows(inspector.ws())
    call_tool(inspector, "echo", '{"text": "two"}')
    final = wait_for(lambda: next((r["seq"] for r in records_in(inspector.record) if r.get("kind") == "message"
                                   and "two" in str(r["msg"].get("result"))), None), 10, message="second answer")
    records = [r for r in read_records(inspector.record)[1:] if r["seq"] <= final]
    recorded = [r["seq"] for r in records]
    stderr = {r["seq"] for r in records if r["kind"] == "stderr"}
    # The late client's first frame replaced the timeline (innerHTML) with the backlog; then live rows follow. A
    # stderr burst is one row that is pushed again whole as it grows (its lines keep their ids), and a server
    # message that came between two of its lines follows the burst's row: so stderr lines are checked as a set,
    # every other record in seq order, exactly once.
    for client in (late, early):
        got = client.until(final)
        assert set(got) == set(recorded), "every record"
        others = [seq for seq in got if seq not in stderr]
        assert others == [seq for seq in recorded if seq not in stderr], "in order, exactly once"
    assert 'hx-swap="innerHTML"' in late.frames[0]
    early.ws.close()
    late.ws.close()


def test_every_message_and_stderr_line_is_in_timeline_and_recording(inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "nonjson+stderr"))
    wait_handshake(inspector)
    rows = Rows(inspector.ws())
    call_tool(inspector, "echo", '{"text": "x"}')
    last = wait_for(lambda: next((r["seq"] for r in records_in(inspector.record) if r.get("kind") == "message"
                                  and r["dir"] == "from_server" and "x" == _text(r)), None), 10, message="answer")
    seqs = rows.until(last)
    records = read_records(inspector.record)[1:]
    stderr = {r["seq"] for r in records if r["kind"] == "stderr"}  # bursts: see the late-client test above
    assert set(seqs) == {r["seq"] for r in records if r["seq"] <= last}
    assert [s for s in seqs if s not in stderr] == [r["seq"] for r in records if r["seq"] <= last and r["seq"] not in stderr]
    kinds = {r["kind"] for r in records}
    assert {"message", "stderr", "invalid", "event"} <= kinds
    joined = "".join(rows.frames)
    assert "Hello" in joined and "not JSON" in joined
    rows.ws.close()


def _text(record: dict) -> str | None:
    content = (record["msg"].get("result") or {}).get("content") or [{}]
    return content[0].get("text")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_leaves_no_process_of_the_server_group(inspector_factory, tmp_path, sig):
    pids = tmp_path / f"pids-{sig}"
    inspector = inspector_factory(fixture_command("fake_server", "grandchild+ignore-sigterm"),
                                  env={"FAKE_PIDS": str(pids)})
    wait_handshake(inspector)
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2, 10, message="pids written")
    grandchild, server = map(int, pids.read_text().split())
    assert process_group_alive(server)
    code = inspector.stop(sig)
    assert code == 0, inspector.stderr_text()
    assert not process_group_alive(server)
    assert not _alive(grandchild)
    records = read_records(inspector.record)
    assert records[-1]["event"] == "session-end"
    assert records[-2]["event"] == "exit"


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_kill_9_of_the_inspector_leaves_no_orphans(inspector_factory, tmp_path):
    pids = tmp_path / "pids"
    inspector = inspector_factory(fixture_command("fake_server", "grandchild"), env={"FAKE_PIDS": str(pids)})
    wait_handshake(inspector)
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2, 10, message="pids written")
    grandchild, server = map(int, pids.read_text().split())
    inspector.proc.kill()
    inspector.proc.wait()
    wait_for(lambda: not process_group_alive(server), 5, message="the lifeline took the group down")
    assert not _alive(grandchild)


def test_a_crashed_server_keeps_the_page_up_with_exit_and_stderr(inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "exit-at-start"))
    # It dies before reading the era probe, so it is not started again for initialize (one start, one exit).
    wait_for(lambda: [r.get("event") for r in records_in(inspector.record)].count("exit") == 1, 10, message="exit")
    wait_for(lambda: "initialize failed" in inspector.request("GET", "/")[2].decode(), 10, message="the failure")
    status, _, body = inspector.request("GET", "/")
    assert status == 200
    page = body.decode()
    assert "exited" in page and "code 1" in page
    assert "boom: missing config" in page
    assert inspector.proc.poll() is None, "the inspector stays up when its server dies"
    # Start runs the same command again.
    status, _, body = inspector.post("/server/start")
    assert status == 200
    wait_for(lambda: [r.get("event") for r in records_in(inspector.record)].count("spawn") == 2, 10,
             message="another spawn")


def test_stop_button_stops_the_server_and_start_brings_it_back(inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "ok"))
    wait_handshake(inspector)
    status, _, _ = inspector.post("/server/stop")
    assert status == 200
    wait_for(lambda: any(r.get("event") == "exit" for r in records_in(inspector.record)), 10, message="exit")
    _, _, body = inspector.request("GET", "/")
    assert "stopped" in body.decode()
    inspector.post("/server/start")
    wait_for(lambda: [r.get("event") for r in records_in(inspector.record)].count("handshake") == 2, 10,
             message="second handshake")


def test_tool_call_from_the_page_returns_a_pending_row_then_the_result(inspector_factory):
    inspector = inspector_factory(fixture_command("raw_server"))
    wait_handshake(inspector)
    ws = inspector.ws()
    ws.recv()  # the initial sync: from here on, the call's completion is pushed
    body = call_tool(inspector, "add", '{"a": 2, "b": 3}')
    call_id = re.search(r'id="call-(\d+)"', body).group(1)
    deadline = time.monotonic() + 10
    while True:
        frame = ws.recv()
        if f'hx-target="#call-{call_id}"' in frame:
            break
        assert time.monotonic() < deadline
    assert ">5<" in frame.replace("\n", "") or "5" in re.sub(r"<[^>]+>", " ", frame)
    status, _, body = inspector.request("GET", f"/calls/{call_id}")
    assert "state-result" in body.decode()
    ws.close()


@pytest.mark.parametrize("arguments, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
])
def test_bad_arguments_are_refused_before_sending(inspector_factory, arguments, message):
    inspector = inspector_factory(fixture_command("raw_server"))
    wait_handshake(inspector)
    status, _, body = inspector.post("/tools/echo/call", {"arguments": arguments})
    assert status == 422
    assert message in body.decode()
    assert not any(r.get("kind") == "message" and r["msg"].get("method") == "tools/call"
                   for r in records_in(inspector.record))


def test_rows_expand_copy_and_page_older_from_the_recording(inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "stderr"))
    wait_handshake(inspector)
    records = read_records(inspector.record)
    response = next(r for r in records if r.get("kind") == "message" and "tools" in (r["msg"].get("result") or {}))
    status, headers, body = inspector.request("GET", f"/records/{response['seq']}")
    assert status == 200 and "Copy JSON" in body.decode()
    assert "&#34;tools&#34;" in body.decode() or "&quot;tools&quot;" in body.decode()
    status, headers, body = inspector.request("GET", f"/records/{response['seq']}.json")
    assert status == 200 and headers["content-type"].startswith("application/json")
    assert json.loads(body) == response["msg"]
    stderr_seq = next(r["seq"] for r in records if r["kind"] == "stderr")
    assert json.loads(inspector.request("GET", f"/records/{stderr_seq}.json")[2])["kind"] == "stderr"
    assert inspector.request("GET", "/records/99999")[0] == 404
    # Older rows: everything before a seq, filtered on the server.
    last = records[-1]["seq"]
    status, _, body = inspector.request("GET", f"/timeline/rows?before={last}&kind=request&filtered=1&stderr=on")
    seqs = [int(s) for s in ROW_ID.findall(body.decode())]
    expected = [r["seq"] for r in records[1:] if r["seq"] < last and r["kind"] == "message"
                and "method" in r["msg"] and "id" in r["msg"] and r["dir"] == "to_server"]
    assert seqs == expected
    status, _, body = inspector.request("GET", f"/timeline/rows?before={last}&q=tools%2Flist")
    # A hit on a stderr line shows its whole burst (protocol/bursts.py): every line of it keeps its row id.
    tracker, heads = bursts.Bursts(), {}
    for r in records[1:]:
        heads[r["seq"]] = tracker.observe(r["kind"], r.get("dir"), r["seq"], r["t"], r.get("text"))
    hits = {r["seq"] for r in records[1:] if r["seq"] < last and "tools/list" in json.dumps(r)}
    hit_bursts = {heads[seq] for seq in hits if heads[seq] is not None}
    assert set(int(s) for s in ROW_ID.findall(body.decode())) == hits | {
        seq for seq, head in heads.items() if seq < last and head in hit_bursts}


def test_websocket_filters_resync_the_timeline(inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "stderr"))
    wait_handshake(inspector)
    rows = Rows(inspector.ws())
    rows.until(read_records(inspector.record)[-1]["seq"])
    rows.ws.send(json.dumps({"type": "filters", "dir": "", "kind": "stderr", "method": "", "q": "", "stderr": "on",
                             "headers": {"HX-Request": "true"}}))
    frame = rows.ws.recv()
    while 'hx-swap="innerHTML"' not in frame:
        frame = rows.ws.recv()
    shown = [int(s) for s in ROW_ID.findall(frame)]
    assert shown == [r["seq"] for r in read_records(inspector.record)[1:] if r["kind"] == "stderr"][-len(shown):]
    assert shown and 'kind-stderr' in frame and 'kind-request' not in frame
    rows.ws.close()


def test_log_level_selector_sends_set_level_and_log_rows_carry_their_level(inspector_factory):
    inspector = inspector_factory([], "--demo")
    wait_handshake(inspector)
    _, _, body = inspector.request("GET", "/")
    assert 'hx-post="/server/log-level"' in body.decode()
    status, _, _ = inspector.post("/server/log-level", {"level": "debug"})
    assert status == 200
    wait_for(lambda: any(r.get("kind") == "message" and r["msg"].get("method") == "logging/setLevel"
                         and r["msg"]["params"] == {"level": "debug"} for r in records_in(inspector.record)), 5,
             message="logging/setLevel sent")
    assert inspector.post("/server/log-level", {"level": "loud"})[0] == 422
    inspector.post("/tools/word_count/call", {"arguments": '{"text": "a b"}'})
    log = wait_for(lambda: next((r for r in records_in(inspector.record) if r.get("kind") == "message"
                                 and r["msg"].get("method") == "notifications/message"), None), 10,
                   message="a log notification from the demo server")
    _, _, rows = inspector.request("GET", f"/timeline/rows?before={log['seq'] + 1}&method=notifications/message")
    assert f'id="r-{log["seq"]}"' in rows.decode() and f"log-{log['msg']['params']['level']}" in rows.decode()


def test_protocol_warnings_reach_the_recording_the_row_and_the_problems_list(inspector_factory):
    inspector = inspector_factory(fixture_command("mistakes_server", "answers-notifications"))
    warning = wait_for(lambda: next((r for r in records_in(inspector.record) if r.get("event") == "warning"), None),
                       10, message="a warning event")
    assert warning["detail"]["rule"] == "answered-notification"
    offending = next(r for r in read_records(inspector.record) if r.get("seq") == warning["detail"]["seq"])
    assert offending["kind"] == "message" and offending["dir"] == "from_server" and offending["msg"].get("id") is None
    _, _, body = inspector.request("GET", "/")
    page = body.decode()
    assert "1 problem" in page and f'href="#r-{offending["seq"]}"' in page
    _, _, rows = inspector.request("GET", f"/timeline/rows?before={offending['seq'] + 1}")
    assert "⚠ problem" in rows.decode()


def test_no_protocol_warnings_on_the_demo_and_advice_in_the_tools_panel(inspector_factory):
    demo = inspector_factory([], "--demo")
    wait_handshake(demo)
    status, _, body = demo.post("/tools/word_count/call", {"arguments": '{"text": "a b"}'})
    assert status == 200, body[:300]
    wait_for(lambda: any(r.get("kind") == "message" and "content" in (r["msg"].get("result") or {})
                         for r in records_in(demo.record)), 60, message="the demo's answer")
    # The demo's warnings would come from checking its records (the silence rule needs 60 s of it): starting the
    # second inspector below gives that thread far more than the few ms it needs, instead of a sleep.
    poor = inspector_factory(fixture_command("mistakes_server", "poor-description"))
    wait_handshake(poor)
    page = poor.request("GET", "/")[2].decode()
    assert "Description review" in page
    detail = poor.request("GET", "/tools/count_words")[2].decode()
    assert "duplicate-name" in detail and "short-description" in detail
    assert not any(r.get("event") == "warning" for r in records_in(demo.record))
    assert "Description review" not in demo.request("GET", "/")[2].decode()


@pytest.mark.parametrize("mode", ["answers-notifications", "prints-stdout", "never-flush", "mismatched-ids",
                                  "bad-content", "undeclared-capability"])
def test_each_mistake_is_named_on_its_row_in_the_page(inspector_factory, mode):
    from test_check import MISTAKES

    rule, on_row = MISTAKES[mode]
    inspector = inspector_factory(fixture_command("mistakes_server", mode), "--timeout", "1")
    if mode == "bad-content":  # its mistake shows in a tool result
        wait_for(lambda: any(r.get("event") == "handshake" for r in records_in(inspector.record)), 10,
                 message="handshake")
        first_tool = wait_for(lambda: next((t["name"] for r in records_in(inspector.record) if r.get("kind") == "message"
                                            for t in (r["msg"].get("result") or {}).get("tools", [])), None), 10,
                              message="a tool")
        inspector.post(f"/tools/{first_tool}/call", {"arguments": "{}"})
    warning = wait_for(lambda: next((r for r in records_in(inspector.record) if r.get("event") == "warning"), None),
                       15, message=f"the {rule} warning")
    assert warning["detail"]["rule"] == rule
    assert on_row(next(r for r in read_records(inspector.record) if r.get("seq") == warning["detail"]["seq"]))
    # A negative wait that stays: the subprocess gives no sign that its checker has ticked. The checker's timed
    # rules run once a second (problems.TICK_SECONDS), so 1.2 s is one tick after the first warning, the shortest
    # wait in which a repeated or second warning (e.g. the silence rule at --timeout 1) would show.
    time.sleep(1.2)
    # Only this mistake is named (a server that mangles ids does it to the era probe and to initialize alike).
    assert {r["detail"]["rule"] for r in records_in(inspector.record) if r.get("event") == "warning"} == {rule}
    _, _, rows = inspector.request("GET", f"/timeline/rows?before={warning['detail']['seq'] + 1}")
    assert "⚠ problem" in rows.decode()


def test_large_form_arguments_get_through_intact(inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "ok"))
    wait_handshake(inspector)
    text = "ä" + "x" * (3 * 1024 * 1024) + "ü"
    status, _, _ = inspector.post("/tools/echo/call", {"mode": "form", "action": "call", "f:/text": text})
    assert status == 200
    sent = wait_for(lambda: next((r["msg"]["params"]["arguments"] for r in records_in(inspector.record)
                                  if r.get("kind") == "message" and r["msg"].get("method") == "tools/call"), None),
                    10, message="the call was sent")
    assert sent == {"text": text}


def test_a_pending_calls_long_poll_answers_each_change_not_only_the_end(inspector_factory):
    """The page long-polls a pending call with the version it shows: progress answers the poll at once (still
    pending, with the next poll), so a stale "pending" can never stay on the page until the call ends."""
    inspector = inspector_factory(fixture_command("fake_server", "ok"))
    wait_handshake(inspector)
    wait_for(lambda: inspector.post("/tools/slow/call", {"arguments": '{"seconds": 8}'})[0] == 200, 10,
             message="the slow tool listed")
    status, _, body = inspector.request("GET", "/calls/1?wait=20&v=0")
    html = body.decode()
    assert status == 200 and "state-pending" in html, html
    version = int(re.search(r'data-poll="/calls/1\?wait=25&amp;v=(\d+)"', html).group(1))
    assert version > 0
    _, _, again = inspector.request("GET", f"/calls/1?wait=20&v={version}")
    assert "state-pending" in again.decode()
    assert int(re.search(r"v=(\d+)", again.decode()).group(1)) > version


def _stuck_on_a_server_that_stopped_reading(inspector_factory) -> tuple:
    """An inspector whose server stopped reading after tools/list, with a 1 MB call and a small one sent to it.

    Each POST answers (within the request's 10 s timeout) although neither can reach the server's stdin."""
    inspector = inspector_factory(fixture_command("fake_server", "noread", "tools/list"))
    wait_handshake(inspector)
    server = [r["detail"]["pid"] for r in records_in(inspector.record) if r.get("event") == "spawn"][-1]
    call_tool(inspector, "echo", json.dumps({"text": "x" * (1024 * 1024)}))
    call_tool(inspector, "echo", '{"text": "small"}')
    sent = [r for r in records_in(inspector.record) if r.get("kind") == "message" and
            r["msg"].get("method") == "tools/call"]
    assert len(sent) == 2, "both calls are recorded (recorded before written)"
    return inspector, server


def test_stop_ends_a_server_that_stopped_reading_stdin(inspector_factory):
    """Security row 24: Stop closes stdin without waiting for the blocked write, then the ladder (2 s, SIGTERM)."""
    inspector, server = _stuck_on_a_server_that_stopped_reading(inspector_factory)
    assert process_group_alive(server)
    status, _, _ = inspector.post("/server/stop")
    assert status == 200
    wait_for(lambda: not process_group_alive(server), 2.0 + 1.0 + 2.0, message="the server group ended")
    wait_for(lambda: any(r.get("event") == "exit" for r in records_in(inspector.record)), 5, message="exit row")


def test_sigterm_ends_an_inspector_whose_server_stopped_reading(inspector_factory):
    """Security row 24: SIGTERM ends the inspector and its server group, and the recording ends with session-end."""
    inspector, server = _stuck_on_a_server_that_stopped_reading(inspector_factory)
    code = inspector.stop(signal.SIGTERM, timeout=10)
    assert code == 0, inspector.stderr_text()
    assert not process_group_alive(server)
    records = read_records(inspector.record)
    assert records[-1]["event"] == "session-end"
