"""Restarting the server (file change, crash, click) and telling what changed.

A restart is the shutdown ladder with a short stdin grace, pending requests failed with "server restarted", a
fresh spawn, handshake and listing, then a diff against what the server offered before. The same diff runs when
a live server says its lists changed. One restart at a time; the watcher already coalesces bursts of saves.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
import time

from inspector.protocol.diff import diff_servers, schema_still_fits
from inspector.session import Session
from inspector.transport import ExitInfo
from inspector.session import changes

RESTART_STDIN_GRACE = 0.3
LIST_CHANGED_QUIET = 0.3
LIST_CHANGED = {"notifications/tools/list_changed", "notifications/resources/list_changed",
                "notifications/prompts/list_changed"}


class Restarter:
    """Owns restarts and the diffs that follow them for one Session."""

    def __init__(self, session: Session, *, restart_on_crash: bool = False, watcher=None, calls=None,
                 crash_loop: CrashLoop | None = None) -> None:
        self.session = session
        self.calls = calls
        """The page's tool calls and drafts (a restart drops drafts that no longer fit), when there are some."""
        self.restart_on_crash = restart_on_crash
        self.watcher = watcher
        """The file watcher, when one runs (for the page's watch status)."""
        self.crash_loop = crash_loop or CrashLoop()
        self.crash_looping = False
        self.last_restart: dict | None = None
        """{"t", "reason", "paths", "summary"} of the latest restart, for the page header."""
        self.tool_marks: dict[str, str] = {}
        """Tools that are "new" or "changed" since the last restart, until the user looks at them."""
        self._lock = threading.Lock()
        self._snapshot: dict | None = None
        self._relist_timer: threading.Timer | None = None
        self._timer_lock = threading.Lock()
        session.on_listed_hooks.append(self._remember)
        session.on_exit_hooks.append(self._on_exit)
        session.on_notification_hooks.append(self._on_notification)

    @property
    def has_baseline(self) -> bool:
        """The server's offer was listed once, so a restart can say what changed (before that it has nothing to
        compare with, and a restart records no diff)."""
        return self._snapshot is not None

    # -- restarting ------------------------------------------------------------------------------------------

    def restart(self, reason: str, paths: list[str] | tuple[str, ...] = ()) -> None:
        """Restart now (blocking until the new server is listed or failed), then record what changed."""
        with self._lock:
            if reason != "crash":
                # A change or a click is a new chance: a crash loop stops only restarts that crashes cause.
                self.crash_loop.reset()
                self.crash_looping = False
            elif self.crash_looping:
                # Asked for by an exit that came before the loop was seen, but run after it (threads, a busy
                # machine): the loop stands, so this restart is not made.
                return
            before = self._snapshot
            self.session.event("restart", {"reason": reason, "paths": list(paths)})
            self.session.stop(reason=f"restart: {reason}", stdin_grace=RESTART_STDIN_GRACE,
                              failure="server restarted")
            self.session.start(wait=True)
            summary = self._diff(before, reason) if self.session.server.state == "running" else "server did not start"
            self.last_restart = {"t": time.time(), "reason": reason, "paths": list(paths), "summary": summary}
        self.session.store.signal(changes.WATCH)

    def restart_in_background(self, reason: str, paths=()) -> None:
        """Restart on another thread (from a request handler or an exit hook)."""
        threading.Thread(target=self.restart, args=(reason, tuple(paths)), name="restart", daemon=True).start()

    def seen(self, tool_name: str) -> None:
        """The user looked at a tool: it is no longer marked new or changed."""
        if self.tool_marks.pop(tool_name, None):
            self.session.store.signal(changes.TOOLS)

    def status(self) -> dict:
        """For the page header: what is watched, the last restart and why, crash-loop state."""
        return {"watch": self.watcher.status() if self.watcher else None, "last": self.last_restart,
                "restart_on_crash": self.restart_on_crash, "crash_loop": self.crash_looping}

    # -- diffs -----------------------------------------------------------------------------------------------

    def _remember(self) -> None:
        self._snapshot = self.session.snapshot()

    def _diff(self, before: dict | None, reason: str) -> str:
        if before is None:
            return "first successful start"
        after = self.session.snapshot()
        diff = diff_servers(before, after)
        self.session.event("diff", {"reason": reason, **diff.to_json()})
        for name in diff.added_tool_names():
            self.tool_marks[name] = "new"
        for name in diff.changed_tool_names():
            self.tool_marks[name] = "changed"
        self._forget_inputs_that_no_longer_fit(before, after)
        self.session.store.signal(changes.TOOLS)
        return diff.summary()

    def _forget_inputs_that_no_longer_fit(self, before: dict, after: dict) -> None:
        old = {t.get("name"): t for t in before.get("tools") or [] if isinstance(t, dict)}
        new = {t.get("name"): t for t in after.get("tools") or [] if isinstance(t, dict)}
        for name, text in list(self.calls.last_arguments.items() if self.calls else ()):
            if name not in new:
                self.calls.last_arguments.pop(name, None)
                self.tool_marks.pop(name, None)
            elif not schema_still_fits((old.get(name) or {}).get("inputSchema"), new[name].get("inputSchema"), text):
                self.calls.last_arguments.pop(name, None)

    # -- hooks -----------------------------------------------------------------------------------------------

    def _on_exit(self, info: ExitInfo, by_itself: bool) -> None:
        if not (by_itself and self.restart_on_crash):
            return
        if self.crash_loop.record_exit():
            self.crash_looping = True
            self.session.server.error = ("crash loop: the server exited 5 times within 10 s; not restarting it "
                                         "until the next change or a click on Restart")
            self.session.event("crash-loop", {"exits": self.crash_loop.limit, "window_s": self.crash_loop.window})
            self.session.store.signal(changes.SERVER)
            self.session.store.signal(changes.WATCH)
            return
        self.restart_in_background("crash")

    def _on_notification(self, msg: dict) -> None:
        if msg.get("method") not in LIST_CHANGED:
            return
        # Servers often send a burst right after start: wait for a quiet moment, then re-list once.
        with self._timer_lock:
            if self._relist_timer is not None:
                self._relist_timer.cancel()
            self._relist_timer = threading.Timer(LIST_CHANGED_QUIET, self._relist)
            self._relist_timer.daemon = True
            self._relist_timer.start()

    def _relist(self) -> None:
        with self._lock:
            before = self._snapshot
            self.session.refresh_lists()
            self._diff(before, "list_changed")


class CrashLoop:
    """Counts the server's own exits: `limit` of them within `window` seconds is a crash loop, until reset()."""

    def __init__(self, limit: int = 5, window: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self.tripped = False
        """A crash loop was seen; stays set until reset() (the next change or a click)."""
        self._exits: deque[float] = deque(maxlen=limit)
        self._lock = threading.Lock()

    def record_exit(self, now: float | None = None) -> bool:
        """Note an exit; True when this is (or already was) a crash loop, so do not restart."""
        with self._lock:
            self._exits.append(self.clock() if now is None else now)
            if len(self._exits) == self.limit and self._exits[-1] - self._exits[0] <= self.window:
                self.tripped = True
            return self.tripped

    def reset(self) -> None:
        """Forget the exits (after a code change or a click on Restart)."""
        with self._lock:
            self._exits.clear()
            self.tripped = False
