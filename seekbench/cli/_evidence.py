"""``seekbench evidence-metrics`` (InfoDeepSeek ACC, IA@k, EEU, IC) and ``seekbench coverage`` (PrimeSeeker)."""

from __future__ import annotations

import argparse
import math
import sys

import pandas as pd

from .._errors import EXIT_FAILURES, EXIT_OK, UserInputError
from .._io import dumps
from ._inputs import add_input_arguments
from ._judge_answers import load_any_traces

EVIDENCE_DESCRIPTION = """\
InfoDeepSeek evidence-set metrics (docs/metrics/evidence-sets.md) per group: ACC (final
answers correct), IA@k (answers from the top-k evidence correct, k = 1..n;
k beyond an evidence set reuses the whole set), EEU = max_k IA@k / ACC
(n/a when ACC = 0), IC (evidence-set size over the reference source set, with
the failure penalty (n + b) / |S| when no k answers correctly; lower is more
compact), and the interference rate (answered correctly without retrieval,
wrongly with it). Pending or failed judgments are left out of every
denominator and counted in the `pending` columns.

FILE: traces carrying metadata.evidence_set (e.g. written by `seekbench
judge-answers`), or InfoDeepSeek score or result files, imported on the fly.
"""

COVERAGE_DESCRIPTION = """\
Reference-step coverage (PrimeSeeker): the share of a question's reference
evidence statements the trajectory's observations establish, answer-supporting
statements counting only on correct trajectories, and the capped process
score min(C, coverage). --skeleton is JSONL, one question per line:
{"question_id": ..., "steps": [{"id", "statement", "role": "intermediate"|"answer",
"evidence": [alternative phrases]}]}. The default matcher is offline (exact or
normalised substring); --judge NAME asks an LLM judge instead.
"""


def register(sub) -> None:
    p = sub.add_parser(
        "evidence-metrics",
        help="InfoDeepSeek ACC, IA@k, EEU, IC and interference rate",
        description=EVIDENCE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_arguments(p)
    p.add_argument("--by", default="agent", choices=["agent", "none"], help="grouping (default: agent)")
    p.add_argument(
        "--attribute",
        action="append",
        default=[],
        metavar="NAME",
        help="also break down by a question attribute (boolean, scalar or list, e.g. multi_hop, "
        "false_premise, domain, advantage_language); repeatable",
    )
    p.add_argument("--n", type=int, default=5, help="evidence-set size cap: IA@1..IA@n and IC's n (default 5)")
    p.add_argument("--b", type=float, default=1.0, help="IC failure penalty beyond n (default 1)")
    p.add_argument("--lang", choices=["en", "zh"], default=None, help="language of InfoDeepSeek input files")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.set_defaults(run=run_evidence)

    c = sub.add_parser(
        "coverage",
        help="reference-step coverage of trajectories against an evidence skeleton",
        description=COVERAGE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_arguments(c)
    c.add_argument("--skeleton", required=True, metavar="FILE", help="reference evidence skeleton (JSONL)")
    c.add_argument("--by", default="agent", choices=["agent", "none"], help="grouping (default: agent)")
    c.add_argument(
        "--history",
        default="observations",
        choices=["observations", "queries_and_observations"],
        help="where the rule matcher looks (default: observations only; asking is not finding)",
    )
    c.add_argument("--cap", type=float, default=0.5, help="C, the bound on the process score (default 0.5)")
    c.add_argument(
        "--step-credit", type=float, default=None, metavar="W", help="credit per covered statement (default 1/|D_q|)"
    )
    c.add_argument(
        "--judge",
        default=None,
        metavar="NAME",
        help="decide coverage with this LLM judge file (default: the offline rule matcher)",
    )
    c.add_argument("--cache", default=None, metavar="PATH", help="SQLite judge cache (with --judge)")
    c.add_argument("--base-url", default=None, metavar="URL", help="override the judge's endpoint")
    c.add_argument("--budget-usd", type=float, default=None, metavar="X", help="spending limit (with --judge)")
    c.add_argument("--per-trace", default=None, metavar="CSV", help="also write the per-trace table as CSV")
    c.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    c.set_defaults(run=run_coverage, lang=None)


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, float):
        return f"{v:g}" if v.is_integer() else f"{v:.3f}"
    return str(v)


def format_frame(df: pd.DataFrame) -> str:
    """A fixed-width text table, undefined values as n/a."""
    cols = [str(c) for c in df.columns]
    rows = [[_fmt(v) for v in r] for r in df.itertuples(index=False)]
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(cols)]

    def line(r: list[str]) -> str:
        return "  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip()  # one width per column

    return "\n".join([line(cols), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def run_evidence(args: argparse.Namespace) -> int:
    from ..answers import evidence_set_table
    from ..metrics import evidence_set_summary

    if args.n < 1:
        raise UserInputError(f"--n must be >= 1, got {args.n}")
    if not args.b >= 0:
        raise UserInputError(f"--b must be >= 0, got {args.b}")
    traces = load_any_traces(args)
    table = evidence_set_table(traces)
    if table.empty:
        raise UserInputError(
            "no trace carries an evidence set (metadata.evidence_set); import InfoDeepSeek files "
            "or add evidence sets with per-k judgments",
            file=", ".join(args.files),
        )
    by = () if args.by == "none" else (args.by,)
    groups = evidence_set_summary(table, by=by, n=args.n, b=args.b)
    attrs = {a: evidence_set_summary(table, by=by, attribute=a, n=args.n, b=args.b) for a in args.attribute}
    for a, df in attrs.items():
        if df.empty:
            raise UserInputError(
                f"no question has the attribute {a!r}; attributes present: "
                f"{', '.join(sorted({k for d in table['attributes'] for k in d})) or 'none'}"
            )
    options = {"n": args.n, "b": args.b, "by": args.by}
    if args.json:
        out = {
            "groups": groups.to_dict("records"),
            "attributes": {a: d.to_dict("records") for a, d in attrs.items()},
            "options": options,
            "inputs": {"files": args.files, "traces": len(traces), "with_evidence_set": len(table)},
        }
        sys.stdout.write(dumps(out) + "\n")
        return 0
    main = [
        *by,
        "questions",
        "ACC",
        *(f"IA@{k}" for k in range(1, args.n + 1)),
        "EEU",
        "IC",
        "interference_rate",
        "pending_acc",
        "pending_ia",
        "pending_ic",
        "pending_interference",
    ]
    text = [format_frame(groups[main])]
    for a, d in attrs.items():
        text += ["", f"by {a}:", format_frame(d[[*by, "value", *main[len(by) :]]])]
    text.append(
        f"\noptions: n={args.n}, b={args.b:g}; {len(table)} of {len(traces)} traces carry an evidence set; "
        "n/a = undefined (e.g. EEU when ACC = 0); pending = judgments missing or failed, left out"
    )
    sys.stdout.write("\n".join(text) + "\n")
    return 0


def run_coverage(args: argparse.Namespace) -> int:
    from ..metrics import RuleMatcher, reference_step_coverage

    if not args.cap >= 0:
        raise UserInputError(f"--cap must be >= 0, got {args.cap}")
    traces = load_any_traces(args)
    llm: LLMCoverageMatcher | None = None
    if args.judge:
        from ..answers import LLMCoverageMatcher

        llm = LLMCoverageMatcher(args.judge, cache=args.cache, budget_usd=args.budget_usd, base_url=args.base_url)
    matcher = llm if llm is not None else RuleMatcher(history=args.history)
    res = reference_step_coverage(traces, args.skeleton, matcher=matcher, cap=args.cap, step_credit=args.step_credit)
    if res.per_trace.empty:
        raise UserInputError(
            "no trace's question is in the skeleton (matched by question_id, then question text)", file=args.skeleton
        )
    by = () if args.by == "none" else (args.by,)
    summary = res.summary(by)
    if args.per_trace:
        from .._io import write_text

        write_text(args.per_trace, res.per_trace.to_csv(index=False))
    failed = llm.failed if llm is not None else 0  # the offline rule matcher cannot fail
    code = EXIT_FAILURES if failed else EXIT_OK
    if llm is not None and failed:
        print(
            f"seekbench: the coverage judge failed on {failed} trajectories (their statements are left "
            f"unscored; re-run to retry); first error: {llm.first_error}",
            file=sys.stderr,
        )
    if args.json:
        sys.stdout.write(
            dumps(
                {
                    "groups": summary.to_dict("records"),
                    "options": res.options,
                    "traces": len(traces),
                    "no_skeleton": res.no_skeleton,
                    "failed": failed,
                }
            )
            + "\n"
        )
        return code
    opts = ", ".join(f"{k}={v}" for k, v in res.options.items())
    sys.stdout.write(
        format_frame(summary) + f"\n\noptions: {opts}; {res.no_skeleton} traces without a skeleton "
        "left out; n/a = undefined\n"
    )
    return code
