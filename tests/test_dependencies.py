"""Every third-party module seekbench imports is declared for the code path that imports it.

`deptry` (the lint stage) checks that each import is declared somewhere and that nothing rides
on a transitive dependency; it does not know which *extra* a lazy import belongs to. This test
does: an import at module level runs on every install, so its distribution must be a core
dependency; an import of an extra's package must be deferred (inside a function, under
``TYPE_CHECKING``, or guarded by ``except ImportError``) so that the default install never
reaches it.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "seekbench"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _dist(requirement: str) -> str:
    name = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert name is not None, requirement
    return re.sub(r"[-_.]+", "-", name.group(0)).lower()


def _declared() -> tuple[set[str], dict[str, set[str]]]:
    """Core distributions, and each runtime extra's (the tool groups deptry treats as development)."""
    project = PYPROJECT["project"]
    dev = set(PYPROJECT["tool"]["deptry"]["optional_dependencies_dev_groups"])
    core = {_dist(r) for r in project["dependencies"]}
    extras = {
        extra: {_dist(r) for r in reqs if not r.startswith("seekbench[")}
        for extra, reqs in project["optional-dependencies"].items()
        if extra not in dev
    }
    return core, extras


class _Owners(dict):
    """Top-level module -> distributions: from what is installed, the deptry map, and otherwise the module's
    own name as a distribution name (``ray`` -> ``ray``), so that an environment without an extra installed
    (the lowest-versions stage has no ray) checks the same."""

    def __missing__(self, module: str) -> set[str]:
        return {_dist(module)}


def _module_to_dists() -> dict[str, set[str]]:
    mapping: dict[str, set[str]] = _Owners()
    for module, dists in packages_distributions().items():
        mapping.setdefault(module, set()).update(_dist(d) for d in dists)
    for dist, module in PYPROJECT["tool"]["deptry"]["package_module_name_map"].items():
        mapping.setdefault(module, set()).add(_dist(dist))
    return mapping


class _Imports(ast.NodeVisitor):
    """Third-party imports of one file, each with whether it runs when the module is imported."""

    def __init__(self) -> None:
        self.found: list[tuple[str, int, bool]] = []  # (top-level module, line, deferred)
        self._deferred = 0

    def _nested(self, node: ast.AST) -> None:
        self._deferred += 1
        self.generic_visit(node)
        self._deferred -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _nested

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        ):
            self._nested(node)
        else:
            self.generic_visit(node)

    def visit_Try(self, node: ast.Try) -> None:
        guarded = any(
            isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError") for h in node.handlers
        )
        self._deferred += guarded
        for stmt in node.body:
            self.visit(stmt)
        self._deferred -= guarded
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    def _record(self, module: str | None, node: ast.stmt) -> None:
        top = (module or "").split(".")[0]
        if top and top not in sys.stdlib_module_names and top != "seekbench":
            self.found.append((top, node.lineno, self._deferred > 0))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._record(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level == 0:
            self._record(node.module, node)


def _imports() -> list[tuple[str, str, int, bool]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        visitor = _Imports()
        visitor.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        rel = str(path.relative_to(ROOT))
        out.extend((rel, module, line, deferred) for module, line, deferred in visitor.found)
    return out


def test_every_import_is_declared_for_its_code_path():
    core, extras = _declared()
    in_extras = set().union(*extras.values())
    owners = _module_to_dists()
    problems = []
    for file, module, line, deferred in _imports():
        dists = owners[module]
        if dists & core:
            continue
        if not dists & in_extras:
            problems.append(f"{file}:{line}: {module} is not declared (core or a runtime extra)")
        elif not deferred:
            extra = sorted(e for e, members in extras.items() if dists & members)
            problems.append(
                f"{file}:{line}: {module} belongs to the extra {extra} but is imported on every install "
                "(import it inside the function that needs it, or guard it with except ImportError)"
            )
    assert not problems, "\n".join(problems)


def test_the_check_sees_what_it_checks():
    """The walk finds module-level core imports, deferred extra imports and both kinds of guard."""
    found = {(file, module, deferred) for file, module, _, deferred in _imports()}
    assert ("seekbench/traces/_fragments.py", "fsspec", True) in found  # inside a function
    assert ("seekbench/_fast_json.py", "orjson", True) in found  # try / except ImportError
    assert ("seekbench/env/_embedders.py", "sentence_transformers", True) in found  # TYPE_CHECKING
    assert any(module == "numpy" and not deferred for _, module, deferred in found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import ray\n", [("ray", 1, False)]),
        ("def f():\n    import ray\n", [("ray", 2, True)]),
        ("try:\n    import ray\nexcept ImportError:\n    ray = None\n", [("ray", 2, True)]),
        ("try:\n    import ray\nexcept ValueError:\n    pass\n", [("ray", 2, False)]),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import ray\n", [("ray", 3, True)]),
        ("import json, os\nfrom . import x\nfrom seekbench import y\n", []),
    ],
)
def test_import_walk_on_snippets(source, expected):
    visitor = _Imports()
    visitor.visit(ast.parse(source))
    assert visitor.found == expected


def test_core_zstandard_covers_inspect_logs():
    """Inspect's .eval logs are Zstandard zips; Python reads those only from 3.14, so below that the
    default install must carry a Zstandard reader (issue 24: a supported format on the default install)."""
    core = [r for r in PYPROJECT["project"]["dependencies"] if _dist(r) == "zstandard"]
    assert core and "python_version < '3.14'" in core[0]
