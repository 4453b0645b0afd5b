"""The self-contained HTML report: one file that opens from disk with no network, no install and no server.

Pure: it takes a redacted recording and returns the page's text. The page carries its data gzip-compressed and
base64-encoded in a non-script block (so a 100,000-message recording stays under twice its .jsonl size, and no
server text is ever parsed as HTML: report.js inserts everything with textContent). The inline script and style
are the assets next to this module, allowed by their sha256 hashes in the page's own strict CSP.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import math
from dataclasses import asdict
from importlib import resources
from typing import Iterable

from inspector.protocol.records import Record
from inspector.recording.reports import summary

ASSETS = ("report.css", "report_views.js", "report.js")
DATA_ID = "report-data"
COMPRESS_LEVEL = 1
"""gzip's fastest level: a 100,000-message report is about a tenth larger than at level 6 and several times faster
to pack (the page unpacks either as fast)."""
KINDS = ("request", "response", "notification", "error", "batch", "invalid", "stderr", "event")
# The page's timeline filters (templates/partials/_filters.html), run by report.js over the whole recording.
FILTERS = (
    "<form id=\"filters\" class=\"filters\" role=\"search\" hidden>\n"
    "<label>Direction <select name=\"dir\"><option value=\"\">both</option>"
    "<option value=\"to_server\">→ to server</option>"
    "<option value=\"from_server\">← from server</option></select></label>\n"
    "<label>Kind <select name=\"kind\"><option value=\"\">all</option>"
    + "".join(f"<option value=\"{kind}\">{kind}</option>" for kind in KINDS) + "</select></label>\n"
    "<label>Method <input type=\"text\" name=\"method\" placeholder=\"tools/\" size=\"12\"></label>\n"
    "<label class=\"check\"><input type=\"checkbox\" name=\"stderr\" checked> stderr</label>\n"
    "<label>Search <input type=\"search\" name=\"q\" placeholder=\"text in any message\" size=\"22\"></label>\n"
    "</form>\n"
)


def render_html(header: dict | None, records: list[dict], masked: Iterable[dict] = (),
                notes: Iterable[str] = (), typed: list[Record] | None = None,
                lines: list[bytes | None] | None = None) -> str:
    """The report of a redacted recording: `masked` lists what redaction masked ({where, kind, path}), `notes`
    the lines the reader skipped; `typed`, the records as Records when the caller has them (Redacted.typed), and
    `lines` beside them, each record's line when it is exactly its JSON form (Redacted.typed_lines)."""
    typed = summary.as_records(records) if typed is None else typed
    found = summary.index(typed)
    data = {
        "summary": asdict(summary.summarize(header, typed, found.rows)),
        "problems": [asdict(problem) for problem in summary.problems(typed)],
        "masked": list(masked), "notes": list(notes),
        "records": Encoded(records_json(typed, lines)), "rows": Encoded(rows_json(found.rows)),
        "calls": [_tool_call(call) for call in found.calls if call.method == "tools/call" and not call.from_server],
        "restarts": summary.restarts(typed),
    }
    return page(pack(data), _title(data["summary"]))


class Encoded(bytes):
    """A value's JSON text, already made: pack puts it in as it is."""


def records_json(records: list[Record], lines: list[bytes | None] | None) -> bytes:
    """The records as one JSON array: a record's line as read where it is exactly the record's JSON form (most of
    a recording: no dict made, nothing encoded again), `to_dict` encoded for the others."""
    if lines is not None and None not in lines:  # every record has its line: one join, when none has NaN
        joined = b",".join(lines)
        if b"NaN" not in joined and b"Infinity" not in joined:
            return b"[" + joined + b"]"

    def items():
        for i, record in enumerate(records):
            line = lines[i] if lines is not None else None
            # NaN and Infinity are Python's JSON, not JSON: such a line goes to the encoder, which refuses them.
            yield record.to_dict() if line is None or b"NaN" in line or b"Infinity" in line else line

    return _json_array(items())


def rows_json(rows: list[dict]) -> bytes:
    """The timeline rows as one JSON array. A flood's rows repeat (the same kind and method, nothing paired, no
    latency), so a row that pairs with nothing is encoded once per distinct row."""
    texts: dict[tuple, bytes] = {}

    def items():
        for row in rows:
            if row["pair"] is not None:
                yield row
                continue
            key = tuple(row.values())  # each field has one type (a str, a bool, None...): equal values, equal JSON
            text = texts.get(key)
            yield texts.setdefault(key, _dumps(row)) if text is None else text

    return _json_array(items())


def _json_array(items: Iterable[bytes | dict]) -> bytes:
    """A JSON array of values given as their JSON text (bytes) or as values to encode, a run of them at a time
    (one encoder call per value would cost more than the encoding)."""
    parts: list[bytes] = []
    made: list = []
    for item in items:
        if isinstance(item, bytes):
            if made:
                parts.append(_dumps(made)[1:-1])
                made = []
            parts.append(item)
        else:
            made.append(item)
    if made:
        parts.append(_dumps(made)[1:-1])
    return b"[" + b",".join(parts) + b"]"


def _dumps(value) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except ValueError:  # NaN or an infinity, which Python's json reads from a line but JSON has not: shown as text
        return json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _finite(value):
    """A copy of a value with each float that is not finite spelled as Python's json spells it ("NaN", ...)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def _tool_call(call: summary.Call) -> dict:
    """A tools/call we sent, as report_views.js shows it: arguments, answer (result or error), state, duration."""
    answer, name = call.answer, call.params.get("name")
    return {"seq": call.seq, "t": call.request.t, "name": name if isinstance(name, str) and name else "?",
            "arguments": call.params.get("arguments", {}), "answer_seq": call.response.seq if call.response else None,
            "ms": None if call.latency_ms is None else round(call.latency_ms, 1), "state": call.state,
            "result": answer["error"] if "error" in answer else answer.get("result")}


def pack(data: dict) -> str:
    """JSON, gzip, base64: the text of the page's data block (base64 cannot close the block it sits in). A member
    whose value is `Encoded` goes in as that text."""
    raw = b"{" + b",".join(_dumps(key) + b":" + (value if isinstance(value, Encoded) else _dumps(value))
                           for key, value in data.items()) + b"}"
    return base64.b64encode(gzip.compress(raw, compresslevel=COMPRESS_LEVEL, mtime=0)).decode("ascii")


def page(packed: str, title: str) -> str:
    """The HTML around the packed data, its CSP naming the hashes of exactly the inline style and scripts."""
    css, *scripts = (_asset(name) for name in ASSETS)
    csp = (f"default-src 'none'; script-src {' '.join(_hash(s) for s in scripts)}; style-src {_hash(css)}")
    script_tags = "".join(f"<script>{script}</script>\n" for script in scripts)
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        # No <link rel=icon>: even a data: icon is an image the CSP refuses (a console violation), and Chromium
        # asks for no favicon.ico next to a file:// page (the browser test checks the file is never read).
        f"<title>{_escape(title)}</title>\n<style>{css}</style>\n</head>\n<body>\n"
        "<noscript><p>This report needs JavaScript to show its recording.</p></noscript>\n"
        # shown while a large recording is unpacked (seconds for 100,000 messages)
        f"<main id=\"report\"><p class=\"note\">Opening the recording…</p></main>\n{FILTERS}"
        f"<script type=\"application/octet-stream\" id=\"{DATA_ID}\">{packed}</script>\n"
        f"{script_tags}</body>\n</html>\n"
    )


def _asset(name: str) -> str:
    text = resources.files("inspector.recording.reports").joinpath("assets", name).read_text(encoding="utf-8")
    if "</" in text.replace("<\\/", ""):  # an inline block ends at the first "</"; the assets must not hold one
        raise ValueError(f"report asset {name} holds '</', which would end its inline block")
    return text


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def _title(info: dict) -> str:
    name = " ".join(part for part in (info.get("server"), info.get("version")) if part) or "a recorded session"
    return f"mcp-inspect report: {name}"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
