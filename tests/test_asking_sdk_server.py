"""The asking SDK fixture (tests/fixtures/asking_sdk_server.py) driven by the product's client, in both eras.

2025-11-25: the server asks mid-call with its own requests (elicitation/create, sampling/createMessage,
roots/list) and answers the call once we answer them.  2026-07-28: the call answers ``resultType:
"input_required"`` with ``inputRequests`` and a ``requestState``; we retry with a new id carrying
``inputResponses`` and the echoed ``requestState``.
"""

from __future__ import annotations

import json

import pytest

from conftest import fixture_command
from fixture_client import FixtureClient

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ASKING_CAPS = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
ROOTS = {"roots": [{"uri": "file:///home/ann/project", "name": "project"}, {"uri": "file:///tmp/scratch"}]}
SAMPLE = {"role": "assistant", "content": {"type": "text", "text": "A short summary."}, "model": "test-model-1",
          "stopReason": "endTurn"}
ORDER = {"action": "accept", "content": {"quantity": 3, "gift_wrap": True, "colour": "blue"}}
ORDER_TEXT = "Order confirmed: 3 x teapot, colour blue (Ocean blue), gift-wrapped."


@pytest.fixture
def server():
    wires: list[FixtureClient] = []

    def make() -> FixtureClient:
        wire = FixtureClient(fixture_command("asking_sdk_server"))
        wires.append(wire)
        return wire

    yield make
    for wire in wires:
        wire.close()


def legacy(server) -> FixtureClient:
    wire = server()
    init = wire.request("initialize", {"protocolVersion": LEGACY, "capabilities": ASKING_CAPS,
                                       "clientInfo": {"name": "test", "version": "0"}}, timeout=20)
    assert init["result"]["protocolVersion"] == LEGACY
    assert init["result"]["serverInfo"]["name"] == "asking-sdk-fixture"
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return wire


def meta(**extra) -> dict:
    return {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": ASKING_CAPS,
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"}, **extra}


def modern(server) -> FixtureClient:
    wire = server()
    found = wire.request("server/discover", {"_meta": meta()}, timeout=20)["result"]
    assert found["resultType"] == "complete" and found["supportedVersions"] == [MODERN]
    return wire


def text_of(result: dict) -> str:
    assert result.get("isError") is False, result
    return result["content"][0]["text"]


def ask_modern(wire: FixtureClient, name: str, arguments: dict) -> tuple[dict, str, dict]:
    """Call a tool in the modern era and expect input_required with one request: (call params, key, request)."""
    params = {"name": name, "arguments": arguments, "_meta": meta()}
    first = wire.request("tools/call", params)["result"]
    assert first["resultType"] == "input_required"
    assert set(first) == {"resultType", "inputRequests", "requestState", "_meta"}
    assert isinstance(first["requestState"], str) and first["requestState"]
    [(key, input_request)] = first["inputRequests"].items()
    return {**params, "requestState": first["requestState"]}, key, input_request


def retry(wire: FixtureClient, params: dict, key: str, response: dict) -> dict:
    """Retry the call with a new id, the answer under its key and the echoed requestState."""
    request_id = wire.start("tools/call", {**params, "inputResponses": {key: response}})
    return wire.response(request_id)["result"]


# -- 2025-11-25: the server asks with its own requests, mid-call ---------------------------------------------

def test_legacy_confirm_order_elicits_a_form(server):
    wire = legacy(server)
    tools = {t["name"]: t for t in wire.request("tools/list")["result"]["tools"]}
    assert set(tools) == {"confirm_order", "summarize", "list_my_roots", "slow_count"}
    assert tools["confirm_order"]["inputSchema"]["properties"] == {"item": {"title": "Item", "type": "string"}}
    assert set(tools["slow_count"]["inputSchema"]["properties"]) == {"steps", "delay"}

    call = wire.start("tools/call", {"name": "confirm_order", "arguments": {"item": "teapot"}})
    ask = wire.server_request("elicitation/create")
    params = ask["params"]
    assert params["mode"] == "form" and params["message"] == "How would you like your teapot?"
    schema = params["requestedSchema"]
    assert schema["required"] == ["quantity"]
    assert schema["properties"]["quantity"] == {"type": "integer", "minimum": 1, "maximum": 10, "title": "Quantity",
                                                "description": "How many, 1 to 10"}
    assert schema["properties"]["gift_wrap"]["type"] == "boolean"
    assert schema["properties"]["colour"]["oneOf"] == [{"const": "red", "title": "Cherry red"},
                                                       {"const": "green", "title": "Forest green"},
                                                       {"const": "blue", "title": "Ocean blue"}]
    assert "enum" not in schema["properties"]["colour"]
    wire.answer(ask, ORDER)
    assert text_of(wire.response(call)["result"]) == ORDER_TEXT


def test_legacy_declined_order(server):
    wire = legacy(server)
    call = wire.start("tools/call", {"name": "confirm_order", "arguments": {"item": "kettle"}})
    wire.answer(wire.server_request("elicitation/create"), {"action": "decline"})
    assert text_of(wire.response(call)["result"]) == "Order for kettle not placed: the user chose decline."


def test_legacy_summarize_samples_and_roots_are_listed(server):
    wire = legacy(server)
    call = wire.start("tools/call", {"name": "summarize", "arguments": {"text": "A long story about tea."}})
    ask = wire.server_request("sampling/createMessage")
    assert ask["params"]["maxTokens"] == 200
    assert ask["params"]["messages"][0]["content"]["text"].endswith("A long story about tea.")
    wire.answer(ask, SAMPLE)
    assert text_of(wire.response(call)["result"]) == "A short summary. (model: test-model-1)"

    call = wire.start("tools/call", {"name": "list_my_roots", "arguments": {}})
    wire.answer(wire.server_request("roots/list"), ROOTS)
    assert json.loads(text_of(wire.response(call)["result"])) == [
        {"uri": "file:///home/ann/project", "name": "project"}, {"uri": "file:///tmp/scratch", "name": None}]


def test_legacy_slow_count_progress_logs_and_cancellation(server):
    wire = legacy(server)
    done = wire.request("tools/call", {"name": "slow_count", "arguments": {"steps": 3, "delay": 0.05},
                                       "_meta": {"progressToken": "count-1"}})
    assert text_of(done["result"]) == "Counted to 3."
    progress = wire.notifications("notifications/progress")
    assert [(p["progressToken"], p["progress"], p["total"]) for p in progress] == [("count-1", 1, 3),
                                                                                  ("count-1", 2, 3),
                                                                                  ("count-1", 3, 3)]
    assert progress[0]["message"] == "Counted 1 of 3"
    logs = wire.notifications("notifications/message")
    assert [m["data"] for m in logs] == [f"slow_count step {n} of 3" for n in (1, 2, 3)]

    call = wire.start("tools/call", {"name": "slow_count", "arguments": {"steps": 50, "delay": 0.1},
                                     "_meta": {"progressToken": "count-2"}})
    wire.wait_for(lambda m: m.get("method") == "notifications/progress"
                  and m["params"]["progressToken"] == "count-2", what="first progress")
    wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": call, "reason": "test"}})
    wire.wait_for(lambda line: "slow_count cancelled at step" in line, source="stderr", what="cancel on stderr")
    # Still serving; and the server writes its messages in order, so an answer to the cancelled call would be here
    # before the ping's (the tool wrote to stderr on its way out, before the ping was even sent).
    assert wire.request("ping")["result"] == {}
    assert not [m for m in wire.messages if m.get("id") == call], "a cancelled request gets no response"
    assert len([p for p in wire.notifications("notifications/progress") if p["progressToken"] == "count-2"]) < 50


# -- 2026-07-28: input_required, then a retry with inputResponses + requestState ----------------------------

def test_modern_confirm_order_is_input_required_then_retried(server):
    wire = modern(server)
    params, key, input_request = ask_modern(wire, "confirm_order", {"item": "teapot"})
    assert key.endswith(":ask_order")  # the SDK keys by the resolver's module:qualname
    assert input_request["method"] == "elicitation/create"
    assert input_request["params"]["mode"] == "form"
    assert input_request["params"]["message"] == "How would you like your teapot?"
    assert input_request["params"]["requestedSchema"]["properties"]["colour"]["oneOf"][2] == {
        "const": "blue", "title": "Ocean blue"}
    final = retry(wire, params, key, ORDER)
    assert final["resultType"] == "complete"
    assert text_of(final) == ORDER_TEXT
    assert final["structuredContent"] == {"result": ORDER_TEXT}
    assert not [m for m in wire.messages if m.get("method") in ("elicitation/create", "sampling/createMessage")]


def test_modern_retry_without_an_answer_asks_again(server):
    wire = modern(server)
    params, key, _ = ask_modern(wire, "confirm_order", {"item": "mug"})
    again = wire.request("tools/call", params)["result"]  # echoed state, but no inputResponses
    assert again["resultType"] == "input_required" and list(again["inputRequests"]) == [key]
    # An answer without the echoed requestState is not taken: the question is asked again.
    unstated = {k: v for k, v in params.items() if k != "requestState"}
    again = wire.request("tools/call", {**unstated, "inputResponses": {key: ORDER}})["result"]
    assert again["resultType"] == "input_required" and list(again["inputRequests"]) == [key]
    # The state is sealed by the server: an altered one is refused.
    forged = wire.request("tools/call", {**params, "requestState": params["requestState"][:-4] + "AAAA",
                                         "inputResponses": {key: ORDER}})
    assert forged["error"]["code"] == -32602 and forged["error"]["data"] == {"reason": "invalid_request_state"}
    declined = retry(wire, params, key, {"action": "cancel"})
    assert text_of(declined) == "Order for mug not placed: the user chose cancel."


def test_modern_summarize_and_list_my_roots(server):
    wire = modern(server)
    params, key, input_request = ask_modern(wire, "summarize", {"text": "A long story about tea."})
    assert key.endswith(":ask_summary")
    assert input_request["method"] == "sampling/createMessage"
    assert input_request["params"]["maxTokens"] == 200
    assert input_request["params"]["systemPrompt"] == "You write one-sentence summaries."
    assert text_of(retry(wire, params, key, SAMPLE)) == "A short summary. (model: test-model-1)"

    params, key, input_request = ask_modern(wire, "list_my_roots", {})
    assert input_request == {"method": "roots/list"}  # no params at all
    roots = json.loads(text_of(retry(wire, params, key, ROOTS)))
    assert [r["uri"] for r in roots] == ["file:///home/ann/project", "file:///tmp/scratch"]


def test_modern_capabilities_are_checked_per_request(server):
    wire = modern(server)
    bare = {**meta(), "io.modelcontextprotocol/clientCapabilities": {}}
    refused = wire.request("tools/call", {"name": "list_my_roots", "arguments": {}, "_meta": bare})
    assert refused["error"]["code"] == -32021
    assert refused["error"]["data"] == {"requiredCapabilities": {"roots": {}}}


def test_modern_slow_count_progress_logs_and_cancellation(server):
    wire = modern(server)
    # Without a progressToken or a logLevel in _meta: no progress, no log notifications at all.
    quiet = wire.request("tools/call", {"name": "slow_count", "arguments": {"steps": 2, "delay": 0.05},
                                        "_meta": meta()})["result"]
    assert quiet["resultType"] == "complete" and text_of(quiet) == "Counted to 2."
    assert wire.notifications("notifications/progress") == [] and wire.notifications("notifications/message") == []

    loud = wire.request("tools/call", {"name": "slow_count", "arguments": {"steps": 2, "delay": 0.05},
                                       "_meta": meta(progressToken="p-1",
                                                     **{"io.modelcontextprotocol/logLevel": "info"})})["result"]
    assert text_of(loud) == "Counted to 2."
    assert [(p["progressToken"], p["progress"]) for p in wire.notifications("notifications/progress")] == [
        ("p-1", 1), ("p-1", 2)]
    assert [m["level"] for m in wire.notifications("notifications/message")] == ["info", "info"]

    warning_only = wire.request("tools/call", {"name": "slow_count", "arguments": {"steps": 1, "delay": 0.01},
                                               "_meta": meta(**{"io.modelcontextprotocol/logLevel": "warning"})})
    assert text_of(warning_only["result"]) == "Counted to 1."
    assert len(wire.notifications("notifications/message")) == 2  # info is below warning: not sent

    call = wire.start("tools/call", {"name": "slow_count", "arguments": {"steps": 50, "delay": 0.1},
                                     "_meta": meta(progressToken="p-2")})
    wire.wait_for(lambda m: m.get("method") == "notifications/progress" and m["params"]["progressToken"] == "p-2",
                  what="first progress")
    wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": call}})
    wire.wait_for(lambda line: "slow_count cancelled at step" in line, source="stderr", what="cancel on stderr")
    # The later request's answer is the barrier: an answer to the cancelled call would have been written first.
    assert wire.request("tools/list", {"_meta": meta()})["result"]["tools"]
    assert not [m for m in wire.messages if m.get("id") == call]
