"""The page acknowledges every live frame (static/app.js): the server sends a tab its next frame only after the last
one is acknowledged (inspector/web/live_flow.py), so an acknowledgement the page never sends holds back every live
row until the server gives up on the tab (ACK_PINGS keep-alive intervals). A real mcp-inspect, Chromium, the real
websocket; the two ways a page could lose one are made to happen in the page: a frame whose swap throws, and no
animation frame after a swap (a tab that is not painting)."""

from __future__ import annotations

import json

import pytest

from conftest import records_in, wait_for, wait_tools_listed

pytestmark = pytest.mark.browser

PING_SECONDS = 300
"""The tab is given up on after two of these (600 s) unacknowledged: far beyond SHOWN_MS below."""
SHOWN_MS = 60_000
"""A row reaches an acknowledging page within a second or so; a page that lost an ack would wait 600 s."""


def call_word_count(inspector, text: str) -> int:
    """Call the demo's word_count; the seq of its recorded answer."""
    status, _, body = inspector.post("/tools/word_count/call", {"arguments": json.dumps({"text": text})})
    assert status == 200, body

    def answer():
        records = [r for r in records_in(inspector.record) if r.get("kind") == "message"]
        request = next((r for r in records if r["dir"] == "to_server" and r["msg"].get("method") == "tools/call"
                        and r["msg"]["params"]["arguments"].get("text") == text), None)
        return request and next((r["seq"] for r in records if r["dir"] == "from_server"
                                 and r["msg"].get("id") == request["msg"]["id"] and "method" not in r["msg"]), None)
    return wait_for(answer, 60, message=f"word_count({text!r}) answered")


def wait_row(page, seq: int) -> None:
    page.wait_for_function(f"() => document.getElementById('r-{seq}') !== null", timeout=SHOWN_MS)


@pytest.fixture
def live_page(page, inspector_factory):
    inspector = inspector_factory([], "--demo", "--no-watch", env={"MCP_INSPECT_WS_PING_SECONDS": str(PING_SECONDS)})
    wait_tools_listed(inspector, 60)
    page.goto(inspector.url)
    wait_row(page, call_word_count(inspector, "before"))
    return page, inspector


def test_a_frame_whose_swap_throws_is_still_acknowledged(live_page):
    page, inspector = live_page
    # The next frame for the timeline fails inside htmx's swap, as an exception in it would.
    page.evaluate("""() => {
        const swap = htmx.swap.bind(htmx);
        let failures = 1;
        htmx.swap = ctx => {
            if (failures > 0 && ctx && ctx.sourceElement && ctx.sourceElement.id === 'timeline') {
                failures--;
                return Promise.reject(new Error('a swap that failed'));
            }
            return swap(ctx);
        };
        window.swapFailures = () => failures;
    }""")
    call_word_count(inspector, "lost in a failed swap")
    page.wait_for_function("() => window.swapFailures() === 0", timeout=SHOWN_MS)
    # The page acknowledged it anyway: the next rows come.
    wait_row(page, call_word_count(inspector, "after the failed swap"))


def test_a_frame_swapped_without_an_animation_frame_is_still_acknowledged(live_page):
    page, inspector = live_page
    # No animation frame from now on, as in a tab that is not painting (the page's own follow waits for one too).
    page.evaluate("() => { window.requestAnimationFrame = () => 0; }")
    first = call_word_count(inspector, "swapped, never painted")
    wait_row(page, first)
    wait_row(page, call_word_count(inspector, "after it"))
