"""Finding things (issue 16 item 6, finding 31): the tool search above the tool list, compact tool rows (18 tools on
a 900 px tall screen, badges on the name's line) and the description review folded to one line, in a real Chromium
against real mcp-inspect processes."""

from __future__ import annotations

import re

import pytest

from conftest import everything_command, fixture_command, needs_everything, start_inspector, wait_for, wait_tools_listed

pytestmark = pytest.mark.browser

WIDTHS = [(1024, 768), (1280, 800), (1920, 1080)]


def open_page(page, inspector):
    page.goto(inspector.url)
    page.wait_for_selector("#tools-list .tool-item")


def shown_tools(page) -> list[str]:
    """The ids of the tools the list shows (hidden entries left out)."""
    return page.locator("#tools-list .tool-item:visible").evaluate_all(
        "items => items.map(i => i.getAttribute('hx-get').split('name=')[1])")


def test_the_search_filters_by_name_title_and_description_and_survives_a_new_list(page, inspector_factory):
    inspector = inspector_factory(fixture_command("badges_server"))
    wait_tools_listed(inspector, 60)
    open_page(page, inspector)
    search = page.get_by_role("searchbox", name="Find a tool")
    assert shown_tools(page) == ["look_up", "wipe", "log", "fail", "slow"]
    search.fill("wipe")  # the name
    assert shown_tools(page) == ["wipe"]
    search.fill("LOOK UP")  # the title, any case
    assert shown_tools(page) == ["look_up"]
    search.fill("caller gave")  # words of the description only
    assert shown_tools(page) == ["slow"]
    search.fill("returns fail")  # every word, anywhere
    assert shown_tools(page) == ["fail"]
    none = page.get_by_role("status").filter(has_text="No tool matches")
    assert not none.is_visible()
    search.fill("nothing like this")
    assert shown_tools(page) == []
    assert none.inner_text() == "No tool matches \u201cnothing like this\u201d."
    # A restart pushes a new list in place of the old one: what was typed still filters it.
    search.fill("wipe")
    page.evaluate("document.getElementById('tools-list').dataset.before = 'restart'")
    page.get_by_role("button", name="Restart", exact=True).click()
    page.wait_for_function("() => { const l = document.getElementById('tools-list');"
                           " return l && !l.dataset.before && l.querySelector('.tool-item'); }", timeout=60_000)
    assert search.input_value() == "wipe"
    wait_for(lambda: shown_tools(page) == ["wipe"], 5, message="the new list filtered")
    # Emptied (Escape in the box), the whole list is back.
    search.press("Escape")
    assert search.input_value() == ""
    assert shown_tools(page) == ["look_up", "wipe", "log", "fail", "slow"]


def test_the_description_review_is_one_folded_line(page, inspector_factory):
    inspector = inspector_factory(fixture_command("badges_server"))
    wait_tools_listed(inspector, 60)
    open_page(page, inspector)
    page.locator("#tools-list .tool-item", has_text="log").first.click()
    review = page.locator(".tool-detail details.advice")
    review.wait_for()
    assert review.get_attribute("open") is None
    summary = review.locator("summary")
    assert re.fullmatch(r"Description review: \d+ suggestions?", summary.inner_text())
    line = float(summary.evaluate("s => parseFloat(getComputedStyle(s).lineHeight)"))
    assert summary.bounding_box()["height"] < 1.5 * line
    assert not review.locator("ul").is_visible()
    # The tool list's advice badge is quiet: no border of its own colour, the dim text of the list.
    advice = page.locator("#tools-list .tool-item", has_text="log").first.locator(".badge.advice")
    assert advice.evaluate("b => getComputedStyle(b).borderTopColor") == "rgba(0, 0, 0, 0)"


@needs_everything
@pytest.mark.parametrize("width,height", [(1024, 900), (1280, 900), (1920, 900)])
def test_eighteen_tools_fit_on_a_900px_screen_with_badges_on_the_name_line(browser, tmp_path, width, height):
    inspector = start_inspector(tmp_path, everything_command())
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        wait_tools_listed(inspector, 60)
        page = context.new_page()
        open_page(page, inspector)
        # 17 tools for a client like ours (the 18th needs a capability we do not declare); 18 rows as tall as the
        # tallest must fit.
        wait_for(lambda: page.locator("#tools-list .tool-item").count() >= 17, 30, message="the tools")
        for tool_open in (False, True):
            if tool_open:
                page.locator("#tools-list .tool-item").nth(1).click()
                page.wait_for_selector(".tool-detail form")
            items = page.locator("#tools-list .tool-item")
            boxes = items.evaluate_all("""items => items.map(i => {
                const name = i.querySelector('.tool-name').getBoundingClientRect();
                return {height: i.getBoundingClientRect().height, name: [name.top, name.bottom],
                        badges: [...i.querySelectorAll('.badge')].map(b => { const r = b.getBoundingClientRect();
                                                                              return (r.top + r.bottom) / 2; })};
            })""")
            for box in boxes:
                top, bottom = box["name"]
                assert all(top <= middle <= bottom for middle in box["badges"]), (tool_open, box)
            header = page.locator("header.topbar").bounding_box()["height"]
            tallest = max(box["height"] for box in boxes)
            assert 18 * tallest <= height - header, (tool_open, tallest)
    finally:
        context.close()
        inspector.stop()
