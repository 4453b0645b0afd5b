"""Unit tests: one or more per rule of the pure ProtocolChecker, the tool review and the rules loader."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from factories import event, invalid, received, sent
from inspector.commands.common import read_rules_file
from inspector.protocol.diagnostics import RULES, ProtocolChecker, RulesError, parse_rules, review_tools, summarize
from inspector.protocol.diagnostics import protocol
from inspector.protocol.diagnostics.results import is_base64, result_problems
from inspector.protocol.records import TO_SERVER

CAPS = {"tools": {}}


class Feed:
    """Feeds records with increasing seq and time to a checker; remembers every warning."""

    def __init__(self, version="2025-11-25", capabilities=CAPS, handshake=True, **kwargs):
        self.checker = ProtocolChecker(**kwargs)
        self.seq = 0
        self.t = 1000.0
        self.warnings = []
        self.add(event("spawn", {"pid": 1}))
        if handshake:
            self.send_request(0, "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {}})
            self.receive({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version,
                                                                  "capabilities": capabilities,
                                                                  "serverInfo": {"name": "s", "version": "1"}}})
            self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def add(self, record, dt=0.01):
        self.seq += 1
        self.t += dt
        record.seq, record.t = self.seq, self.t
        found = self.checker.observe(record)
        self.warnings += found
        return found

    def send(self, msg):
        return self.add(sent(msg))

    def send_request(self, request_id, method, params=None):
        msg = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            msg["params"] = params
        return self.send(msg)

    def receive(self, msg):
        return self.add(received(msg))

    def result(self, request_id, result):
        return self.receive({"jsonrpc": "2.0", "id": request_id, "result": result})

    def rules(self):
        return [w.rule for w in self.warnings]


def test_clean_exchange_has_no_warnings():
    feed = Feed()
    feed.send_request(1, "tools/list")
    feed.result(1, {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]})
    feed.send_request(2, "tools/call", {"name": "a", "arguments": {}})
    feed.result(2, {"content": [{"type": "text", "text": "x"}, {"type": "image", "data": "aGk=", "mimeType": "p"}]})
    feed.receive({"jsonrpc": "2.0", "id": "s1", "method": "ping"})
    assert feed.warnings == []
    assert feed.checker.version == "2025-11-25"


def test_answered_notification_on_its_row():
    feed = Feed()
    found = feed.receive({"jsonrpc": "2.0", "id": None, "result": {}})
    assert [(w.rule, w.seq) for w in found] == [("answered-notification", feed.seq)]
    assert "notifications/initialized" in found[0].text


def test_null_id_error_for_unparseable_input_is_legal():
    feed = Feed()
    feed.receive({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
    feed.add(invalid("{oops", "not JSON", TO_SERVER))
    feed.receive({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "bad"}})
    assert feed.warnings == []


def test_unmatched_response_with_type_hint():
    feed = Feed()
    feed.send_request(5, "ping")
    found = feed.receive({"jsonrpc": "2.0", "id": "5", "result": {}})
    assert [w.rule for w in found] == ["unmatched-response"]
    assert "different JSON type" in found[0].text


def test_duplicate_response():
    feed = Feed()
    feed.send_request(1, "ping")
    feed.result(1, {})
    first = feed.seq
    found = feed.result(1, {})
    assert [(w.rule, w.seq) for w in found] == [("duplicate-response", feed.seq)]
    assert f"row {first}" in found[0].text


def test_the_duplicate_response_rule_remembers_the_newest_answers_only(monkeypatch):
    """Bounded memory: every answered id kept would grow the checker by ~120 bytes per request of a long session.
    A second answer within the newest ANSWERED_KEPT is a duplicate; an older one still gets a warning."""
    monkeypatch.setattr(protocol, "ANSWERED_KEPT", 3)
    feed = Feed()
    for request_id in range(1, 6):
        feed.send_request(request_id, "ping")
        feed.result(request_id, {})
    assert [w.rule for w in feed.result(5, {})] == ["duplicate-response"]
    assert [w.rule for w in feed.result(3, {})] == ["duplicate-response"]
    assert [w.rule for w in feed.result(2, {})] == ["unmatched-response"]


def test_the_checker_does_not_grow_with_answered_requests():
    """A long session of requests and answers: once the remembered answers are full, no growth per request."""
    feed = Feed()

    def requests(first: int, count: int) -> None:
        for request_id in range(first, first + count):
            feed.send_request(request_id, "ping")
            feed.result(request_id, {})

    requests(1, 1000)
    tracemalloc.start()
    try:
        requests(1000, protocol.ANSWERED_KEPT)  # the window is full, of answers allocated while traced
        before = tracemalloc.get_traced_memory()[0]
        requests(1000 + protocol.ANSWERED_KEPT, 10_000)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert feed.warnings == []
    assert grown / 10_000 <= 8, f"{grown / 10_000:.0f} bytes per answered request"


def test_late_response_after_timeout_event():
    feed = Feed()
    feed.send_request(1, "tools/call", {"name": "slow"})
    feed.receive({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1,
                                                                                   "progress": 1}})
    assert feed.add(event("timeout", {"id": 1, "method": "tools/call"})) == []
    found = feed.result(1, {"content": []})
    assert [w.rule for w in found] == ["late-response"]


def test_no_answer_silent_via_timeout_event_on_the_request_row():
    feed = Feed(handshake=False)  # nothing answered yet: the buffered-stdout signature
    feed.send_request(1, "tools/list")
    request_seq = feed.seq
    found = feed.add(event("timeout", {"id": 1, "method": "tools/list"}), dt=60)
    assert [(w.rule, w.seq) for w in found] == [("no-answer-silent", request_seq)]
    assert "flush()" in found[0].text
    # the buffered answer that finally arrives at exit is the same mistake, not a second one
    assert feed.result(1, {"tools": []}) == []


def test_no_answer_silent_via_tick():
    feed = Feed(timeout=5)
    feed.send_request(1, "ping")
    assert feed.checker.tick(feed.t + 1, True) == []
    assert feed.checker.tick(feed.t + 10, False) == []  # the process is gone: that is not silence
    assert feed.checker.tick(feed.t + 10, True, last_stdout_at=feed.t + 2) == []  # it did write something
    found = feed.checker.tick(feed.t + 10, True)
    assert [(w.rule, w.seq) for w in found] == [("no-answer-silent", feed.seq)]
    assert feed.checker.tick(feed.t + 20, True) == []  # once


def test_cancelled_request_is_not_silence():
    feed = Feed(timeout=5)
    feed.send_request(1, "ping")
    feed.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    assert feed.checker.tick(feed.t + 10, True) == []


def test_stdout_not_json_and_invalid_message():
    feed = Feed()
    found = feed.add(invalid("Hello", "not JSON"))
    assert [w.rule for w in found] == ["stdout-not-json"]
    found = feed.add(invalid("42", "not an object"))
    assert [w.rule for w in found] == ["invalid-message"]
    found = feed.add(invalid('{"jsonrpc":"2.0","id":1}', "neither"))
    assert [w.rule for w in found] == ["result-and-error"]


def test_batch_is_flagged_except_in_2025_03_26():
    feed = Feed()
    feed.send_request(1, "ping")
    found = feed.receive([{"jsonrpc": "2.0", "id": 1, "result": {}}])
    assert [w.rule for w in found] == ["batch"]
    old = Feed(version="2025-03-26")
    old.send_request(1, "ping")
    assert old.receive([{"jsonrpc": "2.0", "id": 1, "result": {}}]) == []


def test_missing_jsonrpc():
    feed = Feed()
    feed.send_request(1, "ping")
    assert [w.rule for w in feed.receive({"id": 1, "result": {}})] == ["missing-jsonrpc"]


def test_result_and_error_both():
    feed = Feed()
    feed.send_request(1, "ping")
    found = feed.receive({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}})
    assert [w.rule for w in found] == ["result-and-error"]


@pytest.mark.parametrize("error", [{"code": "-32601", "message": "x"}, {"message": "x"}, "boom",
                                   {"code": True, "message": "x"}])
def test_error_code_not_integer(error):
    feed = Feed()
    feed.send_request(1, "ping")
    assert [w.rule for w in feed.receive({"jsonrpc": "2.0", "id": 1, "error": error})] == ["error-code-not-integer"]


@pytest.mark.parametrize("result, needle", [
    ({"tools": [{"name": "a"}]}, "inputSchema"),
])
def test_result_schema_tools_list(result, needle):
    feed = Feed()
    feed.send_request(1, "tools/list")
    found = feed.result(1, result)
    assert [w.rule for w in found] == ["result-schema"] and needle in found[0].text


@pytest.mark.parametrize("content, needle", [
    ([{"type": "json", "json": {}}], "unknown type 'json'"),
    ([{"type": "image", "data": "not base64!", "mimeType": "image/png"}], "not base64"),
    ([{"type": "text"}], "text"),
])
def test_result_schema_content_blocks(content, needle):
    feed = Feed()
    feed.send_request(1, "tools/call", {"name": "a"})
    found = feed.result(1, {"content": content})
    assert [w.rule for w in found] == ["result-schema"] and needle in found[0].text


def test_result_schema_structured_content_against_output_schema():
    feed = Feed()
    out = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    feed.send_request(1, "tools/list")
    feed.result(1, {"tools": [{"name": "a", "inputSchema": {"type": "object"}, "outputSchema": out}]})
    feed.send_request(2, "tools/call", {"name": "a"})
    assert feed.result(2, {"content": [], "structuredContent": {"n": 3}}) == []
    feed.send_request(3, "tools/call", {"name": "a"})
    found = feed.result(3, {"content": [], "structuredContent": {"n": "3"}})
    assert [w.rule for w in found] == ["result-schema"] and "outputSchema" in found[0].text
    feed.send_request(4, "tools/call", {"name": "a"})
    assert "no structuredContent" in feed.result(4, {"content": []})[0].text
    feed.send_request(5, "tools/call", {"name": "a"})
    assert feed.result(5, {"content": [], "isError": True}) == []  # errors need not match


@pytest.mark.parametrize("ref, needle", [
    ("https://example.invalid/x.json", "Unresolvable: https://example.invalid/x.json"),  # never fetched
    ("#/$defs/missing", "/$defs/missing"),
])
def test_unresolvable_output_schema_ref_is_a_finding_and_checking_goes_on(ref, needle):
    feed = Feed()
    feed.send_request(1, "tools/list")
    bad = {"name": "bad", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "$ref": ref}}
    feed.result(1, {"tools": [bad]})
    feed.send_request(2, "tools/call", {"name": "bad"})
    found = feed.result(2, {"content": [], "structuredContent": {"a": 1}})
    assert [w.rule for w in found] == ["output-schema-unusable"]
    assert "'bad'" in found[0].text and needle in found[0].text
    feed.receive({"jsonrpc": "2.0", "id": 99, "result": {}})  # a later mistake in the same session is still seen
    assert feed.rules() == ["output-schema-unusable", "unmatched-response"]
    feed.send_request(3, "tools/call", {"name": "bad"})
    assert feed.result(3, {"content": [], "structuredContent": {"a": 1}, "isError": True}) == []


def test_result_schema_older_revision_says_lenient():
    text = result_problems("tools/list", "2024-11-05", {"tools": [{"name": "a"}]})
    assert "applied leniently to 2024-11-05" in text


def test_result_schema_missing_result_type_in_2026():
    feed = Feed(handshake=False)
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    feed.send_request(1, "tools/call", {"name": "a", "_meta": meta})
    found = feed.result(1, {"content": [{"type": "text", "text": "x"}]})
    assert [w.rule for w in found] == ["result-schema"] and "resultType is missing" in found[0].text
    feed.send_request(2, "tools/call", {"name": "a", "_meta": meta})
    assert feed.result(2, {"resultType": "complete", "content": []}) == []


def test_undeclared_capability():
    feed = Feed(capabilities={"tools": {}, "resources": {}})
    found = feed.receive({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info",
                                                                                         "data": "x"}})
    assert [w.rule for w in found] == ["undeclared-capability"] and "logging" in found[0].text
    found = feed.receive({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "x"}})
    assert "resources.subscribe" in found[0].text
    found = feed.receive({"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage", "params": {}})
    assert [w.rule for w in found] == ["undeclared-capability"] and "client" in found[0].text
    declared = Feed(capabilities={"logging": {}, "resources": {"subscribe": True}})
    declared.receive({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}})
    declared.receive({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "x"}})
    assert declared.warnings == []


def test_a_notification_found_fine_is_checked_anew_once_the_capabilities_change():
    """The checker remembers which notifications were fine, so a flood of one is checked once; a new server (other
    capabilities, another revision) gets its notifications checked again, and a bad one is reported on every row."""
    feed = Feed(capabilities={"logging": {}})
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}}
    assert [feed.receive(log) for _ in range(3)] == [[], [], []]
    feed.add(event("spawn", {"pid": 2}))
    feed.add(event("handshake", {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}))
    found = [feed.receive(log) for _ in range(2)]
    assert [[w.rule for w in row] for row in found] == [["undeclared-capability"]] * 2
    assert [row[0].seq for row in found] == [feed.seq - 1, feed.seq]


def test_handshake_event_teaches_version_and_capabilities():
    feed = Feed(handshake=False)
    feed.add(event("handshake", {"protocolVersion": "2025-11-25",
                                                        "capabilities": {"logging": {}}}))
    feed.receive({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}})
    assert feed.warnings == [] and feed.checker.version == "2025-11-25"


def test_method_not_in_version():
    feed = Feed(version="2024-11-05")
    found = feed.receive({"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": {}})
    assert "method-not-in-version" in [w.rule for w in found]
    found = feed.send_request(9, "server/discover")
    assert [w.rule for w in found] == ["method-not-in-version"]
    assert feed.send_request(10, "vendor/custom") == []  # not a spec method: none of our business


def test_spawn_resets_state():
    feed = Feed()
    feed.send_request(1, "ping")
    feed.add(event("exit", {"code": 0}))
    feed.add(event("spawn", {"pid": 2}))
    assert feed.checker.version is None
    assert [w.rule for w in feed.receive({"jsonrpc": "2.0", "id": 1, "result": {}})] == ["unmatched-response"]


def test_disabled_rules_are_silent():
    feed = Feed(disabled={"answered-notification"})
    assert feed.receive({"jsonrpc": "2.0", "id": None, "result": {}}) == []


def test_is_base64():
    assert is_base64("aGk=") and is_base64("")
    assert not is_base64("aGk") and not is_base64("a b=") and not is_base64(None)


# -- review -----------------------------------------------------------------------------------------------------

GOOD = {"name": "word_count", "description": "Count the words in a text. Returns the number of words.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string",
                                                                  "description": "The text, e.g. 'a b'"}},
                        "required": ["text"]}}


def tool(**changes):
    out = json.loads(json.dumps(GOOD))
    if "name" in changes and "description" not in changes:  # two tools alike in all but name: not the same text
        out["description"] = f"Count the words in a text ({changes['name']}). Returns the number of words."
    out.update(changes)
    return out


def rules_of(tools, disabled=()):
    return [(a.rule, a.tool) for a in review_tools(tools, set(disabled))]


def test_good_tool_gets_no_advice():
    assert rules_of([GOOD]) == []


@pytest.mark.parametrize("a, b", [("word_count", "count_words"), ("wordCount", "word_count"),
                                  ("get-user", "get_users"), ("search.docs", "Search_Docs"),
                                  ("fetch_page", "fetch_pages")])
def test_duplicate_names(a, b):
    assert rules_of([tool(name=a), tool(name=b)]) == [("duplicate-name", b)]


def test_short_names_are_not_near_duplicates_by_edit_distance():
    assert rules_of([tool(name="add"), tool(name="abs")]) == []


@pytest.mark.parametrize("name", ["bad name", "ünicode", "x" * 129, ""])
def test_name_format(name):
    assert ("name-format", name) in rules_of([tool(name=name)])


def test_descriptions():
    assert rules_of([tool(description="Counts.")]) == [("short-description", "word_count")]
    assert rules_of([tool(description=None)]) == [("short-description", "word_count")]
    assert rules_of([tool(description="A helper for the word counting feature.")]) == \
        [("vague-description", "word_count")]
    assert rules_of([tool(description="Use when you need to know the length of a text.")]) == []
    assert rules_of([tool(description="Возвращает число слов в тексте.")]) == []


def test_parameters():
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string", "examples": ["x"]},
                                               "c": {"type": "boolean", "description": "flag"},
                                               "d": {"type": "string", "description": "например, «да»"}},
              "required": ["a"]}
    assert rules_of([tool(inputSchema=schema)]) == [("param-no-description", "word_count"),
                                                    ("param-no-example", "word_count")]
    advice = review_tools([tool(inputSchema=schema)], set())
    assert advice[0].text.endswith("a, b") and advice[1].text.endswith(": a")


def test_required_rules():
    props = GOOD["inputSchema"]["properties"]
    assert rules_of([tool(inputSchema={"type": "object", "properties": props})]) == [("no-required", "word_count")]
    assert rules_of([tool(inputSchema={"type": "object", "properties": props, "required": ["text", "txt"]})]) == \
        [("required-not-property", "word_count")]
    assert rules_of([tool(inputSchema={"type": "object"})]) == []


def test_too_many_tools_and_summary():
    tools = [tool(name=f"tool_number_{chr(97 + i)}{chr(97 + i)}{chr(97 + i)}") for i in range(13)]
    advice = review_tools(tools, set())
    assert [(a.rule, a.tool) for a in advice] == [("too-many-tools", None)]
    summary = summarize(tools, advice)
    assert summary["tools"] == 13 and summary["by_rule"] == {"too-many-tools": 1}
    assert len(summary["clean_tools"]) == 13


def test_schema_invalid_with_jsonschema_error():
    advice = review_tools([tool(inputSchema={"type": "object", "properties": {"a": {"type": "strin"}}})], set())
    assert [a.rule for a in advice] == ["schema-invalid"] and "properties/a/type" in advice[0].text


def test_review_disable():
    assert rules_of([tool(description="Counts.")], {"short-description"}) == []


# -- rules file -------------------------------------------------------------------------------------------------

def test_parse_rules():
    assert parse_rules('{"disable": ["param-no-example", "batch"]}', "r.json") == {"param-no-example", "batch"}


def test_read_rules_file(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"disable": ["batch"]}')
    assert read_rules_file(path) == {"batch"}
    with pytest.raises(RulesError, match="no such file"):
        read_rules_file(tmp_path / "missing.json")


@pytest.mark.parametrize("text, needle", [("{", "not valid JSON"), ("[]", "JSON object"),
                                          ('{"disable": "batch"}', "list of rule ids"),
                                          ('{"disable": ["nope"]}', "unknown rule id(s) nope"),
                                          ('{"enable": []}', "unknown key")])
def test_parse_rules_errors(text, needle):
    with pytest.raises(RulesError, match=".*") as info:
        parse_rules(text, "r.json")
    assert needle in str(info.value) and "r.json" in str(info.value)


def test_every_rule_is_documented():
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert f"## `{rule}`" in doc, rule
