"""Sharing: the page's recordings work that outlives a request: the `mcp-inspect view` processes it started and
the latest replay. A service of one run, owned by the Inspector and stopped by the runner (no Flask here).

Opening a recording starts our own read-only viewer on another port: it runs nothing from the file. It runs the
way a server does (transport/stdio): in a process group of its own with the lifeline, so it ends with the inspector
even when the inspector is killed with kill -9 (security.md row 25). Replaying restarts the current server so its
handshake is replayed too, and shows each step's diff.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field

from inspector.recording.store import Store
from inspector.client.targets import HttpTarget
from inspector.session import changes
from inspector.transport import SpawnError
from inspector.transport.stdio import StdioProcess

VIEWER_START_SECONDS = 300
"""A viewer answers with its URL line, or ends with its reason; this only bounds a viewer that does neither. Not a
start-up deadline: `view` reads the whole recording before its URL line (seconds for a big one, more on a busy
machine), and 20 s here refused a slow start as "the viewer did not start"."""


@dataclass
class ReplayRun:
    """The page's latest replay."""

    name: str
    state: str = "running"
    """running, done, failed."""
    steps: list = field(default_factory=list)
    error: str = ""
    summary: dict = field(default_factory=dict)


class Sharing:
    """The viewers started from the page, and the latest replay."""

    def __init__(self, store: Store, session) -> None:
        self.store = store
        self.session = session
        self.replay: ReplayRun | None = None
        self._viewers: list[StdioProcess] = []
        self._lock = threading.Lock()

    def start_viewer(self, path: str) -> str:
        """Run `mcp-inspect view` on the file and return its tokened URL; raises ValueError with the reason.

        The URL line comes once the viewer has the file open and read (it reads it through that descriptor from
        then on), so the caller may delete the file as soon as this returns."""
        said: list[str] = []
        ready = threading.Event()

        def on_stdout(line: bytes) -> None:
            said.append(line.decode(errors="replace").strip())
            ready.set()

        def on_exit(info) -> None:
            with self._lock:
                if viewer in self._viewers:
                    self._viewers.remove(viewer)
            ready.set()  # exited before its URL line: its reason is the last stderr line

        viewer = StdioProcess([sys.executable, "-m", "inspector.cli", "view", "--no-open", "--port", "0", path],
                              cwd=None, env=dict(os.environ), on_stdout=on_stdout, on_stderr=lambda text: None,
                              on_exit=on_exit)
        with self._lock:
            self._viewers.append(viewer)
        try:
            viewer.start()
        except SpawnError as exc:
            with self._lock:
                self._viewers.remove(viewer)
            raise ValueError(str(exc)) from None
        ready.wait(VIEWER_START_SECONDS)
        url = said[0] if said else ""
        if not url.startswith("http://"):
            info = viewer.stop(stdin_grace=0.0)
            tail = [line for line in (info.stderr_tail if info else []) if line.strip()]
            raise ValueError(tail[-1] if tail else "the viewer did not start")
        return url

    def start_replay(self, name: str, loaded) -> tuple[ReplayRun, bool]:
        """(the run, whether it started): a replay already running is returned instead of starting another."""
        with self._lock:
            if self.replay is not None and self.replay.state == "running":
                return self.replay, False
            run = self.replay = ReplayRun(name=name)
        threading.Thread(target=self._run_replay, args=(run, loaded), name="replay", daemon=True).start()
        return run, True

    def stop(self) -> None:
        """End the viewers this page started (the runner calls this when the inspector shuts down)."""
        with self._lock:
            viewers, self._viewers = self._viewers, []
        # A viewer does not end when its stdin closes: SIGTERM at once, each on its own thread (they end together).
        stopping = [threading.Thread(target=viewer.stop, kwargs={"stdin_grace": 0.0}, daemon=True)
                    for viewer in viewers]
        for thread in stopping:
            thread.start()
        for thread in stopping:
            thread.join()

    def _run_replay(self, run: ReplayRun, loaded) -> None:
        """Restart-and-replay on a thread: stop this server, replay against a fresh one, then start it again."""
        from inspector.recording.replay import Replayer, ReplayError  # loaded only when a replay runs

        session, store = self.session, self.store

        def on_step(step) -> None:
            run.steps = list(replayer.steps)
            store.signal(changes.REPLAY)

        session.stop(reason="replay", stdin_grace=0.3, failure="server restarted for a replay")
        replayer = Replayer(loaded, session.command, cwd=session.cwd, env=session.env, store=store,
                            timeout=session.timeout, on_step=on_step, http=_http_target(session))
        try:
            report = replayer.run()
            run.steps, run.summary, run.state = report.steps, report.summary(), "done"
        except ReplayError as exc:
            run.state, run.error = "failed", str(exc)
        except Exception as exc:  # shown in the page rather than lost on a thread
            run.state, run.error = "failed", f"internal error: {exc!r}"
        finally:
            session.start()
            store.signal(changes.REPLAY)


def _http_target(session) -> HttpTarget | None:
    """The session's HTTP server, with the transport its connection settled on, for a replay against it."""
    if not session.url:
        return None
    return HttpTarget(session.url, session.http_transport or "auto", tuple(session.http_headers))
