"""`mcp-inspect replay FILE -- COMMAND...`: re-send a recording's client traffic, diff the answers, exit 0/1/2.

Running a command is never implied by a file: without `-- COMMAND` nothing runs unless --run-recorded-command is
given, and then the exact argv is printed first (security.md row 9).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
from typing import Any

from inspector.protocol.eras import parse_protocol
from inspector.recording.files import Loaded, RecordingError, close_sink, open_sink, read_recording
from inspector.protocol.records import FROM_SERVER
from inspector.recording.replay import (
    ABSENT, DEFAULT_IGNORES, SAME, Replayer, ReplayError, ReplayReport, Step, parse_path, plan,
)
from inspector.commands.common import add_config_options, use_config_entry
from inspector.commands.common import (
    Parser, UsageError, add_http_options, add_protocol_options, add_server_options, http_target, dumps,
    echo_stderr, env_keys, fail, masker_for, server_env, shown_command, split_command, terminal_text, write_stdout,
)

VALUE_CHARS = 300  # a diff line shows this much of each value; --json has them whole


def _epilog() -> str:
    rules = "\n".join(f"  {path:<22} {why}" for path, why in DEFAULT_IGNORES)
    return f"""\
ignored by default (--no-default-ignores to compare them too):
{rules}

--ignore takes a JSONPath (jsonpath-ng syntax) on each JSON-RPC message, e.g. $..timestamp or
$.result.content[*].text; the paths in a report can be pasted as they are.

exit status: 0 every step the same, 1 something differs, 2 the replay could not run (a bad file or option, or
the server did not start or never answered its first request, e.g. a 401 for a missing -H header)."""


def build_parser() -> Parser:
    """The parser for `replay`'s own options (the server command follows `--`)."""
    parser = Parser(prog="mcp-inspect replay", epilog=_epilog(),
                    usage="mcp-inspect replay FILE.jsonl [OPTIONS] [-- COMMAND [ARGS...]]",
                    description="Replay a recording's client traffic against a server and compare each answer "
                                "with the recorded one.")
    parser.add_argument("file", metavar="FILE.jsonl", help="the recording to replay")
    parser.add_argument("--ignore", action="append", default=[], metavar="JSONPATH",
                        help="leave out what this JSONPath matches when comparing (repeatable)")
    parser.add_argument("--no-default-ignores", action="store_true", help="compare ids and timestamps too")
    parser.add_argument("--json", action="store_true", help="print the report as JSON (for CI)")
    parser.add_argument("--record", metavar="PATH", help="also write a recording of this run to PATH")
    parser.add_argument("--run-recorded-command", action="store_true",
                        help="without -- COMMAND: run the command named in the recording (printed first)")
    add_server_options(parser)
    add_protocol_options(parser, timeout_help="seconds to wait for each answer",
                         protocol_help="auto (default: the recording's own messages), or legacy, modern or a revision "
                                       "date to send instead of the recorded version")
    add_http_options(parser)
    add_config_options(parser)
    return parser


def load(path: str) -> tuple[Loaded, list[str]]:
    """The recording and warnings; raises UsageError when it cannot be replayed faithfully."""
    try:
        loaded = read_recording(path)
    except RecordingError as exc:
        raise UsageError(str(exc)) from None
    if loaded.header is None:
        raise UsageError(f"{path}: not an mcp-inspect recording (no header line)")
    # A cut-off last line is what a crash leaves; anything else skipped means the file was damaged.
    damaged = [p for p in loaded.problems if "cut off" not in p]
    if damaged:
        more = f" (and {len(damaged) - 1} more)" if len(damaged) > 1 else ""
        raise UsageError(f"{path} is damaged, so it cannot be replayed faithfully: {damaged[0]}{more}")
    return loaded, list(loaded.problems)


def missing_env(loaded: Loaded, env: dict[str, str]) -> list[str]:
    """The -e keys the recording was made with that the server's environment lacks now (answers may differ)."""
    return [k for k in (loaded.header.get("env") or {}) if isinstance(k, str) and k not in env]


def missing_headers(loaded: Loaded, http) -> list[str]:
    """The -H names the recording was made with that this run does not send (a server may refuse us: 401)."""
    target = loaded.header.get("target") if isinstance(loaded.header.get("target"), dict) else {}
    recorded = target.get("headers") if isinstance(target.get("headers"), dict) else {}
    given = {name.lower() for name, _ in http.headers} if http is not None else set()
    return [name for name in recorded if isinstance(name, str) and name.lower() not in given]


def could_not_run(message: str, as_json: bool, report: ReplayReport | None = None) -> int:
    """Exit 2 with one line on stderr; with --json also a report on stdout, its summary's "error" saying why (as
    `check --json` does), so a CI parser reads the same document whatever happened."""
    if as_json:
        document = report.to_dict() if report is not None else {
            "steps": [], "summary": {"steps": 0, "ok": False, "error": message, "exit": 2}}
        write_stdout(dumps(document) + "\n")
    return fail(message)


def choose_command(loaded: Loaded, command: list[str], run_recorded: bool) -> tuple[list[str], str | None]:
    """The server command and the cwd; raises UsageError. Never runs anything."""
    target = loaded.header.get("target") if isinstance(loaded.header.get("target"), dict) else {}
    recorded = target.get("command")
    valid = isinstance(recorded, list) and recorded and all(isinstance(a, str) for a in recorded)
    shown = shown_command(recorded) if valid else "(none)"
    if command and run_recorded:
        raise UsageError("give either -- COMMAND or --run-recorded-command, not both")
    if command:
        return command, None
    if not run_recorded:
        raise UsageError("give the server command after -- (e.g. mcp-inspect replay FILE -- python server.py); "
                         + _recorded_hint(target, shown))
    if not valid:
        raise UsageError("the recording names no server command to run")
    cwd = target.get("cwd") if isinstance(target.get("cwd"), str) and os.path.isdir(target["cwd"]) else None
    return list(recorded), cwd


def _recorded_hint(target: dict, shown: str) -> str:
    """How to reach the server the recording was made with: its config entry, its URL, or its command."""
    config = target.get("config") if isinstance(target.get("config"), dict) else {}
    if isinstance(config.get("file"), str):
        server = f" --server {shlex.quote(config['server'])}" if isinstance(config.get("server"), str) else ""
        return f"the recording was made with --config {shlex.quote(config['file'])}{server}: give those"
    if isinstance(target.get("url"), str):
        return f"the recording was made with --url {terminal_text(target['url'])}: give that (and its -H headers)"
    return f"the recording names {shown}, run only with --run-recorded-command"


def replay_main(argv: list[str]) -> int:
    """Entry point of `mcp-inspect replay`."""
    ours, command = split_command(argv)
    as_json = "--json" in ours  # known before parsing, so even a usage error gets its JSON report
    try:
        args = build_parser().parse_args(ours)
        for rule in args.ignore:
            parse_path(rule)
        loaded, warnings = load(args.file)
        if not plan(loaded.records):
            raise UsageError(f"{args.file}: the recording has no client→server traffic to replay")
        if args.config and args.run_recorded_command:
            raise UsageError("give either --config or --run-recorded-command, not both")
        command = use_config_entry(args, command)
        http = http_target(args, command)
        if http is not None:
            if args.run_recorded_command:
                raise UsageError("give either --url or --run-recorded-command, not both")
            recorded_cwd = None
        else:
            command, recorded_cwd = choose_command(loaded, command, args.run_recorded_command)
        cwd = args.cwd or recorded_cwd
        env = server_env(args.env, args.cwd)
    except (UsageError, ValueError) as exc:
        return could_not_run(str(exc), as_json)
    for warning in warnings:
        fail(f"warning: {warning}")
    if args.run_recorded_command:
        where = f" (in {cwd})" if cwd else ""
        fail(f"running the recorded command: {shown_command(command)}{where}")
    missing = missing_env(loaded, env)
    if missing:
        fail(f"warning: the recording was made with -e {', '.join(missing)}; not set here (use -e KEY=VALUE)")
    if http is not None and (headers := missing_headers(loaded, http)):
        fail(f"warning: the recording was made with -H {', '.join(headers)}; not given here "
             f"(use -H 'Name: value')")
    try:
        store = open_sink(args.record, command, cwd, protocol=args.protocol, env_keys=env_keys(args.env), http=http,
                          masker=masker_for(command, args.env, http))
    except RecordingError as exc:
        return could_not_run(str(exc), as_json)
    printer = StepPrinter(enabled=not args.json)
    if not args.json:
        printer.line(terminal_text(f"replaying {args.file} ({len(loaded.records)} records) against: "
                                   f"{store.masker.text(http.url) if http else shown_command(command)}"))
    replayer = Replayer(loaded, command, cwd=cwd, env=env, store=store, timeout=args.timeout, ignore=args.ignore,
                        default_ignores=not args.no_default_ignores,
                        protocol=None if args.protocol == "auto" else parse_protocol(args.protocol).version,
                        on_step=printer.step, on_stderr=echo_stderr, http=http)
    try:
        report = replayer.run()
    except ReplayError as exc:
        return could_not_run(f"replay could not run: {exc}", as_json)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    finally:
        close_sink(store)
    report.warnings = warnings
    if report.error is not None:
        if not args.json:
            printer.line(summary_line(report))
        return could_not_run(f"replay could not run: {report.error}", args.json, report)
    if args.json:
        write_stdout(dumps(report.to_dict()) + "\n")
    else:
        printer.line(summary_line(report))
    return report.exit_code


def summary_line(report: ReplayReport) -> str:
    """'replay: 5 steps: 4 same, 1 different, 0 missing, 0 extra'."""
    s = report.summary()
    return f"replay: {s['steps']} steps: {s['same']} same, {s['different']} different, {s['missing']} missing, " \
           f"{s['extra']} extra"


class StepPrinter:
    """Prints each step as it is decided (server requests are decided on reader threads: one lock)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        """One line of the report."""
        with self._lock:
            write_stdout(text + "\n")

    def step(self, step: Step) -> None:
        """A decided step and, unless it is the same, why."""
        if self.enabled:
            self.line("\n".join(format_step(step)))


def format_step(step: Step) -> list[str]:
    """The report lines of one step: index, method, status, then the diff (path: recorded → actual)."""
    name = step.method + (f" {step.label}" if step.label else "")
    if step.direction == FROM_SERVER:
        name += " (asked by the server)"
    lines = [f"{step.index:>4}  {terminal_text(name):<44} {step.status}"]
    if step.note and step.status != SAME:
        lines.append(f"        {terminal_text(step.note)}")
    for difference in step.diff:
        lines.append(f"        {terminal_text(difference.path)}: {_show(difference.recorded)} → "
                     f"{_show(difference.actual)}")
    return lines


def _show(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if len(text) > VALUE_CHARS:
        text = text[:VALUE_CHARS] + f"… ({len(text)} chars)"
    return terminal_text(text)


if __name__ == "__main__":  # python -m inspector.commands.replay
    sys.exit(replay_main(sys.argv[1:]))
