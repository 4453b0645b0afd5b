"""The server's questions in sight (issue 16 item 3): a banner pinned at the top of the page with a count, the
question in the card of the call that caused it, Cancel for URL elicitation, titled choices, required fields
flagged before sending, and the sampling request's parameters. Real mcp-inspect processes, a real browser."""

from __future__ import annotations

import re

import pytest

from conftest import fixture_command, records_in, wait_for, wait_tools_listed

WIDTHS = ((1024, 768), (1280, 800), (1920, 1080))
SERVER = "asks_forms_server"


def answers_to_server(inspector, request_id: str) -> list[dict]:
    """What mcp-inspect sent back for the server's request `request_id`."""
    return [r["msg"] for r in records_in(inspector.record) if r.get("kind") == "message"
            and r["dir"] == "to_server" and r["msg"].get("id") == request_id and "method" not in r["msg"]]


def open_tool(page, name: str):
    """Scroll the tool list to the tool (it is far down the sidebar), open it and wait for its pane."""
    item = page.locator("#tools-list .tool-item").filter(has=page.locator(".tool-name", has_text=name)).first
    item.click()  # scrolls the sidebar down to it first (and waits out a re-rendered list)
    page.locator(f'.tool-detail[data-tool="{name}"]').wait_for()


def in_viewport(page, locator) -> bool:
    box = locator.bounding_box()
    size = page.viewport_size
    return bool(box) and box["y"] >= 0 and box["x"] >= 0 and box["y"] + box["height"] <= size["height"] \
        and box["x"] + box["width"] <= size["width"]


@pytest.mark.browser
@pytest.mark.parametrize("width,height", WIDTHS)
def test_a_sampling_request_from_a_scrolled_tool_list_is_in_sight(browser, inspector_factory, width, height):
    inspector = inspector_factory(fixture_command(SERVER))
    wait_tools_listed(inspector)
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(inspector.url)
        # The user scrolls the tool list down to the tool, then opens it. Below 1200 px the sidebar then steps
        # aside for the tool pane (static/layout.css), so its scroll is looked at before, where it is the premise.
        # (hover, not scroll_into_view_if_needed: like click, it waits out a tool list re-rendered under it)
        page.locator("#tools-list .tool-item").filter(has=page.locator(".tool-name", has_text="sample")).first.hover()
        scrolled = "() => document.querySelector('.sidebar').scrollTop > 0 || document.scrollingElement.scrollTop > 0"
        assert page.evaluate(scrolled), "the tool list was scrolled down"
        open_tool(page, "sample")
        sidebar_shown = page.evaluate("getComputedStyle(document.querySelector('.sidebar')).display !== 'none'")
        if width < 1200:
            assert not sidebar_shown, "the sidebar steps aside for the open tool"
        else:
            assert sidebar_shown and page.evaluate(scrolled), "the tool list is still scrolled down"
        page.get_by_role("button", name="Call", exact=True).click()
        banner = page.locator("#ask-banner")
        banner.wait_for()
        assert "The server asks you (1)" in banner.inner_text()
        assert in_viewport(page, banner), "the banner is pinned in the viewport"
        card_ask = page.locator(".call.state-pending .call-ask")
        card_ask.wait_for()
        assert "Say hi" in card_ask.inner_text() and in_viewport(page, card_ask), "the call's card shows the question"
        card_ask.get_by_role("button", name="Answer").click()
        form = page.locator("#asks-panel .ask-sampling")
        wait_for(lambda: in_viewport(page, form.locator("textarea[name=reply]")), 10,
                 message="the reply box brought into view")
        assert page.evaluate("document.activeElement.name") == "reply"
        form.locator("textarea[name=reply]").fill("hello there")
        form.get_by_role("button", name="Send reply").click()
        page.locator(".call.state-result").wait_for()
        assert "hello there" in page.locator(".call.state-result").inner_text()
        wait_for(lambda: banner.is_hidden(), 10, message="the banner gone once answered")
    finally:
        context.close()


@pytest.mark.browser
def test_answering_in_one_tab_clears_the_banner_in_the_other(browser, inspector_factory):
    inspector = inspector_factory(fixture_command(SERVER))
    wait_tools_listed(inspector)
    one, two = browser.new_context(), browser.new_context()
    try:
        first, second = one.new_page(), two.new_page()
        first.goto(inspector.url)
        second.goto(inspector.url)
        open_tool(first, "open_url")
        first.get_by_role("button", name="Call", exact=True).click()
        second.locator("#ask-banner", has_text="The server asks you (1)").wait_for()
        first.locator("#asks-panel .ask-url").get_by_role("button", name="Cancel").click()
        wait_for(lambda: answers_to_server(inspector, "ask-3"), 10, message="the answer sent")
        assert answers_to_server(inspector, "ask-3")[0]["result"] == {"action": "cancel"}
        second.locator("#ask-banner").wait_for(state="hidden")
        first.locator("#ask-banner").wait_for(state="hidden")
    finally:
        one.close()
        two.close()


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_calls_card_shows_the_question_in_both_eras(page_factory, era):
    """2025-11-25: a server request during the call; 2026-07-28: an input_required round of the call itself."""
    inspector = page_factory(fixture_command("asking_sdk_server"), "--protocol", era)
    wait_tools_listed(inspector)
    status, _, body = inspector.post("/tool/call?name=confirm_order",
                                     {"mode": "json", "arguments": '{"item": "teapot"}', "action": "call"})
    assert status == 200
    call_id = re.search(r'id="call-(\d+)"', body.decode()).group(1)

    def card():
        html = inspector.request("GET", f"/calls/{call_id}?wait=5&v=0")[2].decode()
        return html if "call-ask" in html else None

    html = wait_for(card, 30, message="the question in the call's card")
    assert "The server asks you" in html and "elicitation/create" in html and 'data-ask-jump="' in html


def test_the_sampling_form_shows_the_requests_parameters(inspector_factory):
    inspector = inspector_factory(fixture_command(SERVER))
    wait_tools_listed(inspector)
    inspector.post("/tool/call?name=sample", {"mode": "form", "action": "call"})
    body = wait_for(lambda: (b := inspector.request("GET", "/")[2].decode()) and "ask-sampling" in b and b, 20,
                    message="the sampling ask in the page")
    panel = body[body.index('id="asks-panel"'):]
    for shown in ("maxTokens</dt><dd>77", "temperature</dt><dd>0.25", "<code>&#34;STOP&#34;</code>",
                  "<code>claude-haiku</code>", "speedPriority</dt><dd>0.9", "You are terse."):
        assert shown in panel, shown


def test_elicitation_shows_titles_and_flags_an_empty_required_field(inspector_factory):
    inspector = inspector_factory(fixture_command(SERVER))
    wait_tools_listed(inspector)
    inspector.post("/tool/call?name=pick", {"mode": "form", "action": "call"})
    body = wait_for(lambda: (b := inspector.request("GET", "/")[2].decode()) and "ask-form" in b and b, 20,
                    message="the elicitation in the page")
    key = re.search(r'data-ask="(\d+)"', body).group(1)
    assert ">Cats</option>" in body and ">Dogs</option>" in body, "enumNames are the choices' titles"
    assert ">Red</option>" in body and ">Blue</option>" in body, "oneOf const+title choices"
    status, _, answer = inspector.post(f"/asks/{key}", {"action": "accept", "f:/name": "", "f:/pet": '"pet-2"'})
    assert status == 422 and "field-error" in answer.decode(), "an empty required name is flagged"
    assert not answers_to_server(inspector, "ask-2"), "nothing was sent"
    status, _, _ = inspector.post(f"/asks/{key}", {"action": "accept", "f:/name": "Ada", "f:/pet": '"pet-2"'})
    assert status == 200
    wait_for(lambda: answers_to_server(inspector, "ask-2"), 10, message="the answer sent")
    assert answers_to_server(inspector, "ask-2")[0]["result"] == {"action": "accept",
                                                                "content": {"name": "Ada", "pet": "pet-2"}}


def test_a_prompts_required_argument_left_empty_is_flagged_before_sending(inspector_factory):
    inspector = inspector_factory(fixture_command(SERVER))
    wait_tools_listed(inspector)
    status, _, answer = inspector.post("/prompts/get", {"name": "weather", "a:city": ""})
    assert status == 422 and "city" in answer.decode() and "required argument left empty" in answer.decode().lower()
    assert not [r for r in records_in(inspector.record) if r.get("kind") == "message"
                and r["msg"].get("method") == "prompts/get"], "nothing was sent"
    status, _, answer = inspector.post("/prompts/get", {"name": "weather", "a:city": "", "anyway": "1"})
    assert status == 200 and "Weather in ?" in answer.decode(), "Get anyway sends it, to test the server's check"
    status, _, answer = inspector.post("/prompts/get", {"name": "weather", "a:city": "Zürich"})
    assert status == 200 and "Weather in Zürich?" in answer.decode()
