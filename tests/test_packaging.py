"""Packaging: every library the package imports is a declared dependency, and the web files ship in the wheel."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {_normal(re.split(r"[<>=!~ \[;]", dep, maxsplit=1)[0]) for dep in project["dependencies"]}


# The pytest plugin's modules run only inside pytest, which brings these (tomli is pytest's own on Python 3.10).
PLUGIN_MODULES = {ROOT / "inspector" / "pytest_plugin.py", ROOT / "inspector" / "commands" / "regression.py"}
PLUGIN_HOST = {"pytest", "tomli"}


def _imported_top_levels() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "inspector").rglob("*.py"):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
        names |= found - PLUGIN_HOST if path in PLUGIN_MODULES else found
    return names - set(sys.stdlib_module_names) - {"inspector"}


def test_every_imported_library_is_a_declared_dependency():
    # A library that the tests happen to install (mcp pulls in mcp-types) must not hide a missing runtime dependency.
    distributions = packages_distributions()
    missing = {}
    declared = _declared()
    for module in sorted(_imported_top_levels()):
        owners = {_normal(d) for d in distributions.get(module, [module])}
        # Libraries our dependencies bring with them (werkzeug, jinja2, markupsafe with flask; simple-websocket
        # with flask-sock; referencing with jsonschema) count through the dependency that requires them.
        if not owners & (declared | _transitive(declared)):
            missing[module] = sorted(owners)
    assert missing == {}


def _transitive(declared: set[str]) -> set[str]:
    from importlib.metadata import PackageNotFoundError, requires

    seen, todo = set(), list(declared)
    while todo:
        name = todo.pop()
        try:
            needs = requires(name) or []
        except PackageNotFoundError:
            continue
        for requirement in needs:
            if "extra ==" in requirement:
                continue
            dep = _normal(re.split(r"[<>=!~ \[;(]", requirement, maxsplit=1)[0])
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def test_templates_and_static_files_ship_inside_the_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    force = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert force == {"templates": "inspector/_web/templates", "static": "inspector/_web/static"}
    assert (ROOT / "templates" / "index.html").is_file() and (ROOT / "static" / "app.js").is_file()


def test_the_pytest_plugin_is_declared_as_a_pytest11_entry_point():
    # What an install writes into entry_points.txt; tests/test_pytest_plugin.py shows a child pytest loading it by
    # this name, and `-p no:mcp-inspect` turning it off.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"mcp-inspect": "inspector.pytest_plugin"}
    assert (ROOT / "inspector" / "pytest_plugin.py").is_file()


def test_the_stylesheet_styles_the_page_s_main_classes():
    # A cheap guard against a stylesheet cut short by an edit (it happened once): these classes carry meaning.
    css = (ROOT / "static" / "app.css").read_text(encoding="utf-8")
    for selector in (".tool-item", ".res-item", ".badge", ".rpc-error", ".is-error", ".row", ".f-row", ".field-error",
                     ".call", ".problems", ".asks", ".diff-field", ".replay-step", "prefers-color-scheme"):
        assert selector in css, selector
    assert css.count("{") == css.count("}")


def test_the_html_report_assets_ship_inside_the_package():
    # The wheel holds every file under inspector/ (packages = ["inspector"]; checked once with a real build), and the
    # report reads its assets with importlib.resources, so they must live there, not beside templates/ or static/.
    from importlib import resources

    from inspector.recording.reports.html import ASSETS

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["inspector"]
    folder = resources.files("inspector.recording.reports").joinpath("assets")
    for name in ASSETS:
        assert folder.joinpath(name).is_file(), name
