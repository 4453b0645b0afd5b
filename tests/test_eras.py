"""The pure era logic: --protocol values, judging a server/discover probe, modern _meta, input rounds, words for
error codes; and the roots editor's text format."""

from __future__ import annotations

import pytest

from inspector.protocol import eras
from inspector.protocol.roots import parse_roots, roots_text


@pytest.mark.parametrize("text, era, version, label", [
    ("auto", "auto", None, "auto"),
    ("legacy", "legacy", "2025-11-25", "legacy"),
    ("Modern", "modern", "2026-07-28", "modern"),
    ("2025-06-18", "legacy", "2025-06-18", "2025-06-18"),
    ("2024-11-05", "legacy", "2024-11-05", "2024-11-05"),
    ("2026-07-28", "modern", "2026-07-28", "modern"),
    ("2027-01-01", "modern", "2027-01-01", "2027-01-01"),
])
def test_parse_protocol(text, era, version, label):
    choice = eras.parse_protocol(text)
    assert (choice.era, choice.version, choice.label) == (era, version, label)


@pytest.mark.parametrize("text", ["", "newest", "2025-6-18", "v2", "2025-06-18x"])
def test_parse_protocol_rejects_other_values_in_one_line(text):
    with pytest.raises(eras.ProtocolChoiceError, match="auto, legacy, modern or a revision date"):
        eras.parse_protocol(text)


DISCOVER = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "ttlMs": 0, "cacheScope": "private", "_meta": {eras.META_SERVER_INFO: {"name": "s"}}}


@pytest.mark.parametrize("response, era, version, words", [
    ({"id": 1, "result": DISCOVER}, "modern", "2026-07-28", "answered"),
    ({"id": 1, "error": {"code": -32022, "message": "x", "data": {"supported": ["2026-07-28"],
                                                                  "requested": "2030-01-01"}}},
     "modern", "2026-07-28", "refused our version"),
    ({"id": 1, "error": {"code": -32022, "message": "x", "data": {"supported": ["2025-06-18"]}}},
     "legacy", "2025-11-25", "only handshake-era"),
    ({"id": 1, "error": {"code": -32601, "message": "Method not found"}}, "legacy", "2025-11-25", "-32601"),
    # Not keyed on one code: any other error means the handshake era too.
    ({"id": 1, "error": {"code": -32000, "message": "Bad Request: No valid session ID"}}, "legacy", "2025-11-25",
     "-32000"),
    ({"id": 1, "result": {"tools": []}}, "legacy", "2025-11-25", "not a DiscoverResult"),
    ({"id": 1, "result": {**DISCOVER, "supportedVersions": ["2024-11-05"]}}, "legacy", "2025-11-25",
     "only handshake-era"),
    (None, "legacy", "2025-11-25", "no answer to server/discover within 3 s"),
])
def test_judge_probe(response, era, version, words):
    outcome = eras.judge_probe(response)
    assert (outcome.era, outcome.version) == (era, version)
    assert words in outcome.reason


def test_with_meta_keeps_a_progress_token_and_does_not_touch_the_input():
    params = {"name": "t", "_meta": {"progressToken": "call-1"}}
    meta = eras.request_meta("2026-07-28", {"roots": {}}, {"name": "mcp-inspect", "version": "1"}, "info")
    out = eras.with_meta(params, meta)
    assert out["_meta"]["progressToken"] == "call-1"
    assert out["_meta"][eras.META_VERSION] == "2026-07-28"
    assert out["_meta"][eras.META_LOG_LEVEL] == "info"
    assert params == {"name": "t", "_meta": {"progressToken": "call-1"}}
    assert eras.META_LOG_LEVEL not in eras.request_meta("2026-07-28", {}, {}, None)


def test_result_type_and_input_requests():
    assert eras.result_type({"content": []}) == "complete"  # absent: an older server
    assert eras.result_type({"resultType": "input_required"}) == "input_required"
    assert eras.result_type({"resultType": "weird"}) == "invalid"
    result = {"resultType": "input_required", "requestState": "s1",
              "inputRequests": {"a": {"method": "elicitation/create", "params": {}}, "b": "junk",
                                "c": {"method": "roots/list"}}}
    assert set(eras.input_requests(result)) == {"a", "c"}


def test_retry_params_replace_earlier_answers_and_echo_the_state():
    first = {"name": "t", "arguments": {"x": 1}, "inputResponses": {"old": {}}, "requestState": "old"}
    out = eras.retry_params(first, {"a": {"action": "accept"}}, "s2")
    assert out == {"name": "t", "arguments": {"x": 1}, "inputResponses": {"a": {"action": "accept"}},
                   "requestState": "s2"}
    assert "requestState" not in eras.retry_params({"name": "t"}, {}, None)


@pytest.mark.parametrize("error, words", [
    ({"code": -32020, "message": "m"}, "Header mismatch"),
    ({"code": -32021, "message": "m", "data": {"requiredCapabilities": {"roots": {}}}}, "declare roots"),
    ({"code": -32022, "message": "m", "data": {"supported": ["2026-07-28"], "requested": "2030-01-01"}},
     "asked for 2030-01-01; the server supports 2026-07-28"),
    ({"code": -32042, "message": "m"}, "URL elicitation required"),
])
def test_explain_error(error, words):
    assert words in eras.explain_error(error)


def test_explain_error_is_silent_on_ordinary_codes():
    assert eras.explain_error({"code": -32601, "message": "Method not found"}) is None
    assert eras.explain_error("junk") is None


def test_url_elicitations_of_a_32042_error():
    error = {"code": -32042, "message": "m", "data": {"elicitations": [
        {"mode": "url", "url": "https://example.com/auth", "message": "Sign in", "elicitationId": "e"}, {"x": 1}]}}
    assert [e["url"] for e in eras.url_elicitations(error)] == ["https://example.com/auth"]
    assert eras.url_elicitations({"code": -32000}) == []


def test_roots_text_round_trip_and_problems():
    roots, problems = parse_roots("file:///home/me/project  project\n\n# a comment\nfile:///tmp\n")
    assert problems == []
    assert roots == [{"uri": "file:///home/me/project", "name": "project"}, {"uri": "file:///tmp"}]
    assert parse_roots(roots_text(roots)) == (roots, [])
    _, problems = parse_roots("not a uri\nC:\\\\dir")
    assert len(problems) == 2 and "line 1" in problems[0]


def test_an_input_required_answer_is_not_judged_as_the_tools_result():
    from inspector.protocol.diagnostics.results import result_problems

    tool = {"name": "t", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"result": {"type": "string"}}}}
    asking = {"resultType": "input_required", "requestState": "s",
              "inputRequests": {"k": {"method": "elicitation/create", "params": {"message": "?"}}}}
    assert result_problems("tools/call", "2026-07-28", asking, tool) == ""
    broken = {"resultType": "input_required", "inputRequests": {"k": "not a request"}}
    assert "inputRequests must be an object" in result_problems("tools/call", "2026-07-28", broken, tool)
    # A final result without structuredContent is still named.
    final = {"resultType": "complete", "content": [{"type": "text", "text": "x"}]}
    assert "structuredContent" in result_problems("tools/call", "2026-07-28", final, tool)
