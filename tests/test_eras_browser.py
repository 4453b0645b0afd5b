"""The asking SDK fixture in a real Chromium, in both protocol eras (`--protocol legacy` and `--protocol modern`).

The same page drives both: an elicitation form and a sampling request are answered in the Asks panel, roots are
edited in the Server panel, a slow call shows progress and is cancelled. In the modern era the questions come
inside an `input_required` answer and the call is retried under a new id; the timeline links the two.
One inspector per era is shared by the tests of that era (browser tests are slow enough as they are).
"""

from __future__ import annotations

import pytest

from conftest import fixture_command, live_synced, records_in, start_inspector, wait_tools_listed

pytestmark = pytest.mark.browser

ORDER_TEXT = "Order confirmed: 3 x teapot, colour blue (Ocean blue), gift-wrapped."


@pytest.fixture(scope="module", params=["legacy", "modern"])
def inspector(request, tmp_path_factory, chromium_path):
    era = request.param
    running = start_inspector(tmp_path_factory.mktemp(f"eras-{era}"), fixture_command("asking_sdk_server"),
                              "--protocol", era)
    running.extra["era"] = era
    try:
        wait_tools_listed(running)
        yield running
    finally:
        running.stop()


def messages(inspector) -> list[dict]:
    return [r for r in records_in(inspector.record) if r.get("kind") == "message" and isinstance(r["msg"], dict)]


def csp_errors(page) -> list[str]:
    return [e for e in page.console_errors if "Content Security Policy" in e or "Refused to" in e]


def open_tool(page, inspector, name: str):
    page.goto(inspector.url)
    live_synced(page)
    page.locator("#tools-list .tool-item", has_text=name).first.click()
    page.locator(f'.tool-detail[data-tool="{name}"]').wait_for()


def call_tool(page, inspector, name: str, fields: dict[str, str] | None = None):
    """Open the tool, fill its form, press Call; returns the call element (its id is fixed once it exists)."""
    open_tool(page, inspector, name)
    for key, value in (fields or {}).items():
        page.locator(f'.tool-detail [name="f:/{key}"]').fill(value)
    # An opened tool shows its latest call: wait for the card of a call that was not there before the click.
    before = page.evaluate("() => Array.from(document.querySelectorAll('#tool-result .call'), c => c.id)")
    page.get_by_role("button", name="Call", exact=True).click()
    handle = page.wait_for_function("ids => { const c = document.querySelector('#tool-result .call');"
                                    " return c && !ids.includes(c.id) ? c.id : null; }", arg=before)
    return page.locator(f"#{handle.json_value()}")


def check_chain(page, inspector, tool: str) -> dict:
    """Modern era: the recording holds request → input_required → retry (new id, follows, inputResponses,
    requestState), and the timeline links the retry to the answer and back. Returns the retry record."""
    records = messages(inspector)
    first = [r for r in records if r["dir"] == "to_server" and r["msg"].get("method") == "tools/call"
             and r["msg"]["params"]["name"] == tool and "inputResponses" not in r["msg"]["params"]][-1]
    asked = next(r for r in records if r["dir"] == "from_server" and r["msg"].get("id") == first["msg"]["id"])
    result = asked["msg"]["result"]
    assert result["resultType"] == "input_required"
    retry = next(r for r in records if r.get("follows") == asked["seq"])
    assert retry["msg"]["id"] != first["msg"]["id"]
    assert retry["msg"]["method"] == "tools/call" and retry["msg"]["params"]["name"] == tool
    assert set(retry["msg"]["params"]["inputResponses"]) == set(result["inputRequests"])
    assert retry["msg"]["params"]["requestState"] == result["requestState"]
    assert retry["msg"]["params"]["arguments"] == first["msg"]["params"]["arguments"]

    retry_row = page.locator(f"#r-{retry['seq']}")
    link = retry_row.locator("summary a.chain-link")
    link.wait_for()
    assert link.get_attribute("href") == f"#r-{asked['seq']}"
    assert link.inner_text() == f"↳ retry of #{asked['seq']}"
    assert "round 2" in retry_row.locator("summary").inner_text()
    answer_row = page.locator(f"#r-{asked['seq']}")
    assert "input required: " + ", ".join(result["inputRequests"]) in answer_row.locator("summary").inner_text()
    back = answer_row.locator("summary a.chain-next")  # added by app.js once the retry row is in the page
    back.wait_for()
    assert back.get_attribute("href") == f"#r-{retry['seq']}"
    link.click()
    page.wait_for_function("seq => location.hash === '#r-' + seq", arg=asked["seq"])
    return retry


def test_elicitation_form_in_the_asks_panel(page, inspector):
    call = call_tool(page, inspector, "confirm_order", {"item": "teapot"})
    form = page.locator("#asks-panel .ask-form")
    form.wait_for()
    assert "How would you like your teapot?" in form.inner_text()
    if inspector.extra["era"] == "modern":
        assert "input_required" in form.locator(".ask-head").inner_text()
        # The call and the Asks panel are two regions pushed one after the other: wait for the call's words.
        call.get_by_text("Waiting for your answer in the Asks panel").wait_for(timeout=5000)
    form.locator('[name="f:/quantity"]').fill("3")
    form.locator('[name="set:/gift_wrap"]').select_option("true")
    form.locator('[name="f:/colour"]').select_option(label="Ocean blue")
    form.get_by_role("button", name="Accept").click()
    page.locator("#asks-panel").wait_for(state="hidden")
    page.locator(f"#{call.get_attribute('id')}.state-result").wait_for()
    assert ORDER_TEXT in call.inner_text()
    if inspector.extra["era"] == "modern":
        retry = check_chain(page, inspector, "confirm_order")
        assert list(retry["msg"]["params"]["inputResponses"].values()) == [
            {"action": "accept", "content": {"quantity": 3, "gift_wrap": True, "colour": "blue"}}]
        assert f"retried as #{retry['seq']}" in call.inner_text()
    else:
        assert not any("follows" in r for r in messages(inspector))
        assert page.locator("#timeline-rows a.chain-link").count() == 0
    assert csp_errors(page) == []


def test_sampling_request_in_the_asks_panel(page, inspector):
    call = call_tool(page, inspector, "summarize", {"text": "A long story about tea."})
    ask = page.locator("#asks-panel .ask-sampling")
    ask.wait_for()
    assert "A long story about tea." in ask.inner_text() and "You write one-sentence summaries." in ask.inner_text()
    ask.get_by_label("Reply (as the model)").fill("Tea is good.")
    ask.get_by_label("Model", exact=True).fill("a-person")
    ask.get_by_role("button", name="Send reply").click()
    page.locator(f"#{call.get_attribute('id')}.state-result").wait_for()
    assert "Tea is good. (model: a-person)" in call.inner_text()
    if inspector.extra["era"] == "modern":
        retry = check_chain(page, inspector, "summarize")
        [answer] = retry["msg"]["params"]["inputResponses"].values()
        assert answer["content"] == {"type": "text", "text": "Tea is good."} and answer["model"] == "a-person"


def test_roots_edited_in_the_server_panel(page, inspector):
    era = inspector.extra["era"]
    page.goto(inspector.url)
    page.locator("#server-panel .roots-edit > summary").click()
    page.locator("#roots-text").fill(f"file:///srv/{era}-one One\nfile:///srv/{era}-two")
    page.get_by_role("button", name="Save roots").click()
    page.wait_for_function("era => document.getElementById('roots-text').value.includes('/srv/' + era + '-two')",
                           arg=era)
    call = call_tool(page, inspector, "list_my_roots")
    page.locator(f"#{call.get_attribute('id')}.state-result").wait_for()
    assert f"file:///srv/{era}-one" in call.inner_text() and f"file:///srv/{era}-two" in call.inner_text()
    final = next(r for r in reversed(messages(inspector)) if r["dir"] == "from_server"
                 and "file:///srv/" in str((r["msg"].get("result") or {}).get("content")))
    assert final["msg"]["result"]["content"][0]["text"] == (
        f'[{{"uri": "file:///srv/{era}-one", "name": "One"}}, {{"uri": "file:///srv/{era}-two", "name": null}}]')
    if era == "modern":
        retry = check_chain(page, inspector, "list_my_roots")
        assert list(retry["msg"]["params"]["inputResponses"].values()) == [
            {"roots": [{"uri": f"file:///srv/{era}-one", "name": "One"}, {"uri": f"file:///srv/{era}-two"}]}]
    else:
        assert any(r["msg"].get("method") == "notifications/roots/list_changed" for r in messages(inspector))
        assert any(r["msg"].get("method") == "roots/list" for r in messages(inspector))


def test_progress_bar_moves_and_cancel_stops_the_server(page, inspector):
    # 600 steps of 0.1 s: far longer than any machine needs to click Cancel, and the cancel ends it early.
    call = call_tool(page, inspector, "slow_count", {"steps": "600", "delay": "0.1"})
    call_id = call.get_attribute("id")
    bar = page.locator(f"#{call_id} progress")
    bar.wait_for()
    page.wait_for_function("id => { const p = document.querySelector('#' + id + ' progress');"
                           " return p !== null && p.max === 600 && p.value >= 1; }", arg=call_id)
    first = float(bar.get_attribute("value"))
    page.wait_for_function("([id, v]) => { const p = document.querySelector('#' + id + ' progress');"
                           " return p !== null && p.value > v; }", arg=[call_id, first])
    page.get_by_role("button", name="Cancel", exact=True).click()
    page.locator(f"#{call_id}.state-failed").wait_for()
    assert "cancelled" in call.inner_text()
    row = page.locator("#timeline-rows .row.kind-stderr", has_text="slow_count cancelled at step")
    row.wait_for()
    request = next(r for r in reversed(messages(inspector)) if r["dir"] == "to_server"
                   and r["msg"].get("method") == "tools/call" and r["msg"]["params"]["name"] == "slow_count")
    cancelled = next(r for r in messages(inspector) if r["msg"].get("method") == "notifications/cancelled")
    assert cancelled["msg"]["params"]["requestId"] == request["msg"]["id"]
    stderr = [r for r in records_in(inspector.record) if r.get("kind") == "stderr" and "cancelled" in r["text"]]
    assert stderr and stderr[0]["seq"] > cancelled["seq"]
    steps = [r for r in messages(inspector) if r["msg"].get("method") == "notifications/progress"
             and r["msg"]["params"].get("progressToken") == request["msg"]["params"]["_meta"]["progressToken"]]
    assert 2 <= len(steps) < 600
    if inspector.extra["era"] == "modern":
        assert request["msg"]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert any(r["msg"].get("method") == "notifications/message" for r in messages(inspector)), \
            "the log level travels in _meta"


def test_a_cancel_pressed_while_progress_replaces_the_card_is_not_lost(page, inspector):
    """Each progress step re-renders the pending call's card, Cancel button included; a press on the old button and
    a release after it was replaced made no click at all (seen under load), so the cancel never left."""
    call = call_tool(page, inspector, "slow_count", {"steps": "600", "delay": "0.1"})
    call_id = call.get_attribute("id")
    page.wait_for_function("id => { const p = document.querySelector('#' + id + ' progress');"
                           " return p !== null && p.value >= 1; }", arg=call_id)
    # The pressed button is the one under the pointer at the press (the card may be replaced at any moment).
    page.evaluate("() => document.addEventListener('pointerdown', e => {"
                  " window.__pressed = e.target.closest('.cancel-call'); }, true)")
    centre = page.wait_for_function("id => { const b = document.querySelector('#' + id + ' .cancel-call');"
                                    " const r = b && b.getBoundingClientRect();"
                                    " return r && r.width ? [r.x + r.width / 2, r.y + r.height / 2] : null; }",
                                    arg=call_id).json_value()
    page.mouse.move(*centre)
    page.mouse.down()
    page.wait_for_function("() => window.__pressed && !window.__pressed.isConnected")  # a progress step replaced it
    page.mouse.up()
    page.locator(f"#{call_id}.state-failed").wait_for()
    assert "cancelled" in call.inner_text()
    request = next(r for r in reversed(messages(inspector)) if r["dir"] == "to_server"
                   and r["msg"].get("method") == "tools/call" and r["msg"]["params"]["name"] == "slow_count")
    assert any(r["msg"].get("method") == "notifications/cancelled"
               and r["msg"]["params"]["requestId"] == request["msg"]["id"] for r in messages(inspector))
