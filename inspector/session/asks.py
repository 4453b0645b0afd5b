"""The server's own requests that a person answers: sampling/createMessage and elicitation/create (form and URL
modes). In the handshake era they are JSON-RPC requests from the server; in the modern era they arrive inside an
input_required result (an input round, taken from the client through its `on_answer` hook) and the answers go
back in the retried request. Either way each waits, visibly, until the page answers it; nothing is answered for
the user.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from inspector.protocol import eras, jsonrpc
from inspector.client.rpc import Pending, RequestFailed
from inspector.session import changes

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
    round: Any = field(repr=False, default=None)
    """Modern era: the input round this belongs to (InputRound), answered through the retried request."""
    input_key: str = ""
    """Modern era: the key of this request in the round's inputRequests."""
    info_only: bool = False
    """A URL from a -32042 error: nothing to send back; accepting re-runs the call that needed it."""
    call: Any = field(repr=False, default=None)
    """The page's tool call that caused this ask (its card shows the question), when one can be told."""

    @property
    def mode(self) -> str:
        """sampling, form or url."""
        if self.method == "sampling/createMessage":
            return "sampling"
        return "url" if self.params.get("mode") == "url" else "form"


@dataclass
class InputRound:
    """Modern era: a request answered with resultType input_required, waiting for the user's answers."""

    pending: Pending
    requests: dict[str, dict]
    """{key: {method, params}} from the result's inputRequests."""
    request_state: Any
    response_seq: int
    """The seq of the input_required answer: the retry links back to it in the timeline."""
    responses: dict[str, Any] = field(default_factory=dict)
    state: str = "waiting"
    """waiting, retried, abandoned."""


class Asks:
    """Holds the pending asks of a session (and the modern era's input rounds) and sends the page's answers."""

    def __init__(self, session, calls) -> None:
        self.session = session
        self.calls = calls
        self.items: dict[int, Ask] = {}
        self.rounds: list[InputRound] = []
        self._keys = itertools.count(1)
        self._lock = threading.RLock()
        session.advertise.update(sampling=True, elicitation=True, elicitation_url=True)
        session.on_server_request = self._take
        session.client.on_answer = self._needs_input
        calls.on_url_required = self._take_urls
        calls.abandon_rounds = self._abandon_rounds
        session.on_exit_hooks.append(lambda *_: self._abandon())

    def pending(self) -> list[Ask]:
        """Asks still waiting, oldest first."""
        with self._lock:
            for ask in self.items.values():  # a cancelled call abandons its round's questions
                if ask.state == "pending" and ask.round is not None and ask.round.state != "waiting":
                    ask.state = "abandoned"
            return [ask for ask in self.items.values() if ask.state == "pending"]

    def _take_round(self, round_) -> bool:
        """Modern era: show the round's sampling and elicitation requests; False if one cannot be answered here."""
        open_keys = [key for key in round_.requests if key not in round_.responses]
        for key in open_keys:
            if not self._answerable(round_.requests[key].get("method")):
                return False
        with self._lock:
            for key in open_keys:
                item = round_.requests[key]
                params = item.get("params") if isinstance(item.get("params"), dict) else {}
                ask = Ask(key=next(self._keys), id=None, method=item["method"], params=params, received=time.time(),
                          round=round_, input_key=key, call=round_.pending.call)
                self.items[ask.key] = ask
        self._shown(round_.pending.call)
        return True

    def _take_urls(self, elicitations: list[dict], call) -> None:
        """A -32042 error: show each URL the server needs the user to open; accepting one re-runs the call."""
        with self._lock:
            for item in elicitations:
                params = {"mode": "url", **{k: item[k] for k in ("url", "message", "elicitationId") if k in item}}
                ask = Ask(key=next(self._keys), id=None, method="elicitation/create", params=params,
                          received=time.time(), info_only=True, call=call)
                self.items[ask.key] = ask
        self._shown(call)

    def _answerable(self, method: Any) -> bool:
        if method == "sampling/createMessage":
            return bool(self.session.advertise.get("sampling"))
        if method == "elicitation/create":
            return bool(self.session.advertise.get("elicitation") or self.session.advertise.get("elicitation_url"))
        return False

    def _take(self, msg: dict, process) -> bool:
        method = msg.get("method")
        if method not in ASKED:
            return False
        if method == "sampling/createMessage" and not self.session.advertise.get("sampling"):
            return False
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        ask = Ask(key=next(self._keys), id=msg.get("id"), method=method, params=params, received=time.time(),
                  process=process, call=self._asking_call())
        with self._lock:
            self.items[ask.key] = ask
        self._shown(ask.call)
        return True

    def _asking_call(self) -> Any:
        """The call a server request most likely belongs to: the newest call still waiting for its answer.

        A JSON-RPC request from the server names no request of ours (over stdio there is no stream to tell by),
        and a server asks in the middle of a tool call; with several calls in flight the newest is the best guess,
        and the banner at the top of the page shows every ask anyway."""
        waiting = [c for c in list(self.calls.calls.values()) if c.state == "pending"]
        return max(waiting, key=lambda c: c.id) if waiting else None

    def for_call(self, call: Any) -> list[Ask]:
        """The asks still waiting that the call caused (shown in its card)."""
        return [ask for ask in self.pending() if ask.call is call]

    def _shown(self, call: Any) -> None:
        """The asks changed: the banner and the Asks panel, and the card of the call they belong to."""
        self.session.store.signal(changes.ASKS)
        if call is not None:
            self.calls.changed(call)

    def answer(self, key: int, *, result: Any = None, error: tuple[int, str] | None = None, summary: str) -> bool:
        """Send the page's answer to the server request; False when it is no longer pending."""
        with self._lock:
            ask = self.items.get(key)
            if ask is None or ask.state != "pending":
                return False
            ask.state, ask.answer = "answered", summary
        if ask.info_only:
            self._shown(ask.call)
            if ask.call is not None and isinstance(result, dict) and result.get("action") == "accept":
                self.calls.call_tool(ask.call.tool, ask.call.arguments)  # the user opened the URL: try again
            return True
        if ask.round is not None:
            sent = self.answer_input(ask.round, ask.input_key, None if error is not None else result)
            if not sent:
                ask.state = "abandoned"
            self._shown(ask.call)
            return sent
        reply = (jsonrpc.error_response(ask.id, error[0], error[1]) if error is not None
                 else jsonrpc.result_response(ask.id, result))
        sent = self.session.reply(ask.process, reply)
        if not sent:
            ask.state = "abandoned"
        self._shown(ask.call)
        return sent

    def _abandon(self) -> None:
        with self._lock:
            for ask in self.items.values():
                if ask.state == "pending":
                    ask.state = "abandoned"
        self.session.store.signal(changes.ASKS)

    # -- modern era: input_required rounds ---------------------------------------------------------------------

    def _needs_input(self, pending: Pending, response: dict) -> bool:
        """The client's on_answer hook: start an input round for an input_required answer; False when final."""
        session = self.session
        if pending.method not in eras.INPUT_REQUIRED_METHODS or session.server.era != eras.MODERN:
            return False
        result = response.get("result")
        if eras.result_type(result) != "input_required":
            return False
        asked = eras.input_requests(result)
        if not asked:
            return False  # nothing we could answer: the input_required result itself is the answer shown
        round_ = InputRound(pending=pending, requests=asked, request_state=result.get("requestState"),
                            response_seq=pending.response_seq)
        for key, item in asked.items():
            if item["method"] == "roots/list" and session.advertise.get("roots"):
                round_.responses[key] = {"roots": session.roots}  # answered for the user, as roots/list is
        people = {key: item for key, item in asked.items() if key not in round_.responses}
        with self._lock:
            self.rounds.append(round_)
            del self.rounds[:-200]
        call = pending.call
        if call is not None and people:
            # Before the asks appear: whoever sees the question should already see the call waiting for it.
            call.waiting_input = True
            self.calls.changed(call)
        if people and not self._take_round(round_):
            with self._lock:
                round_.state = "abandoned"
            if call is not None:
                call.waiting_input = False
                self.calls.changed(call)
            return False
        if not people:
            self._retry(round_)
        return True

    def answer_input(self, round_: InputRound, key: str, result: Any | None) -> bool:
        """The user's answer to one input request (None: rejected, which abandons the request)."""
        with self._lock:
            if round_.state != "waiting" or key not in round_.requests:
                return False
            if result is None:
                round_.state = "abandoned"
            else:
                round_.responses[key] = result
            complete = round_.state == "waiting" and set(round_.responses) >= set(round_.requests)
        if result is None:
            self.session.client.finish(round_.pending, failure=RequestFailed(
                f"{round_.pending.method}: the user rejected {round_.requests[key]['method']}; the request was "
                "not sent again", reason="rejected"))
            return True
        if complete:
            self._retry(round_)
        return True

    def _retry(self, round_: InputRound) -> None:
        with self._lock:
            if round_.state != "waiting":
                return
            round_.state = "retried"
        pending = round_.pending
        pending.params = eras.retry_params(pending.params, dict(round_.responses), round_.request_state)
        pending.rounds += 1
        if pending.call is not None:
            pending.call.waiting_input = False
        self.session.client.send_pending(pending, follows=round_.response_seq or None)
        if pending.call is not None:
            self.calls.changed(pending.call)

    def _abandon_rounds(self, pending: Pending) -> bool:
        """A call was cancelled: the rounds it waits in are abandoned; True if there were any."""
        with self._lock:
            waiting = [r for r in self.rounds if r.pending is pending and r.state == "waiting"]
            for round_ in waiting:
                round_.state = "abandoned"
        return bool(waiting)
