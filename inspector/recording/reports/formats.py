"""The export formats beside the recording itself: one registry for `mcp-inspect export --format` and the page's
Export control, so both offer the same reports made the same way (pure: a redacted recording in, text out)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from inspector.recording.export import Redacted

Picked = Callable[[int], bool]


def _html_report(result: Redacted, notes: list[str], picked: Picked) -> str:
    """The self-contained page of the picked records (what was masked listed with them)."""
    from inspector.recording.reports.html import render_html  # here: the registry is imported by every export

    masked = [{"seq": seq, "kind": f.kind, "path": f.path} for seq, f in result.findings if seq is None or picked(seq)]
    if result.typed is None:
        return render_html(result.header, [r for r in result.records if picked(r["seq"])], masked, notes)
    kept = [i for i, record in enumerate(result.typed) if picked(record.seq)]
    lines = None if result.typed_lines is None else [result.typed_lines[i] for i in kept]
    return render_html(result.header, [], masked, notes, [result.typed[i] for i in kept], lines)


def _markdown_report(result: Redacted, notes: list[str], picked: Picked) -> str:
    """GitHub Markdown: the whole recording summarised, the picked calls shown."""
    from inspector.recording.reports import markdown  # here: a jsonl export needs no checker nor jsonschema

    return markdown.report_for(result.header, result.records, notes, picked, result.typed)


@dataclass(frozen=True)
class Report:
    """One format: how to render it from the whole redacted recording, and how to serve it as a file."""

    render: Callable[[Redacted, list[str], Picked], str]
    suffix: str
    mimetype: str


REPORTS = {
    "html": Report(_html_report, ".html", "text/html"),
    "md": Report(_markdown_report, ".md", "text/markdown"),
}
"""--format name -> its Report (render(the whole redacted recording, the reader's notes, picked(seq)) -> text)."""
