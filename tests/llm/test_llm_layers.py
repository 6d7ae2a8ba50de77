"""The layer order around the client layer, read from the source (every import statement, at any depth).

traces, labels -> llm -> annotate / answers / env -> metrics ...: ``llm`` imports no higher layer; the
callers use ``seekbench.llm`` by its public names only; ``metrics`` asks no model.
"""

from __future__ import annotations

import ast
from pathlib import Path

import seekbench

ROOT = Path(seekbench.__file__).parent


def _imports(package: str) -> list[tuple[str, str]]:
    """(file, absolute module) of every import in a package."""
    out = []
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = ["seekbench", *path.relative_to(ROOT).with_suffix("").parts]
        here = parts[:-1]  # the package a relative import starts from (``__init__`` counts as its package)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = here[:len(here) - node.level + 1] if node.level else []
                mod = ".".join([*base, node.module] if node.module else base)
                out += [(str(path), mod)] + [(str(path), f"{mod}.{a.name}") for a in node.names]
            elif isinstance(node, ast.Import):
                out += [(str(path), a.name) for a in node.names]
    return out


def test_llm_imports_only_lower_layers():
    allowed = ("seekbench.llm", "seekbench.traces", "seekbench.labels", "seekbench._errors", "seekbench._resources",
               "seekbench._schemas")  # the shipped JSON Schemas (judge validation records): below every layer
    bad = [(f, m) for f, m in _imports("llm") if m.startswith("seekbench") and not m.startswith(allowed)]
    assert bad == []


def test_callers_use_the_public_names_of_llm():
    bad = [(f, m) for pkg in ("annotate", "answers", "env") for f, m in _imports(pkg)
           if m.startswith("seekbench.llm._")]
    assert bad == []


def test_the_import_reader_sees_relative_imports():
    assert ("seekbench.traces.write_text" in {m for _, m in _imports("llm")})


def test_metrics_asks_no_model():
    banned = ("seekbench.llm", "seekbench.annotate", "seekbench.answers")
    assert [(f, m) for f, m in _imports("metrics") if m.startswith(banned)] == []
