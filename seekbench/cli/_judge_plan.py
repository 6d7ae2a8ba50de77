"""``seekbench judge plan``: how many more traces humans must label to know a judge's kappa, and which."""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

from .._errors import UndefinedMetricWarning, UserInputError
from ._agree import _ci, _diff_ci, _f, _label_fields, _load_sets
from ._inputs import add_input_arguments, read_input
from ._options import add_command, add_json, add_output, add_reference_options, add_seed
from ._output import finish, fixed_width

PLAN_HELP = "how many more traces humans must label to pin down a judge's kappa, and which ones"

PLAN_DESCRIPTION = """\
Plan human labeling from a pilot: the traces humans labeled so far (--reference) and the
judges' labels (--rater, repeatable), on the traces given.

1. Per judge, label field and step kind (as `seekbench agree` splits them): the traces and
   steps compared now, Cohen's kappa with its 95% bootstrap CI over whole traces, the CI's
   half-width, and how many more human-labeled traces bring it to --target (default 0.05).
   The projection resamples the pilot's whole traces: for n + k traces it draws n + k of
   them with replacement, many times, and measures the spread of kappa; k is the smallest
   number whose half-width is at most the target. Because a pilot is itself a sample, this
   is done in 100 resamples of the pilot ("worlds"), each followed up by the pilot plus k
   traces from the world, and k must suffice in --assurance of them (default 0.9), with
   the worlds' spread widened twofold (resamples of a pilot vary less than pilots do; the
   factor is measured on the 190 SeekBench traces). A trace that lacks steps of a kind
   counts too: k is in whole traces.
2. With two or more judges, the same for the difference of two judges' kappas, on the
   steps the reference and both labeled: how sure the comparison is, and what it takes.
3. The traces not labeled yet, ranked to label next, with links into the trace explorer
   (`seekbench explore -o DIR` writes DIR/explorer.html; a link is explorer.html#trace=ID).
   Each trace's expected disagreements: on each step, 1 where the judges differ, else the
   pilot's rate of human disagreement with that unanimous label. --order stratified
   (default) ranks so that any top N is a stratified random sample, agent x high/low
   expected disagreement in proportion to all traces, high first: kappa measured on them
   stays unbiased. --order disagreement takes the most likely disagreements first within
   each agent (finds the judges' errors fastest; kappa measured on those is biased low:
   by 0.024 on the 190 SeekBench traces). --order random shuffles.

The top --top traces are printed; -o FILE writes the whole ranking (.csv or .jsonl). The
method and a worked example: docs/judges.md, "Planning how many traces to label".
Labels that fit none of the traces, or no step labeled by both the reference and a judge,
stop with exit code 2.

Example (the bundled sample: humans labeled questions 1-6 of each agent):
  seekbench samples
  seekbench convert traces.jsonl -o plain.jsonl --labels-out human.jsonl
  grep -E '"trace_id": "sample-[a-z-]+-q0[1-6]"' human.jsonl > pilot.jsonl
  seekbench annotate traces.jsonl --judge rules -o rules.jsonl
  seekbench judge plan traces.jsonl --reference pilot.jsonl --rater rules.jsonl --target 0.1 -o next.csv
"""


def register_plan(judge_subparsers) -> None:
    """Add ``plan`` to the ``seekbench judge`` subcommands."""
    p = add_command(judge_subparsers, "plan", help=PLAN_HELP, description=PLAN_DESCRIPTION)
    add_input_arguments(p)
    add_reference_options(p, required=True, tiebreaker=False)
    g = p.add_argument_group("the plan")
    g.add_argument(
        "--target",
        type=float,
        default=0.05,
        metavar="H",
        help="the 95%% CI half-width wanted for each kappa and difference (default 0.05)",
    )
    g.add_argument(
        "--assurance",
        type=float,
        default=0.9,
        metavar="P",
        help="the planned traces must suffice in this share of the resampled pilots (default 0.9; 0.5: the median)",
    )
    g.add_argument(
        "--fields",
        default=None,
        metavar="F1,F2",
        help="label fields to plan for (default: every field the reference labels)",
    )
    g.add_argument(
        "--order",
        default="stratified",
        choices=["stratified", "disagreement", "random"],
        help="how to rank the unlabeled traces (default stratified; see above)",
    )
    g.add_argument("--top", type=int, default=10, metavar="N", help="ranked traces to print (default 10)")
    g.add_argument(
        "--explorer-page",
        default="explorer.html",
        metavar="PATH",
        help="the trace explorer page the links point to (default explorer.html, as `seekbench explore` writes it)",
    )
    g.add_argument(
        "--n-boot", type=int, default=2000, metavar="B", help="bootstrap resamples of the CIs now (default 2000)"
    )
    add_seed(g, of="bootstrap, the projection and the ranking's random order")
    add_json(p)
    add_output(
        p, required=False, metavar="FILE", help="write the whole ranking of unlabeled traces: FILE.csv or FILE.jsonl"
    )
    p.set_defaults(run=run)


def _check(args: argparse.Namespace) -> None:
    if not args.target > 0:
        raise UserInputError(f"--target must be > 0, got {args.target}")
    if not 0.5 <= args.assurance < 1:
        raise UserInputError(f"--assurance must be in [0.5, 1), got {args.assurance}")
    if args.n_boot < 10:
        raise UserInputError(f"--n-boot must be >= 10 (the plan starts from the CI now), got {args.n_boot}")
    if args.top < 0:
        raise UserInputError(f"--top must be >= 0, got {args.top}")
    if args.output and Path(args.output).suffix.lower() not in (".csv", ".jsonl"):
        raise UserInputError(f"-o {args.output}: name a .csv or .jsonl file for the ranking")


def run(args: argparse.Namespace) -> int:
    from ..agreement import plan_annotation

    _check(args)
    read = read_input(args)
    reference, raters = _load_sets(args, read.traces)
    fields = _label_fields(args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # reported once, in plan.warnings
        plan = plan_annotation(
            reference,
            *raters,
            traces=read.traces,
            fields=fields,
            target=args.target,
            assurance=args.assurance,
            order=args.order,
            n_boot=args.n_boot,
            seed=args.seed,
            explorer=args.explorer_page,
        )
    if args.output:
        _write_ranking(plan.ranking, args.output)
        print(f"wrote {args.output} ({len(plan.ranking)} traces ranked)", file=sys.stderr)
    out = plan.to_dict()
    out["inputs"] = {"files": args.files, "reference": args.reference, "raters": args.raters}
    return finish(args, out, lambda: format_plan(plan, top=args.top, output=args.output))


def _write_ranking(ranking, path: str) -> None:
    from .._csv import csv_text
    from .._io import write_jsonl, write_text

    if Path(path).suffix.lower() == ".csv":
        write_text(path, csv_text(ranking))
    else:
        write_jsonl(path, ranking.to_dict("records"))


def _needed(v, searched) -> str:
    """Traces needed: a count, "more than N" past the sizes searched, or n/a (its note says why)."""
    if isinstance(v, float) and math.isnan(v):
        return f"more than {int(searched)}" if not math.isnan(searched) else "n/a"
    return str(int(v))


def format_plan(plan, *, top: int = 10, output: str | None = None) -> str:
    """The plan as fixed-width text: kappa now and traces needed, differences, the next traces."""
    o = plan.options
    target = f"±{o['target']:g}"
    out = [
        f"reference: {plan.reference}   judges: {', '.join(plan.raters)}   target: 95% CI half-width "
        f"{o['target']:g} (assurance {o['assurance']:g})",
        "",
    ]
    rows = [
        [
            r.rater,
            r.field,
            r.step_kind,
            str(r.n_traces),
            str(r.n_items),
            _ci(r.kappa, r.kappa_lower, r.kappa_upper),
            _f(r.half_width),
            _needed(r.traces_needed, r.traces_searched),
        ]
        for r in plan.kappa.itertuples()
    ]
    cols = ["judge", "field", "steps", "traces", "items", "kappa [95% CI]", "half-width", f"more traces for {target}"]
    out += fixed_width(cols, rows)
    if len(plan.differences):
        rows = [
            [
                f"{r.rater_a} - {r.rater_b}",
                r.field,
                r.step_kind,
                str(r.n_traces),
                str(r.n_items),
                _diff_ci(r.difference, r.difference_lower, r.difference_upper),
                _f(r.half_width),
                _needed(r.traces_needed, r.traces_searched),
            ]
            for r in plan.differences.itertuples()
        ]
        cols[0], cols[5] = "difference", "kappa difference [95% CI]"
        out += ["", "difference in kappa between judges (on the steps the reference and both labeled):"]
        out += fixed_width(cols, rows)
    notes = [
        f"{getattr(r, 'rater', None) or r.rater_a + ' - ' + r.rater_b}/{r.field} ({r.step_kind}): {r.note}"
        for frame in (plan.kappa, plan.differences)
        for r in frame.itertuples()
        if r.note
    ]
    out += [
        "",
        "more traces: human-labeled traces to add so that the CI's half-width is at most the target in "
        f"{o['assurance']:.0%} of follow-ups (the pilot plus k traces from each of {o['n_worlds']} resampled "
        f"pilots, CI from {o['n_draws']} resamples; their spread widened {o['spread']:g}x); seed {o['seed']}.",
        *(f"note: {n}" for n in notes),
        *(f"note: {w}" for w in plan.warnings),
    ]
    rk = plan.ranking
    if len(rk):
        head = rk.head(top)
        where = f"; all {len(rk)} in {output}" if output else "; -o FILE writes them all"
        out += ["", f"next traces to label (top {len(head)} of {len(rk)} unlabeled, order: {o['order']}{where}):"]
        several = len(plan.raters) > 1  # "judges differ" says nothing with one judge
        cols = ["rank", "trace", "agent", "expected", *(["judges differ"] if several else []), "items", "explorer"]
        rows = [
            [
                str(r.rank),
                str(r.trace_id),
                f"{r.agent} / {r.stratum.rsplit(' / ', 1)[1]}",
                f"{r.expected_disagreements:.1f}",
                *([str(r.judge_disagreements)] if several else []),
                str(r.items),
                r.explorer,
            ]
            for r in head.itertuples()
        ]
        out += fixed_width(cols, rows)
        out.append(
            "expected: steps where the human label will likely differ from "
            + ("a judge's; judges differ: steps where the judges' labels differ" if several else "the judge's")
            + "; items: (step, field) pairs judged; high/low: expected share above/below the median of all traces."
        )
    return "\n".join(out)
