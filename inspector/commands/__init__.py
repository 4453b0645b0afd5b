"""The headless subcommands: `call`, `replay`, `export` and `check` (no Flask, no web UI: they must start fast).

`cli.main` dispatches here on the first argument; each entry point takes the arguments after the subcommand's name
and returns the process exit code.
"""

from __future__ import annotations

ENTRY_POINTS = {
    "call": ("inspector.commands.call", "call_main"),
    "replay": ("inspector.commands.replay", "replay_main"),
    "export": ("inspector.commands.export", "export_main"),
    "check": ("inspector.commands.check", "check_main"),
}


def run_subcommand(name: str, argv: list[str]) -> int:
    """Run one headless subcommand; only its own module is imported."""
    import importlib

    module, function = ENTRY_POINTS[name]
    return getattr(importlib.import_module(module), function)(argv)
