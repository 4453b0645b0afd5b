"""Recordings in the browser: view, open through the page, replay from the page and see the diff."""

from __future__ import annotations

import pytest

from conftest import fixture_command, records_in, wait_for
from editable_server import source

pytestmark = pytest.mark.browser

# raw_server's identity and tool, but the call answers 41 instead of 42
CHANGED_SERVER = source([{"name": "add", "inputSchema": {"type": "object"}}], answer="41", name="raw", version="0",
                        protocol="2024-11-05", list_changed=False)


def recorded_session(inspector_factory):
    source = inspector_factory(fixture_command("raw_server"))
    wait_for(lambda: any("tools" in (r.get("msg", {}).get("result") or {}) for r in records_in(source.record)), 15,
             message="tools listed")
    source.post("/tools/add/call", {"arguments": '{"a": 40, "b": 2}'})
    wait_for(lambda: "42" in source.record.read_text(), 10, message="call answered")
    source.stop()
    return source.record


def test_view_a_recording_in_the_browser(page, inspector_factory):
    path = recorded_session(inspector_factory)
    view = inspector_factory([], view=path)
    page.goto(view.url)
    page.locator("#timeline-rows .row.kind-response", has_text="tools/call").wait_for()
    assert "read-only" in page.locator("header").inner_text()
    assert page.get_by_role("button", name="Stop", exact=True).count() == 0


def test_open_a_recording_through_the_page(page, inspector_factory):
    path = recorded_session(inspector_factory)
    inspector = inspector_factory(fixture_command("fake_server", "ok"))
    page.goto(inspector.url)
    page.get_by_label("Recording file").set_input_files(str(path))
    page.get_by_role("button", name="Open recording").click()
    link = page.locator("#open-result a")
    link.wait_for(timeout=90_000)  # a viewer process starts and reads the file first: slow on a loaded machine
    with page.context.expect_page() as opened:
        link.click()
    viewer = opened.value
    viewer.locator("#timeline-rows .row.kind-response", has_text="tools/call").wait_for()
    assert "read-only" in viewer.locator("header").inner_text()


def test_replay_from_the_page_shows_the_difference(page, inspector_factory, tmp_path):
    path = recorded_session(inspector_factory)
    changed = tmp_path / "changed.py"
    changed.write_text(CHANGED_SERVER)
    inspector = inspector_factory(["python3", str(changed)])
    page.goto(inspector.url)
    page.get_by_label("Recording file").set_input_files(str(path))
    page.get_by_role("button", name="Replay against this server").click()
    report = page.locator("#replay-report")
    report.locator("strong.problem").wait_for(timeout=20000)
    different = report.locator(".replay-step.status-different", has_text="tools/call")
    assert different.count() == 1
    text = different.inner_text()
    assert "$.result.content[0].text" in text and '"42"' in text and '"41"' in text
