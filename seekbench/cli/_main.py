"""Entry point: argument parsing, dispatch, and the one place user errors become exit code 2."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
import warnings
from collections.abc import Sequence

from .._errors import (
    EXIT_FAILURES,
    EXIT_USER_ERROR,
    OutputWriteError,
    SeekbenchWarning,
    UndefinedMetricWarning,
    UserInputError,
)
from .._version import SCHEMA_VERSION, __version__

#: Each command module and the commands it registers, in ``--help`` order. A module is imported
#: only when one of its commands runs (or for the whole parser: ``seekbench --help``, docs,
#: tests), so ``seekbench metrics`` does not import what judging or the environment needs.
COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("_validate", ("validate",)),
    ("_convert", ("convert",)),
    ("_samples", ("samples",)),
    ("_metrics", ("metrics",)),
    ("_annotate", ("annotate",)),
    ("_judge", ("judge",)),
    ("_judge_answers", ("judge-answers",)),
    ("_cache", ("cache",)),
    ("_agree", ("agree",)),
    ("_evidence", ("evidence-metrics", "coverage")),
    ("_env", ("env",)),
    ("_conformal", ("conformal",)),
    ("_explore", ("explore",)),
    ("_span_labels", ("export-labels", "import-labels")),
    ("_report", ("report",)),
)

DESCRIPTION = """\
Audit how LLM search agents reach their answers.

Reads agent traces (SeekBench JSONL, Search-R1 tagged text, OpenAI chat messages,
ATIF, Inspect AI logs, OpenTelemetry spans, or seekbench's canonical format), takes
per-step labels (inline, or an annotation set), and reports process metrics per
agent: RQI (groundedness of reasoning), ERF (evidence recovery), CE (calibration of
the decision to answer), and outcome and efficiency numbers, with bootstrap
confidence intervals.
"""


EPILOG = """\
exit codes:
  0  done: every trace, answer, episode or estimate asked for was handled
  2  user error: one line on stderr naming the file, line, trace id and field;
     nothing was written
  3  done with failures: some traces, answers, episodes or estimates could not
     be judged or run (the endpoint failed, the budget ran out); the output is
     valid, the summary says how many and shows the first server error in full
     (status, message, endpoint), and re-running the same command resumes
"""


def chosen_command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs: its first word when that names one (the top-level options,
    ``--help`` and ``--version``, take no value), else None."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if any(first in names for _, names in COMMANDS) else None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or (``command``) of that command alone, importing only its module."""
    parser = argparse.ArgumentParser(
        prog="seekbench", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"seekbench {__version__} (trace and annotation schema_version {SCHEMA_VERSION})",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module, names in COMMANDS:
        if command is None or command in names:
            importlib.import_module(f"{__package__}.{module}").register(sub)
    return parser


#: Other options that name a file to write: (dest, as the user typed it).
FILE_OUTPUTS = (
    ("decisions", "--decisions"),
    ("labels_out", "--labels-out"),
    ("estimates", "--estimates"),
    ("per_trace", "--per-trace"),
)


def check_outputs(args: argparse.Namespace) -> None:
    """Every path the command will write is checked before any work: one line and exit 2 if unwritable."""
    from .._io import check_output

    if getattr(args, "output", None):
        check_output(args.output, directory=getattr(args, "output_is_directory", False))
    for dest, option in FILE_OUTPUTS:
        if getattr(args, dest, None):
            check_output(getattr(args, dest), option=option)


def hold_locks(args: argparse.Namespace) -> contextlib.AbstractContextManager:
    """The locks of the outputs and judge cache the command writes, held for its run (see ``_locks``)."""
    from .._lock import exclusive_all
    from ._locks import run_locks

    return exclusive_all(run_locks(args))


def main(argv: Sequence[str] | None = None) -> int:
    # No process settings: each speed trick of the command (an early fork server, no transparent huge
    # pages, OpenBLAS's and Arrow's settings, the fork server's preloads) saved under 10% of the 1x run
    # and went (issue 28; scripts/bench/tricks.py measures each, on or off, from outside).
    argv = sys.argv[1:] if argv is None else list(argv)
    return _run(argv, chosen_command(argv))


def _run(argv: list[str], command: str | None) -> int:
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        check_outputs(args)
        with hold_locks(args), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SeekbenchWarning)
            warnings.simplefilter("always", UndefinedMetricWarning)
            code = int(args.run(args) or 0)
        _print_warnings(caught)
        return code
    except UserInputError as e:
        print(f"seekbench: error: {e.one_line()}", file=sys.stderr)
        # a judge run's output cut back to its last whole record is valid, and a re-run resumes it
        return EXIT_FAILURES if isinstance(e, OutputWriteError) and e.resumable else EXIT_USER_ERROR
    except BrokenPipeError:
        return 0
    except OSError as e:
        from .._write_errors import is_write_error

        if e.filename is None and not is_write_error(e):
            raise
        # an output that became unwritable mid-run (disk full, removed folder): still one line
        where = f"{e.filename}: " if e.filename is not None else ""
        print(f"seekbench: error: {where}cannot write: {e.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("seekbench: interrupted", file=sys.stderr)
        return 130


def _print_warnings(caught) -> None:
    """Our own warnings as one line each on stderr (once per message); others re-emitted as usual."""
    seen = set()
    for w in caught:
        if issubclass(w.category, (SeekbenchWarning, UndefinedMetricWarning)):
            # the Python API's "returning NaN" is the table's n/a on the command line
            msg = str(w.message).replace("; returning NaN", "; shown as n/a")
            if msg not in seen:
                seen.add(msg)
                print(f"seekbench: note: {msg}", file=sys.stderr)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
