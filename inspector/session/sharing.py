"""Sharing: the page's recordings work that outlives a request: the `mcp-inspect view` processes it started and
the latest replay. A service of one run, owned by the Inspector and stopped by the runner (no Flask here).

Opening a recording starts our own read-only viewer on another port: it runs nothing from the file. Replaying
restarts the current server so its handshake is replayed too, and shows each step's diff.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from dataclasses import dataclass, field

from inspector.recording.store import Store
from inspector.client.targets import HttpTarget
from inspector.session import changes

VIEWER_START_SECONDS = 20


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
        self._viewers: list[subprocess.Popen] = []
        self._lock = threading.Lock()

    def start_viewer(self, path: str) -> str:
        """Run `mcp-inspect view` on the file and return its tokened URL; raises ValueError with the reason."""
        proc = subprocess.Popen([sys.executable, "-m", "inspector.cli", "view", "--no-open", "--port", "0", path],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        with self._lock:
            self._viewers.append(proc)
        line: list[bytes] = []
        reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(VIEWER_START_SECONDS)
        url = line[0].decode(errors="replace").strip() if line else ""
        if not url.startswith("http://"):
            exited = line == [b""]  # stdout closed: it is exiting with its reason on stderr (let it finish saying so)
            try:
                proc.wait(timeout=2.0 if exited else 0.0)
            except subprocess.TimeoutExpired:
                proc.kill()
            message = proc.stderr.read().decode(errors="replace").strip().splitlines() if exited else []
            raise ValueError(message[-1] if message else "the viewer did not start")
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
        for proc in viewers:
            if proc.poll() is None:
                proc.terminate()

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
