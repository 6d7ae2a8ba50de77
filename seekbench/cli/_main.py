"""Entry point: argument parsing, dispatch, and the one place user errors become exit code 2."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from .._errors import SeekbenchWarning, UndefinedMetricWarning, UserInputError
from .._version import SCHEMA_VERSION, __version__
from . import (
    _agree,
    _annotate,
    _cache,
    _conformal,
    _convert,
    _env,
    _evidence,
    _explore,
    _judge,
    _judge_answers,
    _metrics,
    _report,
    _span_labels,
    _validate,
)

COMMANDS = (
    _validate,
    _convert,
    _metrics,
    _annotate,
    _judge,
    _judge_answers,
    _cache,
    _agree,
    _evidence,
    _env,
    _conformal,
    _explore,
    _span_labels,
    _report,
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="seekbench", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"seekbench {__version__} (trace and annotation schema_version {SCHEMA_VERSION})",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in COMMANDS:
        mod.register(sub)
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        check_outputs(args)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SeekbenchWarning)
            warnings.simplefilter("always", UndefinedMetricWarning)
            code = int(args.run(args) or 0)
        _print_warnings(caught)
        return code
    except UserInputError as e:
        print(f"seekbench: error: {e.one_line()}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as e:
        if e.filename is None:
            raise
        # an output that became unwritable mid-run (disk full, removed folder): still one line
        print(f"seekbench: error: {e.filename}: cannot write: {e.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("seekbench: interrupted", file=sys.stderr)
        return 130


def _print_warnings(caught) -> None:
    """Our own warnings as one line each on stderr (once per message); others re-emitted as usual."""
    seen = set()
    for w in caught:
        if issubclass(w.category, (SeekbenchWarning, UndefinedMetricWarning)):
            msg = str(w.message)
            if msg not in seen:
                seen.add(msg)
                print(f"seekbench: note: {msg}", file=sys.stderr)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
