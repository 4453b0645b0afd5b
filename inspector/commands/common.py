"""What the faces share: the options of the main command and the subcommands (each declared once, here), argument
helpers, and output that is safe for a terminal."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys

from inspector.command_line import (  # noqa: F401 - the commands import them from here
    UsageError, env_keys, env_pairs, server_environment,
)
from inspector.client.deadlines import DEFAULT_TIMEOUT
from inspector.protocol.eras import PROBE_SECONDS

# Only what parsing a command line needs is imported here: `call` starts its server as soon as its arguments are
# read, and imports the rest while the server starts (commands/call.py). The secrets' patterns, the JSON encoder
# and the client come with the functions that use them.

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any
    from pathlib import Path
    from inspector.protocol.secrets import Masker

# Whole escape sequences first (so "\x1b[31m" does not leave "[31m" behind), then any control character left:
# C0 but tab, DEL, and C1 (U+0080-U+009F; U+009B alone is a CSI on many terminals). security.md row 12.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[PX^_][^\x1b]*(?:\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


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
    from inspector.protocol.json import dumps as safe_dumps

    return safe_dumps(value, indent=indent)


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
    """argparse that raises UsageError (one line, exit 2) instead of printing usage and exiting: for the main command
    and every subcommand. Abbreviations of long options are refused (the main command keeps them, see cli.py)."""

    def __init__(self, *, allow_abbrev: bool = False, **kwargs: Any) -> None:
        super().__init__(allow_abbrev=allow_abbrev, formatter_class=_HelpFormatter, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter as wide as the terminal, like its own default, but measured without importing shutil
    (argparse makes a formatter for every add_argument, and shutil imports bz2, lzma and zlib: milliseconds of
    every start). COLUMNS first, then the terminal of stdout, else 80 columns, as shutil.get_terminal_size."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width)


def _terminal_columns() -> int:
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def value_options(parser: argparse.ArgumentParser) -> frozenset[str]:
    """The option strings that take a value (the token after them is theirs): what cli.split_argv skips."""
    return frozenset(name for action in parser._actions if action.nargs != 0 for name in action.option_strings)


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """-e/--env and --cwd: the server's environment and working directory."""
    parser.add_argument("-e", "--env", action="append", default=[], metavar="KEY=VALUE",
                        help="set an environment variable for the server (repeatable; the value is never written "
                             "to a recording or shown, even when the server echoes it)")
    parser.add_argument("--cwd", metavar="DIR", help="working directory for the server")


def server_env(items: list[str], cwd: str | None) -> dict[str, str]:
    """Our environment plus -e values; checks --cwd too. Raises UsageError."""
    env = server_environment(env_pairs(items))
    if cwd and not os.path.isdir(cwd):
        raise UsageError(f"--cwd: not a directory: {cwd}")
    return env


def masker_for(command: list[str], env_items: list[str], http: Any = None) -> Masker:
    """The known secrets of a headless run (protocol.secrets): its command's secret options, -e values, the URL's
    and the headers' secrets, and our environment's secret-named values. Masked in its recording and its output."""
    from inspector.protocol.secrets import Masker, inherited_secrets, target_secrets

    url, headers = (http.url, http.headers) if http is not None else (None, ())
    return Masker(target_secrets(command, env_pairs(env_items), url, headers) + inherited_secrets(os.environ))


def shown_command(argv: list[str]) -> str:
    """A server command as a shell line for our output, the values of its secret options masked."""
    from inspector.protocol.secrets import mask_argv

    return shlex.join(mask_argv(argv)[0])


def seconds(text: str) -> float:
    """A positive timeout in seconds, for argparse."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 86400:  # zero would give up at once: the range is open at 0
        raise argparse.ArgumentTypeError(f"a timeout must be greater than 0 and at most 86400 seconds, got {text}")
    return value


PROTOCOL_HELP = ("auto (default: probe server/discover, fall back to initialize), legacy (initialize), modern "
                 "(2026-07-28, no initialize) or a revision date such as 2025-06-18")


def add_protocol_options(parser: argparse.ArgumentParser, *, timeout_help: str,
                         timeout_default: float = DEFAULT_TIMEOUT, protocol_help: str = PROTOCOL_HELP) -> None:
    """--protocol, --timeout and --probe-timeout: which era to speak, and how long to wait for answers."""
    parser.add_argument("--protocol", type=protocol_choice, default="auto", metavar="ERA", help=protocol_help)
    parser.add_argument("--timeout", type=seconds, default=timeout_default, metavar="SECONDS",
                        help=f"{timeout_help} (default {timeout_default:g})")
    parser.add_argument("--probe-timeout", type=seconds, default=PROBE_SECONDS, metavar="SECONDS",
                        help="with --protocol auto: how long server/discover may go unanswered after the server's "
                             f"first sign of life before falling back to initialize (default {PROBE_SECONDS:g}; a "
                             "server that shows none gets the whole --timeout)")


def protocol_choice(text: str) -> str:
    """A --protocol value, checked, for argparse."""
    from inspector.protocol.eras import ProtocolChoiceError, parse_protocol

    try:
        return parse_protocol(text).label
    except ProtocolChoiceError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_http_options(parser: argparse.ArgumentParser) -> None:
    """--url, --transport and --header: a server reached over HTTP instead of a command."""
    parser.add_argument("--url", metavar="URL", help="connect to an MCP server over HTTP instead of running a command")
    parser.add_argument("--transport", default="auto", choices=("auto", "streamable-http", "sse"),
                        help="with --url: auto (default: Streamable HTTP, falling back to the legacy HTTP+SSE "
                             "transport), streamable-http or sse")
    parser.add_argument("-H", "--header", action="append", default=[], metavar="'NAME: VALUE'",
                        help="an HTTP header for every request to --url, e.g. an Authorization bearer token "
                             "(repeatable; never written to a recording or shown, even when the server echoes it)")


def http_target(args: argparse.Namespace, command: list[str]):
    """The HttpTarget of --url/--transport/--header (None without --url), checked against the command; raises
    UsageError."""
    if args.url and command:
        raise UsageError("give either --url or a server command after --, not both")
    if not args.url:
        if args.header or args.transport != "auto":
            raise UsageError("--header and --transport are for servers reached over HTTP (--url)")
        return None
    from inspector.client.targets import HttpTarget  # for a URL only: a command's spawn does not wait for it

    return HttpTarget(url_value(args.url), args.transport, header_values(args.header))


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """--config FILE and --server NAME: a server entry of a Claude, Cursor or VS Code config file as the target."""
    parser.add_argument("--config", metavar="FILE",
                        help="a Claude Desktop, Cursor or VS Code MCP config file: use one of its servers (-e and -H "
                             "supply the values it leaves open, such as ${input:...})")
    parser.add_argument("--server", metavar="NAME",
                        help="with --config: the server entry to use (needed when the file lists several; the page "
                             "offers them to pick instead)")


def config_entries(path: str, wanted: str | None, env: dict[str, str], headers, *, need_one: bool):
    """(every entry of the file with -e and -H applied, the one picked or None) for --config FILE --server NAME; with
    `need_one` a file of several servers needs --server. Raises UsageError, also when the picked entry cannot start."""
    from inspector.client_configs import ConfigError, load_config_file, pick

    try:
        entries = load_config_file(path)
        if not entries:
            raise UsageError(f"--config {path}: the file lists no servers")
        entries = {name: entry.with_env(env).with_headers(headers) for name, entry in entries.items()}
        entry = pick(entries, wanted) if wanted or need_one or len(entries) == 1 else None
    except ConfigError as exc:
        raise UsageError(f"--config {path}: {exc}") from None
    if entry is not None and not entry.startable:
        raise UsageError(f"--config {path}: server {entry.name!r} cannot be started: " + "; ".join(entry.problems))
    return list(entries.values()), entry


def use_config_entry(args: argparse.Namespace, command: list[str]) -> list[str]:
    """With --config FILE: put the picked entry in `args` as if its target had been typed (the command, --cwd, -e;
    or --url, --transport, -H), so a headless command goes on exactly as with those options. Returns the server
    command (the one after --, or the entry's). Raises UsageError."""
    if not args.config:
        if args.server:
            raise UsageError("--server NAME picks an entry of --config FILE")
        return command
    if command or args.url:
        raise UsageError("give one server: --config and " + ("a command after --" if command else "--url")
                         + " cannot be used together")
    _, entry = config_entries(args.config, args.server, dict(env_pairs(args.env)), header_values(args.header),
                              need_one=True)
    if entry.transport == "stdio":
        if args.transport != "auto":
            raise UsageError(f"--transport is for servers reached over HTTP; {entry.name!r} is a command")
        args.cwd = args.cwd or entry.cwd
        args.env = [f"{key}={value}" for key, value in entry.env]  # with_env put -e values over the file's
        return list(entry.command)
    args.url = entry.url
    if args.transport == "auto":
        args.transport = entry.transport
    args.header = [f"{name}: {value}" for name, value in entry.headers]  # with_headers put -H over the file's
    return []


def url_value(url: str) -> str:
    """--url, checked; raises UsageError."""
    from inspector.client.targets import TargetError, check_url

    try:
        return check_url(url)
    except TargetError as exc:
        raise UsageError(str(exc)) from None


def header_values(items: list[str]) -> tuple[tuple[str, str], ...]:
    """The --header values as (name, value); raises UsageError."""
    from inspector.client.targets import TargetError, parse_headers

    try:
        return parse_headers(items)
    except TargetError as exc:
        raise UsageError(str(exc)) from None


def add_rules_option(parser: argparse.ArgumentParser) -> None:
    """--rules FILE: diagnostics switched off."""
    parser.add_argument("--rules", metavar="FILE",
                        help='switch diagnostics off: a JSON file {"disable": [rule ids]} (see docs/rules.md)')


def disabled_rules(path: str | None) -> frozenset:
    """The rule ids a --rules FILE switches off (none without one); raises UsageError."""
    if not path:
        return frozenset()
    from inspector.protocol.diagnostics.rules import RulesError

    try:
        return frozenset(read_rules_file(path))
    except RulesError as exc:
        raise UsageError(str(exc)) from None


def read_rules_file(path: str | Path) -> set[str]:
    """Read a --rules FILE and hand its text to the pure rules parser; raises RulesError."""
    from pathlib import Path

    from inspector.protocol.diagnostics.rules import RulesError, parse_rules

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RulesError(f"--rules: no such file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesError(f"--rules: cannot read {path}: {exc}") from None
    return parse_rules(text, path)
