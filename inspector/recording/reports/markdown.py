"""Pure: a recording as GitHub-flavoured Markdown to paste into an issue: a summary table, the problems, the
notable events, then each selected call as a <details> block with its request, its answer and the stderr written
meanwhile.

The report fits in GitHub's comment limit: long values are trimmed in the middle (each cut says how much went),
and calls that do not fit are left out and counted; calls that failed or have a problem go in first. Server text
is escaped for where it lands (entities in HTML, backslashes in Markdown, fences longer than any backtick run in
what they hold), so nothing a server writes can close a block or add markup.
"""

from __future__ import annotations

import json
from typing import Callable, Iterable, Iterator

from inspector.protocol.records import EVENT, STDERR, Record, describe_event
from inspector.recording.reports.md_text import (
    fence, html_text, inline, trim_lines_middle, trim_middle, trim_value, when,
)
from inspector.recording.reports.summary import Call, Problem, as_records, index, problems as find_problems, summarize

LIMIT = 65_000
"""Characters; GitHub refuses a comment or issue body over 65,536."""
TEXT_LIMIT = 1_000
"""Characters kept of one string value."""
ITEMS_LIMIT = 20
"""Items kept of one list, keys of one object."""
MESSAGE_LIMIT = 6_000
"""Characters kept of one message's JSON."""
STDERR_LIMIT = 3_000
"""Characters kept of the stderr written during one call."""
LINE_LIMIT = 800
"""Characters kept of one problem's or event's text."""
PROBLEMS_LIMIT = 12_000
EVENTS_LIMIT = 4_000
FOOTER_RESERVE = 600
GIVE_UP_AFTER = 50
"""Calls in a row that did not fit before no more are tried (a 100,000-message recording renders quickly)."""
NOTABLE_EVENTS = ("spawn-failed", "timeout", "exit", "transport-error", "crash-loop", "restart", "stop")
TRIM_NOTE = ("Long values are trimmed in the middle (`…[N characters trimmed]…`) to fit GitHub's limit; "
             "the `.jsonl` recording holds them whole.")

Picked = Callable[[int], bool]


def render_markdown(header: dict | None, records: list[dict], problems: list[Problem], *,
                    picked: Picked = lambda seq: True, limit: int = LIMIT) -> str:
    """The report of the picked records (by seq) of a redacted recording."""
    return _render(header, records, as_records(records), problems, picked, limit)


def report_for(header: dict | None, records: list[dict], unreadable: list[str], picked: Picked,
               typed: list[Record] | None = None) -> str:
    """render_markdown with the problems found in the records (and the lines the reader skipped); `typed`, the
    records as Records when the caller has them (Redacted.typed)."""
    typed = as_records(records) if typed is None else typed  # once: a recording may hold 100,000 records
    return _render(header, records, typed, find_problems(typed, unreadable), picked, LIMIT)


def _render(header: dict | None, records: list[dict], typed: list[Record], problems: list[Problem],
            picked: Picked, limit: int) -> str:
    found = index(typed)
    calls = [call for call in found.calls if any(picked(seq) for seq in call.seqs)]
    problems = [p for p in problems if p.seq is None or picked(p.seq)]
    parts = [_head(header, typed, calls, picked, found.rows),
             _capped("Problems", map(_problem_line, problems), len(problems), PROBLEMS_LIMIT),
             _capped("Events", *_event_lines(records, picked), EVENTS_LIMIT),
             _outside_calls(records, calls, picked)]
    used = sum(len(part) for part in parts)
    blocks, trimmed = _fit_calls(calls, problems, limit - used - FOOTER_RESERVE)
    parts.append(f"### Calls ({len(blocks):,} of {len(calls):,} shown)\n\n" if calls else "")
    parts += blocks
    if len(blocks) < len(calls):
        parts.append(f"{len(calls) - len(blocks):,} more calls did not fit in GitHub's {limit:,}-character limit: "
                     "pick them with `--seq`.\n\n")
    if trimmed:
        parts.append(TRIM_NOTE + "\n")
    return "".join(parts)


def render_call(header: dict | None, records: list[dict], seq: int) -> str | None:
    """One call's report (the page's "Copy as bug report"): the summary, then the call whose request or answer is
    `seq`; None when no call has that seq."""
    typed = as_records(records)
    calls = [call for call in index(typed).calls if seq in call.seqs]
    if not calls:
        return None
    block, trimmed = _call_block(calls[0], open_=True)
    head = _head(header, typed, calls, lambda s: True, whole=False)
    return head + block + (TRIM_NOTE + "\n" if trimmed else "")


def _head(header: dict | None, records: list[Record], calls: list[Call], picked: Picked, rows: list[dict] | None = None,
          *, whole: bool = True) -> str:
    """The title and the summary table; `whole` adds the counts and the length of the recording (not for one call,
    whose few records say nothing about the session). `rows`: the index's, when the caller has them."""
    s = summarize(header, records, rows)
    era = _or(s.era) if s.protocol_version is None else f"{_or(s.era)} (protocol {s.protocol_version})"
    command = " ".join(s.command) if s.command else s.url
    rows = [("server", _or(s.server)), ("version", _or(s.version)), ("era", era), ("transport", _or(s.transport)),
            ("command", _or(command)), ("mcp-inspect", _or(s.recorded_by)),
            ("recorded", when(_or(s.created), s.duration_s if whole else None))]
    if whole:
        rows += [("records", f"{sum(1 for r in records if picked(r.seq)):,} of {len(records):,}"),
                 ("calls", f"{len(calls):,}")]
    table = "".join(f"| {name} | {inline(value)} |\n" for name, value in rows)
    named = " ".join(inline(part) for part in (s.server, s.version) if part)
    title = f"mcp-inspect report: {named}" if named else "mcp-inspect report"
    return f"## {title}\n\n| | |\n| --- | --- |\n{table}\n"


def _problem_line(problem: Problem) -> str:
    where = "recording" if problem.seq is None else f"#{problem.seq}"
    return f"- **{where}** {inline(problem.rule)}: {inline(problem.text, LINE_LIMIT)}\n"


def _event_lines(records: list[dict], picked: Picked) -> tuple[Iterator[str], int]:
    """The notable events' list lines, made as they are taken, and how many there are."""
    events = [r for r in records if r.get("kind") == EVENT and r.get("event") in NOTABLE_EVENTS
              and isinstance(r.get("detail"), dict) and picked(r["seq"])]
    lines = (f"- #{r['seq']} {inline(describe_event(r['event'], r['detail']), LINE_LIMIT)}\n" for r in events)
    return lines, len(events)


def _outside_calls(records: list[dict], calls: list[Call], picked: Picked) -> str:
    """The picked stderr written while no call was open (a traceback at start-up, say), fenced."""
    during = {r.seq for call in calls for r in call.stderr}
    lines = [str(r.get("text", "")) for r in records
             if r.get("kind") == STDERR and r["seq"] not in during and picked(r["seq"])]
    if not lines:
        return ""
    text, _ = trim_lines_middle(lines, STDERR_LIMIT)
    return f"### stderr outside calls ({_lines(len(lines))})\n\n{fence(text, 'text')}\n"


def _capped(title: str, lines: Iterable[str], count: int, budget: int) -> str:
    """A section of list lines (`count` of them), as many as fit in budget characters, then how many were left
    out: the lines after the first that does not fit are never made."""
    if not count:
        return ""
    out, used = [], 0
    for line in lines:
        if used + len(line) > budget:
            break
        out.append(line)
        used += len(line)
    more = f"- …and {count - len(out):,} more\n" if len(out) < count else ""
    return f"### {title} ({count:,})\n\n{''.join(out)}{more}\n"


def _fit_calls(calls: list[Call], problems: list[Problem], budget: int) -> tuple[list[str], bool]:
    """The blocks of the calls that fit in budget, in seq order; calls that failed or have a problem first."""
    marked = {p.seq for p in problems}
    first = sorted(calls, key=lambda c: (not (c.failed or any(s in marked for s in c.seqs)), c.seq))
    chosen, used, misses, trimmed = [], 0, 0, False
    for call in first:
        block, cut = _call_block(call)
        if used + len(block) > budget:
            misses += 1
            if misses >= GIVE_UP_AFTER:
                break
            continue
        chosen.append((call.seq, block))
        used += len(block)
        trimmed = trimmed or cut
    return [block for _, block in sorted(chosen)], trimmed


def _call_block(call: Call, open_: bool = False) -> tuple[str, bool]:
    """One call as <details>: the request, the answer and the stderr, each fenced; (text, whether trimmed)."""
    who = "server → client: " if call.from_server else ""
    name = f" {html_text(call.tool)}" if call.tool else ""
    took = f", {call.latency_ms:,.0f} ms" if call.latency_ms is not None else ""
    summary = f"#{call.seq} {who}<code>{html_text(call.method)}</code>{name} → {html_text(call.outcome)}{took}"
    request, cut_request = _message(call.request)
    parts = [f"<details{' open' if open_ else ''}>\n<summary>{summary}</summary>\n\n",
             f"**Request** #{call.seq}\n\n{request}\n"]
    cut_response = False
    if call.response is not None:
        response, cut_response = _message(call.response)
        parts.append(f"**Response** #{call.response.seq}\n\n{response}\n")
    else:
        parts.append("No response was recorded.\n\n")
    cut_stderr = False
    if call.stderr:
        lines = "\n".join(r.text or "" for r in call.stderr)
        text, dropped = trim_middle(lines, STDERR_LIMIT)
        count = _lines(len(call.stderr) + call.stderr_more)
        parts.append(f"**stderr during the call** ({count})\n\n{fence(text, 'text')}\n")
        cut_stderr = dropped > 0 or call.stderr_more > 0
    parts.append("</details>\n\n")
    return "".join(parts), cut_request or cut_response or cut_stderr


def _or(value: str | None) -> str:
    return "?" if value is None else value


def _lines(count: int) -> str:
    return f"{count:,} line{'' if count == 1 else 's'}"


def _message(record: Record) -> tuple[str, bool]:
    value, cut = trim_value(record.msg, text_limit=TEXT_LIMIT, items_limit=ITEMS_LIMIT)
    text, dropped = trim_middle(json.dumps(value, indent=2, ensure_ascii=False), MESSAGE_LIMIT)
    return fence(text, "json"), cut or dropped > 0
