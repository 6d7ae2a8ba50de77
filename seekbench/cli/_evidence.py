"""``seekbench evidence-metrics`` (InfoDeepSeek ACC, IA@k, EEU, IC) and ``seekbench coverage`` (PrimeSeeker)."""

from __future__ import annotations

import argparse
import math
import sys

import pandas as pd

from .._errors import UserInputError
from ._inputs import add_input_arguments
from ._judge_answers import add_lang_option, load_any_traces
from ._options import add_command, add_json, add_judge_option, add_llm_options, check_at_least, llm_kwargs
from ._output import finish, fixed_width

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


#: The LLM options of coverage with --judge (seekbench.cli._options.LLM_OPTIONS), as keywords of LLMCoverageMatcher.
COVERAGE_LLM = ("cache", "base_url", "budget_usd")


def add_by_option(p) -> None:
    """``--by``: the grouping of the evidence-set and coverage tables."""
    p.add_argument("--by", default="agent", choices=["agent", "none"], help="grouping (default: agent)")


EVIDENCE_METRICS_HELP = "InfoDeepSeek ACC, IA@k, EEU, IC and interference rate"

COVERAGE_HELP = "reference-step coverage of trajectories against an evidence skeleton"


def register(sub) -> None:
    p = add_command(sub, "evidence-metrics", help=EVIDENCE_METRICS_HELP, description=EVIDENCE_DESCRIPTION)
    add_input_arguments(p)
    add_by_option(p)
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
    add_lang_option(p)
    add_json(p)
    p.set_defaults(run=run_evidence)

    c = add_command(sub, "coverage", help=COVERAGE_HELP, description=COVERAGE_DESCRIPTION)
    add_input_arguments(c)
    c.add_argument("--skeleton", required=True, metavar="FILE", help="reference evidence skeleton (JSONL)")
    add_by_option(c)
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
    add_judge_option(c, help="decide coverage with this LLM judge (default: the offline rule matcher)")
    add_llm_options(c, *COVERAGE_LLM)
    c.add_argument("--per-trace", default=None, metavar="CSV", help="also write the per-trace table as CSV")
    add_json(c, what="one JSON object instead of a table")
    c.set_defaults(run=run_coverage, lang=None)


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, float):
        return f"{v:g}" if v.is_integer() else f"{v:.3f}"
    return str(v)


def format_frame(df: pd.DataFrame) -> str:
    """A fixed-width text table, undefined values as n/a."""
    rows = [[_fmt(v) for v in r] for r in df.itertuples(index=False)]
    return "\n".join(fixed_width([str(c) for c in df.columns], rows))


#: Counts behind the evidence-set numbers, in the JSON but not the text tables (pending counts are shown).
COUNT_COLUMNS = ("attribute", "EEU_k", "n_acc", "n_ic", "no_sources_ic", "n_interference")


def _shown(frame: pd.DataFrame) -> pd.DataFrame:
    """The summary's columns as the text table shows them: the metrics and pending counts, in its order."""
    return frame[[c for c in frame.columns if c not in COUNT_COLUMNS]]


def run_evidence(args: argparse.Namespace) -> int:
    from ..answers import evidence_set_table
    from ..metrics import evidence_set_summary

    check_at_least(args, ("n", 1), ("b", 0))
    traces = load_any_traces(args)
    table = evidence_set_table(traces)
    if table.empty:
        raise UserInputError(
            "no trace carries an evidence set (metadata.evidence_set); import InfoDeepSeek files "
            "or add evidence sets with per-k judgments",
            file=", ".join(args.files),
        )
    kw = {"by": () if args.by == "none" else (args.by,), "n": args.n, "b": args.b}
    groups = evidence_set_summary(table, **kw)
    attrs = {a: evidence_set_summary(table, attribute=a, **kw) for a in args.attribute}
    for a, df in attrs.items():
        if df.empty:
            raise UserInputError(
                f"no question has the attribute {a!r}; attributes present: "
                f"{', '.join(sorted({k for d in table['attributes'] for k in d})) or 'none'}"
            )
    out = {
        "groups": groups.to_dict("records"),
        "attributes": {a: d.to_dict("records") for a, d in attrs.items()},
        "options": {"n": args.n, "b": args.b, "by": args.by},
        "inputs": {"files": args.files, "traces": len(traces), "with_evidence_set": len(table)},
    }
    text = [format_frame(_shown(groups))]
    for a, d in attrs.items():
        text += ["", f"by {a}:", format_frame(_shown(d))]
    text.append(
        f"\noptions: n={args.n}, b={args.b:g}; {len(table)} of {len(traces)} traces carry an evidence set; "
        "n/a = undefined (e.g. EEU when ACC = 0); pending = judgments missing or failed, left out"
    )
    return finish(args, out, "\n".join(text))


def run_coverage(args: argparse.Namespace) -> int:
    from ..metrics import RuleMatcher, reference_step_coverage

    check_at_least(args, ("cap", 0))
    traces = load_any_traces(args)
    llm: LLMCoverageMatcher | None = None
    if args.judge:
        from ..answers import LLMCoverageMatcher

        llm = LLMCoverageMatcher(args.judge, **llm_kwargs(args, *COVERAGE_LLM))
    matcher = llm if llm is not None else RuleMatcher(history=args.history)
    res = reference_step_coverage(traces, args.skeleton, matcher=matcher, cap=args.cap, step_credit=args.step_credit)
    if res.per_trace.empty:
        raise UserInputError(
            "no trace's question is in the skeleton (matched by question_id, then question text)", file=args.skeleton
        )
    summary = res.summary(() if args.by == "none" else (args.by,))
    if args.per_trace:
        from .._csv import csv_text
        from .._io import write_text

        write_text(args.per_trace, csv_text(res.per_trace))
    failed = llm.failed if llm is not None else 0  # the offline rule matcher cannot fail
    if llm is not None and failed:
        print(
            f"seekbench: the coverage judge failed on {failed} trajectories (their statements are left "
            f"unscored; re-run to retry); first error: {llm.first_error}",
            file=sys.stderr,
        )
    out = {
        "groups": summary.to_dict("records"),
        "options": res.options,
        "traces": len(traces),
        "no_skeleton": res.no_skeleton,
        "failed": failed,
    }
    opts = ", ".join(f"{k}={v}" for k, v in res.options.items())
    text = (
        format_frame(summary)
        + f"\n\noptions: {opts}; {res.no_skeleton} traces without a skeleton left out; n/a = undefined"
    )
    return finish(args, out, text, failed=bool(failed))
