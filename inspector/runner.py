"""Run the inspector: bind the page, open the recording, start the server, serve until told to stop."""

from __future__ import annotations

import errno
import os
import secrets
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from inspector import __version__
from inspector.config import DEFAULT_PORT, Config
from inspector.recording.files import RecordingError, RecordingWriter, default_path, ensure_folder, header
from inspector.protocol.records import EVENT, Record
from inspector.transport import SpawnError
from inspector.transport.stdio import resolve_command

# The page's libraries and the services are imported where they are built, after the URL line: importing them is
# most of a start's time, and the listening socket queues the browser's first request meanwhile.
if TYPE_CHECKING:
    from werkzeug.serving import BaseWSGIServer

    from inspector.inspector import Inspector
    from inspector.recording.store import Store
    from inspector.session.watch import Watcher

PORT_SEARCH = 100


def _quiet_handler():
    """Werkzeug's handler without the access log: the first request's URL carries the launch token."""
    from werkzeug.serving import WSGIRequestHandler

    class QuietHandler(WSGIRequestHandler):
        def log_request(self, code="-", size="-") -> None:  # noqa: D102 - silence on purpose
            return

    return QuietHandler


class StartError(Exception):
    """The inspector cannot start: one line for the user, exit code 2."""


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket, bound by us: werkzeug prints its own lines on a busy port, we want one."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def listen(host: str, port: int | None) -> socket.socket:
    """Bind the page's listener: the first free port from 6280 up, an explicit one, or any (0)."""
    candidates = range(DEFAULT_PORT, DEFAULT_PORT + PORT_SEARCH) if port is None else [port]
    for candidate in candidates:
        try:
            return _listen(host, candidate)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise StartError(f"cannot listen on {host}:{candidate}: {exc.strerror or exc}") from None
            if port is not None:
                raise StartError(f"port {port} in use") from None
    raise StartError(f"no free port from {DEFAULT_PORT} to {DEFAULT_PORT + PORT_SEARCH - 1}")


def serve_on(sock: socket.socket, app, host: str) -> BaseWSGIServer:
    """The page's server on a bound socket (which it takes over: connections already queued are answered)."""
    from werkzeug.serving import make_server

    try:
        return make_server(host, sock.getsockname()[1], app, threaded=True, request_handler=_quiet_handler(),
                           fd=sock.fileno())
    finally:
        sock.close()  # werkzeug keeps its own duplicate of the descriptor


def open_recording(config: Config) -> RecordingWriter:
    """The recording file (or an unlinked spool with --no-record)."""
    if config.no_record:
        return RecordingWriter.spool()
    if config.record_path:
        path = Path(config.record_path)
        if path.parent and not path.parent.exists():
            raise StartError(f"--record: folder does not exist: {path.parent}")
        return RecordingWriter.create(path, unique=False)
    folder = Path(config.recordings_dir)
    ensure_folder(folder)
    return RecordingWriter.create(default_path(folder, config.name))


def make_watcher(config: Config) -> Watcher | None:
    """The file watcher: --watch paths, else the folder of the server's script; none for --demo or --no-watch."""
    from inspector.session.watch import DEFAULT_GLOBS, Watcher, WatchSpec, default_watch

    if config.no_watch or (config.demo and not config.watch):
        return None
    paths = [Path(p) for p in config.watch] or default_watch(list(config.command), config.cwd)
    if not paths:
        return None
    spec = WatchSpec(paths=tuple(paths), globs=tuple(config.watch_globs) or DEFAULT_GLOBS,
                     ignore_dirs=(Path(config.recordings_dir),))
    return Watcher(spec, on_change=lambda paths: None)


def has_display() -> bool:
    """Whether opening a browser can work here."""
    if sys.platform == "darwin":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def run(config: Config) -> int:
    """Start everything and serve until SIGINT/SIGTERM; returns the process exit code.

    The URL line comes as soon as the port is bound and the token made: the page and the services are built after
    it, while the listening socket holds the browser's first request until the page can answer it."""
    try:
        if config.command:
            resolve_command(list(config.command), config.cwd, config.server_env())
        writer = open_recording(config)
    except (SpawnError, RecordingError) as exc:
        print(f"mcp-inspect: {exc}", file=sys.stderr)
        return 2
    try:
        sock = listen(config.host, config.port)
    except StartError as exc:
        writer.close()
        if writer.path:
            writer.path.unlink(missing_ok=True)
        print(f"mcp-inspect: {exc}", file=sys.stderr)
        return 2
    token = secrets.token_urlsafe(32)
    url = print_url(config, sock.getsockname()[1], token)
    from inspector.recording.heap import freeze_built_objects, keep_large_blocks_mapped
    from inspector.recording.store import Store
    from inspector.web.app import create_app  # Flask is imported only when the page is really served

    keep_large_blocks_mapped()  # the row index grows for the whole run: its arrays must not fragment the heap
    inspector = build(config, Store(writer), token=token)
    server = serve_on(sock, create_app(inspector), config.host)
    begin(inspector, server.socket.getsockname()[1])
    freeze_built_objects()
    serve_until_stopped(server, config, url, on_ready=lambda: start_target(inspector))
    print("mcp-inspect: shutting down", file=sys.stderr, flush=True)
    shut_down(inspector)
    server.shutdown()
    writer.close()
    return 0


def build(config: Config, store: Store, token: str | None = None) -> Inspector:
    """THE composition root: every service of one live run, wired to each other (tests call this too)."""
    from inspector.inspector import Inspector
    from inspector.session import Session
    from inspector.session.asks import Asks
    from inspector.session.calls import Calls
    from inspector.session.panels import PanelState
    from inspector.session.problems import Problems
    from inspector.session.restarts import Restarter
    from inspector.session.sharing import Sharing
    from inspector.session.targeting import Targeting
    from inspector.session.tasks import TaskTracker

    token = token or secrets.token_urlsafe(32)
    store.masker.learn([token, *config.secrets()])  # before anything is recorded: the header comes later (begin)
    session = Session(store, list(config.command), cwd=config.cwd, env=config.server_env(), timeout=config.timeout,
                      client_version=__version__, max_timeout=config.max_timeout, roots=config.root_list(),
                      protocol=config.protocol, probe_timeout=config.probe_timeout)
    # The order is the order the hooks on the session run in: the checker, the asks, the restarter, the panels.
    problems = Problems(store, session, timeout=config.timeout, disabled=config.disabled_rules)
    calls = Calls(session)
    asks = Asks(session, calls)
    watcher = make_watcher(config)
    restarter = Restarter(session, restart_on_crash=config.restart_on_crash, watcher=watcher, calls=calls)
    if watcher:
        watcher.on_change = lambda paths: restarter.restart("file change", paths)
    panels = PanelState()
    panels.follow(session)
    tasks = TaskTracker(session)
    tasks.follow(session)
    inspector = Inspector(config=config, token=token, store=store, session=session,
                          tasks=tasks, panels=panels, restarter=restarter, watcher=watcher,
                          problems=problems, asks=asks, calls=calls, sharing=Sharing(store, session))
    inspector.targeting = Targeting(session, config, lambda: inspector.port)
    if config.url:
        inspector.targeting.use_http(config.url, config.transport, config.headers)
    return inspector


def build_view(config: Config, store: Store, head: dict | None, problems: list[str],
               token: str | None = None) -> Inspector:
    """The services of `mcp-inspect view FILE`: a recorded session, nothing that runs or sends. `token`: the
    launch token when the URL line is out already."""
    from inspector.inspector import Inspector
    from inspector.recording.viewer import RecordedSession
    from inspector.session.tasks import TaskTracker

    session = RecordedSession(store, head, problems, Path(config.view).name)
    tasks = TaskTracker(session)
    tasks.read_recording(store)
    return Inspector(config=config, token=token or secrets.token_urlsafe(32), store=store, session=session,
                     tasks=tasks, calls=session, recording_problems=list(problems))


def begin(inspector: Inspector, port: int) -> None:
    """The page's port is bound: note it, write the recording's header, start watching (tests call this too)."""
    config, writer = inspector.config, inspector.store.writer
    inspector.port = port
    head = header(config.target(), protocol=config.protocol, env_keys=[key for key, _ in config.env])
    writer.write_header(inspector.store.masker.header(head))
    if writer.path:
        print(f"mcp-inspect: recording to {writer.path}", file=sys.stderr, flush=True)
    watcher = inspector.watcher
    if watcher:
        watcher.start()
        print(f"mcp-inspect: watching {', '.join(str(p) for p in watcher.spec.paths)} for changes",
              file=sys.stderr, flush=True)


def start_target(inspector: Inspector) -> None:
    """Start the server named on the command line (with --config alone, the page picks one)."""
    if inspector.config.command or inspector.config.url:
        inspector.live.start()


def shut_down(inspector: Inspector) -> None:
    """Stop the services in order: no new work (watcher, viewers), then the server, then the recording."""
    if inspector.watcher:
        inspector.watcher.stop()
    if inspector.sharing:
        inspector.sharing.stop()
    inspector.live.close()
    inspector.store.add(Record(EVENT, event="session-end", detail={}))
    inspector.store.close()


def print_url(config: Config, port: int, token: str) -> str:
    """The URL line (the contract: exactly one line on stdout, flushed); returns the URL."""
    host = f"[{config.host}]" if ":" in config.host else config.host
    url = f"http://{host}:{port}/?token={token}"
    print(url, flush=True)
    return url


def serve_until_stopped(server: BaseWSGIServer, config: Config, url: str, on_ready=None) -> None:
    """Serve (the URL line is already out), open a browser, wait for a signal."""
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, name="http", daemon=True).start()
    if on_ready:
        on_ready()
    if config.open_browser and has_display():
        import webbrowser

        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    while not stop.wait(0.5):  # a timeout keeps the main thread responsive to signals
        pass


def run_view(config: Config) -> int:
    """`mcp-inspect view FILE`: the recording's timeline in the page, read-only; nothing is run or sent."""
    from inspector.recording.heap import keep_large_blocks_mapped
    from inspector.recording.store import Store

    keep_large_blocks_mapped()  # opening a big recording grows the row index's arrays as a flood does

    try:
        recording = RecordingWriter.open_existing(config.view)
        store = Store(recording)
        head, problems = store.load_existing()
    except RecordingError as exc:
        print(f"mcp-inspect: {exc}", file=sys.stderr)
        return 2
    if head is None and store.last_seq == 0:
        # Nothing in it is ours (empty, binary, other JSON): refused as replay and export refuse it. A recording
        # whose header line alone was damaged still opens, with its problems listed.
        recording.close()
        print(f"mcp-inspect: {config.view}: not an mcp-inspect recording (no header line and no records)",
              file=sys.stderr)
        return 2
    for problem in problems:
        print(f"mcp-inspect: {config.view}: {problem}", file=sys.stderr)
    try:
        sock = listen(config.host, config.port)
    except StartError as exc:
        print(f"mcp-inspect: {exc}", file=sys.stderr)
        return 2
    # The URL line first, as in the run mode: the services and the page's libraries are most of the time left,
    # and the listening socket queues the browser's first request meanwhile.
    token = secrets.token_urlsafe(32)
    url = print_url(config, sock.getsockname()[1], token)
    inspector = build_view(config, store, head, problems, token)
    from inspector.web.app import create_app

    server = serve_on(sock, create_app(inspector), config.host)
    inspector.port = server.socket.getsockname()[1]
    serve_until_stopped(server, config, url)
    server.shutdown()
    recording.close()
    return 0
