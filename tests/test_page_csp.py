"""No Content-Security-Policy violation during a session of ordinary use (issue 16 item 5; page.md finding 27).

The page runs under `style-src 'self'` and `script-src 'self'`: a style= attribute in markup, or a script setting one
with setAttribute, is refused by the browser and reported. A real mcp-inspect, a real Chromium, a session that
opens tools, switches a form to JSON and back, calls, expands rows, restarts the server, moves the layout and
reloads; every `securitypolicyviolation` event and every console report of the CSP is collected."""

from __future__ import annotations

import re

import pytest

from conftest import fixture_command, wait_for, wait_tools_listed

pytestmark = pytest.mark.browser

# Installed before any page script: records each violation the document reports.
COLLECT = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__cspViolations.push([e.violatedDirective, e.sourceFile + ':' + e.lineNumber, e.sample,
                               e.target && e.target.nodeName].join(' | '));
}, true);
"""


def violations(page, console: list[str]) -> list[str]:
    return page.evaluate("window.__cspViolations") + [m for m in console if "Content Security Policy" in m]


def resize(page, textarea) -> None:
    """Drag a textarea's grip as a user does; the browser then keeps its height in a style attribute."""
    textarea.scroll_into_view_if_needed()
    grip = textarea.bounding_box()
    page.mouse.move(grip["x"] + grip["width"] - 3, grip["y"] + grip["height"] - 3)
    page.mouse.down()
    page.mouse.move(grip["x"] + grip["width"] - 3, grip["y"] + grip["height"] + 50, steps=3)
    page.mouse.up()
    assert textarea.get_attribute("style"), "the drag resized the textarea"


def test_a_session_of_ordinary_use_has_no_csp_violation(browser, inspector_factory):
    inspector = inspector_factory(fixture_command("form_server"))
    wait_tools_listed(inspector, 60)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        context.add_init_script(COLLECT)
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda msg: console.append(msg.text))
        page.goto(inspector.url)
        page.wait_for_selector("#tools-list .tool-item")

        for name in ("order", "count", "misc"):
            page.get_by_role("button", name=re.compile("^" + name)).click()
            page.locator(f'.tool-detail[data-tool="{name}"]').wait_for()
        # A user resizes a textarea (the browser writes its height as an inline style), then the form is re-rendered.
        resize(page, page.locator(".tool-detail textarea").first)
        page.get_by_role("button", name="JSON", exact=True).click()
        page.get_by_label("Arguments (JSON)").wait_for()
        page.get_by_role("button", name="JSON", exact=True).click()
        page.get_by_role("button", name="Call", exact=True).click()
        page.locator(".call.state-result").wait_for()

        rows = page.locator("#timeline-rows .row > summary")
        for i in range(0, min(rows.count(), 8), 2):
            rows.nth(i).click()
        page.locator("#timeline-rows .row[open] .row-body pre").first.wait_for()

        # The same in a region the websocket pushes: the server panel's roots editor, then a restart re-renders it.
        page.locator("#roots-edit > summary").click()
        resize(page, page.locator("#roots-text"))
        restarts = page.locator("#timeline-rows .row", has_text="server started").count()
        page.get_by_role("button", name="Restart", exact=True).click()
        wait_for(lambda: page.locator("#timeline-rows .row", has_text="server started").count() > restarts, 60,
                 message="the server restarted")
        page.locator("#tools-list .tool-item").first.wait_for()

        # The layout's own moves: they write a CSS property through the CSSOM, never a style attribute.
        handle = page.locator("#splitter").bounding_box()
        page.mouse.move(handle["x"] + 2, handle["y"] + 100)
        page.mouse.down()
        page.mouse.move(handle["x"] + 80, handle["y"] + 100, steps=3)
        page.mouse.up()
        page.locator("#toggle-sidebar").click()
        page.locator("#pane-close").click()
        page.reload()
        page.wait_for_selector("#timeline-rows .row")
        page.locator("#toggle-sidebar").click()
        page.get_by_role("button", name=re.compile("^count")).click()
        page.locator('.tool-detail[data-tool="count"]').wait_for()

        found = violations(page, console)
        assert found == [], "\n".join(found)
    finally:
        context.close()
