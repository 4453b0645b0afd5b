"""The server's own requests answered by a person in the page: sampling and elicitation (form and URL)."""

from __future__ import annotations

import json

import pytest

from conftest import fixture_command, records_in, wait_for, wait_tools_listed


def wait_tools(inspector):
    wait_tools_listed(inspector)


def tool_answer(inspector) -> dict:
    text = wait_for(lambda: next((r["msg"]["result"]["content"][0]["text"] for r in records_in(inspector.record)
                                  if r.get("kind") == "message" and r["dir"] == "from_server"
                                  and "content" in (r["msg"].get("result") or {})), None), 10, message="tool answered")
    return json.loads(text)


def pending_key(inspector) -> int:
    import re

    body = wait_for(lambda: (b := inspector.request("GET", "/")[2].decode()) and 'data-ask="' in b and b, 10,
                    message="the ask is shown")
    return int(re.search(r'data-ask="(\d+)"', body).group(1))


def test_capabilities_are_advertised_and_switchable(inspector_factory):
    inspector = inspector_factory(fixture_command("asking_tools_server"))
    wait_tools(inspector)
    init = next(r for r in records_in(inspector.record) if r.get("kind") == "message"
                and r["msg"].get("method") == "initialize")
    assert set(init["msg"]["params"]["capabilities"]) == {"roots", "sampling", "elicitation"}
    assert init["msg"]["params"]["capabilities"]["elicitation"] == {"form": {}, "url": {}}
    inspector.post("/server/advertise", {"roots": "on", "elicitation": "on"})
    inspector.post("/server/restart")
    wait_for(lambda: len([r for r in records_in(inspector.record) if r.get("kind") == "message"
                          and r["msg"].get("method") == "initialize"]) == 2, 15, message="second initialize")
    second = [r for r in records_in(inspector.record) if r.get("kind") == "message"
              and r["msg"].get("method") == "initialize"][1]
    assert second["msg"]["params"]["capabilities"] == {"roots": {"listChanged": True}, "elicitation": {"form": {}}}


def test_sampling_reply_reaches_the_tool(inspector_factory):
    inspector = inspector_factory(fixture_command("asking_tools_server"))
    wait_tools(inspector)
    inspector.post("/tools/ask_sample/call", {"arguments": "{}"})
    key = pending_key(inspector)
    page = inspector.request("GET", "/")[2].decode()
    assert "You are a calculator." in page and "What is 2 + 2?" in page
    status, _, _ = inspector.post(f"/asks/{key}", {"action": "reply", "reply": "4", "model": "me",
                                                    "stopReason": "endTurn"})
    assert status == 200
    assert tool_answer(inspector) == {"content": {"text": "4", "type": "text"}, "model": "me", "role": "assistant",
                                      "stopReason": "endTurn"}


def test_rejected_sampling_is_an_error_to_the_server(inspector_factory):
    inspector = inspector_factory(fixture_command("asking_tools_server"))
    wait_tools(inspector)
    inspector.post("/tools/ask_sample/call", {"arguments": "{}"})
    inspector.post(f"/asks/{pending_key(inspector)}", {"action": "reject"})
    assert tool_answer(inspector)["error"]["code"] == -1


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_elicitation_decline_and_cancel(inspector_factory, action):
    inspector = inspector_factory(fixture_command("asking_tools_server"))
    wait_tools(inspector)
    inspector.post("/tools/ask_form/call", {"arguments": "{}"})
    inspector.post(f"/asks/{pending_key(inspector)}", {"action": action})
    assert tool_answer(inspector) == {"action": action}


def test_url_elicitation_shows_only_http_links(inspector_factory):
    inspector = inspector_factory(fixture_command("asking_tools_server"))
    wait_tools(inspector)
    inspector.post("/tools/ask_url/call", {"arguments": "{}"})
    key = pending_key(inspector)
    assert 'href="https://example.com/login"' in inspector.request("GET", "/")[2].decode()
    inspector.post(f"/asks/{key}", {"action": "accept"})
    assert tool_answer(inspector) == {"action": "accept"}


@pytest.mark.browser
def test_elicitation_form_in_the_browser(page, inspector_factory):
    inspector = inspector_factory(fixture_command("asking_tools_server"))
    wait_tools(inspector)
    page.goto(inspector.url)
    page.locator("#tools-list .tool-item", has_text="ask_form").click()
    page.locator('.tool-detail[data-tool="ask_form"]').wait_for()
    page.get_by_role("button", name="Call", exact=True).click()
    panel = page.locator("#asks-panel")
    panel.locator(".ask-form").wait_for()
    assert "Who are you?" in panel.inner_text()
    panel.get_by_label("name").fill("Ada")
    panel.get_by_label("age").fill("-5")
    panel.get_by_role("button", name="Accept").click()           # below the minimum: refused beside the field
    panel.locator(".field-error").first.wait_for()
    assert not any(r.get("kind") == "message" and r["dir"] == "to_server" and str(r["msg"].get("id", "")).startswith(
        "ask-") for r in records_in(inspector.record)), "nothing was answered yet"
    panel.get_by_label("age").fill("36")
    panel.get_by_role("button", name="Accept").click()
    assert tool_answer(inspector) == {"action": "accept", "content": {"name": "Ada", "age": 36}}
    page.locator(".call.state-result").wait_for()
    assert '"Ada"' in page.locator(".call").inner_text()


def test_a_32042_error_shows_its_url_and_accepting_calls_the_tool_again(inspector_factory):
    inspector = inspector_factory(fixture_command("asking_tools_server"))
    wait_tools(inspector)
    inspector.post("/tools/needs_sign_in/call", {"arguments": "{}"})
    key = pending_key(inspector)
    page = inspector.request("GET", "/")[2].decode()
    assert 'href="https://example.com/sign-in?state=abc"' in page and "error -32042" in page
    assert "Sign in to the example service." in page
    status, _, _ = inspector.post(f"/asks/{key}", {"action": "accept"})
    assert status == 200
    answered = wait_for(lambda: next((r for r in records_in(inspector.record) if r.get("kind") == "message"
                                      and (r["msg"].get("result") or {}).get("content")
                                      == [{"type": "text", "text": "signed in"}]), None), 10,
                        message="the call made again")
    calls = [r for r in records_in(inspector.record) if r.get("kind") == "message"
             and r["msg"].get("method") == "tools/call"]
    assert len(calls) == 2 and answered["msg"]["id"] == calls[1]["msg"]["id"]
    # Nothing is sent back for the URL itself: it was an error, not a request.
    assert not any(r.get("kind") == "message" and r["dir"] == "to_server" and "result" in r["msg"]
                   for r in records_in(inspector.record))
