"""The result card and the timeline's trust details (issue 16 item 5, page.md findings 13, 14, 24, 26): content
annotations, a text blob shown as text, the JSON-RPC id the server saw, id cells that fit 5-digit row numbers,
and "Load older rows" only when older rows pass the filters. Real mcp-inspect, real servers, Chromium."""

from __future__ import annotations

import json

import pytest

from conftest import fixture_command, records_in, wait_for
from tool_pane import call_and_wait, open_tool

pytestmark = pytest.mark.browser


def test_annotations_and_a_text_blob_are_shown_on_the_result(page, inspector_factory):
    inspector = inspector_factory(fixture_command("stderr_server"))
    open_tool(page, inspector, "annotated")
    card = call_and_wait(page)
    notes = card.locator("dl.annotations")
    assert notes.count() == 2
    first = notes.nth(0).inner_text()
    assert "audience" in first and "user" in first and "priority" in first and "0.7" in first
    assert "lastModified" in first and "2025-01-12T15:00:58Z" in first
    second = notes.nth(1).inner_text()
    assert "assistant" in second and "0.5" in second
    # The text/plain blob reads as text, and can still be downloaded.
    text = card.locator(".content-embedded pre")
    assert text.inner_text() == "plain text inside a blob\nsecond line"
    assert card.locator(".content-embedded a.download").count() == 1


def test_the_result_names_the_json_rpc_id_the_server_saw(page, inspector_factory):
    inspector = inspector_factory(fixture_command("stderr_server"))
    open_tool(page, inspector, "quiet")
    card = call_and_wait(page)
    request = max((r for r in records_in(inspector.record) if r.get("kind") == "message"
                   and r["msg"].get("method") == "tools/call"), key=lambda r: r["seq"])
    head = card.locator(".call-head a.row-link").first.inner_text()
    assert head == f"request id {request['msg']['id']} · row #{request['seq']}"


HEADER = {"kind": "header", "format": "mcp-inspect-recording", "version": 1, "created": "2026-11-30T00:00:00Z",
          "inspector": "0.1.0", "protocol": "auto", "target": {"transport": "stdio", "command": ["srv"], "cwd": "/"}}


def test_id_cells_do_not_cut_five_digit_row_numbers(page, inspector_factory, tmp_path):
    recording = tmp_path / "long.jsonl"
    lines = [HEADER,
             {"seq": 12345, "t": 1.0, "kind": "message", "dir": "to_server",
              "msg": {"jsonrpc": "2.0", "id": 42, "method": "tools/list"}},
             {"seq": 12346, "t": 1.1, "kind": "message", "dir": "from_server",
              "msg": {"jsonrpc": "2.0", "id": 42, "result": {"tools": []}}}]
    recording.write_text("".join(json.dumps(line) + "\n" for line in lines))
    inspector = inspector_factory([], view=recording)
    for width in (1024, 1280, 1920):
        page.set_viewport_size({"width": width, "height": 800})
        page.goto(inspector.url)
        cell = page.locator("#r-12345 .c-id")
        cell.wait_for()
        assert cell.inner_text().strip() == "42 ↓ #12346"
        fits = cell.evaluate("el => el.scrollWidth <= el.clientWidth")
        assert fits, f"the id cell cuts its text at {width} px"


def test_load_older_rows_only_when_older_rows_pass_the_filter(page, inspector_factory):
    inspector = inspector_factory(fixture_command("stderr_server"))
    open_tool(page, inspector, "quiet")
    first = call_and_wait(page).get_attribute("id")
    assert call_and_wait(page).get_attribute("id") != first, "the second call waited for its own card"
    older = page.locator("#older")
    calls = page.locator("#timeline-rows > .row", has_text="tools/call")
    wait_for(lambda: calls.count() == 4, 30, message="both calls in the timeline")
    assert older.is_hidden(), "the whole session is shown: nothing older"
    page.get_by_label("Method").fill("tools/call")
    wait_for(lambda: page.locator("#timeline-rows > .row").count() == 4, 30, message="the filter applied")
    wait_for(lambda: older.is_hidden(), 10, message="no 'Load older rows': nothing older is a tools/call")
    # Cleared rows are older rows: the button comes back for them, brings them back, and goes again.
    page.get_by_role("button", name="Clear view").click()
    older.wait_for(state="visible")
    page.get_by_role("button", name="Load older rows").click()
    wait_for(lambda: page.locator("#timeline-rows > .row").count() == 4, 30, message="the cleared rows back")
    wait_for(lambda: older.is_hidden(), 10, message="nothing older left")
