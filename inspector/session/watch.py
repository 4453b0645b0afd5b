"""Watch the server's source files and call back, debounced, when they change; tell a crash loop from a crash.

Servers write logs, databases and caches beside their code, so only source files count (WatchSpec.globs) and the
usual tool folders never do. Each watched folder gets a non-recursive watch and each of its subfolders that is not
ignored a recursive one, so a `.venv` or `node_modules` beside `server.py` costs no inotify watches at all.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from watchdog.events import (DirCreatedEvent, DirDeletedEvent, DirMovedEvent, FileCreatedEvent, FileDeletedEvent,
                             FileModifiedEvent, FileMovedEvent, FileSystemEvent, FileSystemEventHandler)
from watchdog.observers import Observer

log = logging.getLogger(__name__)

DEFAULT_GLOBS = ("*.py", "*.js", "*.mjs", "*.cjs", "*.ts", "*.json", "*.toml", "*.yaml", "*.yml")
IGNORED_DIR_NAMES = frozenset({".git", "__pycache__", ".venv", "venv", "node_modules", ".hg", ".svn", ".tox",
                               ".mypy_cache", ".pytest_cache", ".ruff_cache", ".idea", ".vscode"})
EDITOR_FILES = ("*.swp", "*.swx", "*.swo", "*~", ".#*", "#*#", "4913", "*___jb_tmp___", "*___jb_old___")
"""Swap, backup, lock and probe files (vim writes `4913` to test that a folder is writable)."""
FILE_EVENTS = ("created", "modified", "moved", "deleted")
EVENT_FILTER = [FileCreatedEvent, FileModifiedEvent, FileMovedEvent, FileDeletedEvent,
                DirCreatedEvent, DirDeletedEvent, DirMovedEvent]  # no open/close/attrib: fewer wakeups


@dataclass(frozen=True)
class WatchSpec:
    """What to watch."""

    paths: tuple[Path, ...]
    """Folders (watched with their subfolders) or single files (watched whatever their name)."""
    globs: tuple[str, ...] = DEFAULT_GLOBS
    """File name patterns that count (a pattern with a "/" is matched against the path below the watched folder)."""
    ignore_dirs: tuple[Path, ...] = ()
    """Folders never counted, on top of IGNORED_DIR_NAMES: the recordings folder."""

    def resolved(self) -> WatchSpec:
        """The same spec with absolute, symlink-free paths (what watchdog reports events under)."""
        return WatchSpec(tuple(Path(p).resolve() for p in self.paths), tuple(self.globs),
                         tuple(Path(p).resolve() for p in self.ignore_dirs))


def default_watch(command: list[str], cwd: str | os.PathLike | None = None) -> list[Path]:
    """The folder of the first argument of the server command that is an existing file (against cwd), or []."""
    base = Path(cwd) if cwd else Path.cwd()
    for i, arg in enumerate(command):
        if arg in ("-m", "-c", "-e", "--eval"):  # python -m pkg, node -e code: the code is not a file here
            return []
        if not arg or arg.startswith("-"):
            continue
        # command[0] is usually an interpreter found on PATH (python, node, uv, /usr/bin/python3); it is the server
        # only when it looks like a script: `./server.py`, `bin/server`
        if i == 0 and not (_matches_globs(Path(arg), DEFAULT_GLOBS) or ("/" in arg and not os.path.isabs(arg))):
            continue
        candidate = base / arg
        if candidate.is_file():
            return [candidate.resolve().parent]
    return []


def is_relevant(path: str | os.PathLike, spec: WatchSpec) -> bool:
    """Whether a change to this file should restart the server (pure: no file system access)."""
    p = Path(os.path.abspath(path))
    if any(p == d or d in p.parents for d in map(_abs, spec.ignore_dirs)):
        return False
    if any(fnmatchcase(p.name, pattern) for pattern in EDITOR_FILES):
        return False
    for root in map(_abs, spec.paths):
        if p == root:
            return True  # a file named with --watch counts whatever its name
        if root in p.parents:
            rel = p.relative_to(root)
            if not any(part in IGNORED_DIR_NAMES for part in rel.parts[:-1]) and _matches_globs(rel, spec.globs):
                return True
    return False


class Watcher:
    """Calls on_change(paths) on its own thread, once per burst of changes, never twice at a time.

    Changes are collected until `quiet` seconds pass without one; then on_change gets the distinct changed paths
    (absolute, in first-seen order). Changes made while on_change runs (a restart) are collected the same way and
    give at most one more call after it returns.
    """

    def __init__(self, spec: WatchSpec, on_change: Callable[[list[str]], None], quiet: float = 0.3,
                 on_event: Callable[[str, bool], None] | None = None) -> None:
        self.spec = spec.resolved()
        self.on_change = on_change
        self.quiet = quiet
        self.on_event = on_event
        """Called on watchdog's thread with each changed file's path and whether it counts, after it was noted (a
        test's barrier: a file written after others in the same folder is seen after them)."""
        self.ready = threading.Event()
        """Set when start() has set up every watch: changes made from then on are seen."""
        self._cond = threading.Condition()
        self._pending: dict[str, None] = {}  # a dict keeps first-seen order and drops repeats
        self._last_event = 0.0
        self._stopping = False
        self._busy = False
        self._calls = 0
        self._last_paths: list[str] = []
        self._last_at: float | None = None
        self._error: str | None = None
        self._missing: list[str] = []
        self._roots: set[str] = set()
        """Folders watched non-recursively whose subfolders get recursive watches of their own."""
        self._subwatches: dict[str, object] = {}
        self._starting = True
        self._deferred: list[tuple[str, list[str]]] = []
        self._handler = _Handler(self, folders=False)
        self._root_handler = _Handler(self, folders=True)
        self._observer = Observer()
        self._worker = threading.Thread(target=self._run, name="watch-restart", daemon=True)

    def start(self) -> None:
        """Start the threads and set up the watches (once); a path that does not exist or cannot be watched (out of
        inotify watches) is left out and reported by status(), never raised."""
        self._observer.start()  # first, so each watch is set up (and can fail) on its own in schedule()
        self._worker.start()
        for root in self.spec.paths:
            try:
                if root.is_dir():
                    self._observer.schedule(self._root_handler, str(root), recursive=False, event_filter=EVENT_FILTER)
                    self._roots.add(str(root))
                    for child in sorted(root.iterdir()):
                        if child.is_dir():
                            self._watch_subfolder(str(child))
                elif root.is_file():
                    self._observer.schedule(self._handler, str(root.parent), recursive=False,
                                            event_filter=EVENT_FILTER)
                else:
                    self._missing.append(str(root))
            except OSError as exc:
                self._failed(str(root), exc)
                self._missing.append(str(root))
        while True:  # folder events that came in meanwhile were kept for us (see _on_folder_event)
            with self._cond:
                deferred, self._deferred = self._deferred, []
                if not deferred:
                    self._starting = False
                    break
            for kind, paths in deferred:
                self._update_subwatches(kind, paths)
        self.ready.set()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching; waits up to `timeout` for a running on_change; changes not yet handled are dropped."""
        with self._cond:
            if self._stopping:
                return
            self._stopping = True
            self._cond.notify_all()
        if self._observer.is_alive():
            self._observer.stop()
            self._observer.join(timeout)
        if self._worker.is_alive() and self._worker is not threading.current_thread():
            self._worker.join(timeout)

    def status(self) -> dict:
        """For the page header: what is watched, the last change that triggered a call, and whether one runs."""
        with self._cond:
            return {
                "watching": self._observer.is_alive() and not self._stopping,
                "paths": [str(p) for p in self.spec.paths if str(p) not in self._missing],
                "missing": list(self._missing),
                "globs": list(self.spec.globs),
                "last_paths": list(self._last_paths),
                "last_at": self._last_at,
                "calls": self._calls,
                "busy": self._busy,
                "pending": bool(self._pending),
                "error": self._error,
            }

    # -- watchdog's thread: note the change and return --------------------------------------------------------

    def _on_event(self, event: FileSystemEvent, folders: bool) -> None:
        paths = [os.fsdecode(event.src_path)]
        if event.event_type == "moved" and event.dest_path:
            paths.append(os.fsdecode(event.dest_path))  # an editor's "write temp, rename over" lands here
        if event.is_directory:
            # only a watched folder's own watch reports its subfolders coming and going: a subfolder's watch also
            # says "deleted" for itself, possibly after the folder was made again and watched anew
            if folders:
                self._on_folder_event(event.event_type, paths)
        elif event.event_type in FILE_EVENTS:
            relevant = [p for p in paths if is_relevant(p, self.spec)]
            self._note(relevant)
            if self.on_event is not None:
                for path in paths:
                    self.on_event(path, path in relevant)

    def _on_folder_event(self, kind: str, paths: list[str]) -> None:
        # while start() sets up watches it alone touches them; it takes these events over when done (blocking here
        # instead could deadlock: this thread holds the observer's lock, which start()'s schedule() needs)
        with self._cond:
            if self._starting:
                self._deferred.append((kind, paths))
                return
        self._update_subwatches(kind, paths)

    def _update_subwatches(self, kind: str, paths: list[str]) -> None:
        """Keep one recursive watch per subfolder of a watched folder as subfolders come and go."""
        if kind in ("deleted", "moved"):
            watch = self._subwatches.pop(paths[0], None)
            if watch is not None:
                self._observer.unschedule(watch)
        if kind in ("created", "moved"):
            new = paths[-1]
            if os.path.dirname(new) in self._roots and self._watch_subfolder(new):
                # files written before the watch existed would be missed: count what is there now
                self._note(self._existing_files(new))

    def _watch_subfolder(self, path: str) -> bool:
        if path in self._subwatches or os.path.basename(path) in IGNORED_DIR_NAMES or not is_relevant_folder(
                path, self.spec):
            return False
        try:
            self._subwatches[path] = self._observer.schedule(self._handler, path, recursive=True,
                                                             event_filter=EVENT_FILTER)
        except OSError as exc:  # gone already, or out of inotify watches
            self._failed(path, exc)
            return False
        return True

    def _failed(self, path: str, exc: OSError) -> None:
        if isinstance(exc, FileNotFoundError):
            return  # gone between listing and watching: nothing to watch, nothing to report
        log.warning("cannot watch %s: %s", path, exc)
        with self._cond:
            self._error = f"cannot watch {path}: {exc}"

    def _existing_files(self, folder: str) -> list[str]:
        found = []
        for top, dirs, names in os.walk(folder):
            dirs[:] = [d for d in dirs if d not in IGNORED_DIR_NAMES]
            found.extend(p for p in (os.path.join(top, n) for n in names) if is_relevant(p, self.spec))
        return found

    def _note(self, paths: list[str]) -> None:
        if not paths:
            return
        with self._cond:
            for path in paths:
                self._pending[path] = None
            self._last_event = time.monotonic()
            self._cond.notify_all()

    # -- our worker thread: wait for quiet, call on_change ----------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopping:
                    if not self._pending:
                        self._cond.wait()
                        continue
                    remaining = self._last_event + self.quiet - time.monotonic()
                    if remaining <= 0:
                        break
                    self._cond.wait(remaining)
                if self._stopping:
                    return
                paths = list(self._pending)
                self._pending.clear()
                self._busy = True
                self._calls += 1
                self._last_paths, self._last_at = paths, time.time()
            try:
                self.on_change(paths)
            except Exception as exc:  # a failed restart must not end the watching
                log.exception("on_change failed")
                with self._cond:
                    self._error = f"{type(exc).__name__}: {exc}"
            finally:
                with self._cond:
                    self._busy = False


def is_relevant_folder(path: str | os.PathLike, spec: WatchSpec) -> bool:
    """Whether changes below this folder can count at all (pure): not an ignored folder, not inside one."""
    p = Path(os.path.abspath(path))
    if any(p == d or d in p.parents for d in map(_abs, spec.ignore_dirs)):
        return False
    for root in map(_abs, spec.paths):
        if p == root or root in p.parents:
            return not any(part in IGNORED_DIR_NAMES for part in p.relative_to(root).parts)
    return False


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher, folders: bool) -> None:
        self.watcher = watcher
        self.folders = folders

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.watcher._on_event(event, self.folders)


def _abs(path: Path) -> Path:
    return Path(os.path.abspath(path))


def _matches_globs(rel: Path, globs: tuple[str, ...] | list[str]) -> bool:
    return any(fnmatchcase(rel.as_posix() if "/" in g else rel.name, g) for g in globs)
