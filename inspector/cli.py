"""Command line: `mcp-inspect [OPTIONS] [--] COMMAND [ARGS...]`, parsed into a Config, then run.

Our options come only before the first token that is not one of ours; everything from the server command on is
the server's argv, untouched. Subcommands exist only as the first argument, so `mcp-inspect -- check` runs a
program named check; so does `help`, unless a program of that name is on PATH. A server command that is no program
but looks like a subcommand or a recording is answered with what was meant. argparse cannot express "options, then a foreign argv", so the split is done here and
argparse only validates our part.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from functools import cache

from inspector import __version__
from inspector.command_line import UsageError, env_pairs
from inspector.commands.common import (
    Parser, add_config_options, add_http_options, add_protocol_options, add_rules_option, add_server_options,
    config_entries, disabled_rules, header_values, seconds, url_value, value_options,
)

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from inspector.config import Config

# pathlib, shutil and config (a dataclass: dataclasses imports inspect) are imported in the run mode's functions,
# not here: `call` and the other subcommands dispatch from main() and start without them.

# Each subcommand with its line in `mcp-inspect --help` (the first argument only: `mcp-inspect -- check` runs a program
# named check).
SUBCOMMANDS = {
    "view": ("view FILE.jsonl", "open a recording in the browser, read-only"),
    "replay": ("replay FILE.jsonl -- CMD", "re-send a recording's requests to a server, compare the answers"),
    "export": ("export FILE.jsonl -o OUT", "a copy with secrets masked, or an HTML or Markdown report (--format)"),
    "call": ("call METHOD -- CMD", "send one request to a server and print its result as JSON"),
    "check": ("check -- CMD", "list a server's offer, review its tools, report protocol mistakes (for CI)"),
}
COMMANDS_HELP = ("commands (each has --help, or: mcp-inspect help COMMAND; --url URL or --config FILE --server NAME\n"
                 "may stand for -- CMD):\n"
                 + "\n".join(f"  mcp-inspect {usage:<25} {line}" for usage, line in SUBCOMMANDS.values()))


def build_parser() -> Parser:
    """The parser for the run mode's options; the options it shares with the subcommands come from commands.common."""
    parser = Parser(
        prog="mcp-inspect",
        allow_abbrev=True,  # as it always has: `--no-o` is --no-open (the splitter knows value options in full only)
        usage="mcp-inspect [OPTIONS] [--] COMMAND [ARGS...]\n       mcp-inspect --demo [OPTIONS]",
        description="Inspect an MCP server: spawn it over stdio, show its JSON-RPC traffic and stderr live in\n"
                    "the browser, call its tools by hand, and record the session.",
        epilog=COMMANDS_HELP + "\n\nExample: mcp-inspect python server.py --port 9\n"
                               "(--port 9 goes to the server: our options come first)")
    parser.add_argument("--version", action="version", version=f"mcp-inspect {__version__}")
    parser.add_argument("--demo", action="store_true", help="run the bundled demo server (a tour for new users)")
    _add_page_options(parser)
    parser.add_argument("--record", metavar="PATH", help="write the recording to PATH (default: recordings/...)")
    parser.add_argument("--no-record", action="store_true", help="do not keep a recording file")
    add_server_options(parser)
    add_protocol_options(parser, timeout_help="default request timeout")
    parser.add_argument("--max-timeout", type=seconds, default=None, metavar="SECONDS",
                        help="how far progress notifications may extend a request's timeout (default 10 x --timeout)")
    parser.add_argument("--root", action="append", default=[], metavar="URI",
                        help="a root reported to the server's roots/list (repeatable; default: the working "
                             "directory as a file: URI)")
    add_http_options(parser)
    add_config_options(parser)
    add_rules_option(parser)
    parser.add_argument("--watch", action="append", default=[], metavar="PATH",
                        help="restart the server when files under PATH change (repeatable; default: the folder of "
                             "the server's script, if the command names one)")
    parser.add_argument("--no-watch", action="store_true", help="do not watch files")
    parser.add_argument("--watch-glob", action="append", default=[], metavar="PATTERN",
                        help="file patterns that count as changes (repeatable; replaces the default "
                             "*.py *.js *.mjs *.cjs *.ts *.json *.toml *.yaml *.yml)")
    parser.add_argument("--restart-on-crash", action="store_true",
                        help="restart the server when it exits by itself (stops after 5 exits within 10 s)")
    return parser


def _add_page_options(parser: Parser) -> None:
    """--port, --host and --no-open: where the page listens (the run mode and `view`)."""
    parser.add_argument("--port", type=_port, default=None,
                        help="port for the page (default: the first free port from 6280; 0 = any free port)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="loopback address to listen on: 127.0.0.1 (default), localhost or ::1")
    parser.add_argument("--no-open", action="store_true", help="do not open a browser")


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range: {value}")
    return value


@cache
def _value_options() -> frozenset[str]:
    """Options that take a value (derived from the parser), so the splitter knows to skip it. Built when first
    needed: `call` and the other subcommands never build the run mode's parser."""
    return value_options(build_parser())


def __getattr__(name: str) -> object:  # VALUE_OPTIONS, as a module attribute, made on first use
    if name == "VALUE_OPTIONS":
        return _value_options()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """Split into (our options, the server's argv)."""
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            return argv[:i], argv[i + 1:]
        if not token.startswith("-") or token == "-":
            return argv[:i], argv[i:]
        if token in _value_options():  # its value is the next token, whatever it looks like (-eK=V and --env=K=V are one)
            i += 2
        else:
            i += 1
    return argv, []


def parse_config(argv: list[str]) -> Config:
    """Turn the run mode's argv into a Config, or raise UsageError."""
    from pathlib import Path

    from inspector.config import Config, server_name

    ours, command = split_argv(argv)
    args = build_parser().parse_args(ours)
    host = _check_host(args.host)
    env = env_pairs(args.env)
    if args.record and args.no_record:
        raise UsageError("--record and --no-record cannot be used together")
    if args.cwd and not Path(args.cwd).is_dir():
        raise UsageError(f"--cwd: not a directory: {args.cwd}")
    if args.no_watch and args.watch:
        raise UsageError("--watch and --no-watch cannot be used together")
    for path in args.watch:
        if not Path(args.cwd or ".", path).exists():
            raise UsageError(f"--watch: no such file or folder: {path}")
    disabled = disabled_rules(args.rules)
    headers = header_values(args.header)
    targets = [what for what, given in (("--demo", args.demo), ("--url", args.url), ("--config", args.config),
                                        ("a server command", command)) if given]
    if len(targets) > 1:
        raise UsageError(f"give one server: {' and '.join(targets)} cannot be used together")
    if args.server and not args.config:
        raise UsageError("--server NAME picks an entry of --config FILE")
    if headers and not (args.url or args.config):
        raise UsageError("--header is for servers reached over HTTP (--url)")
    if args.transport != "auto" and not (args.url or args.config):
        raise UsageError("--transport is for servers reached over HTTP (--url)")
    name = "mcp-inspect-demo"
    url, transport, entries, entry_name, cwd = None, args.transport, (), None, args.cwd
    if args.demo:
        command = [sys.executable, "-m", "inspector.demo.server"]
    elif args.url:
        from inspector.client.targets import url_name

        url = url_value(args.url)
        name = url_name(url)
    elif args.config:
        entries, entry = config_entries(args.config, args.server, dict(env), headers, need_one=False)
        name = Path(args.config).stem
        if entry is not None:
            entry_name, name = entry.name, entry.name
            if entry.transport == "stdio":
                command, cwd = list(entry.command), entry.cwd or cwd
                env = list(entry.env)  # with_env already put -e values over the file's
            else:
                url, transport = entry.url, entry.transport
                headers = tuple(entry.headers)  # with_headers put -H values over the file's
    elif not command:
        raise UsageError("no server command given (try: mcp-inspect python server.py, mcp-inspect --url "
                         "http://127.0.0.1:8000/mcp, or mcp-inspect --demo)")
    else:
        refuse_mistaken_command(command, args.cwd, dict(env).get("PATH", os.environ.get("PATH", os.defpath)))
        name = server_name(command, args.cwd)
    return Config(command=tuple(command), cwd=cwd, env=tuple(env), host=host, port=args.port,
                  open_browser=not args.no_open, record_path=args.record, no_record=args.no_record,
                  timeout=args.timeout, demo=args.demo, name=name,
                  watch=tuple(str(Path(args.cwd or ".", path).resolve()) for path in args.watch),
                  no_watch=args.no_watch, watch_globs=tuple(args.watch_glob),
                  restart_on_crash=args.restart_on_crash, max_timeout=args.max_timeout,
                  roots=tuple(args.root), disabled_rules=disabled, protocol=args.protocol,
                  probe_timeout=args.probe_timeout, url=url, transport=transport,
                  headers=headers, config_file=args.config, config_entries=tuple(entries), entry_name=entry_name)


def refuse_mistaken_command(command: list[str], cwd: str | None, path: str) -> None:
    """Raise UsageError saying what was meant when the server command is a recording, or is no program on PATH but
    looks like one of our subcommands (`mcp-inspect calls ...`), instead of the spawn's bare "command not found".
    A program of that name on PATH still runs: the command line is the server's."""
    import shutil
    from pathlib import Path

    program = command[0]
    if program.endswith(".jsonl") and Path(cwd or ".", program).is_file():
        raise UsageError(f"{program} is a recording, not a server command: open it with `mcp-inspect view "
                         f"{shlex.quote(program)}`, or replay it with `mcp-inspect replay {shlex.quote(program)} -- "
                         "COMMAND`")
    if os.sep in program or shutil.which(program, path=path):
        return
    import difflib  # only for a mistaken command: not on every start

    close = difflib.get_close_matches(program.lower(), [*SUBCOMMANDS, "help"], n=1, cutoff=0.75)
    if close:
        meant = "--help" if close[0] == "help" else close[0]
        raise UsageError(f"command not found: {program}; did you mean `mcp-inspect {meant}`? (subcommands: "
                         f"{', '.join(SUBCOMMANDS)}; see mcp-inspect --help)")


def show_help(topics: list[str]) -> int:
    """`mcp-inspect help [COMMAND]`: the main --help, or a subcommand's."""
    if not topics:
        build_parser().print_help()
        return 0
    if topics[0] not in SUBCOMMANDS or len(topics) > 1:
        print(f"mcp-inspect: help takes one of: {', '.join(SUBCOMMANDS)} (got {shlex.join(topics)})",
              file=sys.stderr)
        return 2
    return main([topics[0], "--help"])


def _check_host(host: str) -> str:
    import ipaddress  # the page's modes only: `call` and the other subcommands never parse a host

    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        raise UsageError(f"--host must be a loopback address (127.0.0.1, localhost or ::1), not {host!r}") from None
    if not address.is_loopback:
        raise UsageError(f"--host {host}: mcp-inspect only listens on loopback addresses; the page can start "
                         "processes, so it is never offered to the network")
    if str(address) not in ("127.0.0.1", "::1"):  # the Host check answers only to these names (web/security.py)
        raise UsageError(f"--host {host}: use 127.0.0.1, localhost or ::1; the page refuses every other Host name")
    return str(address)


def parse_view(argv: list[str]) -> Config:
    """`mcp-inspect view [--port N] [--host H] [--no-open] FILE`."""
    from pathlib import Path

    from inspector.config import Config

    parser = Parser(prog="mcp-inspect view", description="Open a recording in the browser, read-only: the same "
                    "timeline, filters and search; nothing is run or sent.")
    parser.add_argument("file", help="a recording (.jsonl)")
    _add_page_options(parser)
    args = parser.parse_args(argv)
    if Path(args.file).is_dir():
        raise UsageError(f"view: {args.file} is a folder; give a recording file in it (.jsonl)")
    if not Path(args.file).is_file():
        raise UsageError(f"view: no such file: {args.file}")
    return Config(command=(), host=_check_host(args.host), port=args.port, open_browser=not args.no_open,
                  no_record=True, view=args.file, name=Path(args.file).stem)


def _exit_now(code: int) -> None:
    """End the process without the interpreter's teardown (freeing every module and object: about a tenth of a
    `call`). Safe for `call` alone: by its return its recording is closed, its server stopped and its threads done,
    and it wrote stdout and stderr with flushes; only Python's own buffers are flushed here, once more."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):  # no stream, a closed pipe: nothing more can be said on it
            pass
    os._exit(code)


def _on_path(program: str) -> bool:
    import shutil

    return shutil.which(program) is not None


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `mcp-inspect` console script (and of `python -m inspector.cli`: both pass no argv)."""
    program = argv is None  # we are the process, not a caller's function
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["help"] and not _on_path("help"):  # a program named help on PATH would still run
        return show_help(argv[1:])
    subcommand = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    if subcommand in ("call", "replay", "export", "check"):
        from inspector.commands import run_subcommand  # headless: never imports Flask, so `call` starts fast

        code = run_subcommand(subcommand, argv[1:])
        if program and subcommand == "call":
            _exit_now(code)
        return code
    try:
        if subcommand == "view":
            config = parse_view(argv[1:])
        elif subcommand:
            raise UsageError(f"'{subcommand}' is not available in this version ({__version__})")
        else:
            config = parse_config(argv)
    except UsageError as exc:
        print(f"mcp-inspect: {exc}", file=sys.stderr)
        return 2
    from inspector import runner  # imported late: --help and usage errors stay fast

    return runner.run_view(config) if config.view else runner.run(config)


if __name__ == "__main__":
    sys.exit(main())
