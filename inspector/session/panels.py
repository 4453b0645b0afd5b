"""PanelState: what the resource and prompt panels remember between requests (results, subscriptions, updates).

A service of one run, owned by the Inspector; it knows no Flask. `follow` hooks it to the session's notifications.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from typing import Any
from inspector.session import changes

MAX_RESULTS = 200
MAX_RESULT_BYTES = 64 * 1024 * 1024
MAX_UPDATES = 1000


class PanelState:
    """What the panels remember between requests: recent read/prompt results, subscriptions, updates."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._results: OrderedDict[int, tuple[str, Any, int]] = OrderedDict()
        self._bytes = 0
        self.subscriptions: dict[str, int] = {}
        """Subscribed URI → the server start (ServerState.starts) it was made on: a restart forgets them."""
        self.updates: OrderedDict[str, dict] = OrderedDict()
        """URI → {"t": last notifications/resources/updated time, "count": how many}; the newest MAX_UPDATES."""

    def follow(self, session) -> None:
        """Count the session's notifications/resources/updated (the Resources panel shows them)."""
        def on_notification(msg: dict) -> None:
            if msg.get("method") != "notifications/resources/updated":  # first: it runs for every notification
                return
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            if isinstance(params.get("uri"), str):
                self.updated(params["uri"])
                session.store.signal(changes.RESOURCES)

        session.on_notification_hooks.append(on_notification)

    def keep(self, kind: str, result: Any) -> int:
        """Hold a read or prompt result for the content endpoint; the oldest go when the bounds are reached."""
        size = _payload_size(result)
        with self._lock:
            result_id = next(self._ids)
            self._results[result_id] = (kind, result, size)
            self._bytes += size
            while self._results and (len(self._results) > MAX_RESULTS or self._bytes > MAX_RESULT_BYTES):
                _, (_, _, dropped) = self._results.popitem(last=False)
                self._bytes -= dropped
        return result_id

    def result(self, kind: str, result_id: int) -> Any:
        """A held result, or None when it was never held or has been dropped."""
        with self._lock:
            held = self._results.get(result_id)
        return held[1] if held and held[0] == kind else None

    def subscribed(self, uri: str, starts: int) -> bool:
        """Whether we hold a subscription to uri on the current server process."""
        return self.subscriptions.get(uri) == starts

    def updated(self, uri: str) -> None:
        """Note a notifications/resources/updated for uri (a server naming endless URIs cannot grow this)."""
        with self._lock:
            entry = self.updates.pop(uri, None) or {"t": 0.0, "count": 0}
            entry["t"], entry["count"] = time.time(), entry["count"] + 1
            self.updates[uri] = entry
            while len(self.updates) > MAX_UPDATES:
                self.updates.popitem(last=False)


def _payload_size(value: Any, depth: int = 0) -> int:
    """Rough size of the strings in a result (blobs dominate); bounded recursion."""
    if isinstance(value, str):
        return len(value)
    if depth > 20:
        return 0
    if isinstance(value, dict):
        return sum(_payload_size(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return sum(_payload_size(v, depth + 1) for v in value)
    return 8
