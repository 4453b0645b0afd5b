"""Viewers started from the page, and the recordings uploaded to them (security findings 9 and 10; rows 7, 25).

A viewer runs like a server: its own process group with the lifeline, so it ends with the inspector, even on
kill -9. An uploaded recording may hold secrets: its folder is deleted as soon as the viewer has the file open (or
the replay has loaded it, or the upload failed), so nothing is left behind whatever ends how. Real inspector
processes on real ports, real viewers; each test's TMPDIR is its own, so it sees only its own upload folders."""

from __future__ import annotations

import json
import re
import signal
import socket
import urllib.request

from conftest import fixture_command, wait_for, wait_tools_listed
from test_share_page import multipart

HEADER = {"kind": "header", "format": "mcp-inspect-recording", "version": 1, "created": "2026-01-01T00:00:00Z",
          "inspector": "0", "target": {"command": ["true"]}, "protocol": "auto", "env": {}}
RECORDING = (json.dumps(HEADER) + "\n" + json.dumps({"seq": 1, "t": 1.0, "kind": "stderr", "text": "uploaded-marker"})
             + "\n").encode()


def start(inspector_factory, tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    inspector = inspector_factory(fixture_command("fake_server", "ok"), env={"TMPDIR": str(temp)})
    return inspector, temp


def open_viewer(inspector) -> str:
    status, _, body = multipart(inspector, "/recordings/open", "shared.jsonl", RECORDING)
    assert status == 200, body
    return re.search(r'href="(http://127\.0\.0\.1:\d+/\?token=[^"]+)"', body.decode()).group(1)


def listening(url: str) -> bool:
    port = int(re.match(r"http://127\.0\.0\.1:(\d+)/", url).group(1))
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return True
    except OSError:
        return False


def uploads(temp) -> list:
    return sorted(p.name for p in temp.glob("mcp-inspect-upload-*"))


def test_a_viewer_started_from_the_page_ends_with_the_inspector_even_on_kill_9(inspector_factory, tmp_path):
    inspector, _ = start(inspector_factory, tmp_path)
    url = open_viewer(inspector)
    assert listening(url)
    inspector.proc.send_signal(signal.SIGKILL)
    inspector.proc.wait(30)
    # The lifeline: SIGTERM to the viewer's group at once, SIGKILL a second later.
    wait_for(lambda: not listening(url), 30, message="the viewer gone after the inspector's kill -9")


def test_viewers_end_when_the_inspector_stops(inspector_factory, tmp_path):
    inspector, _ = start(inspector_factory, tmp_path)
    urls = [open_viewer(inspector), open_viewer(inspector)]
    assert inspector.stop(signal.SIGTERM) == 0
    wait_for(lambda: not any(listening(url) for url in urls), 30, message="both viewers gone")


def test_an_uploaded_recording_is_deleted_once_its_viewer_or_replay_has_it(inspector_factory, tmp_path):
    inspector, temp = start(inspector_factory, tmp_path)
    wait_tools_listed(inspector)
    url = open_viewer(inspector)
    assert uploads(temp) == [], "the viewer has the file open: the upload is deleted at once"
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    page = opener.open(url, timeout=10).read().decode()
    assert "read-only" in page
    rows = opener.open(url.split("/?")[0] + "/timeline/rows?before=100000", timeout=10).read().decode()
    assert "uploaded-marker" in rows, "the viewer still reads the deleted file through its descriptor"
    # A replay loads the file at once; a file that is no recording fails; neither leaves its upload behind.
    status, _, _ = multipart(inspector, "/recordings/replay", "shared.jsonl", RECORDING)
    assert status in (200, 409) and uploads(temp) == []
    status, _, _ = multipart(inspector, "/recordings/open", "junk.jsonl", b'{"kind":"header","format":"x"}\n')
    assert status == 422 and uploads(temp) == []
    status, _, _ = multipart(inspector, "/recordings/replay", "junk.jsonl", b'{"kind":"header","format":"x"}\n')
    assert status == 422 and uploads(temp) == []
