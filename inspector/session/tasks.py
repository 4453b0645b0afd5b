"""The tasks the page has seen, one TaskTracker per session: from call results, status notifications and controls.

A task is known by its server-given id within one server process (a restart forgets the server's tasks, so an
older entry stays listed but offers no controls). The page names tasks by a local integer key, never by the
server's id, so nothing a server sends ends up in a URL. The wire shapes are read by inspector/tasks.py.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from inspector.session.calls import Call
from inspector.protocol.tasks import augment_call_params, task_from_result, task_from_status_notification, task_request
from inspector.session import changes

STATUS_NOTIFICATIONS = ("notifications/tasks/status", "notifications/tasks")
"""The 2025-11-25 (and our reading of the extension's) status notification, and the ext-tasks draft's name."""
MAX_TASKS = 200
MAX_HISTORY = 50
MAX_CALLS = 200
RESULT_TIMEOUT = 3600.0
"""tasks/result blocks until the task ends: it gets a long timeout of its own (the session's is for quick calls)."""
DEFAULT_TTL_MS = 60_000
INVALID_CODES = (-32600, -32601, -32602)
"""Errors that say the tasks/result request itself was wrong (unknown task...), not how the task ended."""


@dataclass
class StatusNote:
    """One status the task was seen in."""

    t: float
    status: str
    message: str | None
    source: str
    """notifications/tasks/status, tools/call, tasks/get, tasks/cancel, ..."""


@dataclass
class TrackedTask:
    """A task as the Tasks panel shows it."""

    key: int
    """Our own id for the page (URLs and element ids)."""
    view: Any
    """The newest tasks.TaskView."""
    era: str | None
    starts: int
    """ServerState.starts when first seen: the process the task lives in."""
    seen: float
    updated: float
    tool: str | None = None
    call_id: int | None = None
    """The TaskCall (a task-augmented call from the tool form) that created it."""
    session_call_id: int | None = None
    """A plain session Call the server answered with a task anyway."""
    history: list[StatusNote] = field(default_factory=list)
    notifications: int = 0
    result: Any = None
    has_result: bool = False
    result_error: dict | None = None
    waiting: tuple = ()
    """Controls sent and not answered yet (tasks/result can wait for minutes); replaced, never mutated in place."""
    problem: str | None = None
    """The last control's failure, shown as a small error text."""
    info: str | None = None
    """The last control's answer when it carried no task (an empty acknowledgement)."""
    answer_seq: int | None = None
    """The timeline seq of the last control's answer."""

    @property
    def task_id(self) -> str:
        return self.view.task_id


@dataclass
class TaskCall(Call):
    """A task-augmented tools/call sent from the tool form: a Call whose `state` may also be "task" (answered
    with a task, found under `task_key`)."""

    ttl: int = 0
    task_key: int | None = None


class TaskTracker:
    """Keeps the tasks of one session and sends their controls."""

    def __init__(self, session) -> None:
        self.session = session
        self._lock = threading.RLock()
        self._keys = itertools.count(1)
        self._call_ids = itertools.count(1)
        self.tasks: OrderedDict[int, TrackedTask] = OrderedDict()
        self._by_id: dict[tuple[int, str], int] = {}
        self.calls: OrderedDict[int, TaskCall] = OrderedDict()
        self.problem: str | None = None
        """The last panel-level failure (a look-up of an unknown task id)."""
        self.prefs: dict[str, dict] = {}
        """Per tool: {"task": bool, "ttl": int} as last posted, so the form keeps them."""
        self._adopted: set[int] = set()

    def follow(self, session) -> None:
        """Hear the live session's task status notifications (a viewed recording has none to hear)."""
        session.on_notification_hooks.append(self._on_notification)

    def read_recording(self, store) -> None:
        """`view`: learn the tasks a recording holds (task results and status notifications), so the panel
        shows what the file says rather than "No tasks yet" (finding 25). Nothing is sent."""
        # Only the rows that can hold a task are looked at: found by their codes, not by reading a million rows.
        seqs = sorted(store.seqs_of_methods("notification", STATUS_NOTIFICATIONS) + store.seqs_of_kind("response"))
        for row in filter(None, map(store.row, seqs)):
            if row.kind == "notification":
                record = store.record(row.seq)
                msg = record.msg if record is not None and isinstance(record.msg, dict) else {}
                view = task_from_status_notification(msg.get("params"))
                if view is not None:
                    self.note(view, source=row.method)
            elif row.kind == "response" and row.pair_seq is not None:
                record, request = store.record(row.seq), store.record(row.pair_seq)
                msg = record.msg if record is not None and isinstance(record.msg, dict) else {}
                view = task_from_result(msg.get("result"))
                if view is None:
                    continue
                asked = request.msg if request is not None and isinstance(request.msg, dict) else {}
                params = asked.get("params") if isinstance(asked.get("params"), dict) else {}
                tool = params.get("name") if row.method == "tools/call" and isinstance(params.get("name"), str) else None
                self.note(view, source=row.method or "response", tool=tool)

    # -- reading --------------------------------------------------------------------------------------------

    def entries(self) -> list[TrackedTask]:
        """Every task, newest first."""
        with self._lock:
            return sorted(self.tasks.values(), key=lambda e: e.key, reverse=True)

    def get(self, key: int) -> TrackedTask | None:
        with self._lock:
            return self.tasks.get(key)

    def call(self, call_id: int) -> TaskCall | None:
        with self._lock:
            return self.calls.get(call_id)

    def current(self, entry: TrackedTask) -> bool:
        """Whether the task lives in the server process running now."""
        return entry.starts == self.session.server.starts

    # -- learning about tasks -------------------------------------------------------------------------------

    def note(self, view, *, source: str, tool: str | None = None, call_id: int | None = None,
             session_call_id: int | None = None, refresh: bool = True) -> TrackedTask:
        """Add or update the task a message described; signals the page."""
        server = self.session.server
        now = time.time()
        with self._lock:
            key = self._by_id.get((server.starts, view.task_id))
            entry = self.tasks.get(key) if key is not None else None
            if entry is None:
                entry = TrackedTask(key=next(self._keys), view=view, era=server.era, starts=server.starts,
                                    seen=now, updated=now)
                self.tasks[entry.key] = entry
                self._by_id[(server.starts, view.task_id)] = entry.key
                entry.history.append(StatusNote(now, view.status, view.status_message, source))
                self._prune()
            elif refresh and not _older(view, entry.view):
                changed = (view.status, view.status_message) != (entry.view.status, entry.view.status_message)
                entry.view, entry.updated = view, now
                if changed or source in STATUS_NOTIFICATIONS:
                    entry.history.append(StatusNote(now, view.status, view.status_message, source))
                    del entry.history[:-MAX_HISTORY]
            if source in STATUS_NOTIFICATIONS:
                entry.notifications += 1
            if view.result is not None:
                entry.result, entry.has_result = view.result, True
            if isinstance(view.error, dict):
                entry.result_error = view.error
            entry.tool = entry.tool or tool
            entry.call_id = entry.call_id or call_id
            entry.session_call_id = entry.session_call_id or session_call_id
        self._signal(entry)
        return entry

    def adopt_call(self, call) -> TrackedTask | None:
        """The task a plain session Call was answered with (a server that makes tasks on its own), if any."""
        if getattr(call, "state", None) != "result":
            return None
        view = task_from_result(call.result)
        if view is None:
            return None
        with self._lock:
            first = call.id not in self._adopted
            self._adopted.add(call.id)
            key = self._by_id.get((self.session.server.starts, view.task_id))
        if not first and key is not None:
            return self.get(key)
        # Only the first sight counts: the call's answer is older than anything heard since.
        return self.note(view, source="tools/call", tool=call.tool, session_call_id=call.id, refresh=key is None)

    def _on_notification(self, msg: dict) -> None:
        # Runs on the server's stdout reader thread: never raise there.
        try:
            if msg.get("method") not in STATUS_NOTIFICATIONS:
                return
            view = task_from_status_notification(msg.get("params"))
            if view is not None:
                self.note(view, source=msg["method"])
        except Exception:  # noqa: BLE001 - a malformed notification stays in the timeline, nothing more
            return

    # -- sending --------------------------------------------------------------------------------------------

    def call_tool(self, name: str, arguments: Any, ttl_ms: int, *, timeout: float | None = None) -> TaskCall:
        """Send a task-augmented tools/call; returns at once (the answer signals `task-call:<id>`)."""
        call = TaskCall(id=next(self._call_ids), tool=name, arguments=arguments, ttl=ttl_ms, started=time.time())
        with self._lock:
            self.calls[call.id] = call
            while len(self.calls) > MAX_CALLS:
                self.calls.popitem(last=False)
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        params = augment_call_params(params, ttl_ms)

        def done(pending) -> None:
            call.elapsed_ms = (time.time() - call.started) * 1000.0
            call.response_seq = pending.response_seq or None
            response = pending.response
            if pending.failure:
                call.state, call.message = "failed", str(pending.failure)
            elif response is not None and "error" in response:
                error = response["error"]
                call.state, call.error = "error", error if isinstance(error, dict) else {"message": str(error)}
            else:
                call.result = (response or {}).get("result")
                view = task_from_result(call.result)
                if view is None:
                    call.state = "result"
                else:
                    call.task_key = self.note(view, source="tools/call", tool=name, call_id=call.id).key
                    call.state = "task"
            with call.changed:  # the task controls' answers wait on this condition, not on a clock
                call.done.set()
                call.version += 1
                call.changed.notify_all()
            self.session.store.signal(changes.task_call(call.id))

        pending = self.session.request("tools/call", params, timeout=timeout, on_done=done)
        call.request_seq = pending.seq
        return call

    def control(self, key: int, control: str):
        """Send get / result / cancel for a task in the current era; returns the Pending, or None (problem set)."""
        entry = self.get(key)
        if entry is None:
            raise KeyError(key)
        era = self.session.server.era
        try:
            if era is None:
                raise ValueError("the server is not connected")
            method, params = task_request(era, control, entry.task_id)
        except ValueError as exc:
            entry.problem = str(exc)
            self._signal(entry)
            return None
        entry.problem = entry.info = None
        with self._lock:
            entry.waiting = tuple(sorted({*entry.waiting, control}))
        timeout = max(self.session.timeout, RESULT_TIMEOUT) if control == "result" else None
        pending = self.session.request(method, params, timeout=timeout,
                                       on_done=lambda p: self._answered(entry, control, method, p))
        self._signal(entry)
        return pending

    def _answered(self, entry: TrackedTask, control: str, method: str, pending) -> None:
        with self._lock:
            entry.waiting = tuple(c for c in entry.waiting if c != control)
        entry.answer_seq = pending.response_seq or entry.answer_seq
        response = pending.response
        if pending.failure:
            entry.problem = f"{method}: {pending.failure}"
        elif response is not None and "error" in response:
            error = response["error"] if isinstance(response["error"], dict) else {"message": str(response["error"])}
            if control == "result" and error.get("code") not in INVALID_CODES:
                entry.result_error = error  # how the task ended (failed or cancelled)
            else:
                entry.problem = f"{method}: {_error_text(error)}"
        else:
            result = response.get("result") if response else None
            if control == "result":
                entry.result, entry.has_result = result, True
            else:
                view = task_from_result(result)
                if view is not None and view.task_id == entry.task_id:
                    self.note(view, source=method)
                    return
                entry.info = f"{method} answered without a task: the server acknowledged it"
        self._signal(entry)

    def lookup(self, task_id: str):
        """tasks/get for an id typed in the panel; returns the Pending (the answer adds the task or a problem)."""
        if self.session.server.era is None:
            self.problem = "the server is not connected"
            return None
        self.problem = None
        method, params = task_request(self.session.server.era, "get", task_id)

        def done(pending) -> None:
            response = pending.response
            if pending.failure:
                self.problem = f"{method}: {pending.failure}"
            elif response is not None and "error" in response:
                error = response["error"] if isinstance(response["error"], dict) else {"message": str(response["error"])}
                self.problem = f"{method} {task_id!r}: {_error_text(error)}"
            else:
                view = task_from_result((response or {}).get("result"))
                if view is None:
                    self.problem = f"{method} {task_id!r}: the answer holds no task"
                else:
                    self.note(view, source=method)
                    return
            self.session.store.signal(changes.TASKS)

        return self.session.request(method, params, on_done=done)

    # -- bookkeeping ----------------------------------------------------------------------------------------

    def _signal(self, entry: TrackedTask) -> None:
        store = self.session.store
        store.signal(changes.TASKS)
        if entry.call_id is not None:
            store.signal(changes.task_call(entry.call_id))
        if entry.session_call_id is not None:
            store.signal(changes.call(entry.session_call_id))

    def _prune(self) -> None:
        while len(self.tasks) > MAX_TASKS:
            _, dropped = self.tasks.popitem(last=False)
            self._by_id.pop((dropped.starts, dropped.task_id), None)


def _older(new, old) -> bool:
    """Whether a task snapshot is older than the one held: terminal states are final, timestamps order the rest."""
    if old.terminal and not new.terminal:
        return True
    if new.last_updated_at and old.last_updated_at and len(new.last_updated_at) == len(old.last_updated_at):
        return new.last_updated_at < old.last_updated_at  # same ISO 8601 shape: text order is time order
    return False


def _error_text(error: dict) -> str:
    code = error.get("code")
    message = error.get("message") if isinstance(error.get("message"), str) else ""
    return f"JSON-RPC error {code}: {message}" if code is not None else f"JSON-RPC error: {message}"
