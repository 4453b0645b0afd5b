"""A page's first websocket frame (inspector/web/live.py `_sync`): the page names, in the websocket's URL, the store's
signal number when it was rendered, and its first frame re-renders only the panels changed since. The panels the
page has just drawn are not swapped again: that swap replaced the tool buttons, and a click on a tool right as the
page connected landed on a button being thrown away (the tool never opened). Real mcp-inspect, real websocket,
Chromium."""

from __future__ import annotations

import re

import pytest

from conftest import fixture_command, records_in, wait_for, wait_tools_listed

PANELS = ("#server-panel", "#tools-list", "#watch-status", "#problems", "#asks-panel")
"""regions.PAGE_LOAD's targets: what a connection without a page signal re-renders."""


def page_signal(inspector) -> int:
    status, _, body = inspector.request("GET", "/")
    assert status == 200
    found = re.search(rb'hx-ws:connect="/ws\?since=(\d+)"', body)
    assert found, "index.html names its signal number in the websocket's URL"
    return int(found.group(1))


def first_frame(inspector, path: str) -> str:
    ws = inspector.ws(path, timeout=60)
    try:
        return ws.recv()
    finally:
        ws.close()


def panels_in(frame: str) -> set[str]:
    return {panel for panel in PANELS if f'hx-target="{panel}"' in frame}


def test_a_pages_first_frame_re_renders_only_the_panels_changed_since_the_page_was_rendered(inspector_factory):
    inspector = inspector_factory(fixture_command("asking_tools_server"))
    wait_tools_listed(inspector)
    since = page_signal(inspector)
    frame = first_frame(inspector, f"/ws?since={since}")
    assert 'hx-target="#timeline-rows"' in frame, "the rows come as ever"
    assert panels_in(frame) == set(), "nothing changed since the page was drawn: no panel is drawn again"
    # Without a page signal, or with one this store never gave, every panel comes, as before.
    for path in ("/ws", "/ws?since=nope", "/ws?since=-1", f"/ws?since={since + 10_000}"):
        assert panels_in(first_frame(inspector, path)) == set(PANELS), path
    # New filters bring the rows that pass them, and no panel (nothing changed).
    ws = inspector.ws(f"/ws?since={since}", timeout=60)
    try:
        ws.recv()
        ws.send('{"type": "filters", "method": "tools/"}')
        frame = ws.recv()
        assert 'hx-target="#timeline-rows"' in frame and "tools/list" in frame
        assert panels_in(frame) == set(), "a filter re-drew the panels"
    finally:
        ws.close()
    # A change after the page was drawn (a restart: the server panel and the tools list) is in the first frame.
    inspector.post("/server/restart")
    wait_for(lambda: sum(1 for r in records_in(inspector.record) if r.get("kind") == "message"
                         and r["msg"].get("method") == "initialize") == 2, 60, message="the restart's initialize")
    wait_for(lambda: {"#server-panel", "#tools-list"} <= panels_in(first_frame(inspector, f"/ws?since={since}")),
             60, message="the restart's panels in the first frame of a page drawn before it")


@pytest.mark.browser
def test_the_tool_buttons_the_page_was_drawn_with_are_still_there_after_its_first_frame(page, inspector_factory):
    inspector = inspector_factory(fixture_command("asking_tools_server"))
    wait_tools_listed(inspector)
    page.add_init_script("document.addEventListener('DOMContentLoaded', () => {"
                         " window.__firstTool = document.querySelector('#tools-list .tool-item'); });")
    page.goto(inspector.url)
    page.wait_for_function("() => document.querySelector('#timeline-rows .row') !== null", timeout=90_000)
    assert page.evaluate("() => window.__firstTool !== null && window.__firstTool !== undefined")
    assert page.evaluate("() => window.__firstTool.isConnected"), "the first frame replaced the tool buttons"
    page.locator("#tools-list .tool-item").first.click()
    page.locator("#tool-detail .tool-detail").wait_for(timeout=60_000)
