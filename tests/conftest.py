"""Shared fixtures: the page built in-process (a Flask test client, no port), a real mcp-inspect process on a real
port (for the websocket, process groups and start-up), and the fixture servers."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PYTHON = sys.executable
CHROMIUM = os.environ.get("MCP_INSPECT_CHROMIUM", "/usr/bin/chromium")


def fixture_command(name: str, *args: str) -> list[str]:
    """argv that runs tests/fixtures/<name>.py with the test interpreter."""
    return [PYTHON, str(FIXTURES / f"{name}.py"), *args]


class PageRequests:
    """What a test sends to a page, on a real port or in-process: the cookie, our Origin, an htmx form POST."""

    port: int
    token: str

    @property
    def cookie(self) -> str:
        return f"mcp_inspect_{self.port}={self.token}"

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def post(self, path: str, form: dict | None = None, **kwargs) -> tuple[int, dict, bytes]:
        """An htmx-style form POST."""
        from urllib.parse import urlencode

        headers = {"HX-Request": "true", "Content-Type": "application/x-www-form-urlencoded",
                   "Origin": self.origin, **kwargs.pop("headers", {})}
        return self.request("POST", path, headers=headers, body=urlencode(form or {}), **kwargs)


ACK = '{"type":"ack"}'
"""What the page sends once it has painted a live frame (static/app.js); the server sends the next only then."""


class AckingSocket:
    """A websocket-client socket that acknowledges each frame once read, as the page does once it painted one
    (inspector/web/live_flow.py). A test that reads nothing acknowledges nothing, like a stalled tab."""

    def __init__(self, ws) -> None:
        self.raw = ws

    def recv(self):
        frame = self.raw.recv()
        if frame:
            self.raw.send(ACK)
        return frame

    def __getattr__(self, name: str):
        return getattr(self.raw, name)  # send, close, sock, ...


@dataclass
class Inspector(PageRequests):
    """A running `mcp-inspect` child process."""

    proc: subprocess.Popen
    url: str
    port: int
    token: str
    record: Path | None
    stderr_path: Path
    extra: dict = field(default_factory=dict)

    def request(self, method: str, path: str, *, headers: dict | None = None, body: bytes | str | None = None,
                auth: bool = True) -> tuple[int, dict, bytes]:
        """A raw HTTP request with http.client (so Host and friends can be anything)."""
        # Generous: the URL line comes before the page is built, so a first request may wait for the build.
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        all_headers = {"Host": f"127.0.0.1:{self.port}"}
        if auth:
            all_headers["Cookie"] = self.cookie
        all_headers.update(headers or {})
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for key, value in all_headers.items():
            conn.putheader(key, value)
        data = body.encode() if isinstance(body, str) else body
        if data is not None:
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        response = conn.getresponse()
        payload = response.read()
        conn.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, payload

    def ws(self, path: str = "/ws", **kwargs):
        """A websocket client on /ws (or `path`) with the cookie and our Origin, that acknowledges each frame it
        reads."""
        import websocket

        options = {"cookie": self.cookie, "origin": self.origin, "timeout": 10, **kwargs}
        return AckingSocket(websocket.create_connection(f"ws://127.0.0.1:{self.port}{path}", **options))

    def stderr_text(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> int:
        """Signal the inspector and wait for it to exit."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def start_inspector(tmp_path: Path, server_argv: list[str], *options: str, record: bool = True,
                    cwd: Path | None = None, env: dict | None = None, view: Path | None = None) -> Inspector:
    """Start `mcp-inspect --no-open --port 0 [options] -- server_argv` (or `view FILE`) and wait for its URL line."""
    record_path = tmp_path / f"session-{time.monotonic_ns()}.jsonl" if record and view is None else None
    if view is not None:
        argv = [PYTHON, "-m", "inspector.cli", "view", "--no-open", "--port", "0", *options, str(view)]
    else:
        argv = [PYTHON, "-m", "inspector.cli", "--no-open", "--port", "0", *options]
        argv += ["--record", str(record_path)] if record_path else ["--no-record"]
    if server_argv:
        argv += ["--", *server_argv]
    stderr_path = tmp_path / f"inspector-{time.monotonic_ns()}.err"
    stderr_file = open(stderr_path, "wb")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr_file, cwd=cwd or tmp_path,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    stderr_file.close()
    # Generous: a loaded machine can take long to import Flask or to index a large recording for `view`.
    line = _readline_with_timeout(proc, 60)
    match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)", line.strip())
    if not match:
        proc.kill()
        raise AssertionError(f"no URL line from mcp-inspect: {line!r}; stderr: {stderr_path.read_text()}")
    _wait_answering(int(match.group(1)))
    return Inspector(proc=proc, url=line.strip(), port=int(match.group(1)), token=match.group(2),
                     record=record_path if view is None else view, stderr_path=stderr_path)


def _wait_answering(port: int) -> None:
    """The URL line comes before the page is built (its socket holds requests meanwhile): wait for any answer, so
    a test's time bounds start from a built page and a started server, on a loaded machine too."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=90)
    try:
        conn.request("GET", "/healthz-unauthenticated", headers={"Host": f"127.0.0.1:{port}"})
        conn.getresponse().read()
    finally:
        conn.close()


def _readline_with_timeout(proc: subprocess.Popen, timeout: float) -> str:
    result: list[bytes] = []
    reader = threading.Thread(target=lambda: result.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return result[0].decode() if result else ""


def _stopping_factory(tmp_path: Path, make):
    """A factory fixture's body: make(tmp_path, argv, *options, **kwargs); everything made is stopped at the end."""
    made: list = []

    def factory(server_argv: list[str], *options: str, **kwargs):
        made.append(make(tmp_path, server_argv, *options, **kwargs))
        return made[-1]

    yield factory
    for item in made:
        item.stop()


@pytest.fixture
def inspector_factory(tmp_path):
    """Start inspectors (processes on real ports); all are stopped at the end of the test."""
    yield from _stopping_factory(tmp_path, start_inspector)


IN_PROCESS_PORT = 6280
"""The port an in-process page believes it is on: nothing listens, but the Host check and the cookie use it."""


@dataclass
class InProcess(PageRequests):
    """The page built in-process by the composition root (runner.build), with a Flask test client.

    It speaks like `Inspector` (request, post, cookie, origin, record, stop), so a test can use either."""

    app: object
    services: object
    """The product's inspector.inspector.Inspector: every service of the run."""
    record: Path | None
    port: int = IN_PROCESS_PORT

    @property
    def token(self) -> str:
        return self.services.token

    @property
    def session(self):
        return self.services.session

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def request(self, method: str, path: str, *, headers: dict | None = None, body: bytes | str | None = None,
                auth: bool = True) -> tuple[int, dict, bytes]:
        """A request through the test client, with the Host (and cookie) a browser on the page would send."""
        all_headers = {"Host": f"127.0.0.1:{self.port}"}
        if auth:
            all_headers["Cookie"] = self.cookie
        all_headers.update(headers or {})
        client = self.app.test_client(use_cookies=False)  # the cookie is sent as a header, as a browser would
        response = client.open(path, method=method, headers=all_headers,
                               data=body.encode() if isinstance(body, str) else body)
        payload = response.get_data()
        return response.status_code, {k.lower(): v for k, v in response.headers.items()}, payload

    def stop(self) -> None:
        """Shut the services down in the runner's order (idempotent)."""
        from inspector import runner

        if self.services.store.closed:
            return
        if self.services.readonly:
            self.services.store.close()
        else:
            runner.shut_down(self.services)
        self.services.store.writer.close()


def build_in_process(tmp_path: Path, server_argv: list[str], *options: str, record: bool = True,
                     view: Path | None = None) -> InProcess:
    """The page for `mcp-inspect [options] -- server_argv` (or `view FILE`), built in this process: the same
    parsing, the same composition root, a real Store and recording, a real Session and child server; no port."""
    from inspector import cli, runner
    from inspector.recording.files import RecordingWriter
    from inspector.recording.store import Store
    from inspector.web.app import create_app

    if view is not None:
        config = cli.parse_view(["--no-open", *options, str(view)])
        store = Store(RecordingWriter.open_existing(config.view))
        head, problems = store.load_existing()
        services = runner.build_view(config, store, head, problems)
        services.port = IN_PROCESS_PORT
        return InProcess(app=create_app(services), services=services, record=view)
    record_path = tmp_path / f"session-{time.monotonic_ns()}.jsonl" if record else None
    argv = ["--no-open", *options, *(["--record", str(record_path)] if record_path else ["--no-record"])]
    config = cli.parse_config(argv + (["--", *server_argv] if server_argv else []))
    services = runner.build(config, Store(runner.open_recording(config)))
    app = create_app(services)
    runner.begin(services, IN_PROCESS_PORT)
    runner.start_target(services)
    return InProcess(app=app, services=services, record=record_path)


@pytest.fixture
def page_factory(tmp_path):
    """Build in-process pages (no port, no mcp-inspect process); all are shut down at the end of the test."""
    yield from _stopping_factory(tmp_path, build_in_process)


def read_records(path: Path) -> list[dict]:
    """Every line of a recording as JSON (each line must parse)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.05, message: str = "condition"):
    """Poll until predicate() is truthy; return its value or fail."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {message}")
        time.sleep(interval)


def live_synced(page) -> None:
    """Wait until the live websocket's first frame is in the page (it fills the empty timeline). That frame also
    re-renders the side panels that changed since the page was drawn: the tools list, when the page was drawn before
    the server listed its tools. A click on a tool before it lands on a button the frame then replaces, and on a
    loaded machine the frame can come seconds after the page loaded."""
    page.wait_for_function("() => document.querySelector('#timeline-rows .row') !== null", timeout=90_000)


def wait_tools_listed(inspector, timeout: float = 20) -> list[dict]:
    """Until the page knows the server's tools: their tools/list answer is recorded AND the page serves the first
    one. The record is written before the session takes the list in (record first), so on a busy machine the
    record alone can come a moment before the page knows the tool."""
    def listed():
        for r in records_in(inspector.record):
            tools = (r.get("msg") or {}).get("result") if r.get("kind") == "message" else None
            if isinstance(tools, dict) and isinstance(tools.get("tools"), list):
                return (tools["tools"],)
        return None

    (tools,) = wait_for(listed, timeout, message="tools listed")
    if tools:
        path = "/tools/" + urllib.parse.quote(tools[0]["name"], safe="")
        wait_for(lambda: inspector.request("GET", path)[0] == 200, timeout, message="the page knows the tools")
    return tools



def records_in(path: Path) -> list[dict]:
    """The records of a recording that may still be written (a torn last line is ignored)."""
    out = []
    for line in path.read_bytes().split(b"\n"):
        if line:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def process_group_alive(pgid: int) -> bool:
    """Whether any process of the group still exists (zombies excluded)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's Chromium, or skip with the reason."""
    path = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if not path:
        pytest.skip(f"Chromium not found at {CHROMIUM}: install Debian's chromium package to run browser tests")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path):
    """A headless Chromium driven by Playwright."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as p:
        instance = p.chromium.launch(executable_path=chromium_path, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    """A fresh browser context and page; console errors are collected on page.console_errors."""
    context = browser.new_context()
    new_page = context.new_page()
    new_page.console_errors = []
    new_page.on("console", lambda msg: msg.type == "error" and new_page.console_errors.append(msg.text))
    new_page.on("pageerror", lambda exc: new_page.console_errors.append(str(exc)))
    yield new_page
    context.close()


def free_port() -> int:
    """A port nobody listens on right now (the server under test binds it itself)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_http_fixture(name: str, transport: str, log: Path, port: int | None = None,
                       args: tuple[str, ...] = ()) -> tuple[subprocess.Popen, int]:
    """Run tests/fixtures/<name>.py --transport T --port N [args] in its own process group; wait until it listens."""
    port = port or free_port()
    with open(log, "ab") as stderr:
        proc = subprocess.Popen([PYTHON, str(FIXTURES / f"{name}.py"), "--transport", transport, "--port", str(port),
                                 *args],
                                stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    return proc, _wait_listening(proc, port, name, log)


def _wait_listening(proc: subprocess.Popen, port: int, name: str, log: Path) -> int:
    """Wait (up to 60 s: a loaded machine starts servers slowly) until proc listens on port."""
    import socket

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{name} died: {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return port
        except OSError:
            time.sleep(0.05)
    stop_process_group(proc)
    pytest.fail(f"{name} did not listen on {port}: {log.read_text()[-2000:]}")


EVERYTHING = Path(__file__).resolve().parent / "node_modules" / ".bin" / "mcp-server-everything"
"""The reference TypeScript server (npm @modelcontextprotocol/server-everything, pinned in tests/package.json)."""
needs_everything = pytest.mark.skipif(
    not EVERYTHING.exists(), reason="the reference server-everything is not installed: run `npm ci --prefix tests` "
                                    "(CI does, in .ci/run)")


def everything_command() -> list[str]:
    """server-everything over stdio."""
    return [str(EVERYTHING), "stdio"]


def start_everything(transport: str, log: Path, port: int | None = None) -> tuple[subprocess.Popen, str]:
    """server-everything over HTTP (`streamableHttp` or `sse`) on `port` (a free one unless given: a restart on the
    same port), in its own process group; its URL."""
    port = port or free_port()
    with open(log, "ab") as stderr:
        proc = subprocess.Popen([str(EVERYTHING), transport], env={**os.environ, "PORT": str(port)},
                                stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    _wait_listening(proc, port, f"server-everything {transport}", log)
    return proc, f"http://127.0.0.1:{port}/" + ("mcp" if transport == "streamableHttp" else "sse")


@pytest.fixture(scope="module")
def everything_urls(tmp_path_factory):
    """One server-everything per HTTP transport for the test module that asks: transport -> URL."""
    if not EVERYTHING.exists():
        pytest.skip("the reference server-everything is not installed: run `npm ci --prefix tests`")
    log = tmp_path_factory.mktemp("everything") / "server.log"
    started = {mode: start_everything(mode, log) for mode in ("streamableHttp", "sse")}
    yield {mode: url for mode, (_, url) in started.items()}
    for proc, _ in started.values():
        stop_process_group(proc)


def stop_process_group(proc: subprocess.Popen) -> None:
    """SIGKILL a fixture server's whole process group and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=10)
