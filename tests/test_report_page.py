""""Copy as bug report": one call's Markdown from the page (GET /records/N/report.md), masked like Export, behind
the launch token; and the button in a real Chromium puts it on the clipboard."""

from __future__ import annotations

import json
import re
import uuid

import pytest

from conftest import fixture_command, records_in, wait_for, wait_tools_listed
from markdown_check import check_markdown
from test_export_markdown import HOSTILE


def echo_call(inspector, text: str) -> tuple[int, int]:
    """Call the fake server's echo tool from the page; (request seq, answer seq) once both are recorded."""
    inspector.post("/tools/echo/call", {"arguments": json.dumps({"text": text})})

    def pair():
        records = records_in(inspector.record)
        request = next((r["seq"] for r in records if r.get("kind") == "message" and r["dir"] == "to_server"
                        and r["msg"].get("method") == "tools/call"), None)
        answer = next((r["seq"] for r in records if request and r.get("kind") == "message"
                       and r["dir"] == "from_server" and r["msg"].get("id") is not None
                       and r["seq"] > request and "result" in r["msg"]
                       and "content" in r["msg"]["result"]), None)
        return (request, answer) if answer else None

    return wait_for(pair, 30, message="the echo call and its answer recorded")


def test_the_report_of_one_call_is_masked_and_well_formed(page_factory):
    secret = f"S3CR3T-{uuid.uuid4()}"
    inspector = page_factory(fixture_command("fake_server", "stderr"), "-e", f"API_KEY={secret}")
    wait_tools_listed(inspector)
    request_seq, answer_seq = echo_call(inspector, f"Bearer {secret} and {inspector.token} {HOSTILE}")
    status, headers, body = inspector.request("GET", f"/records/{request_seq}/report.md")
    assert status == 200, body[:300]
    assert headers["content-type"].startswith("text/markdown") and headers["content-disposition"].startswith("attach")
    text = body.decode()
    assert secret not in text and inspector.token not in text
    assert check_markdown(text)["details"] == 1
    assert "| server | fake-stderr |" in text and "| era | legacy (protocol 2025-11-25) |" in text
    assert "| records |" not in text  # the few records of one call say nothing about the session
    assert re.search(rf"<summary>#{request_seq} <code>tools/call</code> echo → ok, \d+ ms</summary>", text)
    assert f"**Response** #{answer_seq}" in text and "Bearer [REDACTED]" in text
    assert inspector.request("GET", f"/records/{answer_seq}/report.md")[2].decode() == text  # either end: one call
    assert inspector.request("GET", "/records/1/report.md")[0] == 404  # the spawn event is no call
    assert inspector.request("GET", f"/records/{request_seq}/report.md", auth=False)[0] == 401
    assert inspector.request("GET", f"/records/{request_seq}/report.md", headers={"Host": "evil.example"})[0] == 400


@pytest.mark.browser
def test_copy_as_bug_report_puts_the_calls_markdown_on_the_clipboard(browser, inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "ok"))
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(inspector.url)
        page.get_by_role("button", name=re.compile("^echo")).click()
        page.get_by_label("text").fill(HOSTILE)
        page.get_by_role("button", name="Call", exact=True).click()
        page.locator(".call.state-result").wait_for()
        page.locator(".call-head").get_by_role("button", name="Copy as bug report").click()
        # Wait on the clipboard itself: a push may re-render the call card (and its button's "Copied" label)
        # while the report is fetched.
        page.wait_for_function("async () => (await navigator.clipboard.readText()).includes('</details>')",
                               timeout=60000)
        text = page.evaluate("() => navigator.clipboard.readText()")
        assert check_markdown(text)["details"] == 1
        assert "| server | fake-ok |" in text
        assert re.search(r"<summary>#\d+ <code>tools/call</code> echo → ok, \d+ ms</summary>", text)
        assert json.dumps(HOSTILE)[1:-1] in text  # the server's text, whole, inside the fenced JSON
        assert errors == []
    finally:
        context.close()


def test_a_viewed_recording_gives_the_same_report_of_a_call(page_factory, tmp_path):
    from test_export_markdown import calls_recording

    inspector = page_factory([], view=calls_recording(tmp_path, 3))
    status, _, body = inspector.request("GET", "/records/6/report.md")  # call 2's answer
    text = body.decode()
    assert status == 200 and check_markdown(text)["details"] == 1
    assert "<summary>#4 <code>tools/call</code> echo → ok, 200 ms</summary>" in text
    assert "handling call 2" in text and "handling call 1" not in text and "handling call 3" not in text
    assert inspector.request("GET", "/records/5/report.md")[0] == 404  # a stderr line is no call
