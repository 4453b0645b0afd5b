"""Pure: the two protocol eras, what `--protocol` asks for, how a server/discover probe answers, the modern
request metadata, result types, and the error codes that need words.

The handshake ("legacy") era runs `initialize` once per connection; the 2026-07-28 ("modern") era has no
handshake: every request carries the client's version, capabilities and info in `params._meta`, and a
`server/discover` tells what the server supports. A client that speaks both probes with `server/discover` and
falls back to `initialize` on anything it does not recognise as a modern answer (mcp-protocol.md, A.1).
"""

from __future__ import annotations

import re

from inspector.protocol.plain import Plain

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any

LEGACY = "legacy"
MODERN = "modern"
AUTO = "auto"
LEGACY_VERSION = "2025-11-25"
"""The newest handshake-era revision: what `initialize` asks for unless --protocol names another."""
MODERN_VERSION = "2026-07-28"
MODERN_VERSIONS = (MODERN_VERSION,)
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
BATCH_VERSIONS = ("2025-03-26",)
"""The only revision that allowed JSON-RPC batches."""
STRUCTURED_CONTENT_SINCE = "2025-06-18"
"""The first revision with a tool's outputSchema and a result's structuredContent (dates compare as text)."""
PROBE_SECONDS = 3.0
"""How long a server/discover probe waits, once the server shows a sign of life, before it counts as
handshake-era (--probe-timeout; client/handshake.py)."""

META_PREFIX = "io.modelcontextprotocol/"
META_VERSION = META_PREFIX + "protocolVersion"
META_CAPABILITIES = META_PREFIX + "clientCapabilities"
META_CLIENT_INFO = META_PREFIX + "clientInfo"
META_LOG_LEVEL = META_PREFIX + "logLevel"
META_SERVER_INFO = META_PREFIX + "serverInfo"
META_SUBSCRIPTION_ID = META_PREFIX + "subscriptionId"

HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022
URL_ELICITATION_REQUIRED = -32042
MODERN_ERRORS = (HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_VERSION)

INPUT_REQUIRED_METHODS = ("tools/call", "prompts/get", "resources/read")
"""The requests whose answer may be `resultType: input_required` (and that accept inputResponses on retry)."""

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class ProtocolChoiceError(ValueError):
    """A --protocol value that is neither an era nor a revision date."""


class ProtocolChoice(Plain):
    """What --protocol asked for."""

    __slots__ = ("era", "version")
    __hash__ = Plain.field_hash

    def __init__(self, era: str, version: str | None) -> None:
        self.era = era
        """auto, legacy or modern."""
        self.version = version
        """The revision to speak; None with auto (the probe decides)."""

    @property
    def label(self) -> str:
        """The value as the user gave it, for the recording's header."""
        if self.era == AUTO:
            return AUTO
        default = LEGACY_VERSION if self.era == LEGACY else MODERN_VERSION
        return self.era if self.version == default else self.version or self.era


def parse_protocol(text: str) -> ProtocolChoice:
    """`auto`, `legacy`, `modern` or a revision date such as 2025-06-18; raises ProtocolChoiceError."""
    value = (text or "").strip().lower()
    if value == AUTO:
        return ProtocolChoice(AUTO, None)
    if value == LEGACY:
        return ProtocolChoice(LEGACY, LEGACY_VERSION)
    if value == MODERN:
        return ProtocolChoice(MODERN, MODERN_VERSION)
    if _DATE.match(value):
        # Any date is allowed (an inspector must be able to send a version the server does not know), and the
        # era follows the date: revisions from 2026-07-28 on have no initialize.
        return ProtocolChoice(MODERN if value >= MODERN_VERSION else LEGACY, value)
    raise ProtocolChoiceError(f"--protocol takes auto, legacy, modern or a revision date like {LEGACY_VERSION}; "
                              f"got {text!r}")


def era_of_version(version: str | None) -> str:
    """The era a revision date belongs to."""
    return MODERN if isinstance(version, str) and version >= MODERN_VERSION else LEGACY


def request_meta(version: str, capabilities: dict, client_info: dict, log_level: str | None) -> dict:
    """The `_meta` keys every modern request carries."""
    meta = {META_VERSION: version, META_CAPABILITIES: capabilities, META_CLIENT_INFO: client_info}
    if log_level:
        meta[META_LOG_LEVEL] = log_level
    return meta


def with_meta(params: dict | None, meta: dict) -> dict:
    """params with the modern `_meta` keys added; keys already in params._meta (a progressToken) are kept."""
    out = dict(params or {})
    existing = out.get("_meta") if isinstance(out.get("_meta"), dict) else {}
    out["_meta"] = {**meta, **existing}
    return out


class ProbeOutcome(Plain):
    """What a server/discover probe said about the server."""

    __slots__ = ("era", "version", "reason", "discover", "conclusive")
    __hash__ = Plain.field_hash

    def __init__(self, era: str, version: str | None, reason: str, discover: dict | None = None,
                 conclusive: bool = True) -> None:
        self.era, self.version = era, version
        self.reason = reason
        """One line for the timeline: why this era."""
        self.discover = discover
        """The DiscoverResult, when there was one."""
        self.conclusive = conclusive
        """False when the answer says nothing about the era (the server refused us: HTTP 401/403); such an
        outcome is used for this start only and never kept for the next ones."""


def judge_probe(response: dict | None) -> ProbeOutcome:
    """Classify the answer to server/discover (None: no answer in time, or the transport refused it).

    A DiscoverResult means modern; a recognised modern error means modern with another version (when the server
    names one we speak); anything else means the handshake era. Never keyed on one particular error code alone:
    the spec says the fallback must not depend on it.
    """
    if response is None:
        return ProbeOutcome(LEGACY, LEGACY_VERSION, f"no answer to server/discover within {PROBE_SECONDS:g} s")
    result = response.get("result")
    if isinstance(result, dict) and isinstance(result.get("supportedVersions"), list):
        supported = [v for v in result["supportedVersions"] if isinstance(v, str)]
        ours = _newest_shared(supported, MODERN_VERSIONS)
        if ours:
            return ProbeOutcome(MODERN, ours, "server/discover answered", discover=result)
        if _newest_shared(supported, LEGACY_VERSIONS):
            return ProbeOutcome(LEGACY, LEGACY_VERSION,
                                f"server/discover lists only handshake-era versions: {', '.join(supported)}")
        return ProbeOutcome(MODERN, MODERN_VERSION, "server/discover answered, but lists no version mcp-inspect "
                                                    f"speaks ({', '.join(supported) or 'none'}); trying "
                                                    f"{MODERN_VERSION}", discover=result)
    error = response.get("error")
    if isinstance(error, dict) and error.get("code") in MODERN_ERRORS:
        data = error.get("data") if isinstance(error.get("data"), dict) else {}
        supported = [v for v in data.get("supported", []) if isinstance(v, str)] if isinstance(
            data.get("supported"), list) else []
        ours = _newest_shared(supported, MODERN_VERSIONS)
        if ours:
            return ProbeOutcome(MODERN, ours, f"server/discover refused our version; the server supports "
                                              f"{', '.join(supported)}")
        if supported and _newest_shared(supported, LEGACY_VERSIONS):
            return ProbeOutcome(LEGACY, LEGACY_VERSION,
                                f"the server supports only handshake-era versions: {', '.join(supported)}")
    if isinstance(error, dict):
        return ProbeOutcome(LEGACY, LEGACY_VERSION,
                            f"server/discover answered with error {error.get('code')}: not a modern server")
    return ProbeOutcome(LEGACY, LEGACY_VERSION, "server/discover got an answer that is not a DiscoverResult")


def _newest_shared(theirs: list[str], ours: tuple[str, ...]) -> str | None:
    shared = [version for version in theirs if version in ours]
    return max(shared) if shared else None


def result_type(result: Any) -> str:
    """complete, input_required, task, or invalid; an absent resultType (an older server) counts as complete."""
    if not isinstance(result, dict) or "resultType" not in result:
        return "complete"
    value = result["resultType"]
    return value if value in ("complete", "input_required", "task") else "invalid"


def input_requests(result: dict) -> dict[str, dict]:
    """The well-formed entries of an input_required result's inputRequests: {key: {method, params}}."""
    requests = result.get("inputRequests")
    if not isinstance(requests, dict):
        return {}
    return {key: value for key, value in requests.items()
            if isinstance(key, str) and isinstance(value, dict) and isinstance(value.get("method"), str)}


def retry_params(params: dict | None, responses: dict, request_state: Any) -> dict:
    """The params of the retry: the same request, plus inputResponses and the echoed requestState."""
    out = {key: value for key, value in (params or {}).items() if key not in ("inputResponses", "requestState")}
    out["inputResponses"] = responses
    if request_state is not None:
        out["requestState"] = request_state
    return out


def explain_error(error: Any) -> str | None:
    """Words for the error codes whose number alone says little; None for the others."""
    if not isinstance(error, dict):
        return None
    code, data = error.get("code"), error.get("data") if isinstance(error.get("data"), dict) else {}
    if code == HEADER_MISMATCH:
        return ("Header mismatch (-32020): an HTTP header (MCP-Protocol-Version, Mcp-Method or Mcp-Name) does not "
                "match the request body.")
    if code == MISSING_CLIENT_CAPABILITY:
        needed = data.get("requiredCapabilities")
        names = ", ".join(needed) if isinstance(needed, list) else (
            ", ".join(needed.keys()) if isinstance(needed, dict) else "")
        return ("Missing client capability (-32021): the server needs the client to declare "
                + (names or "a capability it did not send")
                + " (in the page: switch it on under Client capabilities, then start again).")
    if code == UNSUPPORTED_VERSION:
        supported = data.get("supported")
        listed = ", ".join(v for v in supported if isinstance(v, str)) if isinstance(supported, list) else ""
        return (f"Unsupported protocol version (-32022): the request asked for {data.get('requested', '?')}; "
                f"the server supports {listed or 'other versions'}.")
    if code == URL_ELICITATION_REQUIRED:
        return ("URL elicitation required (-32042): the server needs the user to open a URL first; the links are "
                "shown in the Asks panel.")
    if code == -32002:
        return "Resource not found (-32002, the pre-2026 code; 2026-07-28 uses -32602)."
    return None


def url_elicitations(error: Any) -> list[dict]:
    """The elicitations carried by a -32042 error: [{url, message, elicitationId?}], http(s) URLs only."""
    if not isinstance(error, dict) or error.get("code") != URL_ELICITATION_REQUIRED:
        return []
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    items = data.get("elicitations") if isinstance(data.get("elicitations"), list) else []
    return [item for item in items if isinstance(item, dict) and isinstance(item.get("url"), str)]
