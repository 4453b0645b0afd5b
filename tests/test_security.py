"""security.md rows 1-6, 10 and 28. The websocket, the listener and the process rows run against a real mcp-inspect
process on a real loopback port (`insp`); the rows that are plain HTTP run against the same app built in-process
(`gate`), with the same gate in front of every route."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import websocket

from conftest import ROOT, Inspector, build_in_process, fixture_command, read_records, start_inspector, wait_for
from inspector.web import security

WS_KEY = "dGhlIHNhbXBsZSBub25jZQ=="


def running(inspector: Inspector) -> bool:
    status, _, body = inspector.request("GET", "/")
    return status == 200 and b"server state-running" in body


@pytest.fixture(scope="module")
def insp(tmp_path_factory):
    """One inspector with the demo server for the whole module (nothing here may change its state)."""
    inspector = start_inspector(tmp_path_factory.mktemp("security"), [], "--demo")
    try:
        wait_for(lambda: running(inspector), message="the demo server running")
        yield inspector
    finally:
        inspector.stop()


@pytest.fixture(scope="module")
def gate(tmp_path_factory):
    """The page with the demo server, built in-process, for the whole module (nothing here may change its state)."""
    page = build_in_process(tmp_path_factory.mktemp("gate"), [], "--demo")
    try:
        wait_for(lambda: running(page), message="the demo server running")
        yield page
    finally:
        page.stop()


@pytest.fixture(scope="module")
def other_port():
    """A port on 127.0.0.1 that is not the inspector's."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ws_connect(inspector: Inspector, **options):
    return websocket.create_connection(f"ws://127.0.0.1:{inspector.port}/ws", timeout=10,
                                       **{"cookie": inspector.cookie, **options})


def ws_refused(inspector: Inspector, **options) -> websocket.WebSocketBadStatusException:
    with pytest.raises(websocket.WebSocketBadStatusException) as info:
        ws_connect(inspector, **options).close()
    return info.value


def raw_http(port: int, data: bytes) -> tuple[int, bytes]:
    """Send bytes as they are; return the status and the whole response."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    response = b"".join(chunks)
    match = re.match(rb"HTTP/1\.[01] (\d{3})", response)
    assert match, response[:200]
    return int(match.group(1)), response


def upgrade_headers() -> dict:
    return {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": WS_KEY,
            "Sec-WebSocket-Version": "13"}


def state_events(inspector: Inspector) -> list[str]:
    return [r["event"] for r in read_records(inspector.record) if r.get("kind") == "event"]


def tool_calls(inspector: Inspector) -> list[dict]:
    return [r for r in read_records(inspector.record)
            if r.get("kind") == "message" and isinstance(r.get("msg"), dict) and r["msg"].get("method") == "tools/call"]


# ----------------------------------------------------------------------------------- row 1: websocket Origin

@pytest.mark.parametrize("origin", [
    "http://evil.example", "null", "http://127.0.0.1:{other}", "http://localhost.evil.example:{port}",
    "https://127.0.0.1:{port}", "http://127.0.0.1", "http://127.0.0.1:{port}/", "http://[::1]:{port}",
    "http://0.0.0.0:{port}", "http://2130706433:{port}", "http://127.1:{port}", "http://localhost:{port}",
    "http://127.0.0.1:{port}.evil.example", "file://", "",
])
def test_ws_bad_origin_is_refused_before_upgrade(insp, other_port, origin):
    error = ws_refused(insp, origin=origin.format(port=insp.port, other=other_port))
    assert error.status_code == 403


def test_ws_without_origin_is_refused(insp):
    assert ws_refused(insp, suppress_origin=True).status_code == 403


@pytest.mark.parametrize("site", ["cross-site", "same-site", "none"])
def test_ws_from_another_site_is_refused(insp, site):
    error = ws_refused(insp, origin=insp.origin, header=[f"Sec-Fetch-Site: {site}"])
    assert error.status_code == 403


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_ws_good_origin_connects(insp, host):
    hostport = f"{host}:{insp.port}"
    ws = ws_connect(insp, host=hostport, origin=f"http://{hostport}",
                    header=["Sec-Fetch-Site: same-origin"] if host == "localhost" else [])
    try:
        first = ws.recv()
        assert 'hx-target="#timeline-rows"' in first  # the sync frame: newest rows replace the timeline
    finally:
        ws.close()


def raw_ws_handshake(inspector: Inspector, origin: str | None) -> tuple[bytes, bytes]:
    """A websocket upgrade with the right cookie and the given Origin over a raw socket: (the response head, the
    next bytes). After a refusal the server answers a plain response with `Connection: close`, so the next bytes
    are its body and then nothing; after an upgrade they are websocket frames."""
    head_lines = ["GET /ws HTTP/1.1", f"Host: 127.0.0.1:{inspector.port}", f"Cookie: {inspector.cookie}",
                  *(f"{k}: {v}" for k, v in upgrade_headers().items())]
    if origin is not None:
        head_lines.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", inspector.port), timeout=30) as sock:
        sock.sendall(("\r\n".join(head_lines) + "\r\n\r\n").encode())
        reader = sock.makefile("rb")
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            line = reader.readline()
            if not line:
                break
            head += line
        if head.startswith(b"HTTP/1.1 101"):
            return head, reader.read(1)  # the first byte of the first frame
        return head, reader.read()  # until the server closes the connection


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:{other}", None])
def test_refused_websocket_is_never_upgraded_and_gets_no_frames(insp, other_port, origin):
    """Row 1, "nothing spawned": the websocket cannot start a process, so what a hijacked socket could do is read
    the live frames and send actions over them. A refused handshake must therefore never become a websocket: no
    101, no Sec-WebSocket-Accept, no sync frame, and the connection stays plain HTTP."""
    head, after = raw_ws_handshake(insp, origin.format(other=other_port) if origin else None)
    assert head.startswith(b"HTTP/1.1 403"), head[:200]
    assert b"sec-websocket-accept" not in head.lower() and b"upgrade: websocket" not in head.lower()
    assert b"connection: close" in head.lower()
    length = int(re.search(rb"(?im)^content-length:\s*(\d+)", head).group(1))
    assert len(after) == length and after.startswith(b"websocket without an Origin" if origin is None
                                                      else b"cross-origin request refused"), after[:200]
    # The control: the right Origin on the same path is upgraded (so the test reads a real handshake).
    good_head, good_after = raw_ws_handshake(insp, insp.origin)
    assert good_head.startswith(b"HTTP/1.1 101") and b"sec-websocket-accept" in good_head.lower()
    assert good_after == b"\x81", good_after  # a final text frame: the sync


# ----------------------------------------------------------------------------------- row 2: DNS rebinding

BAD_HOSTS = ["evil.example:{port}", "0.0.0.0:{port}", "localhost.evil.example:{port}", "127.0.0.1.nip.io:{port}",
             "127.0.0.1:{other}", "127.0.0.1", "localhost", "[::1]:{port}", "127.1:{port}", "2130706433:{port}",
             "127.0.0.1:{port}.evil.example", "evil.example"]
HOST_PATHS = ["/", "/?token={token}", "/static/app.js", "/static/vendor/htmx-4.0.1.min.js", "/ws",
              "/timeline/rows", "/records/1", "/records/1.json", "/tools/word_count", "/nonexistent"]


@pytest.mark.parametrize("path", HOST_PATHS)
@pytest.mark.parametrize("host", BAD_HOSTS)
def test_rebound_host_gets_400_and_no_token(gate, other_port, host, path):
    host = host.format(port=gate.port, other=other_port)
    headers = {"Host": host, "Origin": f"http://{host}"}
    if path == "/ws":
        headers.update(upgrade_headers())
    status, response_headers, body = gate.request("GET", path.format(token=gate.token), headers=headers)
    assert status == 400
    assert gate.token.encode() not in body
    assert "set-cookie" not in response_headers


def test_rebound_host_on_a_post_is_400_and_does_nothing(gate):
    status, _, _ = gate.post("/server/stop", headers={"Host": f"evil.example:{gate.port}"})
    assert status == 400
    assert "stop" not in state_events(gate)


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}"])
def test_own_hosts_are_served(gate, host):
    status, _, body = gate.request("GET", "/", headers={"Host": host.format(port=gate.port)})
    assert status == 200 and b"timeline" in body


# ----------------------------------------------------------------------------------- row 3: token

def token_variants(insp: Inspector, other_port: int) -> dict[str, str]:
    """Cookie header values that must all be refused."""
    name, token = f"mcp_inspect_{insp.port}", insp.token
    return {
        "none": "",
        "empty": f"{name}=",
        "truncated": f"{name}={token[:-1]}",
        "half": f"{name}={token[:21]}",
        "extended": f"{name}={token}A",
        "wrong-case": f"{name}={token.swapcase()}",
        "other-instance": f"{name}={secrets.token_urlsafe(32)}",
        "other-port-cookie": f"mcp_inspect_{other_port}={token}",
        "unprefixed-cookie": f"mcp_inspect={token}",
        "non-ascii": f"{name}={token[:-1]}é",
        "quoted": f'{name}="{token}"x',
    }


VARIANTS = ["none", "empty", "truncated", "half", "extended", "wrong-case", "other-instance", "other-port-cookie",
            "unprefixed-cookie", "non-ascii", "quoted"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_wrong_token_gets_401_everywhere(insp, other_port, variant):
    cookie = token_variants(insp, other_port)[variant]
    headers = {"Cookie": cookie} if cookie else {}
    for method, path, extra in [("GET", "/", {}), ("GET", "/timeline/rows", {}), ("GET", "/records/1", {}),
                                ("GET", "/static/app.js", {}), ("GET", "/ws", upgrade_headers()),
                                ("POST", "/server/stop", {"HX-Request": "true"})]:
        status, response_headers, body = insp.request(
            method, path, auth=False, headers={**headers, "Origin": insp.origin, **extra},
            body=b"" if method == "POST" else None)
        assert status == 401, (method, path, status)
        assert insp.token.encode() not in body
        assert "set-cookie" not in response_headers
    error = ws_refused(insp, origin=insp.origin, cookie=cookie or None)
    assert error.status_code == 401
    assert insp.token.encode() not in (error.resp_body or b"")
    assert "stop" not in state_events(insp)


@pytest.mark.parametrize("variant", ["", "x", "truncated", "extended", "wrong-case", "other"])
def test_wrong_token_in_the_url_gets_401_and_no_cookie(gate, variant):
    token = {"": "", "x": "x", "truncated": gate.token[:-1], "extended": gate.token + "0",
             "wrong-case": gate.token.swapcase(), "other": secrets.token_urlsafe(32)}[variant]
    status, headers, body = gate.request("GET", f"/?token={token}", auth=False)
    assert status == 401
    assert "set-cookie" not in headers and gate.token.encode() not in body


def test_token_in_the_query_of_other_routes_does_not_authenticate(gate):
    for path in ("/timeline/rows", "/records/1", "/static/app.js"):
        status, _, _ = gate.request("GET", f"{path}?token={gate.token}", auth=False)
        assert status == 401, path


def test_token_is_256_bits_and_new_for_each_launch(insp, gate):
    # secrets.token_urlsafe(32): 43 URL-safe base64 characters; a second launch has its own.
    for token in (insp.token, gate.token):
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token), token
    assert insp.token != gate.token


def test_token_is_compared_in_constant_time(gate, monkeypatch):
    """Timing cannot be asserted in a test (no performance assertions), so the test checks that the gate's
    decision goes through hmac.compare_digest: a plain == would leave this list empty."""
    compared: list[tuple] = []
    real = security.hmac.compare_digest
    monkeypatch.setattr(security.hmac, "compare_digest", lambda a, b: compared.append((a, b)) or real(a, b))
    wrong = gate.token[:-1] + ("A" if gate.token[-1] != "A" else "B")
    for value, expected in ((wrong, 401), (gate.token, 200)):
        compared.clear()
        status, _, _ = gate.request("GET", "/", auth=False, headers={"Cookie": f"mcp_inspect_{gate.port}={value}"})
        assert status == expected
        assert (value.encode(), gate.token.encode()) in compared, compared
    compared.clear()
    status, _, _ = gate.request("GET", f"/?token={wrong}", auth=False)
    assert status == 401 and (wrong.encode(), gate.token.encode()) in compared


def test_token_never_in_stderr_or_recording(insp):
    insp.request("GET", f"/?token={insp.token}", auth=False)
    insp.request("GET", "/nonexistent")
    assert insp.token not in insp.stderr_text()
    assert insp.token not in insp.record.read_text(encoding="utf-8")


# ----------------------------------------------------------------------------------- row 4: CSRF

POST_ENDPOINTS = ["/server/stop", "/server/start", "/tools/word_count/call"]


@pytest.mark.parametrize("path", POST_ENDPOINTS)
def test_get_on_post_endpoints_does_nothing(gate, path):
    status, _, body = gate.request("GET", path, headers={"HX-Request": "true"})
    assert status == 405
    assert b"Traceback" not in body
    assert "stop" not in state_events(gate) and tool_calls(gate) == []
    assert running(gate)


FORM = "application/x-www-form-urlencoded"
CSRF_CASES = [
    # (name, headers, body, auth, expected status)
    ("form-without-htmx", {"Content-Type": FORM}, "arguments=%7B%7D", True, 403),
    ("no-body-no-htmx", {}, None, True, 403),
    ("multipart-without-htmx", {"Content-Type": "multipart/form-data; boundary=x"}, "--x--\r\n", True, 403),
    ("htmx-header-not-true", {"HX-Request": "1", "Content-Type": FORM}, "", True, 403),
    ("text-plain", {"HX-Request": "true", "Content-Type": "text/plain"}, '{"arguments":{}}', True, 415),
    ("text-plain-charset", {"Content-Type": "text/plain; charset=utf-8"}, '{"arguments":{}}', True, 415),
    ("cross-site", {"HX-Request": "true", "Sec-Fetch-Site": "cross-site", "Content-Type": FORM}, "", True, 403),
    ("same-site", {"HX-Request": "true", "Sec-Fetch-Site": "same-site", "Content-Type": FORM}, "", True, 403),
    ("fetch-site-none", {"HX-Request": "true", "Sec-Fetch-Site": "none", "Content-Type": FORM}, "", True, 403),
    ("json-cross-site", {"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}, "{}", True, 403),
    ("other-origin", {"HX-Request": "true", "Origin": "http://evil.example", "Content-Type": FORM}, "", True, 403),
    ("null-origin", {"HX-Request": "true", "Origin": "null", "Content-Type": FORM}, "", True, 403),
    ("other-port-origin", {"HX-Request": "true", "Origin": "http://127.0.0.1:1", "Content-Type": FORM}, "", True,
     403),
    ("missing-token", {"HX-Request": "true", "Content-Type": FORM}, "", False, 401),
]


@pytest.mark.parametrize("path", POST_ENDPOINTS)
@pytest.mark.parametrize("name, headers, body, auth, expected", CSRF_CASES, ids=[c[0] for c in CSRF_CASES])
def test_csrf_variants_are_refused_and_change_nothing(gate, path, name, headers, body, auth, expected):
    calls_before = len(tool_calls(gate))
    status, _, response = gate.request("POST", path, headers={"Origin": gate.origin, **headers}, body=body, auth=auth)
    assert status == expected, response
    assert "stop" not in state_events(gate)
    assert state_events(gate).count("spawn") == 1
    assert len(tool_calls(gate)) == calls_before == 0
    assert running(gate)


def test_proper_actions_do_work(page_factory):
    """The positive control for row 4: the same endpoints do act when asked properly."""
    inspector = page_factory([], "--demo")
    wait_for(lambda: running(inspector), message="the demo server running")
    status, _, body = inspector.request("POST", "/tools/word_count/call",
                                        headers={"Content-Type": "application/json", "Origin": inspector.origin,
                                                 "Sec-Fetch-Site": "same-origin"},
                                        body=json.dumps({"arguments": {"text": "a b c"}}))
    assert status == 200, body
    wait_for(lambda: tool_calls(inspector), message="the tools/call request recorded")
    status, _, body = inspector.post("/server/stop", headers={"Sec-Fetch-Site": "same-origin"})
    assert status == 200 and re.search(rb"server state-(stopping|stopped)", body)
    assert "stop" in state_events(inspector)
    wait_for(lambda: b"server state-stopped" in inspector.request("GET", "/")[2], message="the server stopped")


def spawned(counter) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def test_csrf_refused_posts_never_run_the_server_command(page_factory, tmp_path):
    """Row 4 with a sentinel that CAN appear: the server's command appends a line to a file each time it runs, and
    the server is stopped, so a start or restart that got through the gate would run it again. Every refused
    variant leaves the count at 1; the proper start (the positive control) makes it 2."""
    counter = tmp_path / "SPAWNS"
    wrapped = ["sh", "-c", 'echo spawn >> "$0"; exec "$@"', str(counter), *fixture_command("fake_server", "ok")]
    inspector = page_factory(wrapped, "--no-watch")
    wait_for(lambda: running(inspector) and spawned(counter) == 1, 60, message="the server running")
    status, _, _ = inspector.post("/server/stop", headers={"Sec-Fetch-Site": "same-origin"})
    assert status == 200
    wait_for(lambda: b"server state-stopped" in inspector.request("GET", "/")[2], 60, message="the server stopped")
    answers, expected = {}, {}
    for path in ("/server/start", "/server/restart"):
        answers[path, "GET"] = inspector.request("GET", path, headers={"HX-Request": "true"})[0]
        expected[path, "GET"] = 405
        for name, headers, body, auth, status in CSRF_CASES:
            answers[path, name] = inspector.request("POST", path, headers={"Origin": inspector.origin, **headers},
                                                    body=body, auth=auth)[0]
            expected[path, name] = status
    # The spawn event is recorded when the process is started, before the request answers.
    assert state_events(inspector).count("spawn") == 1, "a refused request ran the server command"
    assert answers == expected
    assert spawned(counter) == 1
    assert b"server state-stopped" in inspector.request("GET", "/")[2]
    status, _, _ = inspector.post("/server/start", headers={"Sec-Fetch-Site": "same-origin"})
    assert status == 200
    wait_for(lambda: spawned(counter) == 2, 60, message="the proper start ran the command")
    assert state_events(inspector).count("spawn") == 2


# ----------------------------------------------------------------------------------- row 5: bind and switches

def _listeners(port: int) -> list[str]:
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, hex_port = fields[1].rsplit(":", 1)
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A = LISTEN
                found.append(address)
    return found


def _non_loopback_address() -> str | None:
    for target in ("192.0.2.1", "10.255.255.255", "8.8.8.8"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect((target, 9))
                address = probe.getsockname()[0]
        except OSError:
            continue
        if not address.startswith("127.") and address != "0.0.0.0":
            return address
    return None


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc/net/tcp")
def test_listener_is_bound_to_127_0_0_1_only(insp):
    assert _listeners(insp.port) == ["0100007F"]  # 127.0.0.1, little-endian hex; nothing on 0.0.0.0 or ::


def test_listener_is_not_reachable_on_another_address(insp):
    address = _non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    with pytest.raises(OSError):
        socket.create_connection((address, insp.port), timeout=2).close()


def test_connect_to_0_0_0_0_still_meets_the_host_check(insp):
    # On Linux a connect to 0.0.0.0 reaches a socket bound to 127.0.0.1: the Host check must still refuse it.
    try:
        sock = socket.create_connection(("0.0.0.0", insp.port), timeout=5)
    except OSError:
        pytest.skip("this system does not route 0.0.0.0 to loopback")
    with sock:
        sock.sendall(f"GET / HTTP/1.1\r\nHost: 0.0.0.0:{insp.port}\r\nCookie: {insp.cookie}\r\n"
                     f"Connection: close\r\n\r\n".encode())
        assert sock.recv(100).startswith(b"HTTP/1.1 400")


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_cli_refuses_to_listen_on_all_interfaces(tmp_path, host):
    result = subprocess.run([sys.executable, "-m", "inspector.cli", "--no-open", "--port", "0", "--host", host,
                             "--demo"], cwd=tmp_path, capture_output=True, text=True, timeout=90,
                            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2 and result.stdout == ""
    assert "Traceback" not in result.stderr


# mcp-inspect has no switch that turns auth off, so there is no parser to test. What can regress is a bypass added
# to the gate later, read from the environment (at import, at build or per request) or from the app's config. So
# the page is built with every name such a switch plausibly has, with each spelling of on and off ("false" must
# never count as on), and every route must still ask for the token. In-process for the values (cheap: the
# variables are read wherever the code reads them, the test client goes through the same gate), and once as a
# real process for a read at import time and for the websocket.
AUTH_SWITCHES = ["MCP_INSPECT_NO_AUTH", "MCP_INSPECT_DISABLE_AUTH", "MCP_INSPECT_AUTH", "MCP_INSPECT_INSECURE",
                 "MCP_INSPECT_DANGEROUSLY_OMIT_AUTH", "DANGEROUSLY_OMIT_AUTH", "NO_AUTH", "DISABLE_AUTH", "AUTH",
                 "MCP_INSPECT_DEBUG", "FLASK_DEBUG", "FLASK_ENV", "WERKZEUG_DEBUG_PIN"]
AUTH_APP_CONFIG = {"DEBUG": True, "TESTING": True, "LOGIN_DISABLED": True, "AUTH": False, "NO_AUTH": True,
                   "DISABLE_AUTH": True, "INSPECTOR_NO_AUTH": True}


def assert_every_route_wants_the_token(page) -> None:
    for method, path, headers in [("GET", "/", {}), ("GET", "/timeline/rows", {}), ("GET", "/static/app.js", {}),
                                  ("GET", "/records/1", {}), ("GET", "/export", {}),
                                  ("GET", "/ws", upgrade_headers()),
                                  ("POST", "/server/stop", {"HX-Request": "true"})]:
        status, _, body = page.request(method, path, auth=False,
                                       headers={"Origin": page.origin, "Sec-Fetch-Site": "same-origin", **headers},
                                       body=b"" if method == "POST" else None)
        assert status == 401, (method, path, status)
        assert page.token.encode() not in body


@pytest.mark.parametrize("value", ["false", "False", "0", "", "no", "off", "true", "1", "yes", "on"])
def test_no_environment_or_config_switch_turns_auth_off(tmp_path, monkeypatch, value):
    for name in AUTH_SWITCHES:
        monkeypatch.setenv(name, value)
    page = build_in_process(tmp_path, [], "--demo", record=False)
    try:
        assert page.app.debug is False  # never debug=True: the Werkzeug debugger is a shell
        assert_every_route_wants_the_token(page)
        page.app.config.update(AUTH_APP_CONFIG)
        page.app.debug = False  # DEBUG in the config above is for a bypass reading it; the debugger stays off
        assert_every_route_wants_the_token(page)
    finally:
        page.stop()


def test_no_environment_switch_turns_auth_off_in_a_real_process(tmp_path):
    inspector = start_inspector(tmp_path, [], "--demo", record=False, env={name: "1" for name in AUTH_SWITCHES}
                                | {"FLASK_ENV": "development"})
    try:
        assert_every_route_wants_the_token(inspector)
        assert ws_refused(inspector, origin=inspector.origin, cookie=None).status_code == 401
        status, _, body = inspector.request("GET", "/records/999999999")
        assert status == 404 and b"Traceback" not in body and b"Werkzeug Debugger" not in body
    finally:
        inspector.stop()


# ----------------------------------------------------------------------------------- row 6: malformed headers

def _malformed_cases(port: int) -> list[tuple[str, bytes, int]]:
    good = f"127.0.0.1:{port}".encode()
    origin = b"http://" + good
    return [
        ("host-bracket", b"Host: [\r\n", 400),
        ("host-10k", b"Host: " + b"a" * 10_000 + b"\r\n", 400),
        ("host-10k-good-prefix", b"Host: " + good + b"a" * 10_000 + b"\r\n", 400),
        ("host-xff", b"Host: \xff\xfe:" + str(port).encode() + b"\r\n", 400),
        ("host-empty", b"Host: \r\n", 400),
        ("host-missing", b"", 400),
        ("host-duplicate-same", b"Host: " + good + b"\r\nHost: " + good + b"\r\n", 400),
        ("host-duplicate-evil", b"Host: " + good + b"\r\nHost: evil.example\r\n", 400),
        ("host-duplicate-evil-first", b"Host: evil.example\r\nHost: " + good + b"\r\n", 400),
        ("host-nul", b"Host: " + good + b"\x00evil\r\n", 400),
        ("host-100k", b"Host: " + b"b" * 100_000 + b"\r\n", None),
        ("origin-bracket", b"Host: " + good + b"\r\nOrigin: [\r\n", 403),
        ("origin-10k", b"Host: " + good + b"\r\nOrigin: " + origin + b"x" * 10_000 + b"\r\n", 403),
        ("origin-xff", b"Host: " + good + b"\r\nOrigin: http://\xff\xfe\r\n", 403),
        ("origin-empty", b"Host: " + good + b"\r\nOrigin: \r\n", 403),
        ("origin-duplicate-same", b"Host: " + good + b"\r\nOrigin: " + origin + b"\r\nOrigin: " + origin + b"\r\n",
         403),
        ("origin-duplicate-evil", b"Host: " + good + b"\r\nOrigin: " + origin + b"\r\nOrigin: http://evil.example\r\n",
         403),
    ]


MALFORMED_NAMES = [case[0] for case in _malformed_cases(1)]


@pytest.mark.parametrize("path", ["/", "/ws"])
@pytest.mark.parametrize("name", MALFORMED_NAMES)
def test_malformed_headers_get_4xx_and_the_process_stays_up(insp, name, path):
    case = {c[0]: c for c in _malformed_cases(insp.port)}[name]
    extra = b"".join(f"{k}: {v}\r\n".encode() for k, v in upgrade_headers().items()) if path == "/ws" else b""
    request = (f"GET {path} HTTP/1.1\r\n".encode() + case[1] + f"Cookie: {insp.cookie}\r\n".encode() + extra
               + b"Connection: close\r\n\r\n")
    status, response = raw_http(insp.port, request)
    if case[2] is None:
        assert 400 <= status < 500, response[:200]
    else:
        assert status == case[2], response[:300]
    assert insp.token.encode() not in response
    assert insp.proc.poll() is None
    assert insp.request("GET", "/")[0] == 200


def test_garbage_request_lines_leave_the_process_up(insp):
    for garbage in (b"\xff\xfe\xfd\r\n\r\n", b"GET\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"\r\n\r\n",
                    b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", insp.port), timeout=10) as sock:
            sock.sendall(garbage)
            try:
                reply = sock.recv(100)
            except ConnectionResetError:
                reply = b""
        # http.server answers a one-word request line HTTP/0.9 style (a bare error page, no status line).
        assert (reply == b"" or re.match(rb"HTTP/1\.[01] (4\d\d|505)", reply)
                or reply.startswith(b"<!DOCTYPE HTML>")), reply
    assert insp.proc.poll() is None
    assert insp.request("GET", "/")[0] == 200


# ----------------------------------------------------------------------------------- row 7: static paths

# Each reaches a file outside static/ if the path were joined naively: pyproject.toml and the inspector's own
# source are two and three levels up (the Flask static folder is ROOT/static, or inspector/static once packaged).
STATIC_TRAVERSALS = ["/static/../pyproject.toml", "/static/../../pyproject.toml", "/static/%2e%2e/pyproject.toml",
                     "/static/%2e%2e%2fpyproject.toml", "/static/..%2f..%2fpyproject.toml",
                     "/static/%2e%2e%2f%2e%2e%2fpyproject.toml", "/static/..%5cpyproject.toml",
                     "/static/..\\pyproject.toml", "/static//etc/passwd", "/static/%2fetc%2fpasswd",
                     "/static/C:\\Windows\\win.ini", "/static/app.js%00.txt", "/static/%00../pyproject.toml",
                     "/static/vendor/../../pyproject.toml", "/static/vendor/%2e%2e/%2e%2e/pyproject.toml"]


@pytest.mark.parametrize("path", STATIC_TRAVERSALS)
def test_static_paths_never_leave_the_static_folder(insp, path):
    status, headers, body = insp.request("GET", path)
    if status == 308:  # Werkzeug merges a doubled slash by redirecting: to a path still inside /static/
        location = headers["location"].removeprefix(f"http://127.0.0.1:{insp.port}")
        assert location.startswith("/static/") and "//" not in location, location
        status, _, body = insp.request("GET", location)
    assert 400 <= status < 500, (path, status)
    assert b"[project]" not in body and b"root:" not in body and b"[fonts]" not in body
    assert insp.request("GET", "/static/app.js")[0] == 200  # the control: the folder itself is served


# ----------------------------------------------------------------------------------- row 10: headers and scan

REQUIRED_CSP = {"default-src": ["'self'"], "script-src": ["'self'"], "style-src": ["'self'"],
                "object-src": ["'none'"], "base-uri": ["'none'"], "frame-ancestors": ["'none'"],
                "connect-src": ["'self'"]}


def assert_security_headers(headers: dict) -> None:
    policy = headers.get("content-security-policy", "")
    directives = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            directives[words[0]] = words[1:]
    for name, values in REQUIRED_CSP.items():
        assert directives.get(name) == values, (name, policy)
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy and "*" not in policy
    assert headers.get("x-frame-options") == "DENY"
    assert headers.get("x-content-type-options") == "nosniff"
    assert headers.get("referrer-policy") == "no-referrer"
    assert "no-store" in headers.get("cache-control", "")
    assert not any(name.startswith("access-control-") for name in headers)


@pytest.mark.parametrize("method, path, kwargs, expected", [
    ("GET", "/", {}, 200),
    ("GET", "/timeline/rows", {}, 200),
    ("GET", "/timeline/rows?kind=request&q=init", {}, 200),
    ("GET", "/records/1", {}, 200),
    ("GET", "/tools/word_count", {}, 200),
    ("GET", "/records/999999", {}, 404),
    ("GET", "/tools/no-such-tool", {}, 404),
    ("GET", "/calls/999", {}, 404),
    ("GET", "/nonexistent", {}, 404),
    ("GET", "/server/stop", {}, 405),
    ("GET", "/", {"headers": {"Host": "evil.example"}}, 400),
    ("GET", "/", {"auth": False}, 401),
    ("GET", "/", {"headers": {"Origin": "http://evil.example"}}, 403),
    ("POST", "/tools/word_count/call", {"headers": {"Content-Type": "text/plain"}, "body": "x"}, 415),
    ("POST", "/tools/word_count/call", {"headers": {"HX-Request": "true", "Content-Type": FORM},
                                        "body": "arguments=not-json"}, 422),
    ("GET", "/static/app.js", {}, 200),
])
def test_security_headers_on_every_response(gate, method, path, kwargs, expected):
    status, headers, body = gate.request(method, path, **kwargs)
    assert status == expected, body[:300]
    assert_security_headers(headers)
    if status >= 400:
        # Errors are small partials; a 422 re-renders the tool's form with the problem beside its field.
        assert len(body) < (20000 if status == 422 else 2000)
        assert b"Traceback" not in body and b"<script" not in body.lower()
        assert not body.lstrip().lower().startswith((b"<!doctype", b"<html"))  # a partial, not a whole page


def test_security_headers_on_a_refused_websocket(insp):
    error = ws_refused(insp, origin="http://evil.example")
    assert_security_headers({k.lower(): v for k, v in (error.resp_headers or {}).items()})


WEB = ROOT
TEMPLATE_FILES = sorted((WEB / "templates").rglob("*.html"))
OUR_JS = WEB / "static" / "app.js"

FORBIDDEN_IN_TEMPLATES = {
    "|safe": r"\|\s*safe\b",
    "Markup(": r"Markup\s*\(",
    "autoescape off": r"autoescape\s+false",
    "style attribute": r"\sstyle\s*=",
    "hx-on": r"hx-on",
    "js: value": r"[\"'\s]js:",
    "javascript: URL": r"javascript:",
    "inline script body": r"<script\b[^>]*>\s*[^<\s]",
    "script without src": r"<script(?![^>]*\bsrc=)[^>]*>",
    "on* handler attribute": r"\son[a-z]+\s*=",
    "DOM HTML sinks": r"\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write",
    "trigger filter (needs eval)": r"hx-trigger\s*=\s*\"[^\"]*\[",
    # tojson escapes < > & ' but not ": inside a double-quoted attribute its output ends the attribute. (tojson_text
    # returns a plain str, which autoescape escapes like any text, quotes included.)
    "tojson in a double-quoted attribute": r"=\s*\"[^\"]*\|\s*tojson\b",
    "hx-vals without tojson": r"hx-vals\s*=\s*'(?![^']*\|\s*tojson)[^']*\{\{",
    "inline style element": r"<style\b",
    # Jinja's urlencode leaves / and . alone: a tool named ../export became a GET of /export (row 10). Server text
    # goes in a query value through url_part; in a path, even encoded, '..' is resolved by the browser.
    "urlencode (use url_part, in a query value)": r"\|\s*urlencode\b",
    "url_part in a path": r"(?:hx-(?:get|post|put|patch|delete)|href|src|action)\s*=\s*\"[^\"?]*\|\s*url_part",
}
FORBIDDEN_IN_JS = {
    # Property sinks; the swap-style names htmx takes as strings ('outerHTML') are not sinks.
    "innerHTML": r"\.innerHTML\b",
    "outerHTML": r"\.outerHTML\b",
    "bracketed sink": r"\[\s*['\"](inner|outer)HTML['\"]\s*\]",
    "insertAdjacentHTML": r"insertAdjacentHTML",
    "document.write": r"document\.write",
    "eval": r"\beval\s*\(|new\s+Function\s*\(",
    "string timer": r"set(Timeout|Interval)\s*\(\s*['\"]",
    "style attribute": r"setAttribute\(\s*['\"]style['\"]|\.style\.cssText",
    "hx-on": r"hx-on",
    "on* attribute": r"setAttribute\(\s*['\"]on",
    "createContextualFragment / DOMParser": r"createContextualFragment|DOMParser",
}


def _strip_js_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    return "\n".join(re.sub(r"(^|\s)//.*$", "", line) for line in source.splitlines())


def test_templates_exist_for_the_scan():
    assert len(TEMPLATE_FILES) >= 5 and OUR_JS.is_file()


@pytest.mark.parametrize("path", TEMPLATE_FILES, ids=lambda p: p.name)
def test_templates_have_no_unsafe_constructs(path):
    text = path.read_text(encoding="utf-8")
    found = {name: re.findall(pattern, text, flags=re.I) for name, pattern in FORBIDDEN_IN_TEMPLATES.items()}
    assert {name: hits for name, hits in found.items() if hits} == {}


@pytest.mark.parametrize("path", sorted((WEB / "static").glob("*.js")), ids=lambda p: p.name)
def test_our_javascript_has_no_html_sinks(path):
    # Every script of ours (app.js and each feature's own file), not the vendored ones.
    code = _strip_js_comments(path.read_text(encoding="utf-8"))
    found = {name: re.findall(pattern, code) for name, pattern in FORBIDDEN_IN_JS.items()}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_python_never_marks_text_safe():
    for path in sorted((ROOT / "inspector").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bMarkup\s*\(|autoescape\s*=\s*False|debug\s*=\s*True", text), path


def test_vendor_files_match_their_checksums():
    vendor = WEB / "static" / "vendor"
    sums = {}
    for line in (vendor / "SHA256SUMS").read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            sums[name.lstrip("*")] = digest
    assert sums, "SHA256SUMS lists nothing"
    for name, digest in sums.items():
        assert hashlib.sha256((vendor / name).read_bytes()).hexdigest() == digest, name
    scripts = {p.name for p in vendor.iterdir() if p.suffix in (".js", ".mjs", ".css")}
    assert scripts <= set(sums), f"vendored files without a checksum: {scripts - set(sums)}"


def test_page_loads_only_our_own_scripts(gate):
    _, _, body = gate.request("GET", "/")
    page = body.decode()
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", page, flags=re.S | re.I)
    assert scripts
    for attributes, content in scripts:
        assert content.strip() == ""
        src = re.search(r'src="([^"]+)"', attributes).group(1)
        assert src.startswith("/static/")
    assert not re.search(r"\son[a-z]+\s*=|\sstyle\s*=|hx-on|javascript:", page, flags=re.I)


# ----------------------------------------------------------------------------------- row 28: the token URL

def test_token_url_sets_cookie_and_redirects_to_a_clean_url(gate):
    status, headers, body = gate.request("GET", f"/?token={gate.token}", auth=False)
    assert status == 302
    assert headers["location"] == "/"
    assert gate.token.encode() not in body
    cookie = headers["set-cookie"]
    name, _, rest = cookie.partition("=")
    assert name == f"mcp_inspect_{gate.port}" and str(gate.port) in name
    value, _, attributes = rest.partition(";")
    assert value == gate.token
    flags = {a.strip().split("=")[0].lower(): a.strip().partition("=")[2] for a in attributes.split(";") if a.strip()}
    assert "httponly" in flags
    assert flags.get("samesite", "").lower() == "strict"
    assert flags.get("path", "/") == "/"
    assert "domain" not in flags
    assert headers["referrer-policy"] == "no-referrer"
    assert "no-store" in headers["cache-control"]
    assert headers["x-frame-options"] == "DENY"
    # The cookie it set is what the rest of the app accepts.
    status, _, _ = gate.request("GET", "/", auth=False, headers={"Cookie": f"{name}={value}"})
    assert status == 200


def test_token_url_on_another_path_is_not_traded(gate):
    status, headers, _ = gate.request("GET", f"/index.html?token={gate.token}", auth=False)
    assert status == 401 and "set-cookie" not in headers


def test_page_itself_does_not_carry_the_token(gate):
    status, headers, body = gate.request("GET", "/")
    assert status == 200
    assert gate.token.encode() not in body
    assert "no-store" in headers["cache-control"] and headers["referrer-policy"] == "no-referrer"
