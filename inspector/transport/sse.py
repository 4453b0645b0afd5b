"""An incremental parser for Server-Sent Events (the `text/event-stream` format), with no I/O.

It follows the WHATWG "event stream interpretation" rules, because MCP servers are written with many
different SSE libraries and an inspector must read all of them the same way:

- lines end with CRLF, LF or a lone CR, and a chunk may end anywhere (even between the CR and the LF of a
  CRLF, or inside a UTF-8 sequence or the byte order mark);
- one leading U+FEFF (BOM) is ignored;
- a line starting with ":" is a comment (servers use them as keep-alives);
- `data:` lines of one event are joined with "\\n"; an event whose data is empty is not dispatched, but its
  `id` is still remembered (WHATWG would dispatch an event with one empty `data:` line; MCP sends those only as
  "priming" events that carry an id for resumption, never as messages);
- `retry:` with only digits sets the reconnection time; `id` values containing NUL are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event."""

    event: str
    """The event name; "message" when the server gave none."""
    data: str
    """The data lines joined with "\\n" (never empty: empty events are not dispatched)."""
    id: str | None
    """The `id:` field given in this event, if it had one (`SseParser.last_event_id` keeps the latest id)."""


class SseParser:
    """Feed it bytes as they arrive; it returns the events completed so far."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._scanned = 0  # bytes of the buffer already known to hold no line end: long lines stay linear
        self._bom_checked = False
        self._data: list[str] = []
        self._event = ""
        self._event_id: str | None = None
        self.last_event_id: str | None = None
        """The id to send as Last-Event-ID when resuming (set by `id:` fields, including priming events)."""
        self.retry_ms: int | None = None
        """The reconnection delay the server asked for with `retry:`, if it did."""
        self.comments = 0
        """How many comment lines (keep-alives) were seen."""

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Add bytes from the stream; returns the events they completed, in order."""
        self._buffer += chunk
        if not self._bom_checked and not self._strip_bom():
            return []
        return self._take_lines(final=False)

    def close(self) -> list[SseEvent]:
        """The stream ended: a trailing lone CR still ends its line, but an unterminated event is dropped.

        The SSE rules discard an event that was not followed by a blank line, so a truncated message never
        reaches the caller as if it were complete.
        """
        if not self._bom_checked:
            self._strip_bom(final=True)
        events = self._take_lines(final=True)
        self._buffer.clear()  # an unterminated last line is pending data, and pending data is discarded
        self._reset_event()
        return events

    def _strip_bom(self, final: bool = False) -> bool:
        """Drop a leading BOM; False while too few bytes arrived to tell (a BOM may be split across chunks)."""
        if len(self._buffer) < len(_BOM) and _BOM.startswith(bytes(self._buffer)) and not final:
            return False
        if self._buffer.startswith(_BOM):
            del self._buffer[:len(_BOM)]
        self._bom_checked = True
        return True

    def _take_lines(self, final: bool) -> list[SseEvent]:
        """Interpret every complete line in the buffer; keep the incomplete rest for the next chunk."""
        events: list[SseEvent] = []
        start = 0
        pos = self._scanned
        while True:
            match = _LINE_END.search(self._buffer, pos)
            if match is None:
                break
            # A CR as the very last byte may be the first half of a CRLF whose LF has not arrived yet.
            if match.group() == b"\r" and match.end() == len(self._buffer) and not final:
                break
            event = self._line(bytes(self._buffer[start:match.start()]))
            if event is not None:
                events.append(event)
            start = pos = match.end()
        del self._buffer[:start]
        # Resume scanning where the search stopped; keep a trailing CR in view so it is looked at again.
        self._scanned = max(0, len(self._buffer) - 1) if self._buffer.endswith(b"\r") else len(self._buffer)
        return events

    def _line(self, raw: bytes) -> SseEvent | None:
        """Interpret one line; returns an event when the line was the blank line that dispatches one."""
        if not raw:
            return self._dispatch()
        line = raw.decode("utf-8", "replace")
        if line.startswith(":"):
            self.comments += 1
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        self._field(name, value)
        return None

    def _field(self, name: str, value: str) -> None:
        """Apply one `name: value` field to the event being built."""
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self.last_event_id = self._event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)
        # Any other field name is ignored, as the SSE rules say.

    def _dispatch(self) -> SseEvent | None:
        data = "\n".join(self._data)
        event = SseEvent(event=self._event or "message", data=data, id=self._event_id)
        self._reset_event()
        return event if data else None

    def _reset_event(self) -> None:
        self._data = []
        self._event = ""
        self._event_id = None
