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
