"""The server's own requests that a person answers: sampling/createMessage and elicitation/create (form and URL
modes), in the handshake era. Each waits, visibly, until the page answers it; nothing is answered for the user.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from . import jsonrpc

ASKED = ("sampling/createMessage", "elicitation/create")
USER_REJECTED = -1  # the code both SDKs use for a sampling request the user declined


@dataclass
class Ask:
    """One server request waiting for the user."""

    key: int
    id: Any
    method: str
    params: dict
    received: float
    process: Any = field(repr=False, default=None)
    state: str = "pending"
    """pending, answered, abandoned (the server went away before an answer)."""
    answer: str = ""
    draft: dict | None = None
    """What the user last typed into an elicitation form that was refused (shown again with its errors)."""

    @property
    def mode(self) -> str:
        """sampling, form or url."""
        if self.method == "sampling/createMessage":
            return "sampling"
        return "url" if self.params.get("mode") == "url" else "form"


class Asks:
    """Holds the pending asks of a session and sends the page's answers."""

    def __init__(self, session) -> None:
        self.session = session
        self.items: dict[int, Ask] = {}
        self._keys = itertools.count(1)
        self._lock = threading.Lock()
        session.advertise.update(sampling=True, elicitation=True, elicitation_url=True)
        session.on_server_request = self._take
        session.on_exit_hooks.append(lambda *_: self._abandon())

    def pending(self) -> list[Ask]:
        """Asks still waiting, oldest first."""
        with self._lock:
            return [ask for ask in self.items.values() if ask.state == "pending"]

    def _take(self, msg: dict, process) -> bool:
        method = msg.get("method")
        if method not in ASKED:
            return False
        if method == "sampling/createMessage" and not self.session.advertise.get("sampling"):
            return False
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        ask = Ask(key=next(self._keys), id=msg.get("id"), method=method, params=params, received=time.time(),
                  process=process)
        with self._lock:
            self.items[ask.key] = ask
        self.session.store.signal("asks")
        return True

    def answer(self, key: int, *, result: Any = None, error: tuple[int, str] | None = None, summary: str) -> bool:
        """Send the page's answer to the server request; False when it is no longer pending."""
        with self._lock:
            ask = self.items.get(key)
            if ask is None or ask.state != "pending":
                return False
            ask.state, ask.answer = "answered", summary
        reply = (jsonrpc.error_response(ask.id, error[0], error[1]) if error is not None
                 else jsonrpc.result_response(ask.id, result))
        sent = self.session.reply(ask.process, reply)
        if not sent:
            ask.state = "abandoned"
        self.session.store.signal("asks")
        return sent

    def _abandon(self) -> None:
        with self._lock:
            for ask in self.items.values():
                if ask.state == "pending":
                    ask.state = "abandoned"
        self.session.store.signal("asks")
