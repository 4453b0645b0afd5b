"""Diagnostics: name a server's protocol mistakes on the row where they happen, and review its tool descriptions.

Pure code only (no I/O): `ProtocolChecker` takes Records, `review_tools` takes tool definitions.
"""

from inspector.protocol.diagnostics.protocol import ProtocolChecker
from inspector.protocol.diagnostics.review import review_tools, summarize
from inspector.protocol.diagnostics.rules import (
    ADVICE_RULES, PROTOCOL_RULES, RULES, Advice, RulesError, Warning, parse_rules,
)

__all__ = ["ADVICE_RULES", "PROTOCOL_RULES", "RULES", "Advice", "ProtocolChecker", "RulesError", "Warning",
           "parse_rules", "review_tools", "summarize"]
