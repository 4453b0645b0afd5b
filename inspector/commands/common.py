"""What the headless subcommands share: argument helpers, and output that is safe for a terminal."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any

# Whole escape sequences first (so "\x1b[31m" does not leave "[31m" behind), then any control character left:
# C0 but tab, DEL, and C1 (U+0080-U+009F; U+009B alone is a CSI on many terminals). security.md row 12.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u2028\u2029]")


class UsageError(Exception):
    """A wrong invocation: one line for the user, exit code 2."""


def fail(message: str, code: int = 2) -> int:
    """Say one line on stderr, prefixed like every mcp-inspect message; return the exit code."""
    print(f"mcp-inspect: {terminal_text(message)}", file=sys.stderr, flush=True)
    return code


def terminal_text(text: str) -> str:
    """Text from a server or a recording, fit to print on a terminal: no escape sequences, no control characters."""
    return _CONTROL.sub("", _ANSI.sub("", text))


def echo_stderr(line: str) -> None:
    """Relay one line of the server's stderr to ours."""
    print(terminal_text(line), file=sys.stderr, flush=True)


def dumps(value: Any, indent: int | None = 2) -> str:
    """JSON with ensure_ascii=False, but DEL, C1 and line separators escaped: the same value, safe on a terminal."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    # Those characters can only occur inside JSON strings here, where \\uXXXX means the same thing.
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def write_stdout(text: str) -> None:
    """Write text to stdout as UTF-8 whatever the locale (a lone surrogate is written escaped)."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text stream put in place of stdout (tests, an embedding program)
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    buffer.write(text.encode("utf-8", "backslashreplace"))
    buffer.flush()


def split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    """(our arguments, the server command): everything after the first `--` is the server's argv, untouched."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


class Parser(argparse.ArgumentParser):
    """argparse that raises UsageError (one line) instead of printing usage and exiting."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_abbrev=False, formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """-e/--env and --cwd, as for the main command."""
    parser.add_argument("-e", "--env", action="append", default=[], metavar="KEY=VALUE",
                        help="set an environment variable for the server (repeatable)")
    parser.add_argument("--cwd", metavar="DIR", help="working directory for the server")


def server_env(items: list[str], cwd: str | None) -> dict[str, str]:
    """Our environment plus -e values; checks --cwd too. Raises UsageError."""
    env = dict(os.environ)
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--env takes KEY=VALUE, got {item!r}")
        env[key] = value
    if cwd and not os.path.isdir(cwd):
        raise UsageError(f"--cwd: not a directory: {cwd}")
    return env


def env_keys(items: list[str]) -> list[str]:
    """The names given with -e (their values never reach a recording)."""
    return [item.partition("=")[0] for item in items]


def seconds(text: str) -> float:
    """A positive timeout in seconds, for argparse."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"timeout must be between 0 and 86400 seconds: {text}")
    return value


def add_protocol_option(parser: argparse.ArgumentParser) -> None:
    """--protocol, as for the main command."""
    parser.add_argument("--protocol", type=protocol_choice, default="auto", metavar="ERA",
                        help="auto (default: probe server/discover, fall back to initialize), legacy, modern, or a "
                             "revision date such as 2025-06-18")
    add_probe_timeout_option(parser)


def add_probe_timeout_option(parser: argparse.ArgumentParser) -> None:
    """--probe-timeout: how long the era probe waits once the server shows a sign of life."""
    from ..eras import PROBE_SECONDS

    parser.add_argument("--probe-timeout", type=seconds, default=PROBE_SECONDS, metavar="SECONDS",
                        help="with --protocol auto: how long server/discover may go unanswered after the server's "
                             f"first output before falling back to initialize (default {PROBE_SECONDS:g}; a server "
                             "that prints nothing gets the whole --timeout)")


def protocol_choice(text: str) -> str:
    """A --protocol value, checked, for argparse."""
    from ..eras import ProtocolChoiceError, parse_protocol

    try:
        return parse_protocol(text).label
    except ProtocolChoiceError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_http_options(parser: argparse.ArgumentParser) -> None:
    """--url, --transport and --header, as for the main command."""
    parser.add_argument("--url", metavar="URL", help="an MCP server reached over HTTP instead of a command after --")
    parser.add_argument("--transport", default="auto", choices=("auto", "streamable-http", "sse"),
                        help="with --url: auto (default), streamable-http or sse (the legacy HTTP+SSE transport)")
    parser.add_argument("-H", "--header", action="append", default=[], metavar="'NAME: VALUE'",
                        help="an HTTP header for every request to --url (repeatable; never recorded)")


def http_target(args: argparse.Namespace, command: list[str]):
    """The HttpTarget of --url/--transport/--header (None without --url), checked against the command; raises
    UsageError."""
    from ..client.connect import HttpTarget

    if args.url and command:
        raise UsageError("give either --url or a server command after --, not both")
    if not args.url and (args.header or args.transport != "auto"):
        raise UsageError("--header and --transport are for servers reached over HTTP (--url)")
    headers = header_values(args.header)
    return HttpTarget(url_value(args.url), args.transport, headers) if args.url else None


def url_value(url: str) -> str:
    """--url, checked; raises UsageError."""
    from ..client.connect import TargetError, check_url

    try:
        return check_url(url)
    except TargetError as exc:
        raise UsageError(str(exc)) from None


def header_values(items: list[str]) -> tuple[tuple[str, str], ...]:
    """The --header values as (name, value); raises UsageError."""
    from ..client.connect import TargetError, parse_headers

    try:
        return parse_headers(items)
    except TargetError as exc:
        raise UsageError(str(exc)) from None


def disabled_rules(path: str | None) -> frozenset:
    """The rule ids a --rules FILE switches off (none without one); raises UsageError."""
    if not path:
        return frozenset()
    from ..diagnostics.rules import RulesError, load_rules

    try:
        return frozenset(load_rules(path))
    except RulesError as exc:
        raise UsageError(str(exc)) from None
