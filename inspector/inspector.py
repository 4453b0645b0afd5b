"""Inspector: the typed services of one run, built in one place (runner.py, or a test) and read by the page.

The page reaches every service through `web.app.get_inspector()`; nothing else creates or registers services.
Optional fields are None where a run has no such service (a viewed recording runs nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inspector.session.asks import Asks
from inspector.config import Config
from inspector.session.panels import PanelState
from inspector.session.problems import Problems
from inspector.recording.store import Store
from inspector.session.watch import Watcher
from inspector.session.restarts import Restarter
from inspector.session import Session
from inspector.session.view import CallsView, SessionView
from inspector.session.sharing import Sharing
from inspector.session.targeting import Targeting
from inspector.session.tasks import TaskTracker


@dataclass
class Inspector:
    """Everything one `mcp-inspect` run (or `view`) serves."""

    config: Config
    token: str
    """The launch token: every route needs it (cookie or ?token=)."""
    store: Store
    session: SessionView
    """The live Session, or a RecordedSession when viewing."""
    tasks: TaskTracker
    panels: PanelState = field(default_factory=PanelState)
    restarter: Restarter | None = None
    watcher: Watcher | None = None
    problems: Problems | None = None
    asks: Asks | None = None
    sharing: Sharing | None = None
    targeting: Targeting | None = None
    calls: CallsView | None = None
    """The page's tool calls and drafts; when viewing, the RecordedSession stands in (its calls are read-only)."""
    recording_problems: list[str] = field(default_factory=list)
    """What a viewed recording's reader skipped (shown above its timeline)."""
    port: int | None = None
    """The page's port, known once the listener is bound (the Host check and the cookie name use it)."""

    @property
    def readonly(self) -> bool:
        """A viewed recording: nothing can be run or sent."""
        return not isinstance(self.session, Session)

    @property
    def current_entry(self) -> str | None:
        """The --config entry being served (the one named on the command line until the page picks another)."""
        return self.targeting.current_entry if self.targeting else self.config.entry_name

    @property
    def live(self) -> Session:
        """The live session, for actions (the page refuses every action while viewing, before any view runs)."""
        if not isinstance(self.session, Session):
            raise RuntimeError("a recording is read-only")
        return self.session
