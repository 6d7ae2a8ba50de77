"""``seekbench annotate``: label every step of traces with a judge into an annotation set."""

from __future__ import annotations

import argparse
import sys

from ._inputs import add_input_arguments, read_input
from ._options import add_command, add_json, add_judge_option, add_llm_options, add_output, check_at_least, llm_kwargs
from ._output import finish

DESCRIPTION = """\
Label the steps of agent traces with a judge and append the labels to an
annotation set (JSONL), one trace at a time as each finishes.

One request per trace labels all its steps (windows of steps for a trace
longer than the judge's context; --granularity step asks once per step);
the first search (InitialQuery) and exact repeats (RepeatQuery) are labeled
by rule, for free. Answers are validated against the judge output schema
(docs/judges.md) label by label: every valid label is kept, and a repair
(at most N) asks only for the steps still missing or invalid; what stays
invalid is recorded as unscored with the reason, never given a default label.
Completions are cached (SQLite), so a re-run of a finished job makes no
request, and a run killed at any moment resumes without paying twice: run
the same command again.

Judges are TOML files in judges/ (see `seekbench judge list`). LLM judges read
OPENAI_BASE_URL and OPENAI_API_KEY unless their file names other variables;
`--judge rules` needs no key.
"""


#: What annotate asks of the LLM options (seekbench.cli._options.LLM_OPTIONS), in ``--help`` order.
LLM = ("concurrency", "budget_usd", "cache", "base_url", "no_progress")


def register(sub) -> None:
    p = add_command(sub, "annotate", help="label trace steps with an LLM or offline judge", description=DESCRIPTION)
    add_input_arguments(p)
    add_judge_option(
        p,
        default="gpt-4.1-mini",
        help="judge name from judges/ or a judge .toml file (default: gpt-4.1-mini, the published default)",
    )
    add_output(p, metavar="OUT", help="annotation set to write (JSONL); traces already in it are skipped")
    p.add_argument(
        "--granularity",
        choices=("trace", "step"),
        default="trace",
        help="trace: one request per trace, in windows of steps when it is longer than the judge's context "
        "(default); step: the published SeekBench design, one request per step with the trace so far "
        "(rater NAME@step, so `seekbench agree` can compare the two)",
    )
    p.add_argument(
        "--batch",
        action="store_true",
        help="submit through the OpenAI Batch API (half price; resumable from OUT.batch.json)",
    )
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N traces")
    p.add_argument("--rater", default=None, help="rater name in the records (default: the judge's name)")
    add_llm_options(
        p,
        *LLM,
        helps={
            "concurrency": "traces in flight at once (default: a local server's slot count as it reports it, "
            "else 1; 8 for a remote API)"
        },
        defaults={"concurrency": None},
    )
    add_json(p, what="the run summary as one JSON object on stdout")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..annotate import annotate

    check_at_least(args, ("concurrency", 1), ("limit", 0), ("budget_usd", 0))
    read = read_input(args)
    summary = annotate(
        read.traces,
        args.judge,
        args.output,
        batch=args.batch,
        limit=args.limit,
        rater=args.rater,
        granularity=args.granularity,
        **llm_kwargs(args, *LLM),
    )
    return finish(args, summary.to_dict(), summary.format, failed=not summary.complete, text_to=sys.stderr)
