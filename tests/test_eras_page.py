"""The asking SDK fixture driven through the page's HTTP endpoints (POSTs like htmx), in both protocol eras.

2025-11-25: the server's elicitation/sampling requests wait in the Asks panel and our answers go back as JSON-RPC
responses. 2026-07-28: the call is answered `input_required`; the same asks are answered in the same panel, and
the session retries the call under a new id with `inputResponses` and the echoed `requestState`; the timeline
links the retry to the answer it follows (`follows` in the recording).
"""

from __future__ import annotations

import html
import json
import re

import pytest

from conftest import fixture_command, records_in, wait_for, wait_tools_listed

ORDER_FORM = {"action": "accept", "f:/quantity": "3", "set:/gift_wrap": "true", "f:/colour": '"blue"'}
ORDER_TEXT = "Order confirmed: 3 x teapot, colour blue (Ocean blue), gift-wrapped."


def start(page_factory, era: str):
    inspector = page_factory(fixture_command("asking_sdk_server"), "--protocol", era)
    wait_tools_listed(inspector)
    return inspector


def messages(inspector) -> list[dict]:
    return [r for r in records_in(inspector.record) if r.get("kind") == "message" and isinstance(r["msg"], dict)]


def call(inspector, tool: str, arguments: dict) -> int:
    status, _, body = inspector.post(f"/tools/{tool}/call", {"mode": "json", "arguments": json.dumps(arguments)})
    assert status == 200, body
    return int(re.search(r'id="call-(\d+)"', body.decode()).group(1))


def call_html(inspector, call_id: int, wait: float = 10) -> str:
    status, _, body = inspector.request("GET", f"/calls/{call_id}?wait={wait}")
    assert status == 200
    return body.decode()


def next_ask(inspector, seen: set[int]) -> int:
    """The key of a pending ask not seen before (the Asks panel is on the page)."""
    def find():
        keys = {int(k) for k in re.findall(r'data-ask="(\d+)"', inspector.request("GET", "/")[2].decode())}
        return sorted(keys - seen)
    key = wait_for(find, 10, message="the ask is shown")[0]
    seen.add(key)
    return key


def tool_calls(inspector) -> list[dict]:
    return [r for r in messages(inspector) if r["dir"] == "to_server" and r["msg"].get("method") == "tools/call"]


def answer_to(inspector, request: dict) -> dict:
    return wait_for(lambda: next((r for r in messages(inspector) if r["dir"] == "from_server"
                                  and "method" not in r["msg"] and r["msg"].get("id") == request["msg"]["id"]), None),
                    10, message=f"the answer to id {request['msg']['id']}")


def chain(inspector, tool: str) -> tuple[dict, dict, dict, dict]:
    """Modern era: (first request, its input_required answer, the retry, the retry's answer) for the last call."""
    first = [r for r in tool_calls(inspector) if r["msg"]["params"]["name"] == tool
             and "inputResponses" not in r["msg"]["params"]][-1]
    asked = answer_to(inspector, first)
    retry = wait_for(lambda: next((r for r in tool_calls(inspector) if r.get("follows") == asked["seq"]), None), 10,
                     message="the retry")
    return first, asked, retry, answer_to(inspector, retry)


def timeline(inspector) -> str:
    return inspector.request("GET", "/timeline/rows")[2].decode()


def row_html(page_html: str, seq: int) -> str:
    match = re.search(rf'<details class="row[^"]*" id="r-{seq}".*?</details>', page_html, re.S)
    assert match, f"row #{seq} is in the timeline"
    return match.group(0)


def text_of(html_text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", html_text))


def test_modern_elicitation_sampling_and_roots_over_posts(page_factory):
    inspector = start(page_factory, "modern")
    seen: set[int] = set()

    # An elicitation form: input_required, answered in the Asks panel, retried under a new id.
    call_id = call(inspector, "confirm_order", {"item": "teapot"})
    key = next_ask(inspector, seen)
    waiting = call_html(inspector, call_id, wait=0)
    assert "Waiting for your answer in the Asks panel" in waiting
    status, _, _ = inspector.post(f"/asks/{key}", ORDER_FORM)
    assert status == 200
    done = call_html(inspector, call_id)
    assert "state-result" in done and ORDER_TEXT in text_of(done)
    first, asked, retry, final = chain(inspector, "confirm_order")
    assert asked["msg"]["result"]["resultType"] == "input_required"
    [input_key] = asked["msg"]["result"]["inputRequests"]
    params = retry["msg"]["params"]
    assert retry["msg"]["id"] != first["msg"]["id"]
    assert retry["follows"] == asked["seq"]
    assert params["inputResponses"] == {input_key: {"action": "accept",
                                                    "content": {"quantity": 3, "gift_wrap": True, "colour": "blue"}}}
    assert params["requestState"] == asked["msg"]["result"]["requestState"]
    assert params["arguments"] == {"item": "teapot"} and params["_meta"]["progressToken"] == f"call-{call_id}"
    assert final["msg"]["result"]["content"][0]["text"] == ORDER_TEXT
    assert f'retried as #{retry["seq"]} (round 2)' in done

    # The timeline shows the chain both ways; the expanded records say more.
    rows = timeline(inspector)
    retry_row = row_html(rows, retry["seq"])
    assert f'data-follows="{asked["seq"]}"' in retry_row
    assert f'<a class="chain-link" href="#r-{asked["seq"]}"' in retry_row
    assert f"↳ retry of #{asked['seq']}" in retry_row and "round 2" in retry_row
    assert f"input required: {input_key}" in text_of(row_html(rows, asked["seq"]))
    assert "retry of" not in row_html(rows, first["seq"])
    expanded = inspector.request("GET", f"/records/{asked['seq']}")[2].decode()
    assert f'Retried as <a class="chain-link" href="#r-{retry["seq"]}">' in expanded
    assert "elicitation/create" in text_of(expanded)
    expanded = inspector.request("GET", f"/records/{retry['seq']}")[2].decode()
    assert f'href="#r-{asked["seq"]}">#{asked["seq"]}</a> (round 2)' in expanded

    # Sampling: a reply goes back in inputResponses.
    call_id = call(inspector, "summarize", {"text": "A long story about tea."})
    key = next_ask(inspector, seen)
    inspector.post(f"/asks/{key}", {"action": "reply", "reply": "Tea is good.", "model": "person-1",
                                    "stopReason": "endTurn"})
    assert "Tea is good. (model: person-1)" in text_of(call_html(inspector, call_id))
    _, asked, retry, _ = chain(inspector, "summarize")
    [(input_key, response)] = retry["msg"]["params"]["inputResponses"].items()
    assert asked["msg"]["result"]["inputRequests"][input_key]["method"] == "sampling/createMessage"
    assert response["content"] == {"type": "text", "text": "Tea is good."} and response["model"] == "person-1"

    # Roots: edited in the Server panel, answered without asking anyone.
    status, _, _ = inspector.post("/server/roots", {"roots": "file:///srv/alpha Alpha\nfile:///srv/beta"})
    assert status == 200
    call_id = call(inspector, "list_my_roots", {})
    done = call_html(inspector, call_id)
    assert "state-result" in done and "file:///srv/alpha" in text_of(done)
    _, asked, retry, final = chain(inspector, "list_my_roots")
    assert json.loads(final["msg"]["result"]["content"][0]["text"]) == [
        {"uri": "file:///srv/alpha", "name": "Alpha"}, {"uri": "file:///srv/beta", "name": None}]
    assert list(retry["msg"]["params"]["inputResponses"].values()) == [
        {"roots": [{"uri": "file:///srv/alpha", "name": "Alpha"}, {"uri": "file:///srv/beta"}]}]
    assert not [r for r in messages(inspector) if r["msg"].get("method") == "notifications/roots/list_changed"], \
        "the modern era has no roots/list_changed"
    assert 'data-ask="' not in inspector.request("GET", "/")[2].decode(), "nothing left to answer"


def test_modern_rejected_sampling_ends_the_chain_and_errors_are_explained(page_factory):
    inspector = start(page_factory, "modern")
    call_id = call(inspector, "summarize", {"text": "tea"})
    inspector.post(f"/asks/{next_ask(inspector, set())}", {"action": "reject"})
    failed = call_html(inspector, call_id)
    assert "state-failed" in failed and "rejected" in text_of(failed)
    assert len([r for r in tool_calls(inspector) if r["msg"]["params"]["name"] == "summarize"]) == 1, "no retry"

    # Without the roots capability the server refuses with -32021: the row and the call say what it means.
    inspector.post("/server/advertise", {"sampling": "on", "elicitation": "on"})
    call_id = call(inspector, "list_my_roots", {})
    refused = call_html(inspector, call_id)
    assert "state-error" in refused and "Missing client capability (-32021)" in text_of(refused)
    error = wait_for(lambda: next((r for r in messages(inspector) if (r["msg"].get("error") or {}).get("code")
                                   == -32021), None), 10, message="the -32021 error")
    row = row_html(timeline(inspector), error["seq"])
    assert 'class="error-words"' in row and "Missing client capability (-32021)" in text_of(row)
    assert "Missing client capability (-32021)" in text_of(inspector.request("GET", f"/records/{error['seq']}")[2]
                                                            .decode())


def test_legacy_elicitation_sampling_and_roots_over_posts(page_factory):
    inspector = start(page_factory, "legacy")
    seen: set[int] = set()
    call_id = call(inspector, "confirm_order", {"item": "teapot"})
    key = next_ask(inspector, seen)
    assert "Waiting for the server" in call_html(inspector, call_id, wait=0)
    inspector.post(f"/asks/{key}", ORDER_FORM)
    assert ORDER_TEXT in text_of(call_html(inspector, call_id))
    asked = next(r for r in messages(inspector) if r["msg"].get("method") == "elicitation/create")
    reply = next(r for r in messages(inspector) if r["dir"] == "to_server" and "method" not in r["msg"]
                 and r["msg"].get("id") == asked["msg"]["id"])
    assert reply["msg"]["result"]["content"] == {"quantity": 3, "gift_wrap": True, "colour": "blue"}

    call_id = call(inspector, "summarize", {"text": "tea"})
    inspector.post(f"/asks/{next_ask(inspector, seen)}", {"action": "reply", "reply": "Short.", "model": "m"})
    assert "Short. (model: m)" in text_of(call_html(inspector, call_id))

    inspector.post("/server/roots", {"roots": "file:///srv/gamma Gamma"})
    wait_for(lambda: any(r["msg"].get("method") == "notifications/roots/list_changed" for r in messages(inspector)),
             5, message="roots/list_changed")
    call_id = call(inspector, "list_my_roots", {})
    assert '"file:///srv/gamma"' in text_of(call_html(inspector, call_id))
    assert all("follows" not in r for r in messages(inspector)), "no input_required chain in the handshake era"
    assert "retry of" not in timeline(inspector)


def test_a_viewed_recording_shows_http_exchanges_chains_and_error_words(page_factory, tmp_path):
    """mcp-inspect view: the same notes from a file, with HTTP status and headers, all server text escaped."""
    evil = "<img src=x onerror=window.__x=1>"
    lines = [
        {"kind": "header", "format": "mcp-inspect-recording", "version": 1, "created": "2026-11-30T10:12:03.120Z",
         "inspector": "0.1.0", "target": {"transport": "http", "url": "http://127.0.0.1:9/mcp"}},
        {"seq": 1, "t": 1.0, "kind": "message", "dir": "to_server",
         "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {}}},
         "http": {"method": "POST", "url": "http://127.0.0.1:9/mcp",
                  "headers": {"Mcp-Method": "tools/call", "Mcp-Name": evil}}},
        {"seq": 2, "t": 2.0, "kind": "message", "dir": "from_server",
         "msg": {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "requestState": "s",
                                                       "inputRequests": {evil: {"method": "roots/list"}}}},
         "http": {"status": 200, "via": "post", "headers": {"content-type": "application/json"}}},
        {"seq": 3, "t": 3.0, "kind": "message", "dir": "to_server", "follows": 2,
         "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "t", "inputResponses": {evil: {"roots": []}}, "requestState": "s"}}},
        {"seq": 4, "t": 4.0, "kind": "message", "dir": "from_server",
         "msg": {"jsonrpc": "2.0", "id": 2, "error": {"code": -32022, "message": evil,
                                                      "data": {"supported": ["2027-01-01"], "requested": evil}}},
         "http": {"status": 400, "via": "post", "headers": {"content-type": "application/json",
                                                           "mcp-protocol-version": "2026-07-28"}}},
    ]
    path = tmp_path / "http.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    inspector = page_factory([], view=path)
    rows = inspector.request("GET", "/timeline/rows")[2].decode()
    assert evil not in rows and "&lt;img src=x" in rows
    assert "↳ retry of #2" in row_html(rows, 3) and "round 2" in row_html(rows, 3)
    assert "input required: &lt;img" in row_html(rows, 2)
    assert "Unsupported protocol version (-32022)" in text_of(row_html(rows, 4))

    sent = inspector.request("GET", "/records/1")[2].decode()
    assert '<table class="http-meta">' in sent and evil not in sent
    assert "HTTP POST http://127.0.0.1:9/mcp" in sent and "Mcp-Name" in sent and "&lt;img src=x" in sent
    answered = inspector.request("GET", "/records/4")[2].decode()
    assert "<caption>HTTP 400</caption>" in answered
    assert re.search(r"<th scope=\"row\">mcp-protocol-version</th><td><code>2026-07-28</code>", answered)
    assert "Unsupported protocol version (-32022)" in text_of(answered) and evil not in answered
    chained = inspector.request("GET", "/records/2")[2].decode()
    assert 'Retried as <a class="chain-link" href="#r-3">#3</a>' in chained
    assert "http-meta" not in inspector.request("GET", "/records/3")[2].decode()


@pytest.mark.parametrize("http, title", [({"status": 202, "headers": {}}, "HTTP 202"),
                                         ({"method": "POST", "url": "http://h/mcp"}, "HTTP POST http://h/mcp"),
                                         ({"note": "not POSTed", "method": None, "headers": {}}, "HTTP")])
def test_http_view(http, title):
    from inspector.web.present import http_view

    view = http_view(http)
    assert view["title"] == title
    assert http_view(None) is None and http_view("x") is None
