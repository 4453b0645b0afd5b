"""The row index's code tables: the fixed ones (kind, direction, log level) and the shared growing tables of the
strings a column holds as small integer codes (methods, origins)."""

from __future__ import annotations

from collections.abc import Callable

from inspector.protocol.records import FROM_SERVER, MESSAGE, TO_SERVER, Record

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
TIMELINE_KINDS = ("request", "response", "notification", "error", "batch", "invalid", "stderr", "event")
DIRS = (None, TO_SERVER, FROM_SERVER)
LEVELS = (None,) + LOG_LEVELS
KIND_CODE = {kind: code for code, kind in enumerate(TIMELINE_KINDS)}
DIR_CODE = {value: code for code, value in enumerate(DIRS)}
LEVEL_CODE = {value: code for code, value in enumerate(LEVELS)}
STDERR_KIND, NOTIFICATION_CODE = KIND_CODE["stderr"], KIND_CODE["notification"]


class Codes:
    """A shared table of strings (methods, origins) and their small integer codes; code 0 is None.

    Capped: a server inventing a new method per message must not grow it without bound. Beyond the cap a value
    gets `overflow` and is read back from the file when shown."""

    def __init__(self, cap: int) -> None:
        self.values: list[str | None] = [None]
        self._codes: dict[str | None, int] = {None: 0}
        self.overflow = cap

    def code(self, value: str | None) -> int:
        code = self._codes.get(value)
        if code is None:
            if len(self.values) >= self.overflow:
                return self.overflow
            code = self._codes[value] = len(self.values)
            self.values.append(value)
        return code

    def matching(self, predicate: Callable[[str], bool]) -> set[int]:
        """The codes of the known values that satisfy the predicate."""
        return {code for code, value in enumerate(self.values) if value is not None and predicate(value)}


def notification_row(record: Record, offset: int, length: int, methods: Codes, origins: Codes) -> tuple | None:
    """RowIndex.extend_unpaired's row for a notification message, holding the codes RowIndex.add would append for
    it (no id, no pairing, no burst); None for any other record."""
    msg = record.msg
    if record.kind != MESSAGE or type(msg) is not dict or "id" in msg:
        return None
    method, level = msg.get("method"), None
    if not isinstance(method, str):  # jsonrpc.classify's notification: a string method and no id (not classified
        return None                  # again here: the line was, once, when it was decoded)
    if method == "notifications/message" and isinstance(msg.get("params"), dict):
        level = msg["params"].get("level")
    return (record.seq, record.t, offset, length, NOTIFICATION_CODE, DIR_CODE.get(record.dir, 0), methods.code(method),
            LEVEL_CODE.get(level, 0) if isinstance(level, str) else 0, origins.code(record.origin), 0)
