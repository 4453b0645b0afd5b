"""Run the inspector: bind the page, open the recording, start the server, serve until told to stop."""

from __future__ import annotations

import errno
import os
import secrets
import signal
import socket
import sys
import threading
import webbrowser
from pathlib import Path

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from . import __version__
from .config import DEFAULT_PORT, Config
from .recording import RecordingError, RecordingWriter, default_path, ensure_folder, header
from .records import EVENT, Record
from .reload import DEFAULT_GLOBS, Watcher, WatchSpec, default_watch
from .problems import Problems
from .restarts import Restarter
from .session import Session
from .session.asks import Asks
from .session.calls import Calls
from .store import Store
from .transport.stdio import SpawnError, resolve_command

PORT_SEARCH = 100


class QuietHandler(WSGIRequestHandler):
    """Werkzeug's handler without the access log: the first request's URL carries the launch token."""

    def log_request(self, code="-", size="-") -> None:  # noqa: D102 - silence on purpose
        return


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


def bind(app, host: str, port: int | None) -> BaseWSGIServer:
    """Bind the page's listener: the first free port from 6280 up, an explicit one, or any (0)."""
    candidates = range(DEFAULT_PORT, DEFAULT_PORT + PORT_SEARCH) if port is None else [port]
    for candidate in candidates:
        try:
            sock = _listen(host, candidate)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise StartError(f"cannot listen on {host}:{candidate}: {exc.strerror or exc}") from None
            if port is not None:
                raise StartError(f"port {port} in use") from None
            continue
        try:
            return make_server(host, sock.getsockname()[1], app, threaded=True, request_handler=QuietHandler,
                               fd=sock.fileno())
        finally:
            sock.close()  # werkzeug keeps its own duplicate of the descriptor
    raise StartError(f"no free port from {DEFAULT_PORT} to {DEFAULT_PORT + PORT_SEARCH - 1}")


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
    """Start everything and serve until SIGINT/SIGTERM; returns the process exit code."""
    from .app import create_app  # Flask is imported only when the page is really served

    try:
        if config.command:
            resolve_command(list(config.command), config.cwd, config.server_env())
        writer = open_recording(config)
    except (SpawnError, RecordingError) as exc:
        print(f"mcp-inspect: {exc}", file=sys.stderr)
        return 2
    store = Store(writer)
    session = Session(store, list(config.command), cwd=config.cwd, env=config.server_env(), timeout=config.timeout,
                      client_version=__version__, max_timeout=config.max_timeout, roots=config.root_list(),
                      protocol=config.protocol, probe_timeout=config.probe_timeout)
    # Our own port is known only once bound: read at each connect (an HTTP target may not be us).
    session.refuse_ports = lambda: [app.config.get("INSPECTOR_PORT", 0)]
    if config.url:
        session.url, session.http_headers = config.url, list(config.headers)
        session.http_transport_choice = config.transport
    problems = Problems(store, session, timeout=config.timeout, disabled=config.disabled_rules)
    calls = Calls(session)
    asks = Asks(session, calls)
    watcher = make_watcher(config)
    restarter = Restarter(session, restart_on_crash=config.restart_on_crash, watcher=watcher, calls=calls)
    token = secrets.token_urlsafe(32)
    app = create_app(config, store=store, session=session, token=token, restarter=restarter, calls=calls)
    app.extensions["inspector"]["problems"] = problems
    app.extensions["inspector"]["asks"] = asks
    try:
        server = bind(app, config.host, config.port)
    except StartError as exc:
        writer.close()
        if writer.path:
            writer.path.unlink(missing_ok=True)
        print(f"mcp-inspect: {exc}", file=sys.stderr)
        return 2
    port = server.socket.getsockname()[1]
    app.config["INSPECTOR_PORT"] = port
    writer.write_header(header(config.target(), protocol=config.protocol, env_keys=[key for key, _ in config.env]))

    if writer.path:
        print(f"mcp-inspect: recording to {writer.path}", file=sys.stderr, flush=True)
    if watcher:
        watcher.on_change = lambda paths: restarter.restart("file change", paths)
        watcher.start()
        print(f"mcp-inspect: watching {', '.join(str(p) for p in watcher.spec.paths)} for changes",
              file=sys.stderr, flush=True)
    has_target = bool(config.command or config.url)  # --config without --server: the page picks one
    serve_until_stopped(server, config, token, on_ready=session.start if has_target else (lambda: None))
    print("mcp-inspect: shutting down", file=sys.stderr, flush=True)
    if watcher:
        watcher.stop()
    session.close()
    store.add(Record(EVENT, event="session-end", detail={}))
    store.close()
    server.shutdown()
    writer.close()
    return 0


def serve_until_stopped(server: BaseWSGIServer, config: Config, token: str, on_ready=None) -> None:
    """Serve, print the URL line (the contract: exactly one line on stdout), open a browser, wait for a signal."""
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, name="http", daemon=True).start()
    host = f"[{config.host}]" if ":" in config.host else config.host
    url = f"http://{host}:{server.socket.getsockname()[1]}/?token={token}"
    print(url, flush=True)
    if on_ready:
        on_ready()
    if config.open_browser and has_display():
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    while not stop.wait(0.5):  # a timeout keeps the main thread responsive to signals
        pass


def run_view(config: Config) -> int:
    """`mcp-inspect view FILE`: the recording's timeline in the page, read-only; nothing is run or sent."""
    from .app import create_app
    from .viewer import RecordedSession

    try:
        recording = RecordingWriter.open_existing(config.view)
        store = Store(recording)
        head, problems = store.load_existing()
    except RecordingError as exc:
        print(f"mcp-inspect: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"mcp-inspect: {config.view}: {problem}", file=sys.stderr)
    session = RecordedSession(store, head, problems, Path(config.view).name)
    token = secrets.token_urlsafe(32)
    app = create_app(config, store=store, session=session, token=token)
    try:
        server = bind(app, config.host, config.port)
    except StartError as exc:
        print(f"mcp-inspect: {exc}", file=sys.stderr)
        return 2
    app.config["INSPECTOR_PORT"] = server.socket.getsockname()[1]
    serve_until_stopped(server, config, token)
    server.shutdown()
    recording.close()
    return 0
