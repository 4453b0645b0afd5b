"""The bundled demo MCP server: a guided tour for ``mcp-inspect --demo`` and a model to copy.

Standard library only, so it runs right after ``pip install``.  It speaks MCP over stdio: one
JSON-RPC 2.0 object per line on stdout (flushed after every line), human-readable logs on stderr.
It uses the ``initialize`` handshake (revisions 2024-11-05 to 2025-11-25).

Run it with ``python -m inspector.demo.server`` or ``python path/to/server.py``.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-11-25"
SERVER_INFO = {"name": "mcp-inspect-demo", "version": "0.1.0", "title": "mcp-inspect demo server"}
INSTRUCTIONS = (
    "A demo server for trying mcp-inspect. Every tool is safe, local and quick: count words, convert "
    "temperatures, roll dice, format an address, sort a list, divide numbers (divide by zero to see a "
    "tool error) and run a slow task that reports progress. Read demo://readme for a short tour."
)
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
README = """mcp-inspect demo server

Things to try in the inspector:
  1. Call word_count: its result has structuredContent that matches its outputSchema.
  2. Call divide with b = 0: the tool answers with isError true (a tool error, not a protocol error).
  3. Call roll_dice with count = 99: the arguments fail validation, also reported as isError.
  4. Call slow_task with a progress token: notifications/progress arrive while it runs; cancel it.
  5. Set the log level (logging/setLevel), call a tool and watch notifications/message.
  6. Read demo://greeting/{name} through the resource template, and get the explain_tool prompt.
"""


class ToolError(Exception):
    """Raised by a tool handler: reported to the client as a result with ``isError: true``."""


@dataclass
class Call:
    """What a running tool call may use: progress reporting, logging and a cancellation flag."""

    server: DemoServer
    progress_token: str | int | None
    cancelled: threading.Event = field(default_factory=threading.Event)

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send notifications/progress, but only if the client asked for it with a progressToken."""
        if self.progress_token is not None:
            params = {"progressToken": self.progress_token, "progress": progress, "total": total, "message": message}
            self.server.notify("notifications/progress", {k: v for k, v in params.items() if v is not None})


@dataclass
class Tool:
    """One row of the tool table: the advertised definition plus the function that runs it."""

    name: str
    title: str
    description: str
    input_schema: dict
    handler: Callable[[dict, Call], Any]
    annotations: dict
    output_schema: dict | None = None

    def definition(self) -> dict:
        """The Tool object as it appears in a tools/list result."""
        out = {"name": self.name, "title": self.title, "description": self.description,
               "inputSchema": self.input_schema, "outputSchema": self.output_schema, "annotations": self.annotations}
        return {k: v for k, v in out.items() if v is not None}


TOOLS: dict[str, Tool] = {}
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def tool(title: str, description: str, properties: dict, required: list[str],
         annotations: dict = READ_ONLY, output: dict | None = None) -> Callable:
    """Register the decorated function in TOOLS, with its input schema next to its code."""
    schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}

    def register(fn: Callable[[dict, Call], Any]) -> Callable[[dict, Call], Any]:
        TOOLS[fn.__name__] = Tool(fn.__name__, title, description, schema, fn, dict(annotations), output)
        return fn
    return register


# ---------------------------------------------------------------------------------------------- tools

@tool("Word count",
      "Count the words, characters and lines in a text. Returns a JSON object {words, characters, lines, "
      "unique_words}. Use it to measure a text before you summarise or truncate it.",
      {"text": {"type": "string", "description": "The text to count, e.g. \"the cat sat on the mat\""}},
      ["text"],
      output={"type": "object", "required": ["words", "characters", "lines", "unique_words"], "properties": {
          "words": {"type": "integer"}, "characters": {"type": "integer"},
          "lines": {"type": "integer"}, "unique_words": {"type": "integer"}}})
def word_count(args: dict, call: Call) -> dict:
    """Counts for a text; returned as structuredContent (and as JSON text for older clients)."""
    text = args["text"]
    words = text.split()
    return {"words": len(words), "characters": len(text), "lines": len(text.splitlines()),
            "unique_words": len({w.lower() for w in words})}


UNITS = {"C": "Celsius", "F": "Fahrenheit", "K": "Kelvin"}


@tool("Convert temperature",
      "Convert a temperature between Celsius (C), Fahrenheit (F) and Kelvin (K). Returns {value, unit}, "
      "the value rounded to 2 decimals. Fails below absolute zero.",
      {"value": {"type": "number", "description": "The temperature to convert, e.g. 21.5"},
       "from_unit": {"type": "string", "enum": list(UNITS), "description": "Unit of value, e.g. \"C\""},
       "to_unit": {"type": "string", "enum": list(UNITS), "description": "Unit wanted, e.g. \"F\""}},
      ["value", "from_unit", "to_unit"],
      output={"type": "object", "required": ["value", "unit"],
              "properties": {"value": {"type": "number"}, "unit": {"type": "string", "enum": list(UNITS)}}})
def convert_temperature(args: dict, call: Call) -> dict:
    """Go through Kelvin so each unit needs one formula each way."""
    to_kelvin = {"C": lambda v: v + 273.15, "F": lambda v: (v - 32) * 5 / 9 + 273.15, "K": lambda v: v}
    from_kelvin = {"C": lambda k: k - 273.15, "F": lambda k: (k - 273.15) * 9 / 5 + 32, "K": lambda k: k}
    kelvin = to_kelvin[args["from_unit"]](args["value"])
    if kelvin < 0:
        raise ToolError(f"{args['value']} {args['from_unit']} is below absolute zero")
    return {"value": round(from_kelvin[args["to_unit"]](kelvin), 2), "unit": args["to_unit"]}


@tool("Roll dice",
      "Roll some dice and return each roll and the total as text. Give a seed to get the same rolls again.",
      {"count": {"type": "integer", "minimum": 1, "maximum": 20, "description": "How many dice, 1 to 20, e.g. 3"},
       "sides": {"type": "integer", "enum": [4, 6, 8, 10, 12, 20], "default": 6,
                 "description": "Sides per die (default 6), e.g. 20"},
       "seed": {"type": "integer", "description": "Optional seed for repeatable rolls, e.g. 42"}},
      ["count"],
      annotations={**READ_ONLY, "idempotentHint": False})
def roll_dice(args: dict, call: Call) -> str:
    """A private Random instance, so a seed never affects other calls."""
    rng = random.Random(args.get("seed"))
    rolls = [rng.randint(1, args.get("sides", 6)) for _ in range(args["count"])]
    return f"rolls: {rolls}, total: {sum(rolls)}"


@tool("Format address",
      "Format a postal address for an envelope label (several lines) or a single line. Returns the text.",
      {"address": {"type": "object", "description": "The address, e.g. {\"street\": \"1 Main St\", "
                   "\"city\": \"Springfield\", \"postcode\": \"12345\"}",
                   "required": ["street", "city", "postcode"], "additionalProperties": False,
                   "properties": {
                       "street": {"type": "string", "description": "Street and number, e.g. \"1 Main St\""},
                       "city": {"type": "string", "description": "City, e.g. \"Springfield\""},
                       "postcode": {"type": "string", "description": "Postal code, e.g. \"12345\""},
                       "country": {"type": "string", "description": "Optional country, e.g. \"France\""}}},
       "one_line": {"type": "boolean", "default": False,
                    "description": "Join everything on one line with commas, e.g. true"}},
      ["address"])
def format_address(args: dict, call: Call) -> str:
    """Label layout by default: street / postcode city / COUNTRY."""
    a = args["address"]
    parts = [a["street"], f"{a['postcode']} {a['city']}"] + ([a["country"].upper()] if a.get("country") else [])
    return (", " if args.get("one_line") else "\n").join(parts)


@tool("Sort items",
      "Sort a list of strings alphabetically, ignoring case. Returns one item per line.",
      {"items": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                 "description": "The strings to sort, e.g. [\"pear\", \"Apple\", \"fig\"]"},
       "descending": {"type": "boolean", "default": False, "description": "Z to A instead of A to Z, e.g. true"}},
      ["items"])
def sort_items(args: dict, call: Call) -> str:
    """casefold() so that 'apple' and 'Apple' sort together."""
    return "\n".join(sorted(args["items"], key=str.casefold, reverse=args.get("descending", False)))


@tool("Divide",
      "Divide a by b and return the quotient as text. Dividing by zero returns a tool error (isError).",
      {"a": {"type": "number", "description": "The dividend, e.g. 10"},
       "b": {"type": "number", "description": "The divisor, e.g. 4 (try 0 to see a tool error)"}},
      ["a", "b"])
def divide(args: dict, call: Call) -> str:
    """Shows the tool-error path: a failed call is a result with isError, not a JSON-RPC error."""
    if args["b"] == 0:
        call.server.log("warning", "divide: division by zero refused")
        raise ToolError("cannot divide by zero")
    return str(args["a"] / args["b"])


@tool("Slow task",
      "Wait for some seconds, reporting progress every half second when the request carries "
      "_meta.progressToken. Can be cancelled with notifications/cancelled. Returns how long it ran.",
      {"seconds": {"type": "integer", "minimum": 1, "maximum": 30, "description": "How long to run, e.g. 5"}},
      ["seconds"],
      annotations={**READ_ONLY, "idempotentHint": False})
def slow_task(args: dict, call: Call) -> str:
    """Waits on the cancel flag rather than sleeping, so a cancellation stops it at once."""
    steps = args["seconds"] * 2
    for step in range(1, steps + 1):
        if call.cancelled.wait(0.5):
            return "cancelled"  # the server drops the answer of a cancelled request anyway
        call.progress(step, steps, f"step {step} of {steps}")
    return f"done after {args['seconds']} s"


# ----------------------------------------------------------------------------- argument validation

JSON_TYPES = {"string": (str,), "boolean": (bool,), "object": (dict,), "array": (list,),
              "integer": (int,), "number": (int, float)}


def validate(schema: dict, value: Any, path: str = "arguments") -> list[str]:
    """Check value against the small JSON Schema subset used above; return readable errors."""
    kind = schema.get("type")
    # bool is a subclass of int in Python, but true is not a number in JSON
    if kind in JSON_TYPES and (not isinstance(value, JSON_TYPES[kind]) or
                               (isinstance(value, bool) and kind in ("integer", "number"))):
        return [f"{path}: expected {kind}, got {json.dumps(value)[:40]}"]
    errors = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: must be one of {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: must be at least {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path}: must be at most {schema['maximum']}")
    if kind == "array":
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path}: needs at least {schema['minItems']} item(s)")
        errors += [e for i, item in enumerate(value) for e in validate(schema.get("items", {}), item, f"{path}[{i}]")]
    if kind == "object":
        props = schema.get("properties", {})
        errors += [f"{path}.{name}: required" for name in schema.get("required", []) if name not in value]
        if schema.get("additionalProperties") is False:
            errors += [f"{path}.{name}: unknown field" for name in value if name not in props]
        for name in (n for n in props if n in value):
            errors += validate(props[name], value[name], f"{path}.{name}")
    return errors


# ------------------------------------------------------------------------------ resources, prompts

RESOURCES = [{"uri": "demo://readme", "name": "readme", "title": "Demo tour",
              "description": "What to try first in this demo server.", "mimeType": "text/plain"}]
TEMPLATES = [{"uriTemplate": "demo://greeting/{name}", "name": "greeting", "title": "Greeting",
              "description": "A greeting for the given name, e.g. demo://greeting/Ada", "mimeType": "text/plain"}]
PROMPTS = [{"name": "explain_tool", "title": "Explain a tool",
            "description": "Ask the model to explain one of this server's tools to a given audience.",
            "arguments": [{"name": "tool", "description": "Tool name, e.g. divide", "required": True},
                          {"name": "audience", "description": "Who reads it, e.g. beginners", "required": False}]}]


def error(msg_id: Any, code: int, message: str, data: Any = None) -> dict:
    """A JSON-RPC error response."""
    err = {"code": code, "message": message} if data is None else {"code": code, "message": message, "data": data}
    return {"jsonrpc": "2.0", "id": msg_id, "error": err}


class RpcError(Exception):
    """A JSON-RPC error answer (code, message, optional data)."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


# ---------------------------------------------------------------------------------------- server

class DemoServer:
    """The stdio loop: reads requests, dispatches them through self.methods, writes one line per message."""

    def __init__(self) -> None:
        self.write_lock = threading.Lock()  # tool calls run on threads; lines must never interleave
        self.log_level: str | None = None   # no notifications/message until the client sets a level
        self.running: dict[Any, Call] = {}  # request id -> running tools/call, for cancellation
        self.methods: dict[str, Callable[[dict], dict]] = {
            "initialize": self.initialize, "ping": lambda p: {},
            "tools/list": lambda p: {"tools": [t.definition() for t in TOOLS.values()]},
            "resources/list": lambda p: {"resources": RESOURCES},
            "resources/templates/list": lambda p: {"resourceTemplates": TEMPLATES},
            "resources/read": self.read_resource, "prompts/list": lambda p: {"prompts": PROMPTS},
            "prompts/get": self.get_prompt, "logging/setLevel": self.set_level}

    def send(self, msg: dict) -> None:
        """Write one message as one line; ensure_ascii=False keeps text readable, \\n is still escaped."""
        line = json.dumps(msg, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self.write_lock:
            try:
                sys.stdout.buffer.write(line.encode("utf-8"))
                sys.stdout.buffer.flush()
            except BrokenPipeError:  # the client is gone: nobody is left to serve
                os._exit(0)

    def notify(self, method: str, params: dict) -> None:
        """Send a notification to the client."""
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def log(self, level: str, text: str) -> None:
        """Log to stderr always, and to the client as notifications/message when its level allows."""
        print(f"[{level}] {text}", file=sys.stderr, flush=True)
        if self.log_level and LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level):
            self.notify("notifications/message", {"level": level, "logger": "demo", "data": text})

    def initialize(self, params: dict) -> dict:
        """Echo the client's revision when we speak it, else offer our latest."""
        asked = params.get("protocolVersion")
        version = asked if asked in SUPPORTED_VERSIONS else LATEST_VERSION
        client = params.get("clientInfo") or {}
        self.log("info", f"initialize from {client.get('name', '?')}, protocol {version}")
        return {"protocolVersion": version, "serverInfo": SERVER_INFO, "instructions": INSTRUCTIONS,
                "capabilities": {"tools": {"listChanged": False}, "prompts": {"listChanged": False},
                                 "resources": {"subscribe": False, "listChanged": False}, "logging": {}}}

    def set_level(self, params: dict) -> dict:
        """logging/setLevel: remember the threshold for notifications/message."""
        if params.get("level") not in LOG_LEVELS:
            raise RpcError(-32602, f"level must be one of {list(LOG_LEVELS)}")
        self.log_level = params["level"]
        return {}

    def read_resource(self, params: dict) -> dict:
        """The readme, or a greeting from the template; -32002 for anything else."""
        uri = str(params.get("uri", ""))
        if uri == "demo://readme":
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": README}]}
        if uri.startswith("demo://greeting/") and len(uri) > len("demo://greeting/"):
            return {"contents": [{"uri": uri, "mimeType": "text/plain",
                                  "text": f"Hello, {uri[len('demo://greeting/'):]}!"}]}
        raise RpcError(-32002, "Resource not found", {"uri": uri})

    def get_prompt(self, params: dict) -> dict:
        """Build the explain_tool prompt; bad names and missing arguments are -32602."""
        if params.get("name") != "explain_tool":
            raise RpcError(-32602, f"Unknown prompt: {params.get('name')}")
        args = params.get("arguments") or {}
        if args.get("tool") not in TOOLS:
            raise RpcError(-32602, f"argument 'tool' must be one of {list(TOOLS)}")
        tool_def = TOOLS[args["tool"]]
        text = (f"Explain the tool '{tool_def.name}' to {args.get('audience') or 'a developer'}. "
                f"Its description: {tool_def.description} Its input schema: {json.dumps(tool_def.input_schema)}")
        return {"description": f"Explain {tool_def.name}",
                "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}

    def call_tool(self, msg_id: Any, params: dict, call: Call) -> None:
        """Run one tools/call (on its own thread, so ping and cancellation still work meanwhile)."""
        name, args = params.get("name"), params.get("arguments") or {}
        tool_def = TOOLS.get(name) if isinstance(name, str) else None
        if tool_def is None:  # the spec makes an unknown tool a protocol error
            self.running.pop(msg_id, None)
            return self.send(error(msg_id, -32602, f"Unknown tool: {name}"))
        self.log("info", f"tools/call {name} {json.dumps(args, ensure_ascii=False)[:200]}")
        try:
            errors = validate(tool_def.input_schema, args)
            if errors:  # since 2025-11-25, bad arguments are a tool error the model can read and fix
                raise ToolError("invalid arguments: " + "; ".join(errors))
            value = tool_def.handler(args, call)
            if isinstance(value, dict):  # structured output, with the same JSON as text for older clients
                result = {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value}
            else:
                result = {"content": [{"type": "text", "text": str(value)}]}
        except ToolError as exc:
            result = {"content": [{"type": "text", "text": str(exc)}], "isError": True}
        except Exception as exc:  # a bug in a handler must not kill the server
            self.log("error", f"tools/call {name} crashed: {exc!r}")
            result = {"content": [{"type": "text", "text": f"internal error: {exc}"}], "isError": True}
        finally:
            self.running.pop(msg_id, None)
        if not call.cancelled.is_set():  # the spec says a cancelled request gets no answer
            self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def handle_line(self, raw: bytes) -> None:
        """Parse one line from stdin and answer it (or not, for notifications and responses)."""
        try:
            msg = json.loads(raw)
        except ValueError:  # UnicodeDecodeError is a ValueError too
            return self.send(error(None, -32700, "Parse error"))
        # a batch (removed in 2025-06-18) is not an object either; type() rules out bool and null ids
        if not isinstance(msg, dict) or not isinstance(msg.get("method", ""), str) \
                or type(msg.get("id", 0)) not in (str, int):
            return self.send(error(None, -32600, "Invalid Request"))
        method, msg_id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method is None:
            return  # a response from the client: we never send requests, so nothing to match
        if "id" not in msg:  # a notification: never answered
            request_id = params.get("requestId") if isinstance(params, dict) else None
            if method == "notifications/cancelled" and type(request_id) in (str, int) and request_id in self.running:
                self.running[request_id].cancelled.set()
                self.log("info", f"request {request_id} cancelled: {params.get('reason', '')}")
            return
        try:
            if not isinstance(params, dict):
                raise RpcError(-32602, "params must be an object")
            if method == "tools/call":
                # registered before the thread starts, so an early notifications/cancelled finds it
                call = self.running[msg_id] = Call(self, (params.get("_meta") or {}).get("progressToken"))
                threading.Thread(target=self.call_tool, args=(msg_id, params, call), daemon=True).start()
                return
            if method not in self.methods:
                raise RpcError(-32601, f"Method not found: {method}")
            self.send({"jsonrpc": "2.0", "id": msg_id, "result": self.methods[method](params)})
        except RpcError as exc:
            self.send(error(msg_id, exc.code, exc.message, exc.data))
        except Exception as exc:  # a bug here must cost one request, not the whole server
            self.log("error", f"{method} crashed: {exc!r}")
            self.send(error(msg_id, -32603, "Internal error"))

    def serve(self) -> None:
        """Serve until stdin closes (the client's signal to stop)."""
        print(f"demo server (pid {os.getpid()}) speaks MCP {', '.join(SUPPORTED_VERSIONS)}", file=sys.stderr)
        print(f"demo server ready, {len(TOOLS)} tools", file=sys.stderr, flush=True)
        for raw in sys.stdin.buffer:
            if raw.strip():
                self.handle_line(raw)
        print("demo server: stdin closed, exiting", file=sys.stderr, flush=True)


def main() -> None:
    """Entry point for ``python -m inspector.demo.server``."""
    try:
        DemoServer().serve()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
