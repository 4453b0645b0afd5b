"""`mcp-inspect export --format html`: one self-contained page, opened from disk by a real Chromium, offline.

A real session (the real inspector on a real port, a real server over pipes, a real restart) is exported through
the real CLI; the page must show it without any request but the file, without a CSP violation, with server text as
text, and with the `-e` secret nowhere (the data is compressed: it is checked unpacked too).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import subprocess
import urllib.parse
from pathlib import Path

import pytest

from conftest import PYTHON, ROOT, fixture_command, records_in, wait_for, wait_tools_listed

SECRET = "ghp_" + "Zq8Xw3Lm5Rt7Vy9Bn2Kd4Hf6Jp1Cs0Ga2Ue4Io"
NOTE = "ghp_" + "Nt4Rk8Wq2Zx6Cv0Bm3Lp7Hj1Gf5Ds9Ka2Yu6Te"
"""Inherited under a plain name: the recorder cannot know it is a secret, export's scan of token shapes does."""
PAYLOAD = "<img src=x onerror=alert(1)>"
CHILD_TIMEOUT = 90


def export_html(recording: Path, out: Path, *options: str, timeout: float = CHILD_TIMEOUT):
    """The real CLI, as a user runs it."""
    return subprocess.run([PYTHON, "-m", "inspector.cli", "export", str(recording), "--format", "html", "-o", str(out),
                           *options], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def unpacked(html: str) -> str:
    """The JSON the page carries, decompressed."""
    block = re.search(r'<script type="application/octet-stream" id="report-data">([^<]*)</script>', html).group(1)
    return gzip.decompress(base64.b64decode(block)).decode("utf-8")


def open_offline(browser, path: Path, timeout: float = CHILD_TIMEOUT, **context_options):
    """A page on file://path with the network off; every request, console error, CSP violation and dialog noted."""
    context = browser.new_context(offline=True, **context_options)
    page = context.new_page()
    page.requests, page.errors, page.dialogs = [], [], []
    file_url = path.as_uri()
    # The page's own CSP applies to this listener too only if it were inline; an init script is the browser's.
    page.add_init_script("window.__violations = [];"
                         "document.addEventListener('securitypolicyviolation', e => window.__violations.push("
                         "e.violatedDirective + ' ' + e.blockedURI));")

    def route(r):
        if r.request.url != file_url:
            page.requests.append(r.request.url)
            r.abort()
        else:
            r.continue_()

    page.route("**/*", route)
    page.on("request", lambda req: req.url != file_url and page.requests.append(req.url))
    page.on("console", lambda msg: msg.type in ("error", "warning") and page.errors.append(msg.text))
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(file_url)
    page.wait_for_selector("body[data-ready=true]", timeout=timeout * 1000)
    return context, page


def record_session(inspector_factory, tmp_path: Path) -> Path:
    """A real session: tools listed, one call whose answer leaks the secret, a restart that adds a tool."""
    starts = tmp_path / "starts"
    inspector = inspector_factory(fixture_command("report_server"), "-e", f"REPORT_SECRET={SECRET}",
                                  env={"REPORT_STARTS": str(starts), "REPORT_NOTE": NOTE})
    wait_tools_listed(inspector)
    status, _, body = inspector.request("POST", "/tools/leak/call", body=json.dumps({"arguments": {"word": "needle"}}),
                                        headers={"Content-Type": "application/json", "Origin": inspector.origin})
    assert status == 200, body[:300]
    wait_for(lambda: any("the key is" in json.dumps(r.get("msg")) for r in records_in(inspector.record)),
             timeout=CHILD_TIMEOUT, message="the tool's answer recorded")
    assert inspector.post("/server/restart")[0] == 200
    wait_for(lambda: any(r.get("event") == "diff" for r in records_in(inspector.record)), timeout=CHILD_TIMEOUT,
             message="the diff after the restart")
    inspector.stop()
    return inspector.record


def test_the_report_of_a_real_session_opens_offline_shows_everything_and_leaks_nothing(
        inspector_factory, browser, tmp_path):
    recording = record_session(inspector_factory, tmp_path)
    recorded = recording.read_text()
    assert SECRET not in recorded  # an -e value echoed by the server is masked as it is recorded (security row 27)
    assert NOTE in recorded  # the server leaked it, and only export's scan can tell: export must mask it
    out = tmp_path / "report.html"
    done = export_html(recording, out)
    assert done.returncode == 0, done.stderr
    assert "masked github-token" in done.stderr and SECRET not in done.stderr and NOTE not in done.stderr
    html = out.read_text(encoding="utf-8")
    data = unpacked(html)
    for text in (html, data):
        for secret in (SECRET, NOTE):
            for form in (secret, base64.b64encode(secret.encode()).decode(), urllib.parse.quote(secret), secret[4:20]):
                assert form not in text
    assert PAYLOAD in data and "<img" not in html  # the payload travels as data, never as markup
    assert oct(out.stat().st_mode & 0o777) == "0o600"

    # Chromium asks for no favicon.ico next to a file:// page: the file's access time shows a read.
    icon = tmp_path / "favicon.ico"
    icon.write_bytes(b"\0")
    os.utime(icon, (0, 10**9))
    context, page = open_offline(browser, out)
    try:
        assert page.locator("h1").inner_text() == "mcp-inspect report: report-server 1.2.3"
        facts = page.locator("dl.facts").inner_text()
        assert "legacy" in facts and "stdio" in facts and "report_server.py" in facts and "mcp-inspect 0." in facts
        assert "REPORT_SECRET (values never recorded)" in facts
        assert "masked github-token" in page.locator("details.masked").text_content()
        card = page.locator(".call").first
        assert "leak" in card.inner_text() and "needle" in card.inner_text() and "[REDACTED]" in card.inner_text()
        restarts = page.locator("details.restarts").inner_text()
        assert "restarting the server (restart button)" in restarts and "+ added: added" in restarts
        # the newest rows are in view
        last_seq = records_in(recording)[-1]["seq"]
        assert page.locator(f'.row[data-seq="{last_seq}"]').is_visible()

        # search for the description's payload: one row, it expands, the payload is text
        page.fill("input[name=q]", "onerror")
        wait_for(lambda: "showing" in page.locator(".filters .count").inner_text(), message="the search ran")
        rows = page.locator("#timeline .row")
        assert rows.count() == 2 and all("tools/list" in rows.nth(i).inner_text() for i in range(rows.count()))
        rows.last.locator(".summary").click()
        body = rows.last.locator(".row-body pre")
        body.wait_for()
        assert PAYLOAD in body.inner_text()
        assert page.locator("img").count() == 0
        # the request/response link goes to the request, clearing the search that hides it
        rows.last.locator(".record-actions .jump").click()
        target = page.locator(".row.target")
        assert "request" in target.inner_text() and "tools/list" in target.inner_text()
        assert "onerror" not in page.locator("input[name=q]").input_value()

        # a filter: only the stderr lines, which read as grouped blocks
        page.fill("input[name=q]", "")
        page.select_option("select[name=kind]", "stderr")
        wait_for(lambda: "showing" in page.locator(".filters .count").inner_text(), message="the kind filter ran")
        shown = page.locator("#timeline .row").all_inner_texts()
        lines = sum(1 for r in records_in(recording) if r["kind"] == "stderr")
        assert len(shown) == 1 and f"{lines} lines" in shown[0]  # the server's log, one block
        assert page.evaluate("window.__violations") == []
        assert page.errors == [] and page.requests == [] and page.dialogs == []
    finally:
        context.close()
    assert os.stat(icon).st_atime == 0


def write_big_recording(path: Path, messages: int) -> int:
    """A recording of `messages` tools/call requests and answers with stderr between them; returns the seq of the
    one stderr line that says "needle"."""
    lines = [json.dumps({"kind": "header", "format": "mcp-inspect-recording", "version": 1,
                         "created": "2026-11-30T10:00:00.000Z", "inspector": "0.1.0",
                         "target": {"transport": "stdio", "command": ["python", "big.py"], "cwd": "/tmp"},
                         "protocol": "auto", "env": {}})]
    seq, t, needle = 0, 1764496800.0, 0
    for n in range(messages // 2):
        digest = hashlib.sha256(str(n).encode()).hexdigest()
        seq += 1
        lines.append(json.dumps({"seq": seq, "t": t + n * 0.01, "kind": "message", "dir": "to_server", "msg": {
            "jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
            "params": {"name": "lookup", "arguments": {"key": digest[:16], "page": n}}}}))
        seq += 1
        lines.append(json.dumps({"seq": seq, "t": t + n * 0.01 + 0.004, "kind": "message", "dir": "from_server",
                                 "msg": {"jsonrpc": "2.0", "id": n + 1, "result": {"content": [
                                     {"type": "text", "text": f"value {digest} for page {n}"}]}}}))
        if n % 10 == 0:
            seq += 1
            needle = needle or (seq if n == messages // 4 else 0)
            word = "needle" if seq == needle else "looked up"
            lines.append(json.dumps({"seq": seq, "t": t + n * 0.01 + 0.005, "kind": "stderr",
                                     "text": f"INFO {word} {digest[:8]}"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return needle


# Export masks 100,000 records before the report is made (up to a minute and more on a loaded 2-core machine): generous
# bounds.
@pytest.mark.timeout(900)
def test_a_100k_message_report_is_small_and_opens_with_its_newest_rows_and_search(browser, tmp_path):
    recording = tmp_path / "big.jsonl"
    needle = write_big_recording(recording, 100_000)
    out = tmp_path / "big.html"
    done = export_html(recording, out, timeout=600)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size < 2 * recording.stat().st_size
    last_seq = json.loads(recording.read_text().rsplit("\n", 2)[-2])["seq"]
    context, page = open_offline(browser, out, timeout=300, viewport={"width": 1280, "height": 800})
    try:
        assert page.locator(f'.row[data-seq="{last_seq}"]').is_visible()
        assert page.locator("#timeline .row").count() < 200  # windowed: rows in view, not 110,000 elements
        page.fill("input[name=q]", "needle")
        page.locator(f'.row[data-seq="{needle}"]').wait_for(timeout=300_000)
        total = recording.read_text().count("\n") - 1
        assert page.locator(".filters .count").inner_text() == f"showing 1 row of {total} records"
        page.locator(f'.row[data-seq="{needle}"] .summary').click()
        assert "INFO needle" in page.locator(f'.row[data-seq="{needle}"] .row-body').inner_text()
        assert page.errors == [] and page.requests == []
    finally:
        context.close()


def test_the_csp_names_exactly_the_hashes_of_the_inline_script_and_style(tmp_path):
    from inspector.recording.reports.html import render_html

    hostile = '</title><script>alert(1)</script>"'
    html = render_html({"kind": "header"}, [
        {"seq": 1, "t": 1.0, "kind": "stderr", "text": "</script><b>x</b>"},
        {"seq": 2, "t": 2.0, "kind": "event", "event": "handshake", "detail": {"serverInfo": {"name": hostile}}}])
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html).group(1)
    inline = re.findall(r"<script>(.*?)</script>", html, re.S)
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)

    def digest(text):
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert len(inline) == 2 and len(styles) == 1
    assert csp == (f"default-src 'none'; script-src {' '.join(digest(s) for s in inline)}; "
                   f"style-src {digest(styles[0])}")
    assert "style=" not in html and "<b>" not in html and "</script><b>" in unpacked(html)
    assert "<title>mcp-inspect report: &lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot;</title>" in html


def test_export_html_writes_stdout_for_a_dash_and_never_overwrites(tmp_path):
    recording = tmp_path / "small.jsonl"
    write_big_recording(recording, 4)
    done = subprocess.run([PYTHON, "-m", "inspector.cli", "export", str(recording), "--format", "html", "-o", "-"],
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stdout.startswith("<!doctype html>")
    taken = tmp_path / "taken.html"
    taken.write_text("mine")
    done = export_html(recording, taken)
    assert done.returncode != 0 and "already exists" in done.stderr and taken.read_text() == "mine"


def test_a_value_json_has_no_spelling_for_is_shown_as_text_not_a_traceback(tmp_path):
    """Python's json reads NaN and Infinity from a line (the recording keeps such a line as it came); JSON has no such
    values, so the report spells them as text instead of failing with a traceback."""
    recording = tmp_path / "nan.jsonl"
    write_big_recording(recording, 2)
    with recording.open("a") as file:
        file.write('{"seq":100,"t":9.5,"kind":"message","dir":"from_server","msg":{"jsonrpc":"2.0",'
                   '"method":"notifications/message","params":{"level":"info","data":[NaN,Infinity,-Infinity]}}}\n')
    out = tmp_path / "nan.html"
    done = export_html(recording, out)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    data = json.loads(unpacked(out.read_text()))
    record = next(r for r in data["records"] if r["seq"] == 100)
    assert record["msg"]["params"]["data"] == ["NaN", "Infinity", "-Infinity"]
