"""The source watcher: the pure filter as tables, then a real watchdog Watcher on tmp_path."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from inspector.reload import (
    DEFAULT_GLOBS, CrashLoop, Watcher, WatchSpec, default_watch, is_relevant, is_relevant_folder,
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

class Calls:
    """Records on_change calls; checks they never overlap."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
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
        time.sleep(self.delay if len(self.calls) == 1 else 0)
        with self.cond:
            self.running -= 1
            self.cond.notify_all()

    def wait_for(self, n: int, timeout: float = 5.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.calls) >= n and not self.running, timeout)

    def settle(self, watcher: Watcher, timeout: float = 5.0) -> None:
        """Wait until nothing is pending or running any more."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = watcher.status()
            if not status["pending"] and not status["busy"]:
                time.sleep(QUIET * 3)  # a late event would have shown up as pending by now
                status = watcher.status()
                if not status["pending"] and not status["busy"]:
                    return
            time.sleep(0.02)
        raise AssertionError("the watcher never settled")


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

    def make(on_change, **kwargs) -> Watcher:
        spec = WatchSpec((project,), DEFAULT_GLOBS, (project / "recordings",))
        watcher = Watcher(spec, on_change, quiet=QUIET, **kwargs)
        watcher.start()
        watchers.append(watcher)
        return watcher

    yield make
    for watcher in watchers:
        watcher.stop()


def test_a_burst_of_saves_gives_at_most_two_calls(project, watch):
    calls = Calls()
    watcher = watch(calls)
    server = project / "server.py"
    end = time.monotonic() + 1.0
    for i in range(200):
        server.write_text(f"print('v{i}')\n")
        time.sleep(max(0.0, (end - time.monotonic()) / (200 - i)) / 2)
    assert calls.wait_for(1)
    calls.settle(watcher)
    assert 1 <= len(calls.calls) <= 2
    assert {p for call in calls.calls for p in call} == {str(server)}
    assert not calls.overlapped
    assert calls.threads == {"watch-restart"}


def test_editor_style_replace(project, watch):
    calls = Calls()
    watcher = watch(calls)
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
    calls.settle(watcher)
    assert 1 <= len(calls.calls) <= 2
    assert {p for call in calls.calls for p in call} == {str(server)}


def test_ignored_writes_cause_nothing(project, watch):
    calls = Calls()
    watcher = watch(calls)
    for path in ("recordings/session.jsonl", "recordings/meta.json", ".git/index", ".git/x.json",
                 "__pycache__/server.cpython-312.pyc", "__pycache__/x.py", ".venv/lib/site.py",
                 "node_modules/x/index.js", "server.log", "pkg/data.db", "pkg/.tools.py.swp", "server.py~"):
        for i in range(5):
            (project / path).write_text(str(i))
    (project / "recordings/sub").mkdir()
    (project / "recordings/sub/a.py").write_text("")
    time.sleep(QUIET * 4)
    assert calls.calls == []
    assert not watcher.status()["pending"]
    (project / "pkg/tools.py").write_text("x = 1\n")  # and the watcher was listening all along
    assert calls.wait_for(1)
    calls.settle(watcher)
    assert calls.calls == [[str(project / "pkg/tools.py")]]


def test_changes_during_a_slow_call_give_exactly_one_more(project, watch):
    calls = Calls(delay=1.0)
    watcher = watch(calls)
    (project / "server.py").write_text("v2")
    with calls.cond:
        assert calls.cond.wait_for(lambda: calls.running, 5)
    for i in range(20):  # during the "restart"
        (project / "server.py").write_text(f"v{i}")
        (project / "pkg/tools.py").write_text(f"v{i}")
        time.sleep(0.02)
    assert calls.wait_for(2, timeout=5)
    calls.settle(watcher)
    assert len(calls.calls) == 2
    assert sorted(calls.calls[1]) == sorted([str(project / "server.py"), str(project / "pkg/tools.py")])
    assert not calls.overlapped


def test_new_and_recreated_subfolders_are_watched(project, watch):
    calls = Calls()
    watcher = watch(calls)
    (project / "src").mkdir()
    (project / "src/deep").mkdir()
    (project / "src/deep/new.py").write_text("")
    (project / "node_modules2").mkdir()
    assert calls.wait_for(1)
    calls.settle(watcher)
    assert {p for call in calls.calls for p in call} == {str(project / "src/deep/new.py")}
    # a folder removed and made again (a branch switch) is watched anew; a new node_modules is not watched
    (project / "src/deep/new.py").unlink()
    (project / "src/deep").rmdir()
    (project / "src").rmdir()
    calls.settle(watcher)
    (project / "src").mkdir()
    (project / "web/node_modules/y").mkdir(parents=True)
    (project / "web/node_modules/y/index.js").write_text("")
    time.sleep(0.05)
    before = len(calls.calls)
    (project / "src/again.py").write_text("")
    assert calls.wait_for(before + 1)
    calls.settle(watcher)
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
        deadline = time.monotonic() + 5
        while watcher.status()["error"] is None and time.monotonic() < deadline:
            time.sleep(0.02)
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
        assert "cannot watch" in watcher.status()["error"] and str(project / "pkg") in watcher.status()["error"]
        (project / "server.py").write_text("v7")  # the rest is watched
        assert calls.wait_for(1)
        assert calls.calls[0] == [str(project / "server.py")]
    finally:
        watcher.stop()


def test_stop_is_clean(project, watch):
    calls = Calls()
    before = {t.name for t in threading.enumerate()}
    watcher = watch(calls)
    (project / "server.py").write_text("v4")  # pending when stopped: dropped
    watcher.stop()
    watcher.stop()  # twice is fine
    assert not watcher.status()["watching"]
    assert not watcher._worker.is_alive() and not watcher._observer.is_alive()
    (project / "server.py").write_text("v5")
    time.sleep(QUIET * 3)
    assert calls.calls == []
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
