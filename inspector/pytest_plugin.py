"""mcp-inspect's pytest plugin: recordings as regression tests (the `pytest11` entry point named `mcp-inspect`).

Installed with the package, so pytest loads it in every project of that environment; `-p no:mcp-inspect` turns it
off. It gives:

- the fixture `mcp_replay(path, command=[...], ignore=[...])`, which replays a recording against the server and
  fails the test with the step diff of `mcp-inspect replay` when an answer differs or the replay cannot run;
- one test item per `.jsonl` file in the folder that pyproject.toml's `[tool.mcp-inspect]` table names
  (`recordings`), replayed against its `command`, with its `ignore` rules.

A project without that table gets the fixture and nothing else: this module imports only pytest and the standard
library, reads pyproject.toml once, and imports the replay engine only when a replay runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

SETTINGS = pytest.StashKey[Any]()
"""The project's commands.regression.Settings, or None without a [tool.mcp-inspect] table."""


def pytest_configure(config: pytest.Config) -> None:
    settings = config.stash[SETTINGS] = _read_settings(config)
    folder = settings.recordings if settings is not None else None
    # A bare `pytest` collects only the testpaths; the folder the table names is part of the suite all the same.
    # Paths named on the command line are left alone: `pytest tests/test_x.py` runs just that.
    if folder is not None and folder.is_dir() and config.args_source == pytest.Config.ArgsSource.TESTPATHS and \
            not any(folder.is_relative_to(Path(config.rootpath, arg).resolve()) for arg in config.args):
        config.args.append(str(folder))


def _read_settings(config: pytest.Config):
    path = config.inipath if config.inipath is not None and config.inipath.name == "pyproject.toml" \
        else config.rootpath / "pyproject.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if "mcp-inspect" not in text:
        return None  # the common case, decided without parsing or importing anything
    from inspector.commands.regression import SettingsError, parse_settings

    try:
        return parse_settings(text, path.parent, where=str(path))
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    settings = parent.config.stash.get(SETTINGS, None)
    if settings is None or settings.recordings is None or file_path.suffix != ".jsonl":
        return None
    if not file_path.resolve().is_relative_to(settings.recordings):
        return None
    return RecordingFile.from_parent(parent, path=file_path)


class RecordingFile(pytest.File):
    """A recording in the recordings folder: one test, named after the file (so `-k` selects it)."""

    def collect(self):
        yield RecordingItem.from_parent(self, name=self.path.stem)


class ReplayDiffers(Exception):
    """A collected recording replayed differently, or could not be replayed: the text is the whole story."""


class RecordingItem(pytest.Item):
    """Replays its recording against the project's server command; fails with replay's step diff."""

    def runtest(self) -> None:
        from inspector.commands.regression import replay_verdict

        verdict = replay_verdict(self.path, self.config.stash[SETTINGS])
        if not verdict.ok:
            raise ReplayDiffers(verdict.text)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ReplayDiffers):
            return str(excinfo.value)  # a traceback into the plugin would only hide the diff
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, f"replay {self.path.name}"


@pytest.fixture
def mcp_replay(request: pytest.FixtureRequest):
    """`mcp_replay(path, command=None, ignore=(), *, cwd=None, env=None, timeout=None)` → the replay's report.

    Replays the recording at `path` (relative paths from the project root) against `command` (default: the
    `[tool.mcp-inspect]` command) and fails the test with the step diff unless every step is the same. `ignore`
    adds JSONPath rules to the table's and the default ones; `env` adds to the table's.
    """
    from inspector.commands.regression import Settings

    settings = request.config.stash.get(SETTINGS, None) or Settings(root=request.config.rootpath)

    def replay(path, command=None, ignore=(), *, cwd=None, env=None, timeout=None):
        from inspector.commands.regression import replay_verdict

        verdict = replay_verdict(path, settings, command=command, ignore=ignore, cwd=cwd, env=env, timeout=timeout)
        if not verdict.ok:
            pytest.fail(verdict.text, pytrace=False)
        return verdict.report

    return replay
