"""The page's modules in-process: each view Blueprint, the regions table, the websocket's first frame, and the
composition root. The app is built by runner.build + create_app with the demo server as a real child process; no
port and no mcp-inspect process, so each test takes milliseconds once the server is up."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest
from simple_websocket import ConnectionClosed

from conftest import build_in_process, read_records, wait_for
from inspector.session.view import CallsView, SessionView


def running(page) -> bool:
    return page.session.server.state == "running" and bool(page.session.server.tools)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """One demo page for the read-only tests of this module."""
    page = build_in_process(tmp_path_factory.mktemp("views"), [], "--demo", "--no-watch")
    wait_for(lambda: running(page), 15, message="the demo server listed its tools")
    yield page
    page.stop()


@pytest.fixture
def fresh(page_factory):
    """A demo page of its own, for a test that changes the server's state."""
    page = page_factory([], "--demo", "--no-watch")
    wait_for(lambda: running(page), 15, message="the demo server listed its tools")
    return page


def call_word_count(page, text: str = "a b c") -> int:
    status, _, body = page.post("/tools/word_count/call", {"mode": "json", "arguments": json.dumps({"text": text})})
    assert status == 200, body
    return int(re.search(rb'id="call-(\d+)"', body).group(1))


# -- the composition root -------------------------------------------------------------------------------------------

def test_the_inspector_holds_every_service_and_the_app_holds_the_inspector(demo):
    services = demo.services
    assert demo.app.extensions["inspector"] is services
    for name in ("store", "session", "calls", "tasks", "panels", "restarter", "problems", "asks", "sharing",
                 "targeting"):
        assert getattr(services, name) is not None, name
    assert services.watcher is None  # --no-watch
    assert not services.readonly and services.live is services.session
    assert services.port == demo.port


@pytest.mark.parametrize("which", ["live", "recorded"])
def test_both_sessions_offer_the_whole_session_view(demo, tmp_path, which):
    services = demo.services if which == "live" else build_in_process(tmp_path, [], view=demo.record).services
    names = [n for n in SessionView.__annotations__] + ["http_transport", "tool"]
    assert [n for n in names if not hasattr(services.session, n)] == []
    assert [n for n in CallsView.__annotations__ if not hasattr(services.calls, n)] == []


# -- timeline ------------------------------------------------------------------------------------------------------

def test_index_rows_and_record_detail(demo):
    status, _, body = demo.request("GET", "/")
    assert status == 200 and b"server state-running" in body and b"word_count" in body
    status, _, body = demo.request("GET", "/timeline/rows?before=1000000")
    assert status == 200 and b'id="r-1"' in body
    status, _, body = demo.request("GET", "/records/1")
    assert status == 200 and b"spawn" in body
    status, headers, body = demo.request("GET", "/records/2.json")
    assert status == 200 and headers["content-type"] == "application/json" and json.loads(body)["jsonrpc"] == "2.0"
    assert demo.request("GET", "/records/999999")[0] == 404
    assert demo.request("GET", "/records/999999.json")[0] == 404


# -- tools and calls -----------------------------------------------------------------------------------------------

def test_tool_detail_toggle_and_draft(demo):
    status, _, body = demo.request("GET", "/tools/word_count")
    assert status == 200 and b"word_count" in body
    status, _, body = demo.post("/tools/word_count/form", {"mode": "form", "text": "hello"})
    assert status == 200 and b"<textarea" in body  # the JSON editor, with what the form held
    status, _, _ = demo.post("/tools/word_count/draft", {"mode": "json", "arguments": '{"text": "kept"}'})
    assert status == 204 and json.loads(demo.services.calls.last_arguments["word_count"]) == {"text": "kept"}
    assert demo.request("GET", "/tools/word_count/call")[0] == 405
    assert demo.request("GET", "/tools/no-such-tool")[0] == 404


def test_a_call_long_polls_to_its_result_with_the_history_beside_it(demo):
    call_id = call_word_count(demo, "one two")
    status, _, body = demo.request("GET", f"/calls/{call_id}?wait=10")
    html = body.decode()
    assert status == 200 and f'id="call-{call_id}"' in html and "state-pending" not in html
    assert 'hx-target="#history-' in html, "the finished call's history is pushed beside it"
    status, _, body = demo.post(f"/calls/{call_id}/rerun")
    assert status == 200 and int(re.search(rb'id="call-(\d+)"', body).group(1)) > call_id
    assert demo.request("GET", "/calls/999999")[0] == 404
    assert demo.post("/calls/999999/cancel")[0] == 404


# -- server controls -----------------------------------------------------------------------------------------------

def test_server_controls_answer_with_the_panel(demo):
    status, _, body = demo.post("/server/log-level", {"level": "debug"})
    assert status == 200 and b'id="server-panel"' in body and demo.session.server.log_level == "debug"
    assert demo.post("/server/log-level", {"level": "loud"})[0] == 422
    assert demo.post("/server/headers", {"headers": "X-A: b"})[0] == 400  # not an HTTP server
    assert demo.post("/server/roots", {"roots": "not a uri"})[0] == 422
    status, _, _ = demo.post("/server/advertise", {"roots": "on"})
    assert status == 200 and demo.session.advertise["roots"] is True


def test_stop_answers_once_the_state_moved_and_start_brings_it_back(fresh):
    status, _, body = fresh.post("/server/stop")
    assert status == 200 and re.search(rb"server state-(stopping|stopped)", body)
    wait_for(lambda: fresh.session.server.state == "stopped", 15, message="the server stopped")
    status, _, _ = fresh.post("/server/start")
    assert status == 200
    wait_for(lambda: running(fresh), 15, message="the server running again")
    events = [r["event"] for r in read_records(fresh.record) if r["kind"] == "event"]
    assert events.count("spawn") == 2


def test_restart_on_crash_switch(fresh):
    status, _, _ = fresh.post("/server/restart-on-crash", {"enabled": "on"})
    assert status == 200 and fresh.services.restarter.restart_on_crash is True


# -- tasks, share, config ------------------------------------------------------------------------------------------

def test_tasks_panel_and_unknown_task(demo):
    status, _, body = demo.request("GET", "/tasks")
    assert status == 200 and b'id="tasks-panel"' in body
    assert demo.post("/tasks/99/get")[0] == 404
    assert demo.request("GET", "/tasks/calls/99")[0] == 404


def test_share_command_export_and_no_replay_yet(demo):
    request_seq = next(r["seq"] for r in read_records(demo.record)
                       if r["kind"] == "message" and r["dir"] == "to_server" and "method" in r["msg"])
    status, _, body = demo.request("GET", f"/records/{request_seq}/command")
    assert status == 200 and body.startswith(b"mcp-inspect call ")
    status, headers, body = demo.request("GET", "/export?seq=1-2")
    assert status == 200 and headers["x-redacted"].isdigit() and demo.token.encode() not in body
    status, _, body = demo.request("GET", "/recordings/replay")
    assert status == 200
    assert demo.post("/raw", {"line": "  "})[0] == 422


def test_config_snippet_for_the_command(demo):
    status, _, body = demo.request("GET", "/config/snippet?flavour=claude")
    assert status == 200 and "mcpServers" in body.decode()
    assert demo.request("GET", "/config/snippet?flavour=nope")[0] == 400
    assert demo.post("/config/start", {"name": "nope"})[0] == 404


def test_a_viewed_recording_refuses_every_action(demo, tmp_path):
    viewer = build_in_process(tmp_path, [], view=demo.record)
    try:
        assert viewer.services.readonly
        status, _, body = viewer.request("GET", "/")
        assert status == 200 and b"word_count" in body
        for path in ("/server/stop", "/tools/word_count/call", "/config/start", "/raw"):
            assert viewer.post(path)[0] == 403, path
    finally:
        viewer.stop()


# -- regions and the websocket ----------------------------------------------------------------------------------

def test_regions_render_each_signal_into_its_targets(demo):
    from inspector.session import changes
    from inspector.web import regions
    from inspector.web.present import slug

    call_id = call_word_count(demo, "x")
    wait_for(lambda: demo.services.calls.calls[call_id].state != "pending", 10, message="the call answered")
    with demo.app.test_request_context():
        targets = lambda change: re.findall(r'<hx-partial hx-target="([^"]+)"', "".join(regions.pushes(change)))  # noqa: E731
        assert targets(changes.SERVER) == ["#server-panel", "#resources-list", "#resource-templates-list",
                                           "#prompts-list", "#tasks-panel"]
        assert targets(changes.TOOLS) == ["#tools-list"]
        assert targets(changes.call(call_id)) == [f"#call-{call_id}", f"#history-{slug('word_count')}"]
        assert targets(changes.call(999999)) == [] and targets(changes.task_call(999999)) == []
        assert targets(changes.REPLAY) == ["#replay-report"]


class FakeSocket:
    """The websocket's two ends as LiveConnection uses them: frames sent are kept; the browser leaves after one."""

    def __init__(self) -> None:
        self.frames: list[str] = []
        self.first = threading.Event()

    def send(self, text: str) -> None:
        self.frames.append(text)
        self.first.set()

    def receive(self):
        self.first.wait(10)
        raise ConnectionClosed()


def test_the_first_frame_replaces_the_timeline_and_renders_the_page_regions(demo):
    from inspector.web.live import LiveConnection

    ws = FakeSocket()
    with demo.app.test_request_context():
        LiveConnection(ws, demo.services.store).run()
    first = ws.frames[0]
    assert 'hx-target="#timeline-rows"' in first and 'id="r-1"' in first
    for target in ("#server-panel", "#tools-list", "#watch-status", "#problems", "#asks-panel"):
        assert f'hx-target="{target}"' in first, target


def test_templates_folder_is_found():
    from inspector.web.app import web_root

    assert (web_root() / "templates" / "index.html").is_file() and Path(web_root() / "static").is_dir()
