"""``seekbench validate``: check trace or annotation files against the schemas."""

from __future__ import annotations

import argparse
import sys

from ..labels import load_annotations
from ..traces import read_traces
from ._inputs import import_options
from ._options import add_command, add_format_option, add_limit_options, add_skip_invalid

VALIDATE_HELP = "check files against the canonical schemas"

VALIDATE_DESCRIPTION = (
    "Check trace files (any supported format, converted on the fly) or an "
    "annotation set against the canonical trace or annotation schema "
    "(docs/formats.md). Exit 0 if valid, 2 naming the first "
    "problem (file:line, trace id, JSON path) otherwise."
)


def register(sub) -> None:
    p = add_command(sub, "validate", help=VALIDATE_HELP, description=VALIDATE_DESCRIPTION)
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="trace files, or annotation sets with --annotations; '-' reads standard input",
    )
    add_format_option(p)
    p.add_argument("--annotations", action="store_true", help="the files are annotation sets, not traces")
    add_skip_invalid(
        p,
        what="invalid records",
        aliases=("--all",),
        help="report every invalid record instead of stopping at the first (exit code 2 all the same; "
        "--all is the old spelling)",
    )
    add_limit_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.annotations:
        total = bad = 0
        for f in args.files:
            aset = load_annotations(f, skip_invalid=args.skip_invalid)
            total += len(aset)
            bad += len(aset.skipped)
            for e in aset.skipped:
                print(e.one_line(), file=sys.stderr)
        print(f"{total} valid label records" + (f", {bad} invalid" if bad else ""))
        return 2 if bad else 0
    res = read_traces(args.files, format=args.format, skip_invalid=args.skip_invalid, **import_options(args))
    for e in res.skipped:
        print(e.one_line(), file=sys.stderr)
    n_steps = sum(len(t["steps"]) for t in res.traces)
    fmts = ", ".join(sorted(set(res.formats.values())))
    print(
        f"{len(res.traces)} valid traces ({n_steps} steps; format {fmts})"
        + (f", {res.n_skipped} invalid" if res.n_skipped else "")
    )
    return 2 if res.skipped else 0
