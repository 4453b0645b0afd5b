"""HTTP sessions recover (issue 15, item 5): a server that restarts, refuses connections or drops the modern era's
listen stream, and a 401 at the first connect, against real servers on loopback (server-everything from npm and the
official SDK fixture). The page is built in-process; the servers are real child processes on real ports.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlparse

from conftest import (
    free_port, needs_everything, start_everything, start_http_fixture, stop_process_group, wait_for, wait_tools_listed,
)
from test_http_page import call_result, events, messages


@needs_everything
def test_server_everything_restarted_on_the_same_port_gets_a_fresh_handshake(page_factory, tmp_path):
    """The TypeScript SDK answers a session it does not know with HTTP 400 "No valid session ID" (not 404)."""
    proc, url = start_everything("streamableHttp", tmp_path / "a.log")
    try:
        inspector = page_factory([], "--url", url)
        wait_tools_listed(inspector, 60)
        stop_process_group(proc)
        proc, _ = start_everything("streamableHttp", tmp_path / "b.log", port=urlparse(url).port)
        inspector.post("/tools/echo/call", {"arguments": json.dumps({"message": "hi"})})
        wait_for(lambda: len(events(inspector, "handshake")) == 2, 60, message="a second handshake")
        errors = [e["detail"] for e in events(inspector, "transport-error")]
        assert any(e.get("kind") == "session-expired" and e.get("status") == 400 for e in errors), errors
        assert any("session expired" in e["detail"]["reason"] for e in events(inspector, "restart"))
        wait_for(lambda: inspector.request("GET", "/tools/echo")[0] == 200, 60, message="echo listed again")
        answer = call_result(inspector, "echo", {"message": "again"})
        assert "again" in answer["result"]["content"][0]["text"]
    finally:
        stop_process_group(proc)


def test_a_401_at_the_first_connect_does_not_fix_the_era(page_factory, tmp_path):
    """A wrong token makes server/discover fail with 401: no evidence about the era. Once the header is fixed in
    the page ("Save and reconnect"), the era is probed again and found modern (the SDK v2 server speaks 2026-07-28)."""
    proc, port = start_http_fixture("http_sdk_server", "streamable-http", tmp_path / "s.log",
                                    args=("--token", "right-token"))
    try:
        inspector = page_factory([], "--url", f"http://127.0.0.1:{port}/mcp", "-H", "Authorization: Bearer wrong")
        wait_for(lambda: "era-legacy" in inspector.request("GET", "/")[2].decode(), 60,
                 message="the first start's era (handshake, after the 401)")
        assert any(e["detail"].get("kind") == "auth" for e in events(inspector, "transport-error"))
        status, _, body = inspector.post("/server/headers", {"headers": "Authorization: Bearer right-token"})
        assert status == 200, body
        wait_tools_listed(inspector, 60)
        handshakes = [e["detail"] for e in events(inspector, "handshake")]
        assert handshakes and handshakes[-1]["era"] == "modern", handshakes
        assert "era-modern" in inspector.request("GET", "/")[2].decode()
    finally:
        stop_process_group(proc)


@needs_everything
def test_the_server_panel_stops_saying_running_once_the_connection_is_refused(page_factory, tmp_path):
    proc, url = start_everything("streamableHttp", tmp_path / "a.log")
    try:
        inspector = page_factory([], "--url", url)
        wait_tools_listed(inspector, 60)
        assert "state-running" in server_panel(inspector)
        stop_process_group(proc)
        inspector.post("/tools/echo/call", {"arguments": json.dumps({"message": "anyone?"})})
        wait_for(lambda: "state-unreachable" in server_panel(inspector), 60, message="the panel says unreachable")
        panel = server_panel(inspector)
        assert "state-running" not in panel and "cannot be reached" in panel, panel
    finally:
        stop_process_group(proc)


def server_panel(inspector) -> str:
    body = inspector.request("GET", "/")[2].decode()
    start = body.index('<section id="server-panel"')
    return body[start:body.index("</section>", start)]


def test_a_dropped_listen_stream_is_reopened_after_the_server_restarts(page_factory, tmp_path):
    """Modern era (the SDK v2 fixture speaks 2026-07-28): the subscriptions/listen stream dies with the server; it
    is re-opened with a row saying so, and list changes flow again once the server is back."""
    proc, port = start_http_fixture("http_sdk_server", "streamable-http", tmp_path / "a.log")
    try:
        inspector = page_factory([], "--url", f"http://127.0.0.1:{port}/mcp")
        wait_tools_listed(inspector, 60)
        wait_for(lambda: len(listens(inspector)) == 1, 60, message="the listen request")
        stop_process_group(proc)
        wait_for(lambda: reopening_notes(inspector), 60, message="a row saying the listen stream is re-opened")
        # Counted from the drop, not from when the test sees the port again: under load the listener's own
        # re-open can reach the restarted server before start_http_fixture returns (seen once).
        dropped_at = max(r["seq"] for r in messages(inspector))
        proc, _ = start_http_fixture("http_sdk_server", "streamable-http", tmp_path / "b.log", port)
        wait_for(lambda: "state-running" in server_panel(inspector) and acknowledged_after(inspector, dropped_at), 60,
                 message="a listen re-opened against the restarted server, the panel running again")
        assert call_result(inspector, "announce", {})["result"]["content"][0]["text"] == "announced"
        wait_for(lambda: any(r["dir"] == "from_server" and r["msg"].get("method") == "notifications/tools/list_changed"
                             for r in messages(inspector)), 60, message="the list change on the re-opened stream")
    finally:
        stop_process_group(proc)


def listens(inspector) -> list[dict]:
    return [r for r in messages(inspector) if r["dir"] == "to_server" and r["msg"].get("method") == "subscriptions/listen"]


def acknowledged_after(inspector, seq: int) -> bool:
    """The restarted server took a re-opened listen: only a live server acknowledges one."""
    return any(r["seq"] > seq and r["dir"] == "from_server"
               and r["msg"].get("method") == "notifications/subscriptions/acknowledged" for r in messages(inspector))


def reopening_notes(inspector) -> list[str]:
    notes = [str(e["detail"].get("note", "")) for e in events(inspector, "transport")]
    return [note for note in notes if "subscriptions/listen" in note and "re-opening" in note]


def test_a_server_not_up_at_the_first_connect_gets_its_era_found_once_it_is(page_factory, tmp_path):
    """Connection refused at the first start says nothing about the era: Restart, once the server is up, probes
    again and finds the modern era."""
    port = free_port()
    inspector = page_factory([], "--url", f"http://127.0.0.1:{port}/mcp")
    wait_for(lambda: re.search(r"era-legacy|cannot be reached", server_panel(inspector)), 60,
             message="the first start given up (nothing listening)")
    proc, _ = start_http_fixture("http_sdk_server", "streamable-http", tmp_path / "s.log", port)
    try:
        status, _, body = inspector.post("/server/restart")
        assert status == 200, body
        wait_tools_listed(inspector, 60)
        handshakes = [e["detail"] for e in events(inspector, "handshake")]
        assert handshakes and handshakes[-1]["era"] == "modern", handshakes
    finally:
        stop_process_group(proc)
