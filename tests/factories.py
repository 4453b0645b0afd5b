"""Record builders for tests: one short name per kind of record, the other fields as keywords.

seq and t default to 0 (a Store numbers and stamps what it adds); pass them for records built as a recording.
"""

from __future__ import annotations

from inspector.protocol.records import EVENT, FROM_SERVER, INVALID, MESSAGE, STDERR, TO_SERVER, Record


def message(direction: str, body, **fields) -> Record:
    """A JSON-RPC message that crossed the wire in `direction` (TO_SERVER or FROM_SERVER)."""
    return Record(MESSAGE, dir=direction, msg=body, **fields)


def sent(body, **fields) -> Record:
    """A message the inspector sent to the server."""
    return message(TO_SERVER, body, **fields)


def received(body, **fields) -> Record:
    """A message the server sent."""
    return message(FROM_SERVER, body, **fields)


def stderr(text: str, **fields) -> Record:
    return Record(STDERR, text=text, **fields)


def invalid(raw: str, error: str, direction: str = FROM_SERVER, **fields) -> Record:
    """A line that was not a JSON-RPC message."""
    return Record(INVALID, dir=direction, raw=raw, error=error, **fields)


def event(name: str, detail: dict | None = None, **fields) -> Record:
    return Record(EVENT, event=name, detail=detail or {}, **fields)


DEEP_LINE = b"[" * 100_000 + b"]" * 100_000
"""One line nested 100,000 deep: JSON that json.loads gives up on (RecursionError)."""


def write_deep_recording(path):
    """A recording (security rows 8 and 13) whose lines 3 and 4 cannot be read safely: line 3 is DEEP_LINE, line 4
    a record around a message nested 300 deep (json.loads manages, walking it later might not). Lines 2 and 5 are
    good records: a request (seq 1) and a stderr line (seq 3)."""
    head = (b'{"kind":"header","format":"mcp-inspect-recording","version":1,"created":"2026-11-30T00:00:00Z",'
            b'"inspector":"0.1.0","protocol":"auto","target":{"transport":"stdio","command":["srv"],"cwd":"/"}}')
    request = b'{"seq":1,"t":1.0,"kind":"message","dir":"to_server","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}'
    deep_record = (b'{"seq":2,"t":2.0,"kind":"message","dir":"from_server","msg":{"jsonrpc":"2.0","id":1,"result":'
                   + b"[" * 300 + b"]" * 300 + b"}}")
    after = b'{"seq":3,"t":3.0,"kind":"stderr","text":"after the deep lines"}'
    path.write_bytes(b"\n".join([head, request, DEEP_LINE, deep_record, after]) + b"\n")
    return path
