"""How a command ends: its result as JSON or text, fixed-width tables, and the exit code."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from .._errors import EXIT_FAILURES, EXIT_OK
from .._io import dumps


def finish(args: argparse.Namespace, payload, text: str | Callable[[], str], *, failed=False, text_to=None) -> int:
    """Print ``payload`` as one JSON line with ``--json``, else ``text``; 3 when something ``failed``, else 0.

    ``text`` may be a function, called only without ``--json`` (a table not worth building otherwise).
    ``text_to`` is where the text goes (stdout by default; the commands that stream a run's
    progress put their closing summary on stderr beside it).
    """
    if getattr(args, "json", False):
        sys.stdout.write(dumps(payload) + "\n")
    else:
        print(text() if callable(text) else text, file=text_to or sys.stdout)
    return EXIT_FAILURES if failed else EXIT_OK


def fixed_width(cols: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A text table: the header, a rule, one line per row, each column as wide as its widest cell."""
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(cols)]

    def line(r: Sequence[str]) -> str:
        return "  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip()

    return [line(cols), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def wrote_report(output, name: str, files) -> str:
    """Record a report's files (html, markdown if any, figures, tables) in the folder's manifest; say so."""
    from ..report import record_written

    markdown = [files.markdown] if getattr(files, "markdown", None) else []
    record_written(output, name, [files.html, *markdown, *files.figures, *files.tables])
    return f"wrote {files.html} ({len(files.figures)} figures, {len(files.tables)} tables)"
