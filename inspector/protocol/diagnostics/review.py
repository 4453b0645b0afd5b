"""Pure: review tool definitions the way a model will read them, and give advice (never errors).

Heuristics, on purpose simple and explainable: each rule is in docs/rules.md with its reason and fix.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from inspector.protocol import schemas
from inspector.protocol.diagnostics.rules import Advice, advice

MAX_TOOLS = 12
MAX_NAME = 128
MIN_DESCRIPTION = 20
NAME_OK = re.compile(r"[A-Za-z0-9_.-]+")
# "What it returns" or "when to use it", in a few words (English and Russian).
SAYS_WHAT_OR_WHEN = re.compile(
    r"\b(return(s|ed|ing)?|gives?|give back|produces?|outputs?|yields?|responds? with|reports?|results? in|"
    r"lists?|answers? with|use (it|this|when|for|to|if)|when|whenever|if you|before|after|in order to)\b|"
    r"возвраща|используй|когда", re.IGNORECASE)
EXAMPLE_TEXT = re.compile(r"\be\.\s?g\.|\bfor example\b|\bfor instance\b|\bexample:|\bexamples?:|например",
                          re.IGNORECASE)


def name_words(name: str) -> list[str]:
    """A tool name's words, lowercased: split on _ . - and spaces, and at camelCase boundaries."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [w.lower() for w in re.split(r"[_.\-\s]+", spaced) if w]


def _stem(word: str) -> str:
    """A crude singular ("words" -> "word"), so count_words and word_count meet."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def near_duplicate(a: str, b: str) -> str:
    """Why two names are (nearly) the same, or "" when they are not."""
    if a == b:
        return "the same name"
    if sorted(map(_stem, name_words(a))) == sorted(map(_stem, name_words(b))):
        return "the same words in another order or case"
    # Short names are too close by nature ("add"/"abs"): edit distance only from 5 characters on.
    if min(len(a), len(b)) >= 5 and edit_distance(a.lower(), b.lower()) <= 2:
        return "names within 2 edits of each other"
    return ""


def same_text_key(description: Any) -> str:
    """A description as compared for duplicates: case and runs of white space do not count; "" for none."""
    return " ".join(description.split()).casefold() if isinstance(description, str) else ""


def _resolve(schema: dict, prop: Any) -> dict:
    """A property schema, with a local $ref's target merged under it (the property's own keywords win)."""
    if not isinstance(prop, dict):
        return {}
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = schema
        for part in ref[2:].split("/"):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            return {**node, **prop}
    return prop


def _has_example(prop: dict) -> bool:
    if any(k in prop for k in ("examples", "example", "default", "enum", "const")):
        return True  # enum and const list the values themselves
    if prop.get("type") == "boolean":
        return True  # true/false need no example
    if EXAMPLE_TEXT.search(str(prop.get("description", ""))):
        return True
    inner = prop.get("properties")  # an object whose every field shows an example shows one too
    return isinstance(inner, dict) and bool(inner) and all(isinstance(p, dict) and _has_example(p)
                                                            for p in inner.values())


def _schema_error(schema: dict) -> str:
    problem = schemas.check(schema)
    if problem is None:
        return ""
    place = "/".join(str(p) for p in problem.where) or "(top)"
    return f"at {place}: {problem.message}"


def review_tool(tool: dict) -> list[Advice]:
    """Advice about one tool on its own (names of other tools are compared in review_tools)."""
    name = tool.get("name") if isinstance(tool.get("name"), str) else ""
    out: list[Advice] = []
    if not name or len(name) > MAX_NAME or not NAME_OK.fullmatch(name):
        why = "is empty" if not name else (f"is {len(name)} characters long" if len(name) > MAX_NAME
                                           else "has characters outside A-Z a-z 0-9 _ . -")
        out.append(advice("name-format", name, f"the name {name!r} {why}"))
    description = tool.get("description") if isinstance(tool.get("description"), str) else ""
    if len(description.strip()) < MIN_DESCRIPTION:
        shown = f"only {description.strip()!r}" if description.strip() else "missing"
        out.append(advice("short-description", name, f"the description is {shown}: a model picks tools by it"))
    elif not SAYS_WHAT_OR_WHEN.search(description):
        out.append(advice("vague-description", name,
                          "the description says neither what the tool returns nor when to use it"))
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        return out  # a missing inputSchema is a protocol warning (result-schema), not advice
    error = _schema_error(schema)
    if error:
        out.append(advice("schema-invalid", name, f"the inputSchema is not valid JSON Schema {error}"))
        return out
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    resolved = {key: _resolve(schema, value) for key, value in props.items()}
    undescribed = [k for k, p in resolved.items() if not str(p.get("description", "")).strip()]
    if undescribed:
        out.append(advice("param-no-description", name, "parameter(s) without a description: "
                          + ", ".join(undescribed)))
    no_example = [k for k, p in resolved.items() if not _has_example(p)]
    if no_example:
        out.append(advice("param-no-example", name, "parameter(s) without an example value: "
                          + ", ".join(no_example)))
    required = schema.get("required")
    if props and "required" not in schema:
        out.append(advice("no-required", name, "the inputSchema has properties but no required list, so a model "
                          "cannot tell which arguments it must give"))
    elif isinstance(required, list):
        missing = [r for r in required if r not in props]
        if missing:
            out.append(advice("required-not-property", name, "required names that are not properties: "
                              + ", ".join(map(str, missing))))
    return out


def review_tools(tools: list[dict], disabled: Iterable[str] = ()) -> list[Advice]:
    """Advice about a server's tools, in tool order; rules in `disabled` are skipped."""
    off = set(disabled)
    tools = [t for t in tools if isinstance(t, dict)]
    out: list[Advice] = []
    if len(tools) > MAX_TOOLS:
        out.append(advice("too-many-tools", None, f"{len(tools)} tools on one server (more than {MAX_TOOLS}): "
                          "models choose less reliably among many tools"))
    seen: list[str] = []
    described: dict[str, str] = {}  # a normalized description -> the first tool that has it
    for tool in tools:
        name = tool.get("name") if isinstance(tool.get("name"), str) else ""
        for earlier in seen:
            why = near_duplicate(earlier, name)
            if why:
                out.append(advice("duplicate-name", name, f"{name!r} and {earlier!r}: {why}; a model may "
                                  "call the wrong one"))
                break
        seen.append(name)
        text = same_text_key(tool.get("description"))
        if text and text in described:
            out.append(advice("duplicate-description", name, f"{name!r} has the same description as "
                              f"{described[text]!r}; a model cannot tell them apart"))
        elif text:
            described[text] = name
        out.extend(review_tool(tool))
    return [a for a in out if a.rule not in off]


def summarize(tools: list[dict], advice_list: list[Advice]) -> dict:
    """Per-server summary: counts by rule, which tools have advice, which are clean."""
    by_rule: dict[str, int] = {}
    for item in advice_list:
        by_rule[item.rule] = by_rule.get(item.rule, 0) + 1
    names = [t.get("name") for t in tools if isinstance(t, dict)]
    flagged = sorted({a.tool for a in advice_list if a.tool is not None}, key=lambda n: names.index(n)
                     if n in names else len(names))
    return {"tools": len(names), "advice": len(advice_list), "by_rule": by_rule, "tools_with_advice": flagged,
            "clean_tools": [n for n in names if n not in flagged]}
