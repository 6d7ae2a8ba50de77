"""``seekbench annotate``: label every step of traces with a judge into an annotation set."""

from __future__ import annotations

import argparse
import sys

from .._errors import EXIT_FAILURES, EXIT_OK, UserInputError
from .._io import dumps
from ._inputs import add_input_arguments, read_input

DESCRIPTION = """\
Label the steps of agent traces with a judge and append the labels to an
annotation set (JSONL), one trace at a time as each finishes.

One request per trace labels all its steps (windows of steps for a trace
longer than the judge's context; --granularity step asks once per step);
the first search (InitialQuery) and exact repeats (RepeatQuery) are labeled
by rule, for free. Answers are validated against the judge output schema
(docs/judges.md) label by label: every valid label is kept, and a repair
(at most N) asks only for the steps still missing or invalid; what stays
invalid is recorded as unscored with the reason, never given a default label. Completions are cached (SQLite), so a
re-run of a finished job makes no request, and a run killed at any moment
resumes without paying twice: run the same command again.

Judges are TOML files in judges/ (see `seekbench judge list`). LLM judges read
OPENAI_BASE_URL and OPENAI_API_KEY unless their file names other variables;
`--judge rules` needs no key.
"""


def register(sub) -> None:
    p = sub.add_parser(
        "annotate",
        help="label trace steps with an LLM or offline judge",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_arguments(p)
    p.add_argument(
        "--judge",
        default="gpt-4.1-mini",
        metavar="NAME",
        help="judge name from judges/ or a judge .toml file (default: gpt-4.1-mini, the published default)",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="annotation set to write (JSONL); traces already in it are skipped",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=None,
        metavar="N",
        help="traces in flight at once (default: a local server's slot count as it reports it, else 1; "
        "8 for a remote API)",
    )
    p.add_argument(
        "--granularity",
        choices=("trace", "step"),
        default="trace",
        help="trace: one request per trace, in windows of steps when it is longer than the judge's context "
        "(default); step: the published SeekBench design, one request per step with the trace so far "
        "(rater NAME@step, so `seekbench agree` can compare the two)",
    )
    p.add_argument(
        "--budget-usd",
        type=float,
        default=None,
        metavar="X",
        help="stop before the run's spending could exceed X dollars (worst case per request)",
    )
    p.add_argument(
        "--batch",
        action="store_true",
        help="submit through the OpenAI Batch API (half price; resumable from OUT.batch.json)",
    )
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N traces")
    p.add_argument(
        "--cache",
        default=None,
        metavar="PATH",
        help="SQLite judge cache (default: $SEEKBENCH_CACHE or ~/.cache/seekbench/judge_cache.sqlite)",
    )
    p.add_argument("--rater", default=None, help="rater name in the records (default: the judge's name)")
    p.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help="override the judge's endpoint (e.g. a local server's http://127.0.0.1:8000/v1)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--json", action="store_true", help="print the run summary as one JSON object on stdout")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..annotate import annotate

    if args.concurrency is not None and args.concurrency < 1:
        raise UserInputError(f"--concurrency must be >= 1, got {args.concurrency}")
    if args.limit is not None and args.limit < 0:
        raise UserInputError(f"--limit must be >= 0, got {args.limit}")
    if args.budget_usd is not None and not args.budget_usd >= 0:
        raise UserInputError(f"--budget-usd must be >= 0, got {args.budget_usd}")
    read = read_input(args)
    summary = annotate(
        read.traces,
        args.judge,
        args.output,
        cache=args.cache,
        concurrency=args.concurrency,
        budget_usd=args.budget_usd,
        batch=args.batch,
        limit=args.limit,
        rater=args.rater,
        progress=False if args.no_progress else None,
        base_url=args.base_url,
        granularity=args.granularity,
    )
    if args.json:
        sys.stdout.write(dumps(summary.to_dict()) + "\n")
    else:
        print(summary.format(), file=sys.stderr)
    return EXIT_OK if summary.complete else EXIT_FAILURES
