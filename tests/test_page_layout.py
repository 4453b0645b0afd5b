"""The page's layout at the widths people use (issue 16 items 1 and 8; page.md findings 1, 30, 41): no sideways
scroll, a timeline that keeps its method, id, latency and a real preview with a tool open, rows that never vanish on
a narrow window, and a sidebar, tool pane and split the user can move, remembered across reloads.

One real mcp-inspect on the form server for the module; each test gets its own browser context (its own
localStorage), in real Chromium."""

from __future__ import annotations

import re

import pytest

from conftest import fixture_command, live_synced, start_inspector, wait_for, wait_tools_listed

pytestmark = pytest.mark.browser

WIDTHS = [(800, 600), (1024, 768), (1280, 800), (1440, 900), (1920, 1080)]
"""800 px is "usable": every column but the clock, a preview of a third; from 1024 px on, a preview of 200 px too."""
COLUMNS = ("c-method", "c-id", "c-latency", "c-preview")


@pytest.fixture(scope="module")
def inspector(tmp_path_factory):
    started = start_inspector(tmp_path_factory.mktemp("layout"), fixture_command("form_server"))
    try:
        wait_tools_listed(started, 60)
        yield started
    finally:
        started.stop()


@pytest.fixture
def open_page(browser, inspector):
    """open_page(width, height) -> a page of a fresh context at that size, the tools listed."""
    contexts = []

    def opener(width: int, height: int):
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        page.goto(inspector.url)
        page.wait_for_selector("#tools-list .tool-item")
        live_synced(page)
        return page

    yield opener
    for context in contexts:
        context.close()


def open_tool_and_call(page, name: str = "misc"):
    """Pick a tool in the sidebar and call it; wait until its response row (the one with a latency) is shown.

    The pane opens with the tool's latest call (an earlier test's, on this module's server): only a result card of
    a new call means the Call's answer, the pane it re-renders, has been swapped in."""
    page.get_by_role("button", name=re.compile("^" + name)).click()
    page.locator(f'.tool-detail[data-tool="{name}"]').wait_for()
    before = page.locator("#timeline-rows .row.kind-response").count()
    earlier = page.evaluate("() => [...document.querySelectorAll('#tool-detail .call')].map(c => c.id)")
    page.get_by_role("button", name="Call", exact=True).click()
    page.wait_for_function("earlier => [...document.querySelectorAll('#tool-detail .call.state-result')]"
                           ".some(c => !earlier.includes(c.id))", arg=earlier)
    page.wait_for_function(f"() => document.querySelectorAll('#timeline-rows .row.kind-response').length > {before}")


def box(page, selector: str) -> dict | None:
    return page.evaluate("""s => { const e = document.querySelector(s); if (!e) return null;
        const b = e.getBoundingClientRect(); return {left: b.left, right: b.right, width: b.width, height: b.height,
        top: b.top, bottom: b.bottom, shown: getComputedStyle(e).display !== 'none'}; }""", selector)


@pytest.mark.parametrize("width,height", WIDTHS, ids=[f"{w}x{h}" for w, h in WIDTHS])
def test_the_timeline_keeps_its_columns_with_a_tool_open(open_page, width, height):
    page = open_page(width, height)
    open_tool_and_call(page)
    assert box(page, "#workbench")["shown"], "the tool pane is open"
    sizes = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
    assert sizes[0] <= sizes[1], f"the page scrolls sideways at {width}px: scrollWidth {sizes[0]} > {sizes[1]}"

    pane = page.evaluate("() => { const w = document.getElementById('workbench'); return [w.scrollWidth, w.clientWidth]; }")
    assert pane[0] <= pane[1], f"the tool pane's content is wider than the pane at {width}px: {pane}"

    timeline = box(page, "#timeline-panel")
    row = "#timeline-rows .row.kind-response:last-of-type > summary"
    for column in COLUMNS:
        cell = box(page, f"{row} > .{column}")
        assert cell and cell["shown"] and cell["width"] >= 30, f"{column} is not visible at {width}px: {cell}"
        assert cell["right"] <= width, f"{column} is off-screen at {width}px: {cell}"
        # The header label sits over its column, whatever the width (no drift from a scrollbar or a tier).
        index = page.evaluate("([row, c]) => [...document.querySelector(row).children].findIndex("
                              "e => e.classList.contains(c)) + 1", [row, column])
        label = box(page, f"#timeline .row-head > span:nth-child({index})")
        assert label["shown"] and abs(label["left"] - cell["left"]) <= 1, (column, label, cell)
    preview = box(page, f"{row} > .c-preview")["width"]
    assert preview >= 200 or width < 1024, f"the preview is {preview}px at {width}px"
    assert preview >= timeline["width"] / 3, f"the preview is {preview}px of a {timeline['width']}px timeline"
    latency = page.locator(f"{row} > .c-latency").inner_text()
    assert re.search(r"\d", latency), f"the latency is shown in full: {latency!r}"


@pytest.mark.parametrize("width", [760, 700])
def test_rows_never_vanish_on_a_narrow_window(open_page, width):
    page = open_page(width, 700)
    open_tool_and_call(page)
    rows = box(page, "#timeline-rows")
    assert rows["height"] >= 200, f"the timeline's rows are {rows['height']}px tall at {width}px"
    first = box(page, "#timeline-rows .row > summary")
    assert first["height"] > 0 and first["top"] < 700, first
    sizes = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
    assert sizes[0] <= sizes[1], sizes
    # The tool pane is still reachable below the timeline.
    page.locator(".tool-detail").scroll_into_view_if_needed()
    assert page.get_by_role("button", name="Call", exact=True).is_visible()


def test_sidebar_and_tool_pane_collapse_and_stay_so_after_reload(open_page):
    page = open_page(1280, 800)
    sidebar_toggle = page.locator("#toggle-sidebar")
    pane_toggle = page.locator("#toggle-pane")
    assert sidebar_toggle.get_attribute("aria-expanded") == "true"
    assert pane_toggle.is_disabled(), "no tool yet: nothing to show in a pane"
    open_tool_and_call(page)
    assert pane_toggle.get_attribute("aria-expanded") == "true"
    with_pane = box(page, "#timeline-panel")["width"]

    # Keyboard: the toggles are ordinary buttons in the tab order.
    sidebar_toggle.focus()
    page.keyboard.press("Enter")
    wait_for(lambda: sidebar_toggle.get_attribute("aria-expanded") == "false", 10, message="sidebar collapsed")
    assert not box(page, "#sidebar")["shown"]
    page.get_by_role("button", name="Close the tool pane").click()
    wait_for(lambda: pane_toggle.get_attribute("aria-expanded") == "false", 10, message="pane closed")
    assert not box(page, "#workbench")["shown"] and not box(page, "#splitter")["shown"]
    timeline = box(page, "#timeline-panel")
    assert timeline["left"] == 0 and timeline["width"] == 1280, f"the timeline takes the room: {timeline}"
    assert timeline["width"] > with_pane

    page.reload()
    page.wait_for_selector("#timeline-rows .row")
    assert page.locator("#toggle-sidebar").get_attribute("aria-expanded") == "false"
    assert not box(page, "#sidebar")["shown"] and not box(page, "#workbench")["shown"]

    page.locator("#toggle-sidebar").click()
    assert box(page, "#sidebar")["shown"]
    # Picking a tool is asking to see it: the closed pane opens.
    page.get_by_role("button", name=re.compile("^order")).click()
    page.locator('.tool-detail[data-tool="order"]').wait_for()
    wait_for(lambda: box(page, "#workbench")["shown"], 10, message="the pane opens for a picked tool")
    assert page.locator("#toggle-pane").get_attribute("aria-expanded") == "true"
    page.locator("#toggle-pane").click()
    assert not box(page, "#workbench")["shown"]
    page.reload()
    page.wait_for_selector("#timeline-rows .row")
    assert box(page, "#sidebar")["shown"], "the sidebar shown again is remembered too"


def test_the_split_can_be_dragged_and_moved_by_keys_and_is_remembered(open_page):
    page = open_page(1280, 800)
    open_tool_and_call(page)
    splitter = page.get_by_role("separator")
    start = box(page, "#workbench")["width"]
    assert int(splitter.get_attribute("aria-valuenow")) == round(start)
    handle = box(page, "#splitter")
    x, y = handle["left"] + handle["width"] / 2, handle["top"] + 200
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 60, y, steps=4)
    page.mouse.move(x + 120, y, steps=4)
    page.mouse.up()
    dragged = box(page, "#workbench")["width"]
    assert abs(dragged - (start + 120)) <= 2, (start, dragged)
    assert int(splitter.get_attribute("aria-valuenow")) == round(dragged)

    splitter.focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    keyed = box(page, "#workbench")["width"]
    assert abs(keyed - (dragged - 32)) <= 2, (dragged, keyed)
    # Never so wide that the timeline loses its room.
    page.keyboard.press("End")
    widest = box(page, "#workbench")["width"]
    assert box(page, "#timeline-panel")["width"] >= 320
    assert int(splitter.get_attribute("aria-valuemax")) == round(widest)
    page.keyboard.press("Home")
    assert abs(box(page, "#workbench")["width"] - 240) <= 1
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    remembered = box(page, "#workbench")["width"]

    page.reload()
    page.wait_for_selector("#timeline-rows .row")
    page.get_by_role("button", name=re.compile("^misc")).click()
    page.locator('.tool-detail[data-tool="misc"]').wait_for()
    assert abs(box(page, "#workbench")["width"] - remembered) <= 1


def test_a_sidebar_that_stepped_aside_comes_back_while_the_server_asks(browser, inspector_factory):
    """At 1024 px the sidebar steps aside for an open tool; the Asks panel lives in it, so it must come back."""
    inspector = inspector_factory(fixture_command("asking_tools_server"))
    wait_tools_listed(inspector, 60)
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        page = context.new_page()
        page.goto(inspector.url)
        page.locator("#tools-list .tool-item", has_text="ask_form").click()
        page.locator('.tool-detail[data-tool="ask_form"]').wait_for()
        assert not box(page, "#sidebar")["shown"], "the sidebar stepped aside for the tool"
        page.get_by_role("button", name="Call", exact=True).click()
        page.locator("#asks-panel .ask-form").wait_for(state="visible")
        assert page.locator("#toggle-sidebar").get_attribute("aria-expanded") == "true"
        panel = box(page, "#asks-panel")
        assert 0 <= panel["top"] < 768 and panel["left"] < 1024, f"the question is in sight: {panel}"
        sizes = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
        assert sizes[0] <= sizes[1], sizes
    finally:
        context.close()
