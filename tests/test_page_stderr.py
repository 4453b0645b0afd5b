"""Stderr on the page (issue 16 item 2, page.md findings 3 and 16): a traceback is one timeline row showing its last
line and expanding to the whole block; the tool's result says how many stderr lines the server wrote during the
call and opens them in one click; a log message's level is its own badge. Real mcp-inspect, real servers, Chromium."""

from __future__ import annotations

import re

import pytest

from conftest import fixture_command, records_in, wait_for
from tool_pane import call_and_wait, open_tool

pytestmark = pytest.mark.browser

BENIGN_CONSOLE = ("WebSocket connection to",)
TRACEBACK = ["Traceback (most recent call last):", '  File "/srv/tools.py", line 12, in explode',
             '    raise ValueError(f"exploded because {reason}")', "ValueError: exploded because boom"]


def real_errors(page) -> list[str]:
    return [e for e in page.console_errors if not any(b in e for b in BENIGN_CONSOLE)]


def stderr_records(inspector) -> list[dict]:
    return [r for r in records_in(inspector.record) if r.get("kind") == "stderr"]


def test_a_raw_servers_traceback_is_one_row_reachable_from_the_result_in_one_click(page, inspector_factory):
    inspector = inspector_factory(fixture_command("stderr_server"))
    open_tool(page, inspector, "explode")
    card = call_and_wait(page)
    # The result says how many lines the server wrote during the call, and shows the last one.
    stderr = card.locator("details.call-stderr")
    wait_for(lambda: stderr.count() and "4 lines on stderr during this call" in stderr.inner_text(), 30,
             message="the result counts the traceback's lines")
    assert "ValueError: exploded because boom" in stderr.locator("summary").inner_text()
    # One click opens them.
    stderr.locator("summary").click()
    block = stderr.locator("pre.burst-lines")
    assert block.is_visible()
    assert block.inner_text().splitlines() == TRACEBACK
    # The timeline holds ONE row for the traceback: its last line, expanding to every line, unwrapped, monospace.
    rows = page.locator("#timeline-rows > .row.kind-stderr", has_text="exploded because boom")
    wait_for(lambda: rows.count() == 1 and rows.first.get_attribute("data-lines") == "4", 30,
             message="one burst row of 4 lines")
    row = rows.first
    assert row.locator("summary .c-preview").inner_text().strip() == "ValueError: exploded because boom"
    assert page.locator("#timeline-rows > .row", has_text="Traceback (most recent call last)").count() == 1
    # The card's link goes to that row.
    link = stderr.locator("a.row-link").first
    assert link.get_attribute("href") == f"#{row.get_attribute('id')}"
    row.locator("summary").click()
    lines = row.locator("pre.burst-lines")
    lines.wait_for()
    assert lines.inner_text().splitlines() == TRACEBACK
    style = lines.evaluate("el => { const s = getComputedStyle(el); return [s.whiteSpace, s.fontFamily]; }")
    assert style[0] == "pre" and "mono" in style[1].lower()
    # Each line is still its own record.
    recorded = [r["text"] for r in stderr_records(inspector)]
    assert recorded[-4:] == TRACEBACK
    assert real_errors(page) == []


def test_a_json_rpc_error_result_counts_its_stderr_too(page, inspector_factory):
    inspector = inspector_factory(fixture_command("stderr_server"))
    open_tool(page, inspector, "explode_rpc")
    card = call_and_wait(page)
    assert "state-error" in card.get_attribute("class")
    stderr = card.locator("details.call-stderr")
    wait_for(lambda: stderr.count() and "4 lines on stderr" in stderr.inner_text(), 30, message="the count")
    stderr.locator("summary").click()
    assert "ValueError: exploded because boom" in stderr.locator("pre").inner_text()


def fetch_card_again(page, card, shown_version: str | None = None) -> None:
    """Ask for a finished call's card again, the way the long poll does, and wait for the answer's swap to be done
    (the old card marked, to tell). `shown_version`: first make the card shown claim that version (an older one
    makes the copy newer)."""
    card_id = card.get_attribute("id")
    page.evaluate("([id, version]) => { const card = document.getElementById(id); card.dataset.oldCopy = '1';"
                  " if (version !== null) card.dataset.version = version; }", [card_id, shown_version])
    # htmx.ajax's promise settles once the answer is handled: swapped, or its swap dropped.
    page.evaluate("async id => { await htmx.ajax('GET', '/calls/' + id.split('-')[1],"
                  " {target: '#' + id, swap: 'outerHTML'}); }", card_id)


def render_card_again(page, card) -> None:
    """Swap a newer copy of a finished call's card in, and wait until it is in."""
    fetch_card_again(page, card, shown_version="-1")
    wait_for(lambda: card.count() == 1 and card.get_attribute("data-old-copy") is None, 30,
             message="a new copy of the card")


def test_an_opened_stderr_block_stays_open_when_the_card_is_rendered_again(page, inspector_factory):
    """A finished call's card can arrive twice (the websocket's push and the long poll's answer): a block the user
    opened between the two must not close under the pointer (a CI run read an empty block right after the click)."""
    inspector = inspector_factory(fixture_command("stderr_server"))
    open_tool(page, inspector, "explode")
    card = call_and_wait(page)
    stderr = card.locator("details.call-stderr")
    wait_for(lambda: stderr.count() and "4 lines on stderr" in stderr.inner_text(), 30, message="the count")
    stderr.locator("summary").click()
    wait_for(lambda: stderr.evaluate("d => d.open"), 10, message="the block opened")
    render_card_again(page, card)
    assert stderr.evaluate("d => d.open") is True
    assert stderr.locator("pre.burst-lines").inner_text().splitlines() == TRACEBACK
    # Closed by the user, it stays closed through the next copy.
    stderr.locator("summary").click()
    wait_for(lambda: not stderr.evaluate("d => d.open"), 10, message="the block closed")
    render_card_again(page, card)
    assert stderr.evaluate("d => d.open") is False
    assert real_errors(page) == []


def test_a_copy_of_a_finished_card_the_page_already_shows_is_not_swapped_in_again(page, inspector_factory):
    """The final card comes twice (pushed and long-polled): the second copy, no newer, must leave the card shown, and
    its buttons, alone (a click on Copy as bug report was lost, or landed on another button, as it was replaced)."""
    inspector = inspector_factory(fixture_command("stderr_server"))
    open_tool(page, inspector, "quiet")
    card = call_and_wait(page)
    version = card.get_attribute("data-version")
    assert version and version.isdigit()
    fetch_card_again(page, card)
    assert card.get_attribute("data-old-copy") == "1", "the card shown was replaced by a copy no newer"
    assert real_errors(page) == []


def test_a_quiet_call_says_nothing_about_stderr(page, inspector_factory):
    inspector = inspector_factory(fixture_command("stderr_server"))
    open_tool(page, inspector, "quiet")
    card = call_and_wait(page)
    assert "quiet" in card.inner_text()
    assert card.locator("details.call-stderr").count() == 0


def test_an_sdk_tool_that_raises_shows_its_traceback_as_one_row(page, inspector_factory):
    """The SDK logs a chained traceback; its answer is often recorded in the middle of it (two reader threads)."""
    inspector = inspector_factory(fixture_command("sdk_server"))
    open_tool(page, inspector, "fail")
    card = call_and_wait(page)
    stderr = card.locator("details.call-stderr")
    wait_for(lambda: stderr.count() and re.search(r"\d+ lines on stderr", stderr.inner_text()), 30,
             message="the result counts the stderr lines")
    # As many lines as the recording holds after the request (the SDK writes nothing else during the call).
    request = max(r["seq"] for r in records_in(inspector.record)
                  if r.get("kind") == "message" and (r["msg"].get("method") == "tools/call"))
    lines = [r for r in stderr_records(inspector) if r["seq"] > request]
    # Every line counted first: the card is pushed again while lines still come, and a new card starts closed.
    wait_for(lambda: f"{len(lines)} lines on stderr" in stderr.inner_text(), 30, message="every line counted")
    stderr.locator("summary").click()
    assert "ValueError: tool failed on purpose" in stderr.locator("pre").inner_text()
    rows = page.locator("#timeline-rows > .row.kind-stderr", has_text="Traceback (most recent call last)")
    # The burst's row is pushed again whole as it grows: wait for it to hold every line, then read it.
    wait_for(lambda: rows.count() == 1 and rows.first.get_attribute("data-lines") == str(len(lines)), 30,
             message="one row for the traceback, holding every line")
    assert "ValueError: tool failed on purpose" in rows.first.locator("pre.burst-lines").text_content()


def test_a_burst_that_grows_after_it_was_shown_updates_its_row(page, inspector_factory, tmp_path):
    """The row is pushed, opened, then more lines come: the same row (same place, still open) holds them all."""
    script = tmp_path / "drip_server.py"
    flag = tmp_path / "go"
    script.write_text(DRIP_SERVER.replace("FLAG", repr(str(flag))))
    inspector = inspector_factory([fixture_command("raw_server")[0], str(script)])
    open_tool(page, inspector, "drip")
    page.get_by_role("button", name="Call", exact=True).click()
    first = page.locator("#timeline-rows > .row.burst", has_text="drip 0")
    first.wait_for(timeout=60000)
    first.locator("summary").click()
    flag.write_text("go")
    page.locator("#tool-detail .call.state-result").wait_for(timeout=60000)
    page.locator("#timeline-rows > .row.burst", has_text="drip: done").wait_for(timeout=60000)
    # What the recording says, by the burst rule over the recorded times, is what the page shows.
    from inspector.protocol import bursts

    tracker, groups = bursts.Bursts(), {}
    for record in records_in(inspector.record)[1:]:  # after the header
        kind = record.get("kind")
        head = tracker.observe(kind, record.get("dir"), record["seq"], record["t"], record.get("text"))
        if head is not None and str(record.get("text", "")).startswith("drip"):
            groups.setdefault(head, []).append(record["text"])
    def shown():
        return page.locator("#timeline-rows > .row.burst", has_text="drip").evaluate_all(
            "rows => rows.map(r => [Number(r.dataset.seq), r.querySelector('pre').textContent.split('\\n')"
            ".filter(Boolean), r.open])")

    # A grown burst's new copy lands beside the old one and replaces it once settled (timeline_rows.js): read the
    # rows once the page has merged them all.
    wait_for(lambda: [(head, lines) for head, lines, _ in shown()] == list(groups.items()), 30,
             message=f"the page's burst rows to be the recording's bursts {groups}")
    assert shown()[0][2] is True, "the row the user opened stays open as it grows"
    ids = page.locator("#timeline-rows [id]").evaluate_all("els => els.map(e => e.id)")
    assert len(ids) == len(set(ids)), "no row is shown twice"
    assert real_errors(page) == []


DRIP_SERVER = '''
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
TOOLS = [{"name": "drip", "description": "Writes a stderr line every 50 ms until a file appears.",
          "inputSchema": {"type": "object", "properties": {}}}]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "drip", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        n = 0
        while not os.path.exists(FLAG) and n < 2400:
            os.write(2, f"drip {n}\\n".encode())
            n += 1
            time.sleep(0.05)
        os.write(2, b"drip: done\\n")
        result = {"content": [{"type": "text", "text": f"{n} drips"}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\\n")
    sys.stdout.flush()
'''


def test_search_and_the_stderr_filter_show_whole_bursts(page, inspector_factory):
    inspector = inspector_factory(fixture_command("stderr_server"))
    open_tool(page, inspector, "explode")
    call_and_wait(page)
    page.locator("#timeline-rows > .row.burst", has_text="exploded because boom").wait_for()
    # A search hit in the middle line shows its whole burst.
    page.get_by_label("Search").fill("raise ValueError")
    wait_for(lambda: page.locator("#timeline-rows > .row").count() == 1
             and page.locator("#timeline-rows > .row.burst").count() == 1, 30, message="the search hit's burst")
    row = page.locator("#timeline-rows > .row.burst")
    assert row.get_attribute("data-lines") == "4"
    # textContent, not innerText: innerText depends on layout (rows are laid out only on screen, content-visibility),
    # and a loaded run read it empty right after the filtered rows replaced the timeline.
    assert row.locator("summary .c-preview").text_content().strip() == "ValueError: exploded because boom"
    page.get_by_label("Search").fill("")
    page.get_by_label("Kind").select_option("stderr")
    wait_for(lambda: page.locator("#timeline-rows > .row").count() == 2
             and page.locator("#timeline-rows > .row.burst").count() == 2, 30,
             message="the start line and the traceback, as two burst rows")
    texts = page.locator("#timeline-rows > .row.burst summary .c-preview").all_text_contents()
    assert [t.strip() for t in texts] == ["stderr-server: ready", "ValueError: exploded because boom"]


def test_the_log_level_is_its_own_badge_fully_visible_at_1024_with_a_tool_open(page, inspector_factory):
    inspector = inspector_factory(fixture_command("stderr_server"))
    open_tool(page, inspector, "log", width=1024, height=768)
    page.locator("#tool-detail").get_by_role("textbox", name=re.compile("^level")).fill("emergency")
    call_and_wait(page)
    row = page.locator("#timeline-rows > .row", has_text="notifications/message").last
    row.wait_for()
    badge = row.locator("summary").get_by_text("emergency", exact=True)
    assert badge.count() == 1
    box = badge.evaluate("""el => {
        const r = el.getBoundingClientRect();
        let clip = document.documentElement.clientWidth;
        for (let p = el.parentElement; p; p = p.parentElement) {
            const s = getComputedStyle(p);
            if (s.overflowX !== 'visible') clip = Math.min(clip, p.getBoundingClientRect().right);
        }
        return {right: r.right, clip: clip, width: r.width, scroll: el.scrollWidth, client: el.clientWidth};
    }""")
    assert box["width"] > 0 and box["right"] <= box["clip"] + 0.5, box
    assert box["scroll"] <= box["client"], f"the badge's own text is cut: {box}"
    # The method cell holds only the method (nothing that can push the level out).
    assert row.locator("summary .c-method").inner_text().strip() == "notifications/message"
