"""security.md row 16 and the websocket handshake, against real sockets: one writer per websocket (a keep-alive Ping
never lands inside a large frame, two senders never interleave), close 1009 for an over-cap message, a dead tab is
closed, and a malformed but authenticated upgrade gets a 400 and no traceback.

The tabs here are raw sockets, not a websocket library: the test chooses the receive buffer, when to read, whether
to answer Pings, and it checks every frame header the server sent."""

from __future__ import annotations

import base64
import os
import socket
import struct
import threading
from dataclasses import dataclass

from conftest import ACK, fixture_command, wait_for, wait_tools_listed

TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA
KNOWN_OPCODES = {0x0, 0x1, 0x2, CLOSE, PING, PONG}
PING_VARIABLE = "MCP_INSPECT_WS_PING_SECONDS"  # inspector/web/live.py: PING_SECONDS_VARIABLE
MAX_INBOUND = 1024 * 1024  # inspector/web/live.py: MAX_INBOUND_BYTES
READ_TIMEOUT = 90  # a loaded machine is slow, not wrong


def big_text(size: int) -> str:
    """tests/fixtures/fake_server.py's big_text: the instructions the big-instructions mode sends."""
    line = "".join(chr(ord("a") + i % 26) for i in range(63)) + "\n"
    return (line * (size // len(line) + 1))[:size]


class Malformed(AssertionError):
    """The byte stream is not a sequence of well-formed server frames."""


@dataclass
class Frame:
    opcode: int
    payload: bytes

    @property
    def close_code(self) -> int | None:
        return struct.unpack("!H", self.payload[:2])[0] if self.opcode == CLOSE and len(self.payload) >= 2 else None


def client_frame(opcode: int, payload: bytes) -> bytes:
    """One final client frame. Clients must mask; a zero masking key leaves the payload as it is."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    return head + b"\0\0\0\0" + payload


class RawTab:
    """A websocket client on a plain socket that parses and checks every frame the server sends."""

    def __init__(self, sock: socket.socket, request: bytes) -> None:
        self.sock = sock
        self.sock.settimeout(READ_TIMEOUT)
        self.buffer = bytearray()
        self.sock.sendall(request)
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        end = self.buffer.index(b"\r\n\r\n") + 4
        self.handshake = bytes(self.buffer[:end])
        del self.buffer[:end]
        assert self.handshake.startswith(b"HTTP/1.1 101"), self.handshake
        self.frames: list[Frame] = []
        self.pings = 0
        self.closed = threading.Event()

    @classmethod
    def open(cls, inspector, receive_buffer: int | None = None) -> RawTab:
        """Connect to the inspector's /ws with its cookie, Host and Origin."""
        sock = socket.socket()
        if receive_buffer:  # set before connect, so the window is small from the start
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.connect(("127.0.0.1", inspector.port))
        return cls(sock, upgrade_request(f"127.0.0.1:{inspector.port}", {
            "Origin": inspector.origin, "Cookie": inspector.cookie}))

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise EOFError(f"the server closed the connection; {len(self.buffer)} bytes were not a whole frame")
        self.buffer += chunk

    def _need(self, count: int) -> None:
        while len(self.buffer) < count:
            self._fill()

    def peek_header(self) -> tuple[int, int]:
        """The next frame's opcode and payload length, read and checked but not consumed."""
        self._need(2)
        first, second = self.buffer[0], self.buffer[1]
        opcode, fin = first & 0x0F, first & 0x80
        if first & 0x70:
            raise Malformed(f"reserved bits set in {first:#04x} (no extension was negotiated)")
        if opcode not in KNOWN_OPCODES:
            raise Malformed(f"unknown opcode {opcode:#x} in header {bytes(self.buffer[:2]).hex()}")
        if second & 0x80:
            raise Malformed("a server frame is masked")
        length = second & 0x7F
        if length == 126:
            self._need(4)
            length = struct.unpack("!H", self.buffer[2:4])[0]
        elif length == 127:
            self._need(10)
            length = struct.unpack("!Q", self.buffer[2:10])[0]
        if opcode >= CLOSE and (not fin or length > 125):
            raise Malformed(f"control frame {opcode:#x} with FIN={bool(fin)} and {length} bytes")
        if opcode == 0x0 or not fin:
            raise Malformed("a fragmented message (the server sends each message as one frame)")
        return opcode, length

    def next_frame(self) -> Frame:
        opcode, length = self.peek_header()
        header = 2 + (2 if 126 <= length < 1 << 16 else 8 if length >= 1 << 16 else 0)
        self._need(header + length)
        frame = Frame(opcode, bytes(self.buffer[header:header + length]))
        del self.buffer[:header + length]
        if opcode == TEXT:
            try:
                frame.payload.decode("utf-8")
            except UnicodeDecodeError as error:
                raise Malformed(f"a text frame that is not UTF-8: {error}") from None
        self.frames.append(frame)
        return frame

    def read_until_close(self, answer_pings: bool, acknowledge: bool = False) -> Frame:
        """Read frames up to the server's Close (nothing after it is a frame); Pongs sent if asked, and each text
        frame acknowledged if asked, as the page does once it has painted one (inspector/web/live_flow.py)."""
        while True:
            frame = self.next_frame()
            if frame.opcode == PING:
                self.pings += 1
                if answer_pings:
                    self.sock.sendall(client_frame(PONG, frame.payload))
            elif frame.opcode == TEXT and acknowledge:
                self.sock.sendall(client_frame(TEXT, ACK.encode()))
            elif frame.opcode == CLOSE:
                self.closed.set()
                return frame

    def rest_after_close(self) -> bytes:
        """Whatever the server sends after its Close frame, up to its end of the connection: nothing, by RFC 6455
        (an HTTP answer written there reaches a browser as a garbled frame)."""
        rest = bytes(self.buffer)
        while True:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                return rest
            rest += chunk

    def read_in_background(self, answer_pings: bool, acknowledge: bool = False) -> dict:
        """read_until_close on a thread; the dict gets 'close' or 'error'."""
        outcome: dict = {}

        def read() -> None:
            try:
                outcome["close"] = self.read_until_close(answer_pings, acknowledge)
            except Exception as error:  # reported by the test that reads outcome
                outcome["error"] = error
            finally:
                self.closed.set()

        threading.Thread(target=read, daemon=True).start()
        return outcome


def upgrade_request(host: str, headers: dict, key: str | None = None, version: str | None = "13") -> bytes:
    fields = {"Host": host, "Upgrade": "websocket", "Connection": "Upgrade", **headers}
    fields["Sec-WebSocket-Key"] = key if key is not None else base64.b64encode(os.urandom(16)).decode()
    if version is not None:
        fields["Sec-WebSocket-Version"] = version
    return ("GET /ws HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n").encode()


# ------------------------------------------------------------------ row 16: one writer, keep-alive included

INSTRUCTIONS = 12 * 1024 * 1024
"""Far more than the loopback socket buffers hold (4 MB of send buffer at most), so the page's thread is still
inside its write of this frame while the stalled tab reads nothing."""


TEST_PING_SECONDS = "1.5"
"""The keep-alive interval these tests run with. A tab that answers Pings and acknowledges its frames must stay open,
and it is closed after two intervals without an acknowledgement (ACK_PINGS): with 0.5 s, a loaded machine's reader
thread, still reading the 12 MB frame, could acknowledge it too late (a full run once failed here)."""


STALLED_TABS = 3
"""With the keep-alive on its own thread, whether its Ping lands inside the frame is a race in the kernel (both
writers wait for buffer space; either may win each time space frees up); several stalled tabs make that failure
near certain. With one writer there is no race: every tab's stream is well-formed."""


def test_a_keep_alive_ping_never_lands_inside_a_large_frame_to_a_stalled_tab(inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "big-instructions", str(INSTRUCTIONS)),
                                  "--no-watch", env={PING_VARIABLE: TEST_PING_SECONDS})
    wait_tools_listed(inspector, timeout=90)
    # A tab that reads and answers Pings: the server's keep-alive clock, seen from outside.
    clock = RawTab.open(inspector)
    clock_outcome = clock.read_in_background(answer_pings=True, acknowledge=True)
    # Tabs with a tiny receive buffer that read up to the large frame's header, then nothing.
    stalled = [RawTab.open(inspector, receive_buffer=2048) for _ in range(STALLED_TABS)]
    for tab in stalled:
        while tab.peek_header()[1] <= INSTRUCTIONS:
            tab.next_frame()  # a Ping may come first: the page is still rendering the first frame
        assert tab.peek_header()[0] == TEXT
    ticks = clock.pings
    wait_for(lambda: clock.pings >= ticks + 3 or "error" in clock_outcome, READ_TIMEOUT,
             message="three keep-alive Pings while the tabs are stalled")
    assert "error" not in clock_outcome, clock_outcome
    instructions = big_text(INSTRUCTIONS).encode()
    # Now read everything: frames, Pings only between them (read_until_close checks each header), then Close.
    closes = [tab.read_until_close(answer_pings=False) for tab in stalled]
    for tab, close in zip(stalled, closes):
        large = next(frame for frame in tab.frames if len(frame.payload) > INSTRUCTIONS)
        assert instructions in large.payload, "the large frame is intact"
        assert tab.pings >= 1, "keep-alive Pings still go out, after the frame"
        # The tab never answered a Ping: it is taken for dead and closed (the liveness check kept).
        assert close.close_code == 1008, close
        tab.sock.close()
    assert not clock.closed.is_set(), "a tab that answers Pings and acknowledges its frames stays open"
    clock.sock.close()


def test_a_tab_that_never_acknowledges_gets_no_second_frame_and_is_closed_with_1013(inspector_factory):
    """Flow control (inspector/web/live_flow.py): a frame goes out only once the previous one is acknowledged, and
    a tab that owes one for two keep-alive intervals is closed with 1013, on which the page reconnects and re-syncs;
    a tab that acknowledges its frames gets the live rows and stays open."""
    inspector = inspector_factory(fixture_command("fake_server", "ok"), "--no-watch", env={PING_VARIABLE: TEST_PING_SECONDS})
    wait_tools_listed(inspector, timeout=90)
    silent = RawTab.open(inspector)  # answers Pings (alive), never acknowledges a frame
    silent_outcome = silent.read_in_background(answer_pings=True)
    page = RawTab.open(inspector)
    page_outcome = page.read_in_background(answer_pings=True, acknowledge=True)
    for tab in (silent, page):  # the call comes after each tab's first frame, so its rows are live rows
        wait_for(lambda: any(f.opcode == TEXT for f in tab.frames), READ_TIMEOUT, message="the first frame")
    status, _, body = inspector.post("/tools/echo/call", {"arguments": '{"text": "live rows"}'})
    assert status == 200, body
    wait_for(lambda: any(b"live rows" in f.payload and b"timeline-rows" in f.payload for f in page.frames[1:]),
             READ_TIMEOUT, message="the live rows pushed to the acknowledging tab")
    wait_for(silent.closed.is_set, READ_TIMEOUT, message="the silent tab closed")
    assert "error" not in silent_outcome, silent_outcome
    assert silent_outcome["close"].close_code == 1013, silent_outcome["close"]
    assert [f.opcode for f in silent.frames].count(TEXT) == 1, "nothing after the unacknowledged first frame"
    assert silent.rest_after_close() == b"", "bytes after the Close frame"
    ticks = page.pings
    wait_for(lambda: page.pings >= ticks + 3 or page.closed.is_set(), READ_TIMEOUT, message="three more Pings")
    assert not page.closed.is_set() and "error" not in page_outcome, page_outcome
    silent.sock.close()
    page.sock.close()


def test_two_threads_sending_large_frames_on_one_socket_never_interleave():
    from inspector.web.live_socket import LiveSocket

    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
        client.connect(listener.getsockname())
        server_side, _ = listener.accept()
    host = "127.0.0.1:%d" % client.getpeername()[1]
    key = base64.b64encode(os.urandom(16)).decode()
    environ = {"werkzeug.socket": server_side, "HTTP_HOST": host, "HTTP_UPGRADE": "websocket",
               "HTTP_CONNECTION": "Upgrade", "HTTP_SEC_WEBSOCKET_KEY": key, "HTTP_SEC_WEBSOCKET_VERSION": "13"}
    accepted: list = []
    handshake = threading.Thread(target=lambda: accepted.append(LiveSocket(environ, MAX_INBOUND)), daemon=True)
    handshake.start()
    tab = RawTab(client, b"")  # the request is already in the environ; read the 101
    handshake.join(READ_TIMEOUT)
    (ws,) = accepted
    texts = [letter * (6 * 1024 * 1024) for letter in "ab"]
    started = [threading.Event() for _ in texts]

    def sender(index: int) -> None:
        started[index].set()
        ws.send(texts[index])

    senders = [threading.Thread(target=sender, args=(i,), daemon=True) for i in range(len(texts))]
    for thread in senders:
        thread.start()
    wait_for(lambda: all(event.is_set() for event in started), READ_TIMEOUT, message="both senders started")
    received = [tab.next_frame(), tab.next_frame()]
    assert [frame.opcode for frame in received] == [TEXT, TEXT]
    assert sorted(frame.payload for frame in received) == sorted(text.encode() for text in texts)
    for thread in senders:
        thread.join(READ_TIMEOUT)
    ws.close()
    client.close()


def test_an_over_cap_message_from_the_browser_gets_close_1009(inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "ok"), "--no-watch")
    tab = RawTab.open(inspector)
    outcome = tab.read_in_background(answer_pings=True, acknowledge=True)
    try:
        tab.sock.sendall(client_frame(TEXT, b"x" * (2 * MAX_INBOUND)))
    except OSError:
        pass  # the server may close before it has read the whole frame: the Close frame is what counts
    wait_for(tab.closed.is_set, READ_TIMEOUT, message="the server's Close")
    assert "error" not in outcome, outcome
    assert outcome["close"].close_code == 1009
    tab.sock.close()
    assert inspector.request("GET", "/")[0] == 200


# ------------------------------------------------------------------------------ the handshake itself

def test_a_malformed_authenticated_upgrade_gets_400_and_no_traceback(inspector_factory):
    inspector = inspector_factory(fixture_command("fake_server", "ok"), "--no-watch")
    host = f"127.0.0.1:{inspector.port}"
    auth = {"Origin": inspector.origin, "Cookie": inspector.cookie}
    for key, version in ((None, "99"), (None, "13"), ("x", None)):
        request = upgrade_request(host, auth, version=version)
        if key is None:  # no Sec-WebSocket-Key at all
            request = b"".join(line for line in request.splitlines(keepends=True)
                               if not line.startswith(b"Sec-WebSocket-Key"))
        with socket.create_connection(("127.0.0.1", inspector.port), timeout=READ_TIMEOUT) as sock:
            sock.sendall(request)
            response = b""
            while chunk := sock.recv(1 << 16):
                response += chunk
        head, _, body = response.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400"), (key, version, response[:300])
        assert b"content-type: text/plain" in head.lower() and 0 < len(body) < 500, response
        assert b"Traceback" not in body
    assert "Traceback" not in inspector.stderr_text()
    assert inspector.request("GET", "/")[0] == 200
