"""The source watcher: the pure filter as tables, then a real watchdog Watcher on tmp_path."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from conftest import wait_for
from inspector.session.restarts import CrashLoop
from inspector.session.watch import (
    DEFAULT_GLOBS, Watcher, WatchSpec, default_watch, is_relevant, is_relevant_folder,
)

QUIET = 0.15  # the tests' debounce; liveness waits below are many times this


# -- pure ------------------------------------------------------------------------------------------------------

ROOT = Path("/srv/proj")
SPEC = WatchSpec((ROOT, Path("/etc/extra.conf")), DEFAULT_GLOBS, (ROOT / "recordings",))

RELEVANT = [
    ("server.py", True),
    ("pkg/tools.py", True),
    ("src/index.ts", True),
    ("dist/index.mjs", True),
    ("lib/a.cjs", True),
    ("main.js", True),
    ("config.json", True),
    ("pyproject.toml", True),
    ("conf/a.yaml", True),
    ("conf/b.yml", True),
    ("server.log", False),
    ("data.db", False),
    ("README.md", False),
    ("recordings/2026.jsonl", False),
    ("recordings/meta.json", False),
    (".git/config.json", False),
    (".git/HEAD", False),
    ("__pycache__/server.cpython-312.pyc", False),
    ("pkg/__pycache__/x.py", False),
    (".venv/lib/site.py", False),
    ("venv/lib/site.py", False),
    ("node_modules/x/index.js", False),
    ("web/node_modules/x/index.js", False),
    (".server.py.swp", False),
    (".server.py.swx", False),
    ("server.py~", False),
    (".#server.py", False),
    ("#server.py#", False),
    ("4913", False),
    ("pkg/4913", False),
    ("server.py.tmp", False),
    ("../other/server.py", False),
    ("/etc/extra.conf", True),  # a file named with --watch counts whatever its name
    ("/etc/other.py", False),
]


@pytest.mark.parametrize("path, relevant", RELEVANT)
def test_is_relevant(path, relevant):
    assert is_relevant(ROOT / path, SPEC) is relevant


def test_globs_replace_the_list_and_may_name_folders():
    spec = WatchSpec((ROOT,), ("*.rb", "src/*"))
    assert is_relevant(ROOT / "app.rb", spec)
    assert is_relevant(ROOT / "src/anything.txt", spec)
    assert not is_relevant(ROOT / "server.py", spec)
    assert not is_relevant(ROOT / "src/.x.swp", spec)


def test_is_relevant_folder():
    assert is_relevant_folder(ROOT / "pkg", SPEC)
    assert not is_relevant_folder(ROOT / "recordings", SPEC)
    assert not is_relevant_folder(ROOT / "pkg/node_modules", SPEC)
    assert not is_relevant_folder(Path("/elsewhere"), SPEC)


def test_default_watch(tmp_path):
    (tmp_path / "server.py").write_text("")
    (tmp_path / "web").mkdir()
    (tmp_path / "web/index.js").write_text("")
    (tmp_path / "run").write_text("")
    assert default_watch(["python", "server.py"], tmp_path) == [tmp_path.resolve()]
    assert default_watch(["uv", "run", "--with", "mcp", "server.py", "--port", "3"], tmp_path) == [tmp_path.resolve()]
    assert default_watch(["node", "web/index.js"], tmp_path) == [(tmp_path / "web").resolve()]
    assert default_watch(["python3", str(tmp_path / "server.py")], "/") == [tmp_path.resolve()]
    assert default_watch(["./run"], tmp_path) == [tmp_path.resolve()]
    assert default_watch([str(tmp_path / "server.py")], "/") == [tmp_path.resolve()]
    assert default_watch(["npx", "-y", "@modelcontextprotocol/server-everything"], tmp_path) == []
    assert default_watch(["python", "-m", "server", "server.py"], tmp_path) == []
    assert default_watch(["python", "missing.py"], tmp_path) == []
    assert default_watch(["/usr/bin/env", "python3", "server.py"], tmp_path) == [tmp_path.resolve()]


def test_crash_loop_with_a_fake_clock():
    now = [100.0]
    loop = CrashLoop(limit=5, window=10.0, clock=lambda: now[0])
    for _ in range(4):
        assert not loop.record_exit()
        now[0] += 2.4
    assert loop.record_exit()  # the 5th exit, 9.6 s after the 1st
    assert loop.record_exit(now[0] + 100)  # stays tripped until reset
    loop.reset()
    assert not loop.tripped
    assert [loop.record_exit(t) for t in (0, 3, 6, 9, 12, 15)] == [False] * 6  # 5 exits span 12 s: slow crashes
    assert loop.record_exit(15.5)  # 6, 9, 12, 15, 15.5


# -- a real watcher --------------------------------------------------------------------------------------------
#
# No test here waits a fixed time for "nothing more happens". Each folder's watch reports its changes in order, so
# a file written last in a folder is a barrier: once the watcher has seen it (Watcher.on_event), it has noted every
# earlier change in that folder; if then nothing is pending or running, no call can come any more.

SENTINEL = "sentinel.txt"  # not a source file: the watcher sees it but never counts it


class Calls:
    """Records on_change calls; checks they never overlap. With a gate, the first call blocks until it is set."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.gate = gate
        self.calls: list[list[str]] = []
        self.running = 0
        self.overlapped = False
        self.threads: set[str] = set()
        self.cond = threading.Condition()

    def __call__(self, paths: list[str]) -> None:
        with self.cond:
            self.running += 1
            self.overlapped |= self.running > 1
            self.calls.append(paths)
            self.threads.add(threading.current_thread().name)
            self.cond.notify_all()
        if self.gate is not None and len(self.calls) == 1:
            assert self.gate.wait(10), "the test never opened the gate"
        with self.cond:
            self.running -= 1
            self.cond.notify_all()

    def wait_for(self, n: int, timeout: float = 5.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.calls) >= n and not self.running, timeout)


class Seen:
    """Every file event the watcher saw, as (path, counted), for Watcher(on_event=...)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, bool]] = []
        self.cond = threading.Condition()

    def __call__(self, path: str, counted: bool) -> None:
        with self.cond:
            self.events.append((path, counted))
            self.cond.notify_all()

    def wait_for_path(self, path: Path, timeout: float = 5.0) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: any(p == str(path) for p, _ in self.events), timeout), \
                f"the watcher never saw {path}"

    def barrier(self, *folders: Path) -> None:
        """Write a sentinel in each folder and wait until the watcher saw it: it has seen all before it there."""
        for folder in folders:
            sentinel = folder / SENTINEL
            with self.cond:
                self.events = [e for e in self.events if e[0] != str(sentinel)]
            sentinel.write_text(str(time.monotonic()))
            self.wait_for_path(sentinel)


def settle(watcher: Watcher, seen: Seen, *folders: Path, timeout: float = 5.0) -> None:
    """Wait until the watcher has seen every change made so far in these folders and nothing is pending or running:
    from then on no call can come from those changes."""
    seen.barrier(*folders)
    wait_for(lambda: not (status := watcher.status())["pending"] and not status["busy"], timeout, interval=0.01,
             message="the watcher to settle")


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    for folder in ("pkg", "recordings", ".git", "__pycache__", ".venv/lib", "node_modules/x"):
        (root / folder).mkdir(parents=True)
    (root / "server.py").write_text("print('v1')\n")
    (root / "pkg/tools.py").write_text("")
    return root.resolve()


@pytest.fixture
def watch(project):
    watchers = []

    def make(on_change, quiet: float = QUIET, **kwargs) -> Watcher:
        spec = WatchSpec((project,), DEFAULT_GLOBS, (project / "recordings",))
        watcher = Watcher(spec, on_change, quiet=quiet, **kwargs)
        assert not watcher.ready.is_set()
        watcher.start()
        assert watcher.ready.wait(5)
        watchers.append(watcher)
        return watcher

    yield make
    for watcher in watchers:
        watcher.stop()


def test_a_burst_of_saves_gives_at_most_two_calls(project, watch):
    calls, seen = Calls(), Seen()
    watcher = watch(calls, on_event=seen)
    server = project / "server.py"
    end = time.monotonic() + 0.5  # saves a few ms apart for 0.5 s: more than three quiet periods in all
    for i in range(100):
        server.write_text(f"print('v{i}')\n")
        time.sleep(max(0.0, (end - time.monotonic()) / (100 - i)) / 2)
    assert calls.wait_for(1)
    settle(watcher, seen, project)
    assert 1 <= len(calls.calls) <= 2
    assert {p for call in calls.calls for p in call} == {str(server)}
    assert not calls.overlapped
    assert calls.threads == {"watch-restart"}


def test_editor_style_replace(project, watch):
    calls, seen = Calls(), Seen()
    watcher = watch(calls, on_event=seen)
    server = project / "server.py"
    for i in range(200):
        temp = project / f".server.py.{i}.tmp"
        temp.write_text(f"print('v{i}')\n")
        os.replace(temp, server)  # the moved event's destination is what counts
        if i % 50 == 0:  # vim also deletes and re-creates, and writes a probe file
            server.unlink()
            server.write_text("")
            (project / "4913").write_text("")
            (project / "4913").unlink()
            (project / ".server.py.swp").write_text("")
    assert calls.wait_for(1)
    settle(watcher, seen, project)
    assert 1 <= len(calls.calls) <= 2
    assert {p for call in calls.calls for p in call} == {str(server)}


def test_ignored_writes_cause_nothing(project, watch):
    calls, seen = Calls(), Seen()
    watcher = watch(calls, on_event=seen)
    for path in ("recordings/session.jsonl", "recordings/meta.json", ".git/index", ".git/x.json",
                 "__pycache__/server.cpython-312.pyc", "__pycache__/x.py", ".venv/lib/site.py",
                 "node_modules/x/index.js", "server.log", "pkg/data.db", "pkg/.tools.py.swp", "server.py~"):
        for i in range(5):
            (project / path).write_text(str(i))
    (project / "recordings/sub").mkdir()
    (project / "recordings/sub/a.py").write_text("")
    # The ignored folders have no watch at all; the watched ones have seen their writes and not counted them.
    settle(watcher, seen, project, project / "pkg")
    assert calls.calls == []
    seen_paths = {p: counted for p, counted in seen.events}
    for path in ("server.log", "pkg/data.db", "pkg/.tools.py.swp", "server.py~"):
        assert seen_paths[str(project / path)] is False
    assert not any(counted for _, counted in seen.events)
    (project / "pkg/tools.py").write_text("x = 1\n")  # and the watcher was listening all along
    assert calls.wait_for(1)
    settle(watcher, seen, project / "pkg")
    assert calls.calls == [[str(project / "pkg/tools.py")]]


def test_changes_during_a_slow_call_give_exactly_one_more(project, watch):
    gate = threading.Event()
    calls, seen = Calls(gate), Seen()
    watcher = watch(calls, on_event=seen)
    (project / "server.py").write_text("v2")
    with calls.cond:
        assert calls.cond.wait_for(lambda: calls.running, 5)
    for i in range(20):  # during the "restart", which lasts until the gate opens
        (project / "server.py").write_text(f"v{i}")
        (project / "pkg/tools.py").write_text(f"v{i}")
    seen.barrier(project, project / "pkg")  # every change above is noted while the first call still runs
    assert watcher.status()["pending"] and watcher.status()["busy"]
    gate.set()
    assert calls.wait_for(2, timeout=5)
    settle(watcher, seen, project, project / "pkg")
    assert len(calls.calls) == 2
    assert sorted(calls.calls[1]) == sorted([str(project / "server.py"), str(project / "pkg/tools.py")])
    assert not calls.overlapped


def test_new_and_recreated_subfolders_are_watched(project, watch):
    calls, seen = Calls(), Seen()
    watcher = watch(calls, on_event=seen)
    (project / "src").mkdir()
    (project / "src/deep").mkdir()
    (project / "src/deep/new.py").write_text("")
    (project / "node_modules2").mkdir()
    assert calls.wait_for(1)
    settle(watcher, seen, project, project / "src/deep")
    assert {p for call in calls.calls for p in call} == {str(project / "src/deep/new.py")}
    # a folder removed and made again (a branch switch) is watched anew; a new node_modules is not watched
    (project / "src/deep/new.py").unlink()
    for sentinel in (project / "src/deep" / SENTINEL, project / "src/deep", project / "src"):
        sentinel.unlink() if sentinel.is_file() else sentinel.rmdir()
    settle(watcher, seen, project)
    (project / "src").mkdir()
    (project / "web/node_modules/y").mkdir(parents=True)
    (project / "web/node_modules/y/index.js").write_text("")
    seen.barrier(project)  # the root's watch saw src/ and web/ made: both have their own watch now
    before = len(calls.calls)
    (project / "src/again.py").write_text("")
    assert calls.wait_for(before + 1)
    settle(watcher, seen, project, project / "src", project / "web/node_modules/y")
    assert str(project / "src/again.py") in calls.calls[-1]
    assert str(project / "web/node_modules/y/index.js") not in {p for call in calls.calls for p in call}


def test_status_and_errors(project, watch, tmp_path):
    def fail(paths):
        raise RuntimeError("spawn failed")

    spec = WatchSpec((project, tmp_path / "nope"), ("*.py",))
    watcher = Watcher(spec, fail, quiet=QUIET)
    watcher.start()
    try:
        status = watcher.status()
        assert status["watching"] and status["paths"] == [str(project)]
        assert status["missing"] == [str((tmp_path / "nope").resolve())]
        assert status["globs"] == ["*.py"] and status["last_at"] is None and status["calls"] == 0
        started = time.time()
        (project / "server.py").write_text("v3")
        wait_for(lambda: watcher.status()["error"] is not None, 5, interval=0.02, message="the error")
        status = watcher.status()
        assert status["error"] == "RuntimeError: spawn failed"
        assert status["last_paths"] == [str(project / "server.py")] and status["last_at"] >= started - 1
        assert status["calls"] == 1
        assert watcher._worker.is_alive()  # a failing on_change does not end the watching
    finally:
        watcher.stop()


def test_a_folder_that_cannot_be_watched_is_left_out(project, monkeypatch):
    calls = Calls()
    watcher = Watcher(WatchSpec((project,)), calls, quiet=QUIET)
    schedule = watcher._observer.schedule

    def limited(handler, path, **kwargs):
        if path.endswith("pkg"):
            raise OSError(28, "inotify watch limit reached")
        return schedule(handler, path, **kwargs)

    monkeypatch.setattr(watcher._observer, "schedule", limited)
    watcher.start()
    try:
        assert watcher.ready.is_set()
        assert "cannot watch" in watcher.status()["error"] and str(project / "pkg") in watcher.status()["error"]
        (project / "server.py").write_text("v7")  # the rest is watched
        assert calls.wait_for(1)
        assert calls.calls[0] == [str(project / "server.py")]
    finally:
        watcher.stop()


def test_stop_is_clean(project, watch):
    calls = Calls()
    before = {t.name for t in threading.enumerate()}
    watcher = watch(calls, quiet=60)  # a change stays pending until stop(), however slow the machine
    (project / "server.py").write_text("v4")
    wait_for(lambda: watcher.status()["pending"], 5, interval=0.01, message="the change pending")
    watcher.stop()  # drops it
    watcher.stop()  # twice is fine
    assert not watcher.status()["watching"]
    assert not watcher._worker.is_alive() and not watcher._observer.is_alive()
    (project / "server.py").write_text("v5")
    assert calls.calls == []  # and none can come: the threads that would make one have ended
    assert {t.name for t in threading.enumerate() if t.is_alive()} <= before


def test_stop_from_inside_on_change(project, watch):
    holder: list[Watcher] = []
    done = threading.Event()

    def on_change(paths):
        holder[0].stop()  # e.g. the inspector shutting down from a restart; must not deadlock
        done.set()

    holder.append(watch(on_change))
    (project / "server.py").write_text("v6")
    assert done.wait(5)
    holder[0]._worker.join(5)
    assert not holder[0]._worker.is_alive()
