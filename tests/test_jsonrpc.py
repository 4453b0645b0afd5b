"""inspector.jsonrpc: decoding and classifying wire lines, building messages, encoding them."""

from __future__ import annotations

import json

import pytest

from inspector.protocol import jsonrpc
from inspector.protocol.jsonrpc import BATCH, ERROR, INVALID, NOTIFICATION, REQUEST, RESPONSE
from inspector.protocol.records import MESSAGE, TO_SERVER, Record
from inspector.protocol.text import text_block

REQ = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
NOTE = {"jsonrpc": "2.0", "method": "notifications/initialized"}

# (wire line, expected kind, expected problem: "" for none, else a prefix of the problem text)
CLASSIFY_TABLE = [
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"}', REQUEST, ""),
    (b'{"jsonrpc":"2.0","id":0,"method":"ping"}', REQUEST, ""),
    (b'{"jsonrpc":"2.0","id":"0","method":"ping"}', REQUEST, ""),
    (b'{"jsonrpc":"2.0","id":"","method":"ping"}', REQUEST, ""),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', REQUEST, ""),
    (b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"p":1}}', NOTIFICATION, ""),
    (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', NOTIFICATION, ""),
    (b'{"jsonrpc":"2.0","id":1,"result":{}}', RESPONSE, ""),
    (b'{"jsonrpc":"2.0","id":0,"result":null}', RESPONSE, ""),
    (b'{"jsonrpc":"2.0","id":"0","result":0}', RESPONSE, ""),
    (b'{"jsonrpc":"2.0","id":null,"result":{}}', RESPONSE, ""),
    (b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}', ERROR, ""),
    (b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}', ERROR, ""),
    (b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}', ERROR, "both result and error"),
    (b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]', BATCH, ""),
    (b"[]", BATCH, "empty batch"),
    (b'{"jsonrpc":"2.0","id":1,"method":5}', INVALID, "method is not a string"),
    (b'{"jsonrpc":"2.0","id":1}', INVALID, "neither a request"),
    (b"{}", INVALID, "neither a request"),
    (b"42", INVALID, "not a JSON-RPC object"),
    (b'"a string"', INVALID, "not a JSON-RPC object"),
    (b"null", INVALID, "not a JSON-RPC object"),
    (b"true", INVALID, "not a JSON-RPC object"),
    (b"Hello", INVALID, "not JSON"),
    (b"", INVALID, "not JSON"),
    (b'{"jsonrpc":"2.0","id":1', INVALID, "not JSON"),
    (b'\xef\xbb\xbf{"jsonrpc":"2.0","method":"n"}', INVALID, "not JSON"),  # a BOM is not allowed on the wire
    (b"\xff\xfe", INVALID, "not UTF-8"),
    (b'{"jsonrpc":"2.0","method":"n","params":{"s":"\xc3"}}', INVALID, "not UTF-8"),
    (b'  {"jsonrpc":"2.0","method":"padded"}  ', NOTIFICATION, ""),
]


@pytest.mark.parametrize("line, kind, problem", CLASSIFY_TABLE, ids=[repr(row[0][:40]) for row in CLASSIFY_TABLE])
def test_decode_line_classifies(line, kind, problem):
    decoded = jsonrpc.decode_line(line)
    assert decoded.kind == kind
    if problem:
        assert decoded.problem.startswith(problem), decoded.problem
    else:
        assert decoded.problem == ""


@pytest.mark.parametrize("line", [b'{"jsonrpc":"2.0","id":0,"method":"ping"}', b'[{"a":1}]',
                                  b'{"jsonrpc":"2.0","id":"0","result":null}'])
def test_decoded_message_is_kept_verbatim(line):
    decoded = jsonrpc.decode_line(line)
    assert decoded.msg == json.loads(line)
    assert type(decoded.msg) is type(json.loads(line))


def test_ids_keep_their_type():
    assert jsonrpc.decode_line(b'{"jsonrpc":"2.0","id":0,"result":1}').msg["id"] == 0
    assert jsonrpc.decode_line(b'{"jsonrpc":"2.0","id":"0","result":1}').msg["id"] == "0"


def test_non_utf8_line_is_kept_as_text_with_position():
    decoded = jsonrpc.decode_line(b"ok \xff\xfe end")
    assert decoded.kind == INVALID
    assert decoded.msg is None
    assert "byte 3" in decoded.problem
    assert decoded.text == "ok \ufffd\ufffd end"


def test_non_json_line_is_kept_as_text():
    decoded = jsonrpc.decode_line("débogage: prêt".encode())
    assert (decoded.kind, decoded.msg, decoded.text) == (INVALID, None, "débogage: prêt")


def test_json_that_is_not_a_message_keeps_value_and_text():
    decoded = jsonrpc.decode_line(b"[1, 2]")
    assert decoded.kind == BATCH  # a list is a batch; its members are not checked here
    decoded = jsonrpc.decode_line(b'{"hello": "world"}')
    assert decoded.kind == INVALID
    assert decoded.msg == {"hello": "world"}
    assert decoded.text == '{"hello": "world"}'


@pytest.mark.parametrize("value, kind", [
    (REQ, REQUEST), (NOTE, NOTIFICATION), ({"id": 1, "result": None}, RESPONSE),
    ({"id": 1, "error": {}}, ERROR), ([], BATCH), ([REQ], BATCH), ("x", INVALID), (None, INVALID), (3.5, INVALID),
])
def test_classify_parsed_values(value, kind):
    assert jsonrpc.classify(value)[0] == kind


@pytest.mark.parametrize("value, method", [
    (REQ, "tools/list"), (NOTE, "notifications/initialized"), ({"id": 1, "result": {}}, None),
    ({"method": 5}, None), ([REQ], None), ("tools/list", None), (None, None),
])
def test_method_of(value, method):
    assert jsonrpc.method_of(value) == method


# ---------------------------------------------------------------------------------------------- id_key

def test_id_key_distinguishes_number_and_string():
    assert jsonrpc.id_key(1) != jsonrpc.id_key("1")
    assert jsonrpc.id_key(0) != jsonrpc.id_key("0")
    assert jsonrpc.id_key(1) == jsonrpc.id_key(1)
    assert jsonrpc.id_key("abc") == jsonrpc.id_key("abc")


@pytest.mark.parametrize("value", [0, "", "0", -1, 2**63, "é"])
def test_id_key_never_tests_truthiness(value):
    assert jsonrpc.id_key(value) is not None


@pytest.mark.parametrize("value", [True, False, None, [1], {"id": 1}, (1,)])
def test_id_key_rejects_non_ids(value):
    assert jsonrpc.id_key(value) is None


def test_id_key_true_is_not_one():
    # True == 1 in Python; a key of True must never find the request with id 1.
    assert jsonrpc.id_key(True) != jsonrpc.id_key(1)


# -------------------------------------------------------------------------------------------- builders

def test_request_builder():
    assert jsonrpc.request(7, "ping") == {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    assert jsonrpc.request(0, "tools/call", {"name": "x"}) == {
        "jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "x"}}
    assert jsonrpc.request("a", "m", {})["params"] == {}  # empty params are sent, not dropped


def test_notification_builder():
    assert jsonrpc.notification("notifications/initialized") == {
        "jsonrpc": "2.0", "method": "notifications/initialized"}
    msg = jsonrpc.notification("notifications/cancelled", {"requestId": 0})
    assert "id" not in msg and msg["params"] == {"requestId": 0}


def test_result_response_keeps_null_result():
    msg = jsonrpc.result_response(0, None)
    assert msg == {"jsonrpc": "2.0", "id": 0, "result": None}
    assert jsonrpc.classify(msg)[0] == RESPONSE


@pytest.mark.parametrize("data, expected", [(None, None), (0, 0), ({}, {}), ("", ""), ([1], [1])])
def test_error_response_data(data, expected):
    msg = jsonrpc.error_response(3, jsonrpc.METHOD_NOT_FOUND, "no such method", data)
    assert msg["error"]["code"] == -32601 and msg["error"]["message"] == "no such method"
    if expected is None:
        assert "data" not in msg["error"]
    else:
        assert msg["error"]["data"] == expected
    assert jsonrpc.classify(msg) == (ERROR, "")


def test_error_codes():
    assert (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST, jsonrpc.METHOD_NOT_FOUND, jsonrpc.INVALID_PARAMS,
            jsonrpc.INTERNAL_ERROR) == (-32700, -32600, -32601, -32602, -32603)


# ---------------------------------------------------------------------------------------------- encode

TRICKY_TEXTS = ["a\nb", "a\r\nb", "tab\tend", "\u2028 and \u2029", "zéro 零 🙂", "quote \" back \\ slash",
                "nul \u0000 bell \u0007", "</script><img src=x onerror=alert(1)>"]


@pytest.mark.parametrize("text", TRICKY_TEXTS)
def test_encode_is_one_line(text):
    msg = jsonrpc.request(1, "tools/call", {"name": "echo", "arguments": {"text": text, text: [text]}})
    line = jsonrpc.encode(msg)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1 and b"\r" not in line
    back = jsonrpc.decode_line(line[:-1])
    assert back.kind == REQUEST and back.msg == msg


def test_encode_is_compact_utf8_without_ascii_escapes():
    line = jsonrpc.encode(jsonrpc.notification("n", {"city": "Zürich", "emoji": "🙂"}))
    assert "Zürich".encode() in line and "🙂".encode() in line
    assert b"\\u" not in line
    assert b": " not in line and b", " not in line
    line.decode("utf-8")  # valid UTF-8


def test_encode_lone_surrogate_from_the_wire():
    # json.loads turns the (valid JSON) escape "\ud800" into a lone surrogate; a server or a user can send it.
    # Encoding it back must give a valid UTF-8 line that decodes to the same value, not raise.
    msg = jsonrpc.decode_line(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"\\ud800x"}}').msg
    assert msg["params"]["s"] == "\ud800x"
    line = jsonrpc.encode(msg)
    assert line.count(b"\n") == 1 and line.endswith(b"\n")
    line.decode("utf-8")
    assert jsonrpc.decode_line(line[:-1]).msg == msg


# -- deep nesting (security rows 8 and 13): a line too deep to decode safely is an invalid line, never an exception

DEEP = b"[" * 100_000 + b"]" * 100_000
MAX_DEPTH = 128
"""inspector.protocol.json.MAX_DEPTH, written out: the problem text names it, so it is part of the contract."""


@pytest.mark.parametrize("line", [
    DEEP,  # json.loads itself gives up (RecursionError)
    b"[" * 500 + b"]" * 500,  # json.loads manages; re-encoding or showing it on a deep stack might not
    b'{"jsonrpc":"2.0","id":1,"result":' + b'{"a":' * 200 + b"1" + b"}" * 200 + b"}",
    b"[" * 100_000,  # deep and not even JSON: the depth is what stops the decoder
])
def test_a_too_deeply_nested_line_is_invalid_and_kept_as_text(line):
    decoded = jsonrpc.decode_line(line)
    assert decoded.kind == INVALID and decoded.msg is None
    assert decoded.problem == f"not decoded: nested more than {MAX_DEPTH} levels deep"
    assert decoded.text == line.decode()


def test_nesting_up_to_the_limit_decodes_and_re_encodes():
    line = b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}"
    decoded = jsonrpc.decode_line(line)
    assert decoded.kind == RESPONSE
    assert jsonrpc.encode(decoded.msg) == line + b"\n"


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = json.dumps("[" * 1000 + '\\"{' * 1000)
    line = b'{"jsonrpc":"2.0","id":1,"result":{"text":' + text.encode() + b"}}"
    decoded = jsonrpc.decode_line(line)
    assert decoded.kind == RESPONSE and decoded.msg["result"]["text"] == json.loads(text)


def test_request_ids_of_a_request_or_a_batch():
    assert jsonrpc.request_ids({"jsonrpc": "2.0", "id": 7, "method": "ping"}) == ["7"]
    assert jsonrpc.request_ids({"jsonrpc": "2.0", "id": "7", "method": "ping"}) == ['"7"']
    assert jsonrpc.request_ids([{"jsonrpc": "2.0", "id": 1, "method": "a"}, NOTE,
                                {"jsonrpc": "2.0", "id": 2, "result": {}}, {"id": 3, "method": "b"}]) == ["1", "3"]
    assert jsonrpc.request_ids(NOTE) == [] and jsonrpc.request_ids({"jsonrpc": "2.0", "id": 1, "result": 1}) == []


def test_a_record_whose_value_cannot_be_encoded_is_written_as_an_invalid_line():
    deep: list = []
    for _ in range(100_000):  # made in the process (never decoded from outside, where the depth is bounded)
        deep = [deep]
    line = Record(MESSAGE, seq=3, t=1.0, dir=TO_SERVER, msg={"jsonrpc": "2.0", "method": "n", "params": deep},
                  origin="user").to_line()
    back = json.loads(line)
    assert back["kind"] == "invalid" and back["seq"] == 3 and back["dir"] == TO_SERVER and back["origin"] == "user"
    assert back["error"] == "message not recordable as JSON (nested too deep)"


def test_a_deep_text_block_is_shown_as_text_not_pretty_printed():
    deep = "[" * 100_000 + "]" * 100_000
    assert text_block(deep) == (deep, False)
    assert text_block("[[1]]") == ("[\n  [\n    1\n  ]\n]", True)
