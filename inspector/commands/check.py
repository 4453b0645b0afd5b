"""`mcp-inspect check -- COMMAND...`: connect, list everything, review the tools, probe, and name every mistake.

Every record of the run goes through the pure ProtocolChecker as it is stored; the tool review and the probe add
to that. Exit codes: 0 no protocol warning (advice never changes it), 1 at least one protocol warning, 2 could not
run (usage, spawn, or a connection failure that no warning explains). Made for a server's CI.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from inspector.protocol import jsonrpc
from inspector.protocol.diagnostics import ProtocolChecker, review_tools, summarize
from inspector.protocol.diagnostics.rules import Advice, Warning
from inspector.protocol.tool_probes import plan_probes, unknown_names
from inspector.commands.check_probe import ToolProber, error_text, probe_summary
from inspector.client.connect import Connection
from inspector.client.targets import StdioTarget
from inspector.client.handshake import ConnectFailed, connect_headless
from inspector.client.rpc import Client, Pending, RequestFailed
from inspector.protocol.eras import PROBE_SECONDS
from inspector.recording.files import RecordingError, Sink, close_sink, open_sink
from inspector.transport.stdio import SpawnError
from inspector.protocol.records import EVENT, MESSAGE, TO_SERVER, Record
from inspector.commands.common import add_config_options, use_config_entry
from inspector.commands.common import (
    Parser, UsageError, add_http_options, add_protocol_options, add_rules_option, add_server_options,
    disabled_rules, dumps, http_target, env_keys, fail, masker_for, server_env, split_command, terminal_text,
    write_stdout,
)

DEFAULT_CHECK_TIMEOUT = 10.0
MAX_PAGES = 50
LISTS = (("tools", "tools/list", "tools"), ("resources", "resources/list", "resources"),
         ("resources", "resources/templates/list", "resourceTemplates"), ("prompts", "prompts/list", "prompts"))

EPILOG = """\
what check sends: the handshake (server/discover, then initialize if the server is of the handshake era), ping
(handshake era only), tools/list, resources/list, resources/templates/list and prompts/list (each when the server
offers it, all pages), then the probe: tools/call without arguments, once per tool that has required arguments
and is annotated readOnlyHint: true (a good server refuses the call). A tool annotated destructiveHint: true, or
not annotated read-only, is never called unless you name it with --probe-tool NAME or pass --probe-all; the
report lists every tool, called or not, and why. Besides these it sends only notifications/initialized,
notifications/cancelled for a request that timed out, and answers to the server's own requests.

examples:
  mcp-inspect check -- python server.py
  mcp-inspect check --json --rules rules.json -- npx -y my-server
  mcp-inspect check --probe-tool lookup_order -- python server.py

exit status: 0 no protocol warning (description advice never changes it), 1 protocol warning(s), 2 could not run.
--rules FILE is JSON {"disable": ["param-no-example", ...]}; every rule id is explained in docs/rules.md."""


@dataclass(frozen=True)
class CheckArgs:
    """A parsed `check` invocation."""

    command: list[str]
    json: bool = False
    disabled: frozenset = frozenset()
    timeout: float = DEFAULT_CHECK_TIMEOUT
    record: str | None = None
    env: tuple[str, ...] = ()
    cwd: str | None = None
    protocol: str = "auto"
    probe_timeout: float | None = None
    """--probe-timeout; None: the request timeout."""
    http: Any = None
    """connect.HttpTarget for --url, else None (the command after --)."""
    probe_timeout: float = PROBE_SECONDS
    probe_tools: tuple[str, ...] = ()
    """--probe-tool NAME values: probe exactly these tools."""
    probe_all: bool = False
    """--probe-all: probe every tool with required arguments, destructive ones included."""


@dataclass
class Report:
    """What one check run found."""

    warnings: list[Warning] = field(default_factory=list)
    advice: list[Advice] = field(default_factory=list)
    server: dict = field(default_factory=dict)
    version: str | None = None
    era: str | None = None
    tools: list[dict] = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    probe: str = "not run"
    probes: list[dict] = field(default_factory=list)
    """One entry per tool: called (with its outcome) or not (with the reason)."""
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    """Why the check could not finish, or None."""

    @property
    def exit_code(self) -> int:
        """1 protocol warnings, else 2 when it could not run, else 0."""
        return 1 if self.warnings else (2 if self.error else 0)

    def to_json(self) -> dict:
        """The `--json` document."""
        summary = {"server": self.server, "protocolVersion": self.version, "era": self.era, **self.counts, "probe": self.probe,
                   "probes": self.probes,
                   "warnings": len(self.warnings), "review": summarize(self.tools, self.advice),
                   "notes": self.notes, "error": self.error, "exit": self.exit_code}
        return {"warnings": [w.to_dict() for w in self.warnings], "advice": [a.to_dict() for a in self.advice],
                "summary": summary}


class CheckingSink(Sink):
    """A Sink that passes every record through a ProtocolChecker and records each warning as an event."""

    def __init__(self, writer: Any, checker: ProtocolChecker, masker: Any = None) -> None:
        super().__init__(writer, masker)
        self.checker = checker
        self.found: list[Warning] = []
        self.request_seq: dict[str, int] = {}
        self._check_lock = threading.RLock()  # the checker sees records in seq order, one at a time

    def add(self, record: Record) -> Record:
        """Store the record, then check it."""
        with self._check_lock:
            super().add(record)
            if record.kind == MESSAGE and record.dir == TO_SERVER and isinstance(record.msg, dict) \
                    and "method" in record.msg:
                key = jsonrpc.id_key(record.msg.get("id"))
                if key is not None:
                    self.request_seq[key] = record.seq
            if not (record.kind == EVENT and record.event == "warning"):
                self.report(self.checker.observe(record))
        return record

    def add_batch(self, records: list[Record]) -> list[Record]:
        """Store and check each record in turn (Sink's one write per batch would skip the checker)."""
        for record in records:
            self.add(record)
        return records

    def report(self, warnings: list[Warning]) -> None:
        """Keep warnings found outside observe (tick, the probe) and write them to the recording."""
        with self._check_lock:
            for item in warnings:
                self.found.append(item)
                super().add(Record(EVENT, event="warning", detail=item.event_detail()))


def build_parser() -> Parser:
    """The parser for `check`'s own options (the server command follows `--`)."""
    parser = Parser(prog="mcp-inspect check", epilog=EPILOG, usage="mcp-inspect check [OPTIONS] -- COMMAND [ARGS...]",
                    description="Connect to an MCP server over stdio, list everything, review its tool "
                                "descriptions and probe it; print the protocol mistakes and advice found.")
    parser.add_argument("--json", action="store_true", help='print {"warnings", "advice", "summary"} as JSON')
    add_rules_option(parser)
    parser.add_argument("--record", metavar="PATH", help="also write a recording to PATH (must not exist yet)")
    add_server_options(parser)
    add_protocol_options(parser, timeout_help="seconds to wait for each answer", timeout_default=DEFAULT_CHECK_TIMEOUT)
    add_http_options(parser)
    probing = parser.add_mutually_exclusive_group()
    probing.add_argument("--probe-tool", action="append", default=[], metavar="NAME",
                         help="probe exactly this tool (repeatable), whatever its annotations, instead of the "
                              "tools annotated readOnlyHint: true")
    probing.add_argument("--probe-all", action="store_true",
                         help="probe every tool with required arguments, destructive ones included")
    add_config_options(parser)
    return parser


def parse_check(argv: list[str]) -> CheckArgs:
    """Parse `check`'s arguments; raises UsageError."""
    ours, command = split_command(argv)
    args = build_parser().parse_args(ours)
    command = use_config_entry(args, command)
    http = http_target(args, command)
    if not command and http is None:
        raise UsageError("give the server command after -- (e.g. mcp-inspect check -- python server.py) "
                         "or --url or --config FILE")
    return CheckArgs(command=command, json=args.json, disabled=disabled_rules(args.rules), timeout=args.timeout,
                     record=args.record, env=tuple(args.env), cwd=args.cwd, protocol=args.protocol,
                     probe_timeout=args.probe_timeout, http=http, probe_tools=tuple(args.probe_tool),
                     probe_all=args.probe_all)


class Checker:
    """One check run against one server process."""

    def __init__(self, args: CheckArgs, sink: CheckingSink, connection: Connection) -> None:
        self.args, self.sink, self.connection = args, sink, connection
        self.client = connection.client
        self.client.who = "mcp-inspect check"
        self.client.on_timeout = self._on_timeout
        self.report = Report()

    def _on_timeout(self, pending: Pending) -> None:
        """A timeout is recorded: the silence rule may have something to say before the cancel goes out."""
        self.sink.report(self.sink.checker.tick(time.time(), not self.connection.exited))

    def request(self, method: str, params: Any = None) -> dict:
        """Send a request and wait for its response message; raises RequestFailed when none came."""
        return self.client.request(method, params).answer()

    def run(self) -> None:
        """Handshake, ping, lists, review, probe; findings go to self.report."""
        try:
            self.connection.start()
        except SpawnError as exc:
            self.report.error = str(exc)
            return
        try:
            self._session()
        except RequestFailed as exc:
            self.report.error = str(exc)

    def _session(self) -> None:
        report = self.report
        try:
            connected = connect_headless(self.connection, self.args.protocol, probe_timeout=self.args.probe_timeout)
        except RequestFailed as exc:
            raise RequestFailed(f"could not connect: {exc}", reason=exc.reason) from None
        except ConnectFailed as exc:
            report.error = str(exc)
            return
        report.version, report.server, report.era = connected.version, connected.server_info, connected.era
        capabilities = connected.capabilities
        if connected.era == "legacy":  # 2026-07-28 removed ping
            self._ping()
        lists: dict[str, list] = {}
        for capability, method, key in LISTS:
            if capability in capabilities:
                lists[key] = self._list_all(method, key)
        report.tools = [t for t in lists.get("tools", []) if isinstance(t, dict)]
        report.counts = {k: len(v) for k, v in lists.items()}
        report.advice = review_tools(report.tools, self.args.disabled)
        self._probe()

    def _ping(self) -> None:
        """Ping; a server that ignores it is a finding (the silence rule says so), not the end of the review."""
        try:
            ping = self.request("ping")
        except RequestFailed as exc:
            if exc.reason != "timeout":
                raise
            self.report.notes.append(f"ping got no answer within {self.args.timeout:g} s; the check went on")
            return
        if "error" in ping:
            self.report.notes.append(f"ping answered with an error: {error_text(ping['error'])}")

    def _list_all(self, method: str, key: str) -> list:
        items: list = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            response = self.request(method, {"cursor": cursor} if cursor else None)
            result = response.get("result")
            if "error" in response or not isinstance(result, dict):
                self.report.notes.append(f"{method} failed: {error_text(response.get('error'))}")
                return items
            if isinstance(result.get(key), list):
                items.extend(result[key])
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return items
            if cursor in seen:
                self.report.notes.append(f"{method} sent the same nextCursor twice; stopped paging")
                return items
            seen.add(cursor)
        self.report.notes.append(f"{method}: stopped after {MAX_PAGES} pages")
        return items

    def _probe(self) -> None:
        report, args = self.report, self.args
        missing = unknown_names(report.tools, args.probe_tools)
        if missing:
            report.error = "--probe-tool: the server has no tool named " + ", ".join(map(repr, missing))
            return
        prober = ToolProber(self.client, self.sink.request_seq, lambda: self.sink.found, self.sink.report,
                            args.timeout, args.disabled)
        report.probes = prober.run(plan_probes(report.tools, args.probe_tools, args.probe_all))
        report.probe = probe_summary(report.probes)
        report.advice.extend(prober.advice)


def render(report: Report, recorded: bool = False) -> str:
    """The human-readable report; `recorded`: --record was given, so its row numbers can be looked up."""
    t = terminal_text
    lines = []
    server = report.server
    who = t(f"{server.get('name', '?')} {server.get('version', '')}".strip()) if server else "the server"
    counts = ", ".join(f"{n} {k}" for k, n in report.counts.items())
    lines.append(f"mcp-inspect check: {who}" + (f" (protocol {t(report.version)})" if report.version else "")
                 + (f": {counts}" if counts else ""))
    if report.warnings:
        lines.append(f"\nProtocol warnings ({len(report.warnings)}):")
        for w in report.warnings:
            lines.append(f"  row {w.seq}  [{w.rule}] {t(w.text)}")
            lines.append(f"           fix: {w.fix}")
        if not recorded:
            lines.append("  (rows are numbered as in the recording --record PATH would write)")
    elif not report.error:  # "no warnings" before "could not finish" would claim a review that did not happen
        lines.append("\nNo protocol warnings.")
    if report.advice:
        lines.append(f"\nAdvice on tool descriptions ({len(report.advice)}; does not change the exit code):")
        groups: dict[str | None, list[Advice]] = {}
        for item in report.advice:
            groups.setdefault(item.tool, []).append(item)
        for tool, items in groups.items():
            lines.append(f"  {t(tool) if tool is not None else '(server)'}:")
            for item in items:
                lines.append(f"    [{item.rule}] {t(item.text)}")
                lines.append(f"        fix: {item.fix}")
    elif report.tools:
        lines.append("\nNo advice on tool descriptions.")
    lines.extend(_probe_lines(report))
    for note in report.notes:
        lines.append(f"Note: {t(note)}")
    if report.error:
        lines.append(f"Could not finish: {t(report.error)}")
    return "\n".join(lines) + "\n"


def _probe_lines(report: Report) -> list[str]:
    t = terminal_text
    if not report.probes:
        return [] if report.probe == "not run" else [f"\nProbe: {t(report.probe)}"]
    lines = ["\nProbe (tools/call without its required arguments; a good server refuses it):"]
    lines += [f"  {t(e['outcome'])}" for e in report.probes if e["called"]]
    lines += [f"  {t(e['tool'])}: not called: {t(e['reason'])}" for e in report.probes if not e["called"]]
    return lines


def check_main(argv: list[str]) -> int:
    """Entry point of `mcp-inspect check`."""
    try:
        args = parse_check(argv)
        env = server_env(list(args.env), args.cwd)
        store = open_sink(args.record, args.command, args.cwd, protocol=args.protocol,
                           env_keys=env_keys(list(args.env)), http=args.http,
                           masker=masker_for(args.command, list(args.env), args.http))
    except (UsageError, RecordingError) as exc:
        return fail(str(exc))
    checker = ProtocolChecker(timeout=args.timeout, disabled=args.disabled)
    sink = CheckingSink(store.writer, checker, store.masker)
    client = Client(sink, timeout=args.timeout)
    connection = Connection(client, args.http or StdioTarget(tuple(args.command), args.cwd, env),
                            note=lambda text: print(f"mcp-inspect check: {text}", file=sys.stderr, flush=True))
    run = Checker(args, sink, connection)
    try:
        run.run()
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    finally:
        connection.close(stdin_grace=1.0)
        client.close()
        close_sink(sink)
    report = run.report
    report.warnings = sorted(sink.found, key=lambda w: w.seq)
    if report.error and connection.exit_info is not None and connection.exit_info.stderr_tail:
        tail = [line for line in connection.exit_info.stderr_tail if line.strip()][-5:]
        report.notes.append("the server's last stderr lines: " + " | ".join(tail))
    write_stdout(dumps(report.to_json()) + "\n" if args.json else render(report, args.record is not None))
    if report.error and not report.warnings:
        fail(report.error)
    return report.exit_code


if __name__ == "__main__":  # python -m inspector.commands.check
    sys.exit(check_main(sys.argv[1:]))
