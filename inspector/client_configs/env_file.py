"""VS Code's ``envFile``: a dotenv file whose values go under the entry's own env. Read with python-dotenv.

dotenv syntax as python-dotenv reads it: blank lines and ``#`` comments, ``export KEY=...``, spaces around ``=``,
'single-quoted' values literally, "double-quoted" values with backslash escapes and over several lines, and an
unquoted value ending at `` #``. Values are taken literally: ``${VAR}`` is not expanded (VS Code does not either).
"""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

# The parser `dotenv_values` is built on: it also says which statements it skipped, and where, without logging
# a warning of its own on our stderr.
from dotenv.parser import parse_stream

if TYPE_CHECKING:
    from inspector.client_configs.read import ServerEntry


def parse_env_file(text: str) -> tuple[dict[str, str], list[str]]:
    """(KEY -> VALUE, a note for each statement that gives no value) of a dotenv file's text."""
    values: dict[str, str] = {}
    notes: list[str] = []
    for binding in parse_stream(io.StringIO(text.lstrip("\ufeff"))):
        line = binding.original.line
        if binding.error:
            notes.append(f"line {line} is not KEY=VALUE and was skipped")
        elif binding.key is not None and binding.value is None:  # a bare `KEY`: dotenv's "no value"
            notes.append(f"line {line} gives {binding.key} no value, so it was left out")
        elif binding.key is not None:
            values[binding.key] = binding.value
    return values, notes


def merge_env_file(entry: ServerEntry) -> ServerEntry:
    """The entry with its envFile's values under its own env (the entry's env wins, as in VS Code)."""
    if entry.env_file is None:
        return entry
    try:
        text = Path(entry.env_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return replace(entry, problems=entry.problems + (f"envFile {entry.env_file} cannot be read: {why}",))
    values, notes = parse_env_file(text)
    merged = {**values, **dict(entry.env)}
    return replace(entry, env=tuple(merged.items()),
                   notes=entry.notes + tuple(f"envFile {entry.env_file} {note}" for note in notes))
