"""`mcp-inspect call`: connect, handshake, send one request, print its result (the page's "copy as command" line,
which runs this, is built by inspector.command_line).

Exit codes (design.md, Headless output): 0 a result, 1 a JSON-RPC error or an isError result, 2 a usage, spawn,
connection, timeout or crash failure (one line on stderr, never a traceback).
"""

from __future__ import annotations

import sys

# What reading the arguments needs, and no more: the server is started as soon as they are read, and the client,
# the recording and the handshake are imported while it starts (call_main).
from inspector.client.deadlines import DEFAULT_TIMEOUT
from inspector.protocol.eras import PROBE_SECONDS
from inspector.commands.common import add_config_options, use_config_entry
from inspector.commands.common import (
    Parser, UsageError, add_http_options, add_protocol_options, add_server_options, http_target, dumps,
    echo_stderr, env_keys, fail, masker_for, server_env, split_command, write_stdout,
)

TYPE_CHECKING = False  # as typing's, without importing typing at run time: it costs every start (architecture.md)
if TYPE_CHECKING:
    from typing import Any
    from inspector.client.connect import Connection

# Shorthand option → the method it implies.
SHORTHANDS = {"tool": "tools/call", "uri": "resources/read", "prompt": "prompts/get"}

EPILOG = """\
examples:
  mcp-inspect call tools/list -- python server.py
  mcp-inspect call --tool word_count --args '{"text": "a b"}' -- python server.py
  mcp-inspect call --uri file:///notes.txt -- python server.py
  mcp-inspect call --prompt review --prompt-args '{"code": "x = 1"}' -- python server.py
  mcp-inspect call logging/setLevel --params '{"level": "debug"}' -- python server.py
  mcp-inspect call notifications/roots/list_changed -- python server.py   (no id, no answer awaited)

stdout gets only the JSON-RPC result (or {"error": {...}}) as indented JSON (nothing for a notifications/...
method); the server's stderr goes to stderr.
exit status: 0 result, 1 JSON-RPC error or isError result, 2 usage, spawn, connection, timeout or crash."""


class CallArgs:
    """A parsed `call` invocation."""

    __slots__ = ("method", "params", "command", "timeout", "record", "env", "cwd", "protocol", "probe_timeout",
                 "http")

    def __init__(self, method: str, params: Any, command: list[str], timeout: float = DEFAULT_TIMEOUT,
                 record: str | None = None, env: tuple[str, ...] = (), cwd: str | None = None,
                 protocol: str = "auto", probe_timeout: float = PROBE_SECONDS, http: Any = None) -> None:
        self.method = method
        self.params = params
        """The params value to send, or None to send none."""
        self.command, self.timeout, self.record, self.env, self.cwd = command, timeout, record, env, cwd
        self.protocol = protocol
        self.probe_timeout = probe_timeout
        """--probe-timeout: how long server/discover may go unanswered after the server's first output."""
        self.http = http
        """connect.HttpTarget for --url, else None (the command after --)."""


def build_parser() -> Parser:
    """The parser for `call`'s own options (the server command follows `--`)."""
    parser = Parser(prog="mcp-inspect call", epilog=EPILOG,
                    usage="mcp-inspect call [METHOD] [OPTIONS] -- COMMAND [ARGS...]",
                    description="Send one request to an MCP server over stdio and print the result.")
    parser.add_argument("method", nargs="?", metavar="METHOD", help="JSON-RPC method, e.g. tools/list")
    parser.add_argument("--params", metavar="JSON", help="the params object (or array) to send")
    parser.add_argument("--tool", metavar="NAME", help="shorthand for tools/call with this tool name")
    parser.add_argument("--args", metavar="JSON", help="the tool's arguments object (with --tool; default {})")
    parser.add_argument("--uri", metavar="URI", help="shorthand for resources/read of this URI")
    parser.add_argument("--prompt", metavar="NAME", help="shorthand for prompts/get of this prompt")
    parser.add_argument("--prompt-args", metavar="JSON", help="the prompt's arguments object (with --prompt)")
    parser.add_argument("--record", metavar="PATH", help="also write a recording to PATH (must not exist yet)")
    add_server_options(parser)
    add_protocol_options(parser, timeout_help="seconds to wait for the handshake, and for the answer")
    add_http_options(parser)
    add_config_options(parser)
    return parser


def _json_option(name: str, text: str | None, *, array_ok: bool = False) -> Any:
    if text is None:
        return None
    from inspector.protocol.json import loads

    try:
        value = loads(text)
    except ValueError as exc:
        raise UsageError(f"{name} is not valid JSON: {exc}") from None
    if not isinstance(value, dict) and not (array_ok and isinstance(value, list)):
        raise UsageError(f"{name} must be a JSON object" + (" or array" if array_ok else "") + f", got {text!r}")
    return value


def parse_call(argv: list[str]) -> CallArgs:
    """Parse `call`'s arguments; raises UsageError."""
    ours, command = split_command(argv)
    args = build_parser().parse_args(ours)
    used = [name for name in SHORTHANDS if getattr(args, name) is not None]
    if len(used) > 1:
        raise UsageError(f"give only one of --tool, --uri and --prompt (got {', '.join('--' + u for u in used)})")
    if args.args is not None and args.tool is None:
        raise UsageError("--args goes with --tool (for other methods use --params)")
    if args.prompt_args is not None and args.prompt is None:
        raise UsageError("--prompt-args goes with --prompt")
    if used:
        implied = SHORTHANDS[used[0]]
        if args.method not in (None, implied):
            raise UsageError(f"--{used[0]} means {implied}, but METHOD is {args.method}")
        if args.params is not None:
            raise UsageError(f"--params cannot be combined with --{used[0]}")
        method = implied
        if args.tool is not None:
            params: Any = {"name": args.tool, "arguments": _json_option("--args", args.args) or {}}
        elif args.uri is not None:
            params = {"uri": args.uri}
        else:
            params = {"name": args.prompt}
            prompt_args = _json_option("--prompt-args", args.prompt_args)
            if prompt_args is not None:
                params["arguments"] = prompt_args
    elif args.method:
        method, params = args.method, _json_option("--params", args.params, array_ok=True)
    else:
        raise UsageError("give a METHOD (e.g. tools/list) or one of --tool, --uri, --prompt")
    command = use_config_entry(args, command)
    http = http_target(args, command)
    if not command and http is None:
        raise UsageError("give the server command after -- (e.g. mcp-inspect call tools/list -- python server.py) "
                         "or --url or --config FILE")
    return CallArgs(method=method, params=params, command=command, timeout=args.timeout, record=args.record,
                    env=tuple(args.env), cwd=args.cwd, protocol=args.protocol, probe_timeout=args.probe_timeout,
                    http=http)


def call_main(argv: list[str]) -> int:
    """Entry point of `mcp-inspect call`."""
    try:
        args = parse_call(argv)
        env = server_env(list(args.env), args.cwd)
    except UsageError as exc:
        return fail(str(exc))
    from inspector.transport.stdio import discard, spawn_early

    # The server first: a Python server takes longer to start than what is imported below, and on a second core
    # the two happen at once. Its spawn is recorded when the connection takes it, after the recording's header.
    spawned = spawn_early(list(args.command), args.cwd, env) if args.http is None else None
    from inspector.client.connect import Connection
    from inspector.client.rpc import Client
    from inspector.client.targets import StdioTarget
    from inspector.recording.files import RecordingError, close_sink, open_sink

    try:
        store = open_sink(args.record, args.command, args.cwd, protocol=args.protocol,
                          env_keys=env_keys(list(args.env)), http=args.http,
                          masker=masker_for(args.command, list(args.env), args.http))
    except RecordingError as exc:
        discard(spawned)
        return fail(str(exc))
    except BaseException:  # Ctrl-C meanwhile, say: no lifeline watches the server before the connection takes it
        discard(spawned)
        raise
    client = Client(store, timeout=args.timeout)
    client.on_stderr.append(echo_stderr)
    connection = Connection(client, args.http or StdioTarget(tuple(args.command), args.cwd, env), note=_note,
                            spawned=spawned)
    try:
        return _call(connection, args)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    finally:
        connection.close()
        client.close()
        close_sink(store)


def _note(text: str) -> None:
    """Why the era was chosen (or why the probe fell back): one line on stderr, apart from the result."""
    print(f"mcp-inspect call: {text}", file=sys.stderr, flush=True)


def _call(connection: Connection, args: CallArgs) -> int:
    from inspector.client.handshake import ConnectFailed, connect_headless
    from inspector.client.rpc import RequestFailed
    from inspector.protocol.eras import explain_error
    from inspector.transport.stdio import SpawnError

    try:
        connection.start()
    except SpawnError as exc:
        return fail(str(exc))
    try:
        connected = connect_headless(connection, args.protocol, probe_timeout=args.probe_timeout)
    except RequestFailed as exc:
        return fail(f"could not connect: {exc}")
    except ConnectFailed as exc:
        return fail(str(exc))
    _note(f"{connected.era} era: {connected.why}")
    if args.method.startswith("notifications/"):
        return _notify(connection, args)
    try:
        response = connection.client.request(args.method, args.params, timeout=args.timeout).answer()
    except RequestFailed as exc:
        return fail(str(exc))
    if "error" in response:
        write_stdout(dumps({"error": response["error"]}) + "\n")
        explained = explain_error(response["error"])
        if explained:
            fail(explained)  # words on stderr; stdout keeps only the JSON
        return 1
    result = response.get("result")
    write_stdout(dumps(result) + "\n")
    return 1 if isinstance(result, dict) and result.get("isError") is True else 0


def _notify(connection: Connection, args: CallArgs) -> int:
    """A notifications/... method is sent as one: no id, no answer to wait for, nothing on stdout."""
    from inspector.client.rpc import RequestFailed
    from inspector.protocol import jsonrpc

    client = connection.client
    if client.send(jsonrpc.notification(args.method, args.params)) is None:
        return fail(f"{args.method}: could not write to the server")
    if args.http is not None:
        # A POST goes on its own thread: a ping's answer shows the notification's POST went before we close.
        try:
            client.request("ping", timeout=args.timeout).answer()
        except RequestFailed as exc:
            _note(f"sent the notification; the ping after it got no answer ({exc})")
    _note(f"sent the notification {args.method} (a notification has no id and gets no answer)")
    return 0


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return f"{error.get('message', 'error')} (code {error.get('code')})"
    return str(error)


if __name__ == "__main__":  # python -m inspector.commands.call, for when cli is not at hand
    sys.exit(call_main(sys.argv[1:]))
