"""Recordings as regression tests: the `[tool.mcp-inspect]` settings of a project, and one replay's verdict as text.

The pytest plugin (inspector/pytest_plugin.py) is a thin face over this module; nothing here imports pytest. The
replay itself is `mcp-inspect replay`'s: the same reader (`commands.replay.load`), the same engine (`Replayer`),
the same step lines and summary, and the same exit semantics (0 the same, 1 something differs, 2 could not run).
Only the standard library is imported at the top: the engine is imported when a replay runs, so a project that
merely has the plugin installed pays nothing for it.
"""

from __future__ import annotations

import os
import shlex
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

TABLE = "mcp-inspect"
"""The table's name under [tool] in pyproject.toml."""
KEYS = ("command", "recordings", "ignore", "timeout", "cwd", "env")
STDERR_LINES = 20  # of the server's stderr, shown when a replay could not run or an answer went missing


class SettingsError(ValueError):
    """The [tool.mcp-inspect] table is malformed: one line that names the key."""


@dataclass(frozen=True)
class Settings:
    """What [tool.mcp-inspect] says; relative paths are taken from `root` (the folder of pyproject.toml)."""

    root: Path
    command: tuple[str, ...] = ()
    recordings: Path | None = None
    """The folder whose .jsonl files are collected as tests (None: collect nothing)."""
    ignore: tuple[str, ...] = ()
    timeout: float | None = None
    """Seconds to wait for each answer (None: replay's default)."""
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)


def parse_settings(text: str, root: Path, where: str = "pyproject.toml") -> Settings | None:
    """The settings of a pyproject.toml's text, or None without a [tool.mcp-inspect] table. Raises SettingsError."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: pytest itself depends on tomli there
        import tomli as tomllib
    try:
        tool = tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{where}: not valid TOML ({exc})") from None
    table = tool.get(TABLE) if isinstance(tool, dict) else None
    if table is None:
        return None
    where = f"{where} [tool.{TABLE}]"
    if not isinstance(table, dict):
        raise SettingsError(f"{where} must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise SettingsError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    command = _command(table.get("command", []), where)
    recordings = _path(table.get("recordings"), root, f"{where} recordings")
    if recordings is not None and not command:
        raise SettingsError(f"{where}: recordings need the server command: command = [\"python\", \"server.py\"]")
    ignore = table.get("ignore", [])
    if not isinstance(ignore, list) or not all(isinstance(rule, str) for rule in ignore):
        raise SettingsError(f"{where}: ignore must be a list of JSONPath strings")
    timeout = table.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not 0 < timeout <= 86400):
        raise SettingsError(f"{where}: timeout must be a number of seconds greater than 0 and at most 86400")
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise SettingsError(f"{where}: env must be a table of strings, e.g. env = {{ API_KEY = \"test\" }}")
    return Settings(root=root, command=command, recordings=recordings, ignore=tuple(ignore),
                    timeout=None if timeout is None else float(timeout),
                    cwd=_path(table.get("cwd"), root, f"{where} cwd"), env=dict(env))


def _command(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = shlex.split(value)
    if not isinstance(value, list) or not all(isinstance(arg, str) for arg in value):
        raise SettingsError(f"{where}: command must be a list of strings, e.g. command = [\"python\", \"server.py\"]")
    return tuple(value)


def _path(value: Any, root: Path, where: str) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise SettingsError(f"{where} must be a path (a string)")
    return (root / value).resolve()


@dataclass
class Verdict:
    """One replay's outcome, with the text a test failure shows."""

    code: int
    """replay's exit status: 0 every step the same, 1 something differs, 2 the replay could not run."""
    text: str
    report: Any = None
    """The ReplayReport (None when the replay could not run)."""

    @property
    def ok(self) -> bool:
        return self.code == 0


def replay_verdict(path: str | os.PathLike, settings: Settings, *, command: Iterable[str] | None = None,
                   ignore: Iterable[str] | str = (), cwd: str | os.PathLike | None = None,
                   env: Mapping[str, str] | None = None, timeout: float | None = None) -> Verdict:
    """Replay one recording against the server; the arguments add to (ignore, env) or replace the settings'."""
    from inspector.client.rpc import DEFAULT_TIMEOUT
    from inspector.commands.common import UsageError, terminal_text
    from inspector.commands.replay import format_step, load, missing_env, summary_line
    from inspector.config import server_environment
    from inspector.recording.replay import DIFFERENT, SAME, Replayer, ReplayError

    path = settings.root / path  # an absolute path stays as it is
    argv = list(settings.command if command is None else command)
    rules = [*settings.ignore, *([ignore] if isinstance(ignore, str) else ignore)]
    folder = Path(cwd) if cwd is not None else settings.cwd or settings.root
    shown = path.relative_to(settings.root) if path.is_relative_to(settings.root) else path
    head = terminal_text(f"replay of {shown} against: {shlex.join(argv) or '(no command)'}")
    stderr: deque[str] = deque(maxlen=STDERR_LINES)
    try:
        if not argv:
            raise UsageError("no server command: pass command=[...] or set command in [tool.mcp-inspect]")
        loaded, warnings = load(str(path))
        environment = server_environment({**settings.env, **(env or {})}.items())
        replayer = Replayer(loaded, argv, cwd=str(settings.root / folder), env=environment, ignore=rules,
                            timeout=timeout or settings.timeout or DEFAULT_TIMEOUT, on_stderr=stderr.append)
        report = replayer.run()
    except (UsageError, ValueError, ReplayError) as exc:
        return Verdict(2, "\n".join([head, terminal_text(f"replay could not run: {exc}"), *_tail(stderr)]))
    missing = missing_env(loaded, environment)
    if missing:
        warnings.append(f"the recording was made with -e {', '.join(missing)}; not set here (env = {{...}})")
    lines = [head, *(terminal_text(f"warning: {w}") for w in warnings)]
    for step in report.steps:
        if step.status != SAME:
            lines += format_step(step)
    lines.append(summary_line(report))
    if report.error is not None:
        lines.append(terminal_text(f"replay could not run: {report.error}"))
    if any(step.status not in (SAME, DIFFERENT) for step in report.steps):
        lines += _tail(stderr)  # an answer went missing: the server's last words usually say why
    return Verdict(report.exit_code, "\n".join(lines), report)


def _tail(stderr: Iterable[str]) -> list[str]:
    from inspector.commands.common import terminal_text

    lines = [f"  {terminal_text(line)}" for line in stderr]
    return ["the server's stderr (last lines):", *lines] if lines else []
