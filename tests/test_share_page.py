"""Recordings from the page: copy as command, raw lines, export, open and replay an uploaded recording.

The page is built in-process (page_factory); the fixture servers and the opened viewer are real processes."""

from __future__ import annotations

import base64
import json
import re
import stat
import tempfile
import urllib.parse
import uuid
from pathlib import Path

from conftest import fixture_command, read_records, records_in, wait_for, wait_tools_listed


def wait_tools(inspector):
    wait_tools_listed(inspector)


def multipart(inspector, path: str, filename: str, content: bytes):
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"recording\"; filename=\"{filename}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    return inspector.request("POST", path, body=body, headers={
        "HX-Request": "true", "Origin": inspector.origin, "Content-Type": f"multipart/form-data; boundary={boundary}"})


def test_copy_as_command_reproduces_a_request(page_factory):
    inspector = page_factory(fixture_command("raw_server"))
    wait_tools(inspector)
    inspector.post("/tools/add/call", {"arguments": '{"a": 1, "b": 2}'})
    seq = wait_for(lambda: next((r["seq"] for r in records_in(inspector.record) if r.get("kind") == "message"
                                 and r["msg"].get("method") == "tools/call"), None), 10, message="call recorded")
    status, headers, body = inspector.request("GET", f"/records/{seq}/command")
    line = body.decode().strip()
    assert status == 200 and headers["content-type"].startswith("text/plain")
    assert line.startswith("mcp-inspect call tools/call --tool add --args ")
    assert "raw_server.py" in line and '"a":1' in line.replace(" ", "")
    assert inspector.request("GET", "/records/1/command")[0] == 404  # the spawn event is not a request


def test_raw_lines_are_sent_exactly_and_marked_hand_made(page_factory, tmp_path):
    log = tmp_path / "fake.log"
    inspector = page_factory(fixture_command("fake_server", "ok"), "-e", f"FAKE_LOG={log}")
    wait_tools(inspector)
    for line in ("this is not json", '{"jsonrpc": "2.0", "id": "hand-1", "method": "ping"}'):
        status, _, body = inspector.post("/raw", {"line": line})
        assert status == 200 and "hand-made" in body.decode()
    wait_for(lambda: log.exists() and "hand-1" in log.read_text(), 10, message="raw lines reached the server")
    assert "this is not json" in log.read_text()
    records = read_records(inspector.record)
    invalid = next(r for r in records if r["kind"] == "invalid" and r["dir"] == "to_server")
    assert invalid["raw"] == "this is not json" and invalid["origin"] == "user"
    ping = next(r for r in records if r["kind"] == "message" and r["msg"].get("id") == "hand-1" and r["dir"] == "to_server")
    assert ping["origin"] == "user"
    wait_for(lambda: any(r.get("kind") == "message" and r["dir"] == "from_server" and r["msg"].get("id") == "hand-1"
                         for r in records_in(inspector.record)), 10, message="the server answered the raw ping")
    _, _, page = inspector.request("GET", "/timeline/rows?before=100000")
    assert "hand-made" in page.decode()


def test_export_masks_secrets_and_the_page_token(page_factory):
    secret = f"S3CR3T-{uuid.uuid4()}"
    inspector = page_factory(fixture_command("fake_server", "ok"), "-e", f"API_KEY={secret}")
    wait_tools(inspector)
    inspector.post("/tools/echo/call", {"arguments": json.dumps({"text": f"Bearer {secret} and {inspector.token}"})})
    # The server got both and echoed them; the live recording already holds them masked (tests/test_secrets.py).
    wait_for(lambda: sum(1 for r in records_in(inspector.record) if "Bearer [REDACTED] and [REDACTED]" in json.dumps(r))
             >= 2, 10, message="the secret went through the server")
    status, headers, body = inspector.request("GET", "/export")
    assert status == 200 and headers["content-disposition"].startswith("attachment")
    text = body.decode()
    for form in (secret, base64.b64encode(secret.encode()).decode(), urllib.parse.quote(secret), inspector.token):
        assert form not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["kind"] == "header" and lines[0]["env"] == {"API_KEY": "[REDACTED]"}
    assert len(lines) - 1 == len(read_records(inspector.record)) - 1 or len(lines) > 5
    # A selection of rows.
    _, _, body = inspector.request("GET", "/export?seq=1-3")
    assert [r["seq"] for r in map(json.loads, body.decode().splitlines()[1:])] == [1, 2, 3]
    assert inspector.request("GET", "/export?seq=x")[0] == 400


def test_export_offers_the_html_and_markdown_reports_masked_like_the_recording(page_factory):
    from test_report_html import unpacked

    # Under a plain name the recorder cannot know it is a secret; the reports' scan of key shapes masks it.
    leaked = "sk-proj-" + uuid.uuid4().hex + "Qq1"
    inspector = page_factory(fixture_command("fake_server", "ok"))
    wait_tools(inspector)
    inspector.post("/tools/echo/call", {"arguments": json.dumps({"text": f"key {leaked}, page {inspector.token}"})})
    answer = wait_for(lambda: next((r["seq"] for r in records_in(inspector.record) if r.get("kind") == "message"
                                    and leaked in json.dumps(r.get("msg"))
                                    and "result" in r["msg"]), None), 30, message="the echo answered")
    page = inspector.request("GET", "/")[2].decode()
    assert all(f'<option value="{kind}"' in page for kind in ("jsonl", "html", "md"))
    status, headers, body = inspector.request("GET", "/export?format=html")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert re.fullmatch(r'attachment; filename=".+-report\.html"', headers["content-disposition"])
    html = body.decode()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    data = unpacked(html)
    assert '"method":"tools/call"' in data.replace(" ", "") and "[REDACTED]" in data
    status, headers, body = inspector.request("GET", f"/export?format=md&seq={answer - 1}-{answer}")
    assert status == 200 and headers["content-type"].startswith("text/markdown")
    assert headers["content-disposition"].endswith('-report.md"')
    markdown = body.decode()
    assert "<details>" in markdown and "tools/call" in markdown and "</details>" in markdown
    for text in (html, data, markdown):
        for form in (leaked, base64.b64encode(leaked.encode()).decode(), inspector.token):
            assert form not in text
    assert inspector.request("GET", "/export?format=pdf")[0] == 400


def test_open_an_uploaded_recording_in_a_viewer(page_factory):
    first = page_factory(fixture_command("raw_server"))
    wait_tools(first)
    content = first.record.read_bytes()
    inspector = page_factory(fixture_command("fake_server", "ok"))
    status, _, body = multipart(inspector, "/recordings/open", "../../evil name.jsonl", content)
    assert status == 200, body
    url = re.search(r'href="(http://127\.0\.0\.1:\d+/\?token=[^"]+)"', body.decode()).group(1)
    assert url != inspector.url
    import urllib.request
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    page = opener.open(url, timeout=10).read().decode()
    assert "read-only" in page and "echo" in page
    status, _, body = multipart(inspector, "/recordings/open", "junk.jsonl", b'{"kind":"header","format":"x"}\n')
    assert status == 422 and "not an mcp-inspect recording" in body.decode()


def test_replay_from_the_page_restarts_the_server_and_reports_each_step(page_factory):
    source = page_factory(fixture_command("raw_server"))
    wait_tools(source)
    source.post("/tools/add/call", {"arguments": '{"a": 2, "b": 5}'})
    wait_for(lambda: "7" in source.record.read_text(), 10, message="call answered")
    source.stop()
    inspector = page_factory(fixture_command("raw_server"))
    wait_tools(inspector)
    status, _, body = multipart(inspector, "/recordings/replay", "session.jsonl", source.record.read_bytes())
    assert status == 200 and "Replay of" in body.decode()
    report = wait_for(lambda: "all the same" in (b := inspector.request("GET", "/recordings/replay")[2].decode())
                      and b, 20, message="replay done")
    assert "tools/call" in report and "status-different" not in report
    # The report is done before the page's own server is started again: wait for that start.
    wait_for(lambda: [r.get("event") for r in read_records(inspector.record)].count("spawn") >= 3, 20,
             message="the server stopped, replayed against, and started again")



def test_a_replay_from_the_page_that_could_not_run_says_so_not_differences_found(page_factory):
    source = page_factory(fixture_command("raw_server"))
    wait_tools(source)
    source.stop()
    # This page's server dies at start: the replay gets no answer to initialize, which is no difference.
    inspector = page_factory(fixture_command("fake_server", "exit-at-start"))
    status, _, _ = multipart(inspector, "/recordings/replay", "session.jsonl", source.record.read_bytes())
    assert status == 200
    report = wait_for(lambda: "could not run" in (b := inspector.request("GET", "/recordings/replay")[2].decode())
                      and b, 60, message="the replay ended as could not run")
    assert "differences found" not in report and "initialize" in report


def test_a_raw_request_with_a_pending_calls_id_is_refused_and_the_call_keeps_its_answer(page_factory, tmp_path):
    # Security row 21: the hand-made line used to take over the call (its answer finished the call as "RAW").
    log = tmp_path / "fake.log"
    inspector = page_factory(fixture_command("fake_server", "ok"), "-e", f"FAKE_LOG={log}")
    wait_tools(inspector)
    status, _, _ = inspector.post("/tools/slow/call", {"arguments": '{"seconds": 6}'})
    assert status == 200
    call = next(c for c in inspector.services.calls.calls.values() if c.tool == "slow")
    wait_for(lambda: call.request_id is not None, 5, message="the call is sent")
    raw = json.dumps({"jsonrpc": "2.0", "id": call.request_id, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"text": "RAW"}}})
    assert call.state == "pending", "the refusal is only tested while the call waits (6 s)"
    status, _, body = inspector.post("/raw", {"line": raw})
    page = body.decode()
    assert status == 409 and "problem" in page and "hand-made" not in page
    assert f"Not sent: id {call.request_id} is taken by a tools/call request" in page
    assert call.done.wait(30) and call.state == "result"
    assert call.result["content"][0]["text"].startswith("slept"), call.result
    assert not any(r.get("origin") == "user" for r in read_records(inspector.record))
    assert "RAW" not in log.read_text(), "the refused line never reached the server"
    # Another id is sent as usual, and its answer goes to no call of ours.
    status, _, body = inspector.post("/raw", {"line": raw.replace(f'"id": {call.request_id}', '"id": "mine"')})
    assert status == 200 and "hand-made" in body.decode()
    wait_for(lambda: any(r.get("kind") == "message" and r["dir"] == "from_server" and r["msg"].get("id") == "mine"
                         for r in records_in(inspector.record)), 10, message="the raw call answered")


UPLOAD_NAMES = ["../x.jsonl", "../../x.jsonl", "%2e%2e%2fx.jsonl", "/etc/passwd", "..\\x.jsonl", "C:\\x.jsonl",
                "a\x00b.jsonl", "..", ".", "/", "sub/dir/x.jsonl"]


def files_under(folder):
    return {p for p in folder.rglob("*") if p.is_file()}


def test_an_uploaded_recording_is_saved_privately_under_a_plain_name(page_factory, tmp_path, monkeypatch):
    """Security row 7: whatever name the browser sends, the upload lands in a new 0700 folder of its own, as one
    0600 file with a plain base name, and nowhere else. The viewer that would open it is replaced by a probe that
    looks at the saved file at that moment (the viewer itself is test_open_an_uploaded_recording_in_a_viewer's)."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    inspector = page_factory(fixture_command("fake_server", "ok"), "--no-watch")
    saved: list[tuple] = []

    def probe(path):
        path = Path(path)
        saved.append((path, stat.S_IMODE(path.stat().st_mode), stat.S_IMODE(path.parent.stat().st_mode),
                      path.read_bytes()))
        return "http://127.0.0.1:1/?token=probe"
    monkeypatch.setattr(inspector.services.sharing, "start_viewer", probe)
    before = files_under(tmp_path)
    for number, name in enumerate(UPLOAD_NAMES):
        content = HEAD_OF_A_RECORDING + f"upload {number}\n".encode()
        count = len(saved)
        status, _, body = multipart(inspector, "/recordings/open", name, content)
        if name in (".", ".."):  # the folder itself: O_EXCL refuses it, nothing is written
            assert status == 422 and len(saved) == count, (name, body)
            continue
        assert status == 200, (name, body)
        path, mode, folder_mode, data = saved[-1]
        assert data == content, name
        assert path.parent.parent == temp and path.parent.name.startswith("mcp-inspect-upload-"), (name, path)
        assert re.fullmatch(r"[A-Za-z0-9._-]+", path.name) and path.name not in (".", ".."), (name, path)
        assert (mode, folder_mode) == (0o600, 0o700), (name, oct(mode), oct(folder_mode))
    assert len({path.parent for path, *_ in saved}) == len(saved) == len(UPLOAD_NAMES) - 2  # a new folder each
    new = files_under(tmp_path) - before - {path for path, *_ in saved}
    assert {p for p in new if not p.name.startswith("session-")} == set(), new  # only the page's own recording
    assert not (tmp_path / "x.jsonl").exists() and not (temp / "x.jsonl").exists()


HEAD_OF_A_RECORDING = (json.dumps({"kind": "header", "format": "mcp-inspect-recording", "version": 1,
                                   "target": {"command": ["s"]}}) + "\n").encode()
