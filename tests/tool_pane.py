"""Browser helpers for tests that open one tool in the page and call it (Playwright pages from conftest's `page`)."""

from __future__ import annotations

import re

from conftest import live_synced, wait_for


def open_tool(page, inspector, tool: str, width: int = 1280, height: int = 800) -> None:
    """Load the page at width × height and open `tool` in the tool pane."""
    page.set_viewport_size({"width": width, "height": height})
    page.goto(inspector.url)
    live_synced(page)
    page.locator("#tools-list .tool-item", has_text=re.compile(rf"^\s*{tool}\b")).first.click()
    page.locator("#tool-detail form").first.wait_for()


def call_and_wait(page):
    """Click Call and wait for the answer; the new call's card.

    An opened tool shows its latest call, so the card to wait for is one with an id that was not there before the
    click (the previous call's card is already answered, and would end the wait at once)."""
    before = page.evaluate("() => Array.from(document.querySelectorAll('#tool-detail .call'), c => c.id)")
    page.get_by_role("button", name="Call", exact=True).click()
    handle = page.wait_for_function("ids => { const c = document.querySelector('#tool-detail .call');"
                                    " return c && !ids.includes(c.id) ? c.id : null; }", arg=before, timeout=60_000)
    card = page.locator(f"#{handle.json_value()}")  # a call keeps its id while its card is re-rendered
    wait_for(lambda: "state-pending" not in (card.get_attribute("class") or ""), 60, message="the call answered")
    return card
