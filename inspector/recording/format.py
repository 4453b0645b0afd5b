"""The recording format's constants and its one error, shared by the writer (files.py) and the reader."""

from __future__ import annotations

from inspector.protocol.json import MAX_DEPTH

FORMAT = "mcp-inspect-recording"
VERSION = 1
# A line longer than this is reported and skipped, so a hostile file cannot exhaust memory.
MAX_LINE_BYTES = 64 * 1024 * 1024
BLOCK_BYTES = 1 << 20
UTF8_BOM = b"\xef\xbb\xbf"
RECORD_DEPTH = MAX_DEPTH + 16
"""How deep a recording line may nest: a message's MAX_DEPTH plus the record around it (an event's detail, a
diff's sections and changes). A deeper line is skipped with a problem, like any line that cannot be read."""


class RecordingError(Exception):
    """A recording cannot be created or read at all."""
