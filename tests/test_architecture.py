"""The rules between the parts of inspector/ (docs/architecture.md), read from the source with `ast`.

Each rule names an importer and what it may never import; a broken rule fails with the file, the line and the
import, so the fix is obvious. The pure part is also checked for file reads and module-global caches.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "inspector"
MAX_LINES = 400


@dataclass(frozen=True)
class Import:
    module: str
    """The importing module, e.g. inspector.web.app."""
    target: str
    """The imported module, absolute, e.g. inspector.recording.store (or flask)."""
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[Import]:
    """Every import in the file, relative ones resolved; `from a import b` counts as a.b when b is a module."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [Import(here, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            for alias in node.names:
                candidate = f"{origin}.{alias.name}"
                found.append(Import(here, candidate if _is_module(candidate) else origin, node.lineno))
    return found


def _is_module(name: str) -> bool:
    if not name.startswith("inspector"):
        return False
    path = ROOT / name.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def source_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def all_imports() -> list[Import]:
    return sorted({imp for path in source_files() for imp in imports_of(path)}, key=lambda i: (i.module, i.line))


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


# (who, may never import, why). "who" and the targets are module prefixes.
RULES: list[tuple[str, tuple[str, ...], str]] = [
    ("inspector.protocol", ("inspector.transport", "inspector.client", "inspector.recording", "inspector.session",
                            "inspector.web", "inspector.commands", "inspector.client_configs", "inspector.cli",
                            "inspector.config", "inspector.runner", "inspector.inspector", "flask", "httpx",
                            "watchdog", "subprocess", "socket", "threading"),
     "protocol/ is pure: data in, data out"),
    ("inspector.transport", ("inspector.client", "inspector.recording", "inspector.session", "inspector.web",
                             "inspector.commands", "inspector.cli", "inspector.config", "flask"),
     "a transport moves bytes; it knows nothing above it"),
    ("inspector.client", ("inspector.session", "inspector.web", "inspector.commands", "inspector.cli",
                          "inspector.runner", "flask"),
     "the one JSON-RPC client serves the page and the headless commands alike"),
    ("inspector.recording", ("inspector.session", "inspector.web", "inspector.commands", "inspector.cli",
                             "inspector.config", "inspector.runner", "flask"),
     "recordings are read and replayed without the page or the CLI's config"),
    ("inspector.session", ("inspector.web", "inspector.commands", "inspector.cli", "inspector.runner", "flask"),
     "the page's services know no Flask and no page region"),
    ("inspector.commands", ("inspector.web", "inspector.session", "flask"),
     "the headless commands never load the page"),
    ("inspector.web", ("inspector.commands", "inspector.cli", "inspector.runner", "inspector.transport",
                       "inspector.client.connect"),
     "the page does not borrow the CLI and does not wire transports"),
    ("inspector.pytest_plugin", ("inspector.web", "inspector.session", "inspector.runner", "inspector.cli", "flask"),
     "pytest loads the plugin in every project that has mcp-inspect installed: it replays headless"),
    ("inspector.client_configs", ("inspector.web", "inspector.session", "inspector.commands", "flask"),
     "reading a client's config file is a leaf"),
]


def broken_rules(imports: list[Import]) -> list[str]:
    broken = []
    for who, never, why in RULES:
        for imp in imports:
            if _within(imp.module, who) and any(_within(imp.target, banned) for banned in never):
                broken.append(f"{imp.module}:{imp.line} imports {imp.target} ({why})")
    return broken


def test_no_part_imports_what_its_rule_forbids():
    assert broken_rules(all_imports()) == []


def test_the_rule_check_catches_a_broken_rule():
    """The checker itself can fail: a web module that imports a command is reported."""
    fake = [Import("inspector.web.views.share", "inspector.commands.export", 3)]
    assert broken_rules(fake) == [
        "inspector.web.views.share:3 imports inspector.commands.export "
        "(the page does not borrow the CLI and does not wire transports)"]


def test_relative_and_from_imports_resolve_to_modules(tmp_path):
    imports = imports_of(PACKAGE / "web" / "app.py")
    assert any(imp.target.startswith("inspector.web.") for imp in imports)


FILE_READS = {"open", "read_text", "read_bytes", "write_text", "write_bytes"}
CACHES = {"cache", "lru_cache", "cached_property"}


def impurities(path: Path) -> list[str]:
    """File reads and module-global caches in one pure module."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in FILE_READS:
                found.append(f"{path.name}:{node.lineno} calls {name}()")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if name in CACHES:
                    found.append(f"{path.name}:{node.lineno} caches {node.name} with @{name}")
    return found


@pytest.mark.parametrize("path", sorted((PACKAGE / "protocol").rglob("*.py")), ids=lambda p: module_name(p))
def test_pure_modules_read_no_files_and_keep_no_caches(path):
    assert impurities(path) == []


def test_the_purity_check_catches_a_file_read(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import functools\n\n@functools.lru_cache\ndef f(p):\n    return open(p).read()\n")
    assert impurities(bad) == ["bad.py:4 caches f with @lru_cache", "bad.py:5 calls open()"]


def test_no_module_is_over_the_size_limit():
    """Big modules are cut along their seams; the bundled demo server is a single file on purpose."""
    too_big = {module_name(p): n for p in source_files()
               if p.parent.name != "demo" and (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert too_big == {}
