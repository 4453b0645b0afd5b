"""Replay: re-send a recording's client→server traffic to a server and compare the answers, structurally.

`compare` and `plan` are pure (data in, data out); `Replayer` does the I/O through the one client, so the page can
run the same engine with its own store.
"""

from inspector.recording.replay.compare import (
    ABSENT, DEFAULT_IGNORES, IGNORED, Difference, compare, mark_ignored, parse_path,
)
from inspector.recording.replay.engine import (
    DIFFERENT, EXTRA, MISSING, SAME, STATUSES, Replayer, ReplayError, ReplayReport, Step,
)
from inspector.recording.replay.plan import Segment, ServerAsk, label_of, plan

__all__ = ["ABSENT", "DEFAULT_IGNORES", "DIFFERENT", "EXTRA", "IGNORED", "MISSING", "SAME", "STATUSES", "Difference",
           "ReplayError", "ReplayReport", "Replayer", "Segment", "ServerAsk", "Step", "compare", "label_of",
           "mark_ignored", "parse_path", "plan"]
