"""Pure: the secrets of one run, and masking them wherever they would be written or shown.

Two rules, the way CI systems keep secrets out of logs:

- Secret-looking options of a server command (`--token X`, `--api-key=X`, `--password X`, ...) are masked by
  position wherever a command is written or shown (`mask_argv`; `is_secret_name` is the one rule for what is a
  secret name, for options, env keys and query parameters alike).
- Every value known to be a secret (-e values, -H values, a URL's password and secret query values, the values of
  secret options, the launch token) is masked wherever it appears, raw, URL-encoded or inside base64 (`Masker`).

Short values would mask ordinary text (an env value `1` or `true` everywhere), so a value is only learned when it is
long enough: MIN_SECRET_CHARS for values the user marked as secret (a secret name, a header, a URL password),
MIN_PLAIN_CHARS for -e values under ordinary names (e.g. `LOG_LEVEL=debug` stays visible, `DATABASE_URL=...` not).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping

from inspector.protocol.json import REDACTED
from inspector.protocol.plain import replace
from inspector.protocol.records import EVENT, Record

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any

MIN_SECRET_CHARS = 4
"""A value under a secret name (or a header value, a URL password) shorter than this is not searched for."""
MIN_PLAIN_CHARS = 8
"""An -e value under an ordinary name shorter than this is not searched for: it would mask common words."""

SECRET_NAME = re.compile(r"(?i)token|key|secret|passw|passphrase|pwd|auth|bearer|credential|cookie|session-?id")
"""What makes a name (an option, an env key, a header, a query parameter) a secret's name."""
_OPTION = re.compile(r"^--?([A-Za-z][\w.-]*)$")
_AUTH_SCHEME = re.compile(r"^\s*[A-Za-z][\w-]*\s+(\S.*)$")  # "Bearer abc", "Basic abc", "token abc"


def is_secret_name(name: str) -> bool:
    """Whether a value under this name (option, env key, header, query parameter) is a secret."""
    return bool(SECRET_NAME.search(name))


def _secret_option(arg: str) -> bool:
    match = _OPTION.match(arg)
    return bool(match) and is_secret_name(match.group(1))


def secret_positions(argv: list[str]) -> list[int]:
    """The positions in argv holding a secret option's value: `--token X` (X's position) and `--token=X`."""
    positions = []
    for i, arg in enumerate(argv):
        name, sep, _ = arg.partition("=")
        if sep and _secret_option(name):
            positions.append(i)
        elif _secret_option(arg) and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            positions.append(i + 1)
    return positions


def mask_argv(argv: list[str], placeholder=lambda option: REDACTED) -> tuple[list[str], list[int]]:
    """A command with each secret option's value replaced by placeholder(option name), and the positions masked.

    The default placeholder is [REDACTED]; copy-as-command and config snippets pass one the user can fill in."""
    out = list(argv)
    positions = secret_positions(argv)
    for i in positions:
        name, sep, _ = argv[i].partition("=")
        if sep and _secret_option(name):
            out[i] = f"{name}={placeholder(name)}"
        else:
            out[i] = placeholder(argv[i - 1])
    return out, positions


def shell_variable(option: str) -> str:
    """`--api-key` → `API_KEY`: the shell variable copy-as-command puts where the option's value was."""
    return re.sub(r"[^A-Za-z0-9]+", "_", option).strip("_").upper() or "SECRET"


def argv_secrets(argv: Iterable[str]) -> list[str]:
    """The values of a command's secret options."""
    argv = list(argv)
    values = [argv[i].partition("=")[2] if "=" in argv[i] and _secret_option(argv[i].partition("=")[0]) else argv[i]
              for i in secret_positions(argv)]
    return [value for value in values if len(value) >= MIN_SECRET_CHARS]


def env_secrets(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """-e values (and env from config files): all of them, the shortest ones apart (see the module's note)."""
    return [value for key, value in pairs
            if len(value) >= (MIN_SECRET_CHARS if is_secret_name(key) else MIN_PLAIN_CHARS)]


SHELL_NAMES = frozenset({"PWD", "OLDPWD"})
"""Variables every shell sets whose names only look secret ("pwd"): the working directory is no secret."""


def inherited_secrets(environ: Mapping[str, str]) -> list[str]:
    """Values of our own environment under secret names (GITHUB_TOKEN, ...): a server inherits them."""
    return [value for key, value in environ.items()
            if key not in SHELL_NAMES and is_secret_name(key) and len(value) >= MIN_SECRET_CHARS]


def header_secrets(headers: Iterable[tuple[str, str]]) -> list[str]:
    """Every -H value (the user chose to send it), and the credential after an auth scheme (`Bearer X`: X too)."""
    found = []
    for _, value in headers:
        found.append(value)
        scheme = _AUTH_SCHEME.match(value)
        if scheme:
            found.append(scheme.group(1).strip())
    return [value for value in found if len(value) >= MIN_SECRET_CHARS]


# urllib.parse and base64 are imported where a URL or a secret is handled: a `call` over stdio with no secret
# starts without them.


def url_secrets(url: str | None) -> list[str]:
    """A URL's userinfo password and the values of its secret-named query parameters."""
    if not url:
        return []
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return []
    found = [password] if password else []
    found += [value for key, value in parse_qsl(parts.query, keep_blank_values=True) if is_secret_name(key)]
    return [value for value in found if len(value) >= MIN_SECRET_CHARS]


def mask_url(url: str, placeholder=lambda name: REDACTED) -> str:
    """A URL with its userinfo password and secret-named query values replaced by placeholder(name) ("password" for
    the userinfo's): for the page, snippets and copy-as-command, where a URL is shown rather than used."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    netloc = parts.netloc
    if password is not None:
        userinfo, _, host = netloc.rpartition("@")
        netloc = f"{userinfo.partition(':')[0]}:{placeholder('password')}@{host}"
    query = "&".join(_mask_pair(pair, placeholder) for pair in parts.query.split("&")) if parts.query else ""
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _mask_pair(pair: str, placeholder) -> str:
    from urllib.parse import unquote_plus

    name, sep, _ = pair.partition("=")
    return f"{name}={placeholder(unquote_plus(name))}" if sep and is_secret_name(unquote_plus(name)) else pair


def target_secrets(command: Iterable[str] = (), env: Iterable[tuple[str, str]] = (), url: str | None = None,
                   headers: Iterable[tuple[str, str]] = ()) -> list[str]:
    """Every secret one server target carries: its secret options' values, env values, URL secrets, header values."""
    return [*argv_secrets(command), *env_secrets(env), *url_secrets(url), *header_secrets(headers)]


def literal_variants(literal: str) -> list[tuple[str, str]]:
    """(form, text) for a secret as it may appear: "raw", "url-encoded" (both escapes' cases), "base64" (any
    alignment, both alphabets)."""
    from urllib.parse import quote, quote_plus

    out = [("raw", literal)]
    for encoded in {quote(literal, safe=""), quote_plus(literal, safe="")} - {literal}:
        lower = re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)
        out += [("url-encoded", encoded), ("url-encoded", lower)]
    out += [("base64", core) for core in base64_cores(literal.encode("utf-8"))]
    return list(dict.fromkeys(out))


def base64_cores(data: bytes) -> list[str]:
    """The parts of base64 text that encode data whatever bytes surround it (three alignments, both alphabets)."""
    import base64

    cores = []
    for offset, skip in ((0, 0), (1, 2), (2, 3)):
        encoded = base64.b64encode(b"\0" * offset + data).decode("ascii")
        whole = 4 * ((offset + len(data)) // 3)  # the last partial group depends on the bytes that follow
        core = encoded[skip:whole]
        if len(core) >= 8:
            cores += [core, core.replace("+", "-").replace("/", "_")]
    if data:
        cores.append(base64.b64encode(data).decode("ascii").rstrip("="))
    return sorted(set(cores), key=len, reverse=True)


class Masker:
    """Masks the known secrets of a run (learned as they become known) in text, JSON values and records.

    One compiled pattern per form (text, and a recording line's JSON-escaped bytes), shaped as a trie so each
    position costs one path, not one try per variant; a line that holds no secret costs one search. `learn` swaps
    in new patterns whole, so readers on other threads never see half an update (it is called at start and from the
    page's header editor, never from two threads at once)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: frozenset[str] = frozenset()
        self._text: re.Pattern | None = None
        self._line: re.Pattern | None = None
        self._in_batch: Callable[[bytes], bool] | None = None
        self.learn(secrets)

    def learn(self, secrets: Iterable[str]) -> None:
        """Mask these values too (callers apply the minimum lengths; an empty value is ignored)."""
        known = self._secrets | {s for s in secrets if s and s != REDACTED}
        if known == self._secrets:
            return
        variants = sorted({v for s in known for _, v in literal_variants(s)}, key=len, reverse=True)
        escaped: set[bytes] = set()
        for variant in variants:  # how each looks inside a recording line (jsonrpc.encode: either ensure_ascii)
            escaped |= {json.dumps(variant, ensure_ascii=a)[1:-1].encode("utf-8", "surrogatepass") for a in (0, 1)}
        text, line = trie_pattern(variants), trie_pattern(sorted(escaped))
        self._text, self._line, self._secrets = text, line, known  # one assignment each: readers see old or new
        self._in_batch = _finder(sorted(escaped), line)

    def text(self, text: str) -> str:
        """text with every known secret replaced by [REDACTED]."""
        pattern = self._text
        return pattern.sub(REDACTED, text) if pattern is not None and text else text

    def value(self, value: Any) -> Any:
        """A copy of a JSON value with every known secret masked in its strings (keys too); unchanged parts shared."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return value

    def record(self, record: Record, t_text: bytes | None = None) -> bytes:
        """Mask a record before it is written, and give back its line (`t_text`: see Record.to_line).

        The record's fields are replaced by masked copies (never changed in place: the caller may still hold the
        message it sends), so whoever reads the record afterwards (the page, a command's output) sees what the
        file holds. An event's `command` and `url` (and the URL of an HTTP exchange) are masked by position as well
        (`--token X`, `?api_key=X`), whatever the value's length."""
        pattern = self._line  # once: `learn` may swap it meanwhile
        line = self._plain_line(record, pattern, t_text)
        if pattern is None or pattern.search(line) is None:
            return line
        return self._masked_line(record)

    def lines(self, records: list[Record], now: float, now_text: bytes) -> list[bytes]:
        """`record` for each of a batch (a pipe read's lines), in order; a record whose `t` is `now` is written with
        `now_text`. One pattern search covers the whole batch when it holds no secret (a flood's lines never do):
        a search per line cost more than writing it. The batch's lines are searched one by one only when the
        batch holds a match; a match cannot span two lines, as an escaped secret holds no newline."""
        pattern, in_batch = self._line, self._in_batch
        lines = [self._plain_line(record, pattern, now_text if record.t == now else None) for record in records]
        if pattern is None or not in_batch(b"".join(lines)):
            return lines
        return [line if pattern.search(line) is None else self._masked_line(record)
                for record, line in zip(records, lines)]

    @staticmethod
    def _plain_line(record: Record, pattern: re.Pattern | None, t_text: bytes | None) -> bytes:
        """The record's line with what is masked by position masked (an event's or exchange's command and URL),
        known secrets not yet searched for."""
        if record.kind == EVENT and isinstance(record.detail, dict):
            record.detail = _mask_target(record.detail)
        if isinstance(record.http, dict):  # the URL a message was posted to
            record.http = _mask_target(record.http)
        if pattern is not None and record.wire is not None and (b"\\u" in record.wire or b"\\/" in record.wire):
            # The pattern knows a secret as the encoder writes it; a server's own escapes ("\u0041", "\/") could
            # spell it otherwise. Without them, a string's bytes on the wire are exactly the encoder's, so the one
            # search below sees every secret in the server's line as surely as in the encoded one.
            record.wire = None
        return record.to_line(t_text)

    def _masked_line(self, record: Record) -> bytes:
        """The line of a record that holds a known secret: encoded from masked copies of its fields."""
        record.wire = None
        for name in ("msg", "text", "raw", "error", "detail", "http"):
            current = getattr(record, name)
            if current is not None:
                setattr(record, name, self.value(current))
        return record.to_line()

    def header(self, head: dict) -> dict:
        """A recording header with the target's command and URL masked by position and every known secret masked."""
        if isinstance(head.get("target"), dict):
            head = {**head, "target": _mask_target(head["target"])}
        return self.value(head)

    def exit_info(self, info: Any) -> Any:
        """A transport's ExitInfo (a dataclass) with its stderr tail and reason masked, for the page and messages."""
        return replace(info, stderr_tail=[self.text(line) for line in info.stderr_tail],
                       reason=self.text(info.reason) if info.reason else info.reason)


FIND_WORDS = 16
"""Up to this many escaped secrets, a batch is searched with bytes.find per secret (memchr-fast, about ten times
the regex's speed on a flood's lines, as a run usually knows a few secrets: the launch token's forms); beyond it
the one trie pattern is cheaper than a pass per word."""


def _finder(words: list[bytes], pattern: re.Pattern) -> Callable[[bytes], bool]:
    """Does a batch of lines hold any of the words? Exactly `pattern.search(blob) is not None` (the pattern matches
    the words literally), by the faster of the two ways for this many words."""
    if len(words) > FIND_WORDS:
        return lambda blob: pattern.search(blob) is not None
    return lambda blob: any(word in blob for word in words)


def trie_pattern(words: list) -> re.Pattern:
    """One regex matching any of the words (all str or all bytes), the longest where several start at one place.

    A flat `a|b|c` makes the regex engine try every alternative at every position; a trie tries one path (what
    Aho-Corasick does), about 3x faster on recording lines. Runs without a branch are one literal, so the nesting
    (and the recursion here) grows with the number of words, not their length."""
    empty = words[0][:0] if words else ""
    trie: dict = {}
    for word in words:
        node = trie
        for i in range(len(word)):
            node = node.setdefault(word[i:i + 1], {})
        node[None] = {}

    def build(node: dict):
        run = empty
        while len(node) == 1 and None not in node:  # a chain: one literal
            (piece, node), = node.items()
            run += re.escape(piece)
        branches = [re.escape(piece) + build(child) for piece, child in sorted(
            (item for item in node.items() if item[0] is not None), key=lambda item: item[0])]
        if not branches:
            return run
        body = branches[0] if len(branches) == 1 else (
            empty.join([_literal("(?:", empty), _literal("|", empty).join(branches), _literal(")", empty)]))
        if None in node:  # a word ends here: the longer ones are tried first, greedily
            body = _literal("(?:", empty) + body + _literal(")?", empty)
        return run + body

    return re.compile(build(trie))


def _literal(text: str, like):
    return text.encode("ascii") if isinstance(like, bytes) else text


def _mask_target(holder: dict) -> dict:
    """A header's target or an event's detail with its `command` and `url` masked by position (`--token X`, a URL's
    password and secret query values), whatever their length."""
    command, url = holder.get("command"), holder.get("url")
    if isinstance(command, list) and all(isinstance(item, str) for item in command):
        holder = {**holder, "command": mask_argv(command)[0]}
    if isinstance(url, str):
        holder = {**holder, "url": mask_url(url)}
    return holder
