"""The SSE parser (inspector/transport/sse.py): pure, fed bytes the way a socket hands them over."""

from __future__ import annotations

import pytest

from inspector.transport.sse import SseEvent, SseParser

STREAM = (
    "\ufeff"
    ": keep-alive comment\n"
    "\n"
    "id: 7\n"
    "retry: 3000\n"
    "data:\n"
    "\n"
    "event: endpoint\n"
    "data: /messages/?session_id=abc\n"
    "\n"
    "data: {\"jsonrpc\":\"2.0\",\n"
    "data:  \"method\":\"notifications/progress\"}\n"
    "id: 8\n"
    "\n"
    "event: message\n"
    "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"héllo ✓\"}}\n"
    "\n"
)

EXPECTED = [
    SseEvent(event="endpoint", data="/messages/?session_id=abc", id=None),
    SseEvent(event="message", data="{\"jsonrpc\":\"2.0\",\n \"method\":\"notifications/progress\"}", id="8"),
    SseEvent(event="message", data="{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"héllo ✓\"}}", id=None),
]


def parse(chunks: list[bytes]) -> tuple[list[SseEvent], SseParser]:
    parser = SseParser()
    events: list[SseEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.close()
    return events, parser


def with_line_ends(text: str, end: str) -> bytes:
    return text.replace("\n", end).encode("utf-8")


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_the_whole_stream_at_once(end):
    events, parser = parse([with_line_ends(STREAM, end)])
    assert events == EXPECTED
    assert parser.last_event_id == "8" and parser.retry_ms == 3000 and parser.comments == 1


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_split_at_every_byte_boundary(end):
    # Splits fall inside the BOM, inside UTF-8 sequences, and between the CR and LF of a CRLF.
    data = with_line_ends(STREAM, end)
    for cut in range(len(data) + 1):
        events, _ = parse([data[:cut], data[cut:]])
        assert events == EXPECTED, f"split at byte {cut}"


def test_one_byte_at_a_time():
    data = with_line_ends(STREAM, "\r\n")
    events, parser = parse([data[i:i + 1] for i in range(len(data))])
    assert events == EXPECTED and parser.last_event_id == "8"


def test_a_cr_at_the_end_of_a_chunk_waits_for_a_possible_lf():
    parser = SseParser()
    assert parser.feed(b"data: a\r") == []
    # Were the CR and LF two line ends, the empty line between them would dispatch "a" on its own.
    assert parser.feed(b"\ndata: b\r\n\r\n") == [SseEvent("message", "a\nb", None)]


def test_a_lone_cr_at_the_very_end_still_ends_its_line():
    events, _ = parse([b"data: x\r\r"])
    assert events == [SseEvent("message", "x", None)]


def test_priming_events_are_not_dispatched_but_their_id_counts():
    parser = SseParser()
    assert parser.feed(b"id: prime-1\ndata: \n\n") == []
    assert parser.feed(b"id: prime-2\n\n") == []
    assert parser.last_event_id == "prime-2"
    assert parser.feed(b"data: {}\n\n") == [SseEvent("message", "{}", None)]
    assert parser.last_event_id == "prime-2"


def test_comments_are_skipped_anywhere():
    events, parser = parse([b":\n: ping\ndata: a\n: in the middle\ndata: b\n\n:tail\n"])
    assert events == [SseEvent("message", "a\nb", None)] and parser.comments == 4


def test_field_syntax():
    events, parser = parse([(
        b"data:no space\n\n"          # the space after the colon is optional
        b"data:  two spaces\n\n"      # only one space is removed
        b"data\n\n"                    # no colon: the field with an empty value (dispatches nothing)
        b"event\ndata: x\n\n"          # an empty event name means "message"
        b"event: custom\ndata: y\n\n"
        b"weird: field\ndata: z\n\n"  # unknown fields are ignored
        b"id: a\x00b\ndata: w\n\n"     # an id with NUL is ignored
    )])
    assert [(e.event, e.data, e.id) for e in events] == [
        ("message", "no space", None), ("message", " two spaces", None), ("message", "x", None),
        ("custom", "y", None), ("message", "z", None), ("message", "w", None)]
    assert parser.last_event_id is None


def test_retry_needs_digits_only():
    parser = SseParser()
    parser.feed(b"retry: 1500\n\nretry: soon\n\nretry: 12ms\n\n")
    assert parser.retry_ms == 1500
    parser.feed(b"retry:0\n\n")
    assert parser.retry_ms == 0


def test_only_a_leading_bom_is_removed():
    events, _ = parse([b"\xef\xbb", b"\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\n"])
    # The second BOM makes the field name "\ufeffdata", an unknown field: that event has no data.
    assert events == [SseEvent("message", "a", None)]


def test_a_stream_without_a_bom_shorter_than_one():
    events, _ = parse([b"d", b"ata: a\n\n"])
    assert events == [SseEvent("message", "a", None)]


def test_an_unterminated_event_at_the_end_is_dropped():
    events, parser = parse([b"data: complete\n\ndata: cut off\nid: 9"])
    assert events == [SseEvent("message", "complete", None)]
    assert parser.last_event_id is None  # the unterminated line is discarded, id and all


def test_the_event_id_is_the_one_given_in_that_event():
    events, parser = parse([b"id: 1\ndata: a\n\ndata: b\n\nid:\ndata: c\n\n"])
    assert [e.id for e in events] == ["1", None, ""]
    assert parser.last_event_id == ""  # an empty id resets the id to send on reconnect


def test_long_lines_arriving_in_many_chunks():
    payload = "x" * 200_000
    data = f"data: {payload}\n\n".encode()
    events, _ = parse([data[i:i + 1000] for i in range(0, len(data), 1000)])
    assert events == [SseEvent("message", payload, None)]


def test_invalid_utf8_is_replaced_not_fatal():
    events, _ = parse([b"data: \xff\xfe ok\n\n"])
    assert events == [SseEvent("message", "\ufffd\ufffd ok", None)]
