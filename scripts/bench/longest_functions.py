"""Print the longest functions of a package, with and without their docstrings.

A function's length is the span of its source lines, from the ``def`` line to its last
line (decorators not counted, nested functions counted inside their parent and again on
their own). "Without docstring" subtracts the lines of the function's own docstring, so
the figure is the code a reader has to follow. The counts over 60 and over 100 lines are
given for both measures.

Usage::

    python scripts/bench/longest_functions.py [PACKAGE_DIR] [--top N]

``PACKAGE_DIR`` defaults to ``seekbench`` (run from the repository root).
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path


def _docstring_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Return how many source lines the function's own docstring spans (0 without one)."""
    if not node.body:
        return 0
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return (first.end_lineno or first.lineno) - first.lineno + 1
    return 0


def function_lengths(root: Path) -> list[tuple[int, int, str]]:
    """Return ``(lines, lines_without_docstring, "path::name")`` for every function under ``root``."""
    rows: list[tuple[int, int, str]] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                total = (node.end_lineno or node.lineno) - node.lineno + 1
                code = total - _docstring_lines(node)
                rows.append((total, code, f"{path.relative_to(root)}::{node.name}"))
    return rows


def main() -> None:
    """Print the top functions by each measure and the counts over 60 and 100 lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?", default="seekbench", help="package directory")
    parser.add_argument("--top", type=int, default=10, help="how many functions to list")
    args = parser.parse_args()
    rows = function_lengths(Path(args.package))
    for label, index in (("with docstring", 0), ("without docstring", 1)):
        ranked = sorted(rows, key=lambda r: (-r[index], r[2]))
        over60 = sum(1 for r in rows if r[index] > 60)
        over100 = sum(1 for r in rows if r[index] > 100)
        print(f"# {label}: {len(rows)} functions, {over60} over 60 lines, {over100} over 100 lines")
        for row in ranked[: args.top]:
            print(f"{row[index]:5d}  {row[2]}")
        print()


if __name__ == "__main__":
    main()
