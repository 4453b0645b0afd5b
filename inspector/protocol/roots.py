"""Pure: the roots the page edits, as text (one `URI [name]` per line) and back."""

from __future__ import annotations

from urllib.parse import urlsplit

MAX_ROOTS = 100


def parse_roots(text: str) -> tuple[list[dict], list[str]]:
    """Lines of `URI [name]` into [{uri, name?}], with one problem per line that is not a URI."""
    roots: list[dict] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        uri, _, name = line.partition(" ")
        scheme = urlsplit(uri).scheme
        if not scheme or len(scheme) < 2:  # "C:" is a drive letter, not a scheme
            problems.append(f"line {number}: {uri!r} is not a URI (roots are URIs such as file:///home/me/project)")
            continue
        root = {"uri": uri}
        if name.strip():
            root["name"] = name.strip()
        roots.append(root)
    if len(roots) > MAX_ROOTS:
        problems.append(f"at most {MAX_ROOTS} roots")
    return roots, problems


def roots_text(roots: list[dict]) -> str:
    """The editable text for a list of roots."""
    return "\n".join(f"{root.get('uri', '')} {root.get('name', '')}".rstrip() for root in roots
                     if isinstance(root, dict))
