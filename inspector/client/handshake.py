"""Finding the era and connecting in it: the server/discover probe, then `initialize` or `server/discover`.

One negotiation for the page and every headless command, so they reach the same era for the same server. The
probe is not decided by a clock that starts at spawn (a server may take seconds to import on a loaded machine):
its deadline counts from the server's first sign of life (its first byte on stdout or stderr, or, over stdio,
its reading our question from its stdin), and a server that shows none gets the whole request timeout. An answer
that arrives before the fallback begins is used.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from inspector import __version__
from inspector.protocol import eras, jsonrpc
from inspector.protocol.plain import Plain
from inspector.client.rpc import Client, Pending, RequestFailed

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any

CLIENT_NAME = "mcp-inspect"
REFUSED = re.compile(r"\bHTTP 40[13]\b")
"""How the HTTP transport words a refusal (unauthorized, forbidden) in a failed request's message."""
READ_CHECK_SECONDS = 0.05
"""How often the probe looks whether a silent server has read it yet (there is no event for a drained pipe)."""
EXIT_GRACE = 5.0
"""How long the probe waits for the exit of a server whose stdin refused the question (it is closing or dying)."""


def client_info(version: str = __version__) -> dict:
    """Our clientInfo."""
    return {"name": CLIENT_NAME, "version": version}


def initialize_params(version: str | None = None, capabilities: dict | None = None,
                      info: dict | None = None) -> dict:
    """The params of our own initialize request (handshake era)."""
    return {"protocolVersion": version or eras.LEGACY_VERSION, "capabilities": capabilities or {},
            "clientInfo": info or client_info()}


class ConnectFailed(Exception):
    """The handshake (or the modern era's server/discover) failed; one line for the user."""


class Decision(Plain):
    """The era to connect in, and why."""

    __slots__ = ("era", "version", "why", "discover", "found")

    def __init__(self, era: str, version: str | None, why: str, discover: dict | None = None,
                 found: eras.ProbeOutcome | None = None) -> None:
        self.era, self.version, self.why = era, version, why
        self.discover = discover
        """The probe's DiscoverResult, when it already has one (no second server/discover then)."""
        self.found = found
        """What a probe found (kept across restarts of the same command); None when nothing was probed."""


class Connected(Plain):
    """What connecting in an era found out."""

    __slots__ = ("era", "version", "server_info", "capabilities", "instructions", "why", "supported_versions")

    def __init__(self, era: str, version: str | None, server_info: dict, capabilities: dict,
                 instructions: str | None, why: str, supported_versions: list | None = None) -> None:
        self.era, self.version, self.server_info, self.capabilities = era, version, server_info, capabilities
        self.instructions, self.why = instructions, why
        self.supported_versions = [] if supported_versions is None else supported_versions


Restart = Callable[[str, str], bool]
"""Replace the server process for the fallback, given why and how (for the timeline); False if it failed."""


def decide(client: Client, choice: eras.ProtocolChoice, *, meta: dict, probe_timeout: float,
           restart: Restart, found: eras.ProbeOutcome | None = None) -> Decision | None:
    """The era: forced by --protocol, found by an earlier start, or probed now (None: the fallback failed)."""
    if choice.era != eras.AUTO:
        return Decision(choice.era, choice.version, f"--protocol {choice.label}")
    if found is not None:
        return Decision(found.era, found.version, f"found at the first start: {found.reason}", found=found)
    outcome, fresh = probe(client, meta, probe_timeout=probe_timeout)
    if fresh:
        # A server that ignored the probe may be stuck on it, and an SDK server that read it is locked into the
        # modern era: the handshake-era fallback needs a fresh process.
        exited = client.transport is None or client.transport.exited.is_set()
        if not restart(outcome.reason, "starting it again" if exited else "restarting it"):
            return None
    return Decision(outcome.era, outcome.version, outcome.reason, outcome.discover,
                    found=outcome if outcome.conclusive else None)


def probe(client: Client, meta: dict, *, probe_timeout: float) -> tuple[eras.ProbeOutcome, bool]:
    """Ask server/discover once: (what the answer says about the era, whether to restart for the fallback)."""
    pending = client.request("server/discover", {"_meta": meta})  # the request timeout caps the wait
    waited, sign = _wait_for_sign(client, pending, probe_timeout)
    if not pending.done.is_set() and not client.expire(pending, waited):
        pending.done.wait()  # it was answered just now, before the fallback began: use it
    transport = client.transport
    if pending.response is not None:
        return eras.judge_probe(pending.response), False
    failure = pending.failure
    if failure is not None and failure.reason == "transport" and getattr(transport, "pid", None) is not None:
        transport.exited.wait(EXIT_GRACE)  # its stdin is closed: a dying server's exit is on its way
    if transport is not None and transport.exited.is_set() and getattr(transport, "unread_at_exit", None):
        # It died with the question still unread, so not of it: a server that fails at start is started once,
        # and initialize then says how it exited.
        return eras.ProbeOutcome(eras.LEGACY, eras.LEGACY_VERSION,
                                 f"the server exited before reading server/discover ({failure})"), False
    if transport is not None and transport.exited.is_set():
        # Hand-written handshake-era servers often die on a method they do not know; no modern server would
        # (server/discover is mandatory there), so the fallback goes on with a fresh process.
        return eras.ProbeOutcome(eras.LEGACY, eras.LEGACY_VERSION,
                                 f"the server exited on server/discover ({failure})"), True
    if failure is not None and REFUSED.search(str(failure)):
        # An auth failure is no evidence about the era: the next connect (a fixed token) probes again.
        return eras.ProbeOutcome(eras.LEGACY, eras.LEGACY_VERSION,
                                 f"server/discover was refused ({failure}); the era is probed again at the next "
                                 "connect", conclusive=False), False
    if failure is not None and failure.reason != "timeout":
        return eras.ProbeOutcome(eras.LEGACY, eras.LEGACY_VERSION, f"server/discover failed: {failure}"), False
    silent = "" if sign else " (the server showed no sign of life)"
    reason = f"no answer to server/discover within {waited:g} s{silent}"
    # Only a process that got no answer is restarted (the spec's fallback); HTTP has nothing to restart.
    return eras.ProbeOutcome(eras.LEGACY, eras.LEGACY_VERSION, reason), getattr(transport, "pid", None) is not None


def _wait_for_sign(client: Client, pending: Pending, probe_timeout: float) -> tuple[float, bool]:
    """Wait for the answer until probe_timeout s after the server's first sign of life, or the request timeout
    without one; returns (the wait that ran out, counted from the sign or the probe, and whether there was a sign)."""
    sent, read_at = pending.sent_at, None
    unread = getattr(client.transport, "unread_input", None)
    with client.activity:
        while not pending.done.is_set():
            sign = client.heard_at or read_at
            if sign is None and getattr(client.transport, "pid", 0) is None:
                sign = sent  # HTTP: the server is up already; its silence is an answer
            if sign is None and unread is not None and unread() == 0:
                sign = read_at = time.monotonic()  # it read our question: from now on its silence is an answer
            limit = pending.timeout if sign is None else min(pending.timeout, max(sign, sent) - sent + probe_timeout)
            left = sent + limit - time.monotonic()
            if left <= 0:
                break
            client.activity.wait(min(left, READ_CHECK_SECONDS) if sign is None and unread is not None else left)
    sign = bool(client.heard_at or read_at or getattr(client.transport, "pid", 0) is None)
    return min(probe_timeout, pending.timeout) if sign else pending.timeout, sign


def connect(client: Client, decision: Decision, *, capabilities: dict, info: dict) -> Connected:
    """Connect in the decided era and record the handshake event; raises ConnectFailed or RequestFailed."""
    if decision.era == eras.MODERN:
        discover = decision.discover
        if discover is None:
            response = client.request("server/discover").answer()
            discover = response.get("result")
            if not isinstance(discover, dict):
                error = response.get("error")
                raise ConnectFailed(f"server/discover failed: {eras.explain_error(error) or _error_line(error)}")
        meta = _dict(discover.get("_meta"))
        supported = discover.get("supportedVersions")
        connected = Connected(eras.MODERN, decision.version, _dict(meta.get(eras.META_SERVER_INFO)),
                              _dict(discover.get("capabilities")), _str(discover.get("instructions")), decision.why,
                              [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else [])
    else:
        response = client.request("initialize", initialize_params(decision.version, capabilities, info)).answer()
        result = response.get("result")
        if not isinstance(result, dict):
            raise ConnectFailed(f"initialize failed: {_error_line(response.get('error'))}")
        connected = Connected(eras.LEGACY, _str(result.get("protocolVersion")), _dict(result.get("serverInfo")),
                              _dict(result.get("capabilities")), _str(result.get("instructions")), decision.why)
    detail: dict[str, Any] = {"era": connected.era, "protocolVersion": connected.version,
                              "serverInfo": connected.server_info, "capabilities": connected.capabilities,
                              "instructions": connected.instructions}
    if connected.era == eras.MODERN:
        detail["supportedVersions"] = connected.supported_versions
    client.event("handshake", {**detail, "why": decision.why})
    if connected.era == eras.LEGACY:
        client.send(jsonrpc.notification("notifications/initialized"))
    return connected


def connect_headless(connection: Any, protocol: str, *, probe_timeout: float) -> Connected:
    """Find the era and connect, as a headless command does: capabilities {}, a fresh process for the fallback.

    `connection` is a connect.Connection (its client, and fall_back for the restart). Raises ConnectFailed or
    RequestFailed.
    """
    client = connection.client
    decision = decide(client, eras.parse_protocol(protocol), probe_timeout=probe_timeout,
                      meta=eras.request_meta(eras.MODERN_VERSION, {}, client_info(), None),
                      restart=connection.fall_back)
    if decision is None:
        raise ConnectFailed("the server could not be started again for the initialize handshake")
    if decision.era == eras.MODERN:
        meta = eras.request_meta(decision.version or eras.MODERN_VERSION, {}, client_info(), None)
        client.meta = lambda: meta
    return connect(client, decision, capabilities={}, info=client_info())


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _error_line(error: Any) -> str:
    if isinstance(error, dict):
        return f"{error.get('message', 'error')} (code {error.get('code')})"
    return "the answer was not a result"


__all__ = ["CLIENT_NAME", "ConnectFailed", "Connected", "Decision", "RequestFailed", "client_info", "connect",
           "connect_headless", "decide", "initialize_params", "probe"]
