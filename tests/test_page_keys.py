"""The keyboard (issue 16 item 7): "/" focuses the tool search, the arrow keys move through the timeline and Enter
opens a row, Escape closes the tool pane; required fields read as their property name. In a real Chromium against a
real mcp-inspect."""

from __future__ import annotations

import pytest

from conftest import fixture_command, wait_for, wait_tools_listed

pytestmark = pytest.mark.browser

ACTIVE_ROW = "() => { const s = document.activeElement; return s && s.matches('#timeline-rows > .row > summary') ? " \
             "Number(s.parentElement.dataset.seq) : null; }"


@pytest.fixture
def keys_page(page, inspector_factory):
    inspector = inspector_factory(fixture_command("badges_server"))
    wait_tools_listed(inspector, 60)
    page.goto(inspector.url)
    page.wait_for_selector("#tools-list .tool-item")
    page.wait_for_function("() => document.querySelectorAll('#timeline-rows > .row').length >= 6")
    return page


def test_slash_focuses_the_tool_search_unless_typing(keys_page):
    page = keys_page
    page.locator("header .brand").click()
    page.keyboard.press("/")
    search = page.get_by_role("searchbox", name="Find a tool")
    assert page.evaluate("document.activeElement.id") == "tool-search"
    assert search.input_value() == "", "the slash itself is not typed"
    page.keyboard.type("wipe")
    assert search.input_value() == "wipe"
    # In another field a slash is a slash.
    method = page.locator("#filters input[name=method]")
    method.click()
    method.press("End")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.name") == "method"
    assert method.input_value().endswith("/")


def test_arrows_move_through_the_timeline_and_enter_opens_a_row(keys_page):
    page = keys_page
    seqs = page.locator("#timeline-rows > .row").evaluate_all("rows => rows.map(r => Number(r.dataset.seq))")
    page.locator("#timeline-rows > .row > summary").first.focus()
    assert page.evaluate(ACTIVE_ROW) == seqs[0]
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.evaluate(ACTIVE_ROW) == seqs[2]
    page.keyboard.press("ArrowUp")
    assert page.evaluate(ACTIVE_ROW) == seqs[1]
    page.keyboard.press("End")
    last = page.locator("#timeline-rows > .row").last.get_attribute("data-seq")
    assert page.evaluate(ACTIVE_ROW) == int(last)
    page.keyboard.press("Home")
    assert page.evaluate(ACTIVE_ROW) == seqs[0]
    page.keyboard.press("ArrowDown")
    # Enter opens the focused row, with its record loaded; Enter again closes it.
    row = page.locator(f"#r-{seqs[1]}")
    page.keyboard.press("Enter")
    row.locator(".row-body pre").first.wait_for()
    assert row.evaluate("r => r.open") is True
    page.keyboard.press("Enter")
    assert row.evaluate("r => r.open") is False
    assert page.evaluate(ACTIVE_ROW) == seqs[1], "the focus stays on the row"


def test_escape_leaves_a_field_then_closes_the_tool_pane(keys_page):
    page = keys_page
    page.locator("#tools-list .tool-item", has_text="look_up").click()
    word = page.get_by_role("textbox", name="word", exact=True)
    word.fill("cat")
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement === document.body"), "the first Escape leaves the field"
    assert page.locator("#tool-detail .tool-detail").count() == 1
    page.keyboard.press("Escape")
    wait_for(lambda: page.evaluate("document.getElementById('tool-detail').childElementCount") == 0, 5,
             message="the tool pane closed")
    assert page.evaluate("document.activeElement.dataset.tool") == "look_up", "the focus goes back to the tool"
    # The hook for a pane that closes itself: whoever takes the event closes it, and the page leaves it alone.
    page.evaluate("document.addEventListener('inspector:close-tool-pane', e => { window.__closed = true; "
                  "e.preventDefault(); })")
    page.locator("#tools-list .tool-item", has_text="look_up").click()
    page.wait_for_selector("#tool-detail .tool-detail")
    page.locator("#tool-detail h3").click()
    page.keyboard.press("Escape")
    assert page.evaluate("window.__closed") is True
    assert page.locator("#tool-detail .tool-detail").count() == 1


def test_a_required_field_reads_as_its_property_name(keys_page):
    page = keys_page
    page.locator("#tools-list .tool-item", has_text="look_up").click()
    word = page.get_by_role("textbox", name="word", exact=True)  # the accessible name: the star is not in it
    assert word.get_attribute("aria-required") == "true" and word.get_attribute("required") is not None
    assert page.locator("label[for='in:/word'] .req").get_attribute("aria-hidden") == "true"
    assert page.locator("#tool-detail form").evaluate("f => f.noValidate"), "required never blocks a send"
    snapshot = page.locator("#tool-detail form").aria_snapshot()
    assert '- textbox "word"' in snapshot
