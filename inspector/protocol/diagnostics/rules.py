"""Pure: the rule catalogue (id, kind, fix), the Warning and Advice types, and the `--rules FILE` parser.

Rule ids are a public contract: they appear in recordings (`warning {rule, seq, text}` events), in `--rules` files
and in docs/rules.md, one section per id. Add ids; never rename one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from inspector.protocol.json import loads

PROTOCOL = "protocol"
ADVICE = "advice"

# id -> (kind, the fix in one sentence)
RULES: dict[str, tuple[str, str]] = {
    # -- protocol warnings: the server broke the protocol (exit 1 in `check`) ---------------------------------
    "answered-notification": (PROTOCOL, "Never reply to a message without an id: notifications get no response."),
    "unmatched-response": (PROTOCOL, "Copy the request's id into its response unchanged (same value, same type)."),
    "duplicate-response": (PROTOCOL, "Send exactly one response per request."),
    "late-response": (PROTOCOL, "Answer within the client's timeout, or report progress while a long job runs."),
    "stdout-not-json": (PROTOCOL, "print() goes to stdout, which is the protocol channel: log to stderr instead."),
    "invalid-message": (PROTOCOL, "Write only JSON-RPC 2.0 objects (requests, notifications or responses) "
                                  "to stdout."),
    "batch": (PROTOCOL, "Send each message as its own line; JSON-RPC batches are not allowed in this revision."),
    "missing-jsonrpc": (PROTOCOL, 'Put "jsonrpc": "2.0" in every message.'),
    "result-and-error": (PROTOCOL, "A response carries exactly one of result and error."),
    "error-code-not-integer": (PROTOCOL, "An error is an object with an integer code and a string message."),
    "no-answer-silent": (PROTOCOL, "Flush stdout after every message (print(..., flush=True) or "
                                   "sys.stdout.flush()), and answer every request."),
    "result-schema": (PROTOCOL, "Return results in the shape the negotiated protocol revision defines for "
                                "the method."),
    "output-schema-unusable": (PROTOCOL, "Keep every $ref in a tool's outputSchema local (\"#/$defs/...\") and "
                                         "pointing at a definition that exists, so clients can check "
                                         "structuredContent."),
    "undeclared-capability": (PROTOCOL, "Declare the capability in the initialize result before using it, "
                                        "or stop using it."),
    "method-not-in-version": (PROTOCOL, "Use only methods of the negotiated protocol revision."),
    "success-for-unknown-method": (PROTOCOL, "Answer a method the server does not implement with the error "
                                             "-32601 (Method not found), never with a success such as {}."),
    "probe-hang": (PROTOCOL, "Answer a call with missing arguments with an isError result (or a JSON-RPC "
                             "error) instead of never answering."),
    "probe-crash": (PROTOCOL, "Catch argument errors in tool handlers and return an isError result instead of "
                              "exiting."),
    # -- advice: the tool descriptions a model reads (never changes the exit code) ---------------------------
    "duplicate-name": (ADVICE, "Merge the two tools, or rename one so the names say how they differ."),
    "duplicate-description": (ADVICE, "Say in each description what sets the tool apart from the other one, or "
                                      "merge the two tools."),
    "name-format": (ADVICE, "Use 1 to 128 characters from A-Z a-z 0-9 _ . - in tool names."),
    "short-description": (ADVICE, "Write at least a sentence: what the tool does, what it returns, and when "
                                  "to use it."),
    "vague-description": (ADVICE, 'Say what the tool returns ("Returns ...") or when to use it '
                                  '("Use when ...").'),
    "param-no-description": (ADVICE, "Give every parameter a description."),
    "param-no-example": (ADVICE, 'Add an example value to each parameter ("examples": [...], a "default", or '
                                 '"e.g. ..." in its description).'),
    "no-required": (ADVICE, 'List the required parameters in "required" (use "required": [] when all are '
                            'optional).'),
    "required-not-property": (ADVICE, 'Every name in "required" must be one of "properties": fix the typo or '
                                      'add the property.'),
    "too-many-tools": (ADVICE, "Split the server, or merge related tools: models choose worse among many tools."),
    "schema-invalid": (ADVICE, "Fix the inputSchema so it is valid JSON Schema (the error names the place)."),
    "probe-accepted-missing-args": (ADVICE, "Validate arguments and return an isError result when a required "
                                            "one is missing."),
}

PROTOCOL_RULES = frozenset(k for k, (kind, _) in RULES.items() if kind == PROTOCOL)
ADVICE_RULES = frozenset(k for k, (kind, _) in RULES.items() if kind == ADVICE)


def fix_for(rule: str) -> str:
    """The one-sentence fix of a rule."""
    return RULES[rule][1]


@dataclass(frozen=True)
class Warning:  # noqa: A001 - the name the issue and the recording event use
    """A protocol mistake, attached to the timeline row that shows it."""

    rule: str
    """A stable rule id (a key of RULES)."""
    seq: int
    """The seq of the record (timeline row) where the mistake happens."""
    text: str
    """What happened, in one or two sentences."""
    fix: str
    """The fix, in one sentence."""

    def to_dict(self) -> dict:
        """JSON form (for `check --json`)."""
        return asdict(self)

    def event_detail(self) -> dict:
        """The detail of the recording's `warning {rule, seq, text}` event."""
        return {"rule": self.rule, "seq": self.seq, "text": self.text}


@dataclass(frozen=True)
class Advice:
    """Advice about a tool description (or the server's tool list when tool is None)."""

    rule: str
    tool: str | None
    """The tool's name, or None for advice about the whole server."""
    text: str
    fix: str

    def to_dict(self) -> dict:
        """JSON form."""
        return asdict(self)


def warning(rule: str, seq: int, text: str) -> Warning:
    """A Warning with the rule's fix filled in."""
    return Warning(rule, seq, text, fix_for(rule))


def advice(rule: str, tool: str | None, text: str) -> Advice:
    """An Advice with the rule's fix filled in."""
    return Advice(rule, tool, text, fix_for(rule))


class RulesError(ValueError):
    """A --rules file that cannot be used: one line for the user."""


def parse_rules(text: str, path: str | Path) -> set[str]:
    """The rule ids the text of a `--rules FILE` (JSON `{"disable": [ids]}`) switches off; raises RulesError.

    `path` only names the file in messages: the caller reads it (commands/common.read_rules_file), so this
    package stays free of I/O."""
    try:
        data = loads(text)
    except ValueError as exc:
        raise RulesError(f"--rules: {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RulesError(f'--rules: {path} must hold a JSON object like {{"disable": ["param-no-example"]}}')
    unknown_keys = sorted(set(data) - {"disable"})
    if unknown_keys:
        raise RulesError(f"--rules: {path}: unknown key(s) {', '.join(map(repr, unknown_keys))}; "
                         'only "disable" is understood')
    disable = data.get("disable", [])
    if not isinstance(disable, list) or not all(isinstance(item, str) for item in disable):
        raise RulesError(f'--rules: {path}: "disable" must be a list of rule ids (strings)')
    unknown = sorted(set(disable) - set(RULES))
    if unknown:
        raise RulesError(f"--rules: {path}: unknown rule id(s) {', '.join(unknown)} "
                         f"(see docs/rules.md for the list)")
    return set(disable)
