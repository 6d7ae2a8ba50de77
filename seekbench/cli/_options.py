"""Option builders shared by the commands: one spelling, default and help per option, on every command.

Each builder adds one kind of option (output, seed, judge endpoint and cache, reference and raters,
the trace files a label command reads) and each table below holds the options of a kind, so a new
option of that kind (``--jobs``, ``--baseline``...) is one more row, on every command that has the
kind. Where a command spelled an option differently before, the old spelling stays as an alias.
"""

from __future__ import annotations

import argparse

from .._errors import UserInputError
from .._limits import MEMBER_BYTES, RECORD_BYTES, ROW_GROUP_BYTES, format_size, parse_size
from ..traces import available_formats


def add_command(sub, name: str, *, help: str, description: str) -> argparse.ArgumentParser:
    """One (sub)command. A description laid out in lines (examples, tables of fields) is printed as
    written; a one-paragraph one is wrapped to the terminal."""
    formatter = argparse.RawDescriptionHelpFormatter if "\n" in description else argparse.HelpFormatter
    return sub.add_parser(name, help=help, description=description, formatter_class=formatter)


def add_command_group(sub, name: str, *, help: str, description: str, dest: str):
    """A command made of actions (``seekbench env run``, ``cache stats``...): the subparsers of its actions."""
    return add_command(sub, name, help=help, description=description).add_subparsers(
        dest=dest, metavar="ACTION", required=True
    )


def add_output(p, *, metavar: str, help: str, required: bool = True, directory: bool = False) -> None:
    """``-o/--output``: the file (or, with ``directory``, the folder) the command writes."""
    p.add_argument("-o", "--output", required=required, default=None, metavar=metavar, help=help)
    if directory:  # checked before any work as a folder, not a file (cli._main.check_outputs)
        p.set_defaults(output_is_directory=True)


def add_json(p, *, what: str = "one JSON object instead of tables") -> None:
    """``--json``: the result as JSON on stdout instead of text."""
    p.add_argument("--json", action="store_true", help=f"print {what}")


def add_seed(p, *, of: str) -> None:
    """``--seed``: the one seed option, 0 by default on every command."""
    p.add_argument("--seed", type=int, default=0, help=f"seed of the {of} (default 0)")


def add_format_option(p, *, what: str = "the trace format") -> None:
    """``--format``: force the trace format instead of detecting it per file."""
    p.add_argument(
        "--format",
        choices=available_formats(),
        default=None,
        help=f"force {what} (default: detected per file); a file holding nothing of that format is an error",
    )


def add_skip_invalid(p, *, what: str, aliases: tuple[str, ...] = (), help: str | None = None) -> None:
    """``--skip-invalid``: go on past bad records and say how many, instead of exit 2 at the first."""
    p.add_argument(
        "--skip-invalid",
        *aliases,
        dest="skip_invalid",
        action="store_true",
        help=help or f"leave out {what}, and say how many and why (default: stop at the first with exit code 2)",
    )


#: The input limits of every command that reads traces (seekbench._limits): (flag, ReadLimits field,
#: default, what it bounds).
LIMIT_OPTIONS = (
    ("--max-record-bytes", "record_bytes", RECORD_BYTES, "one record: a JSONL line, or a whole JSON or text file"),
    ("--max-member-bytes", "member_bytes", MEMBER_BYTES, "one zip member once decompressed (Inspect .eval logs)"),
    ("--max-row-group-bytes", "row_group_bytes", ROW_GROUP_BYTES, "one Parquet row group, uncompressed"),
)


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except UserInputError as e:
        raise argparse.ArgumentTypeError(e.message) from e


def add_limit_options(p) -> None:
    """``--max-record-bytes``, ``--max-member-bytes``, ``--max-row-group-bytes``: how much one record,
    zip member or Parquet row group may hold (:mod:`seekbench._limits`); past it, exit 2."""
    for flag, dest, default, what in LIMIT_OPTIONS:
        p.add_argument(
            flag,
            dest=dest,
            type=_size,
            default=None,
            metavar="SIZE",
            help=f"refuse (exit 2) more than SIZE bytes in {what}; K, M, G for KiB, MiB, GiB "
            f"(default {format_size(default).replace(' ', '')}: see docs/formats.md, Limits)",
        )


def add_span_traces(p, *, what: str) -> None:
    """The OpenTelemetry trace files a label import or export maps spans to steps with."""
    p.add_argument(
        "--traces",
        nargs="+",
        required=True,
        metavar="FILE",
        help=f"the trace files {what}, as imported from OpenTelemetry files (OTLP JSON or span tables)",
    )
    add_format_option(p)


def add_label_options(p, *, labels_help: str, rater_aliases: tuple[str, ...] = ()) -> None:
    """``--labels`` (an annotation set instead of the inline labels) and ``--labels-rater``."""
    p.add_argument("--labels", metavar="SET.jsonl", default=None, help=labels_help)
    p.add_argument(
        "--labels-rater",
        *rater_aliases,
        dest="labels_rater",
        default=None,
        metavar="NAME",
        help="with --labels holding several raters: the rater whose labels to use",
    )


def add_reference_options(p, *, required: bool = False, tiebreaker: bool = True) -> None:
    """``--reference``, ``--rater`` (judged sets, repeatable) and ``--tiebreaker``: judges against a reference."""
    p.add_argument(
        "--reference",
        required=required,
        default=None if required else "inline",
        metavar="HUMAN.jsonl",
        help="reference (human) annotation set, or 'inline' for the labels inline in the traces"
        + ("" if required else " (default)"),
    )
    p.add_argument(
        "--rater",
        action="append",
        required=required,
        default=None if required else [],
        dest="raters",
        metavar="JUDGED.jsonl",
        help="judged annotation set to compare with the reference (repeatable; a file with several raters "
        "counts as each of them)",
    )
    if tiebreaker:
        p.add_argument(
            "--tiebreaker",
            default=None,
            metavar="NAME",
            help="rater name of the judge that breaks majority-panel ties (default: ties stay open)",
        )


def add_judge_option(p, *, help: str, default: str | None = None, repeat: bool = False) -> None:
    """``--judge NAME``: a judge from judges/ (see ``seekbench judge list``) or a judge .toml file.

    ``repeat`` lets the option be given several times (a panel); the value is then a list.
    """
    kw = {"action": "append"} if repeat else {}
    p.add_argument("--judge", default=default, metavar="NAME", help=help, **kw)


#: Options of commands that ask a model: (flag, dest, add_argument keywords). Defaults are the same everywhere.
LLM_OPTIONS: dict[str, tuple[str, dict]] = {
    "concurrency": (
        "--concurrency",
        {"type": int, "default": 8, "metavar": "N", "help": "requests in flight at once (default 8)"},
    ),
    "budget_usd": (
        "--budget-usd",
        {
            "type": float,
            "default": None,
            "metavar": "X",
            "help": "send no request whose worst-case cost could take the run past X dollars (default: no limit)",
        },
    ),
    "cache": (
        "--cache",
        {
            "default": None,
            "metavar": "PATH",
            "help": "SQLite cache of completions, so a re-run pays for nothing twice "
            "(default: $SEEKBENCH_CACHE or ~/.cache/seekbench/judge_cache.sqlite)",
        },
    ),
    "no_cache": ("--no-cache", {"action": "store_true", "help": "do not read or write the completion cache"}),
    "base_url": (
        "--base-url",
        {
            "default": None,
            "metavar": "URL",
            "help": "override the endpoint of every LLM judge the command asks (e.g. a local server's "
            "http://127.0.0.1:8000/v1)",
        },
    ),
    "no_progress": ("--no-progress", {"action": "store_true", "help": "no progress on stderr"}),
}


def add_llm_options(
    p,
    *names: str,
    helps: dict[str, str] | None = None,
    aliases: dict[str, str] | None = None,
    defaults: dict[str, object] | None = None,
):
    """The options of ``names`` (keys of :data:`LLM_OPTIONS`), in that order; ``helps`` rewords one for a command.

    ``defaults`` changes a default where the command decides it at run time (annotate's concurrency: the
    server's slot count).

    ``aliases`` keeps an old spelling working beside the flag (e.g. ``{"no_progress": "--quiet"}``).
    """
    for name in names:
        flag, kw = LLM_OPTIONS[name]
        kw = {**kw, "dest": name}
        if helps and name in helps:
            kw["help"] = helps[name]
        if defaults and name in defaults:
            kw["default"] = defaults[name]
        p.add_argument(flag, *([aliases[name]] if aliases and name in aliases else []), **kw)


def llm_kwargs(args: argparse.Namespace, *names: str) -> dict:
    """The LLM options given as keywords of the Python API (``progress`` where ``--no-progress`` is an option)."""
    out = {name: getattr(args, name) for name in names if name != "no_progress"}
    if "no_progress" in names:
        out["progress"] = False if args.no_progress else None  # None: a bar when stderr is a terminal
    return out


def check_at_least(args: argparse.Namespace, *limits: tuple[str, float]) -> None:
    """Exit 2 naming the option when a number given is below its floor (NaN is below every floor)."""
    for dest, floor in limits:
        value = getattr(args, dest)
        if value is not None and not value >= floor:
            raise UserInputError(f"--{dest.replace('_', '-')} must be >= {floor:g}, got {value}")
