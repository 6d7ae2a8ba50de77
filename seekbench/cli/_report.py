"""``seekbench report``: the process audit as HTML, Markdown, figures and tables, optionally with judge agreement."""

from __future__ import annotations

import argparse
import functools

from .._errors import UserInputError
from ._agree import load_judged_sets
from ._corrected import add_correct_options, corrected_from_args
from ._explore import add_audit_options, audit_kwargs
from ._inputs import add_input_arguments, add_label_arguments, import_options, load_input
from ._metrics import add_metric_options, metric_kwargs, metric_options
from ._options import add_command, add_output, add_reference_options, check_at_least
from ._output import wrote_report
from ._scale import PARALLEL_WORK, add_engine_arguments

DESCRIPTION = f"""\
Write DIR/report.html (self-contained, opens offline), DIR/report.md, DIR/figures/*.png and
DIR/tables/*.csv. It opens with which agent is better: per metric (RQI, CE, ERF(8), accuracy,
overconfident and overcautious rates, tool calls, duplicate-query rate) its direction, the agents'
order and one sentence saying whether each difference is clear, and every agent's difference
from --baseline NAME (default: the first agent; 'best': each metric's best agent) with a
bootstrap CI paired by question (tables/comparison.csv), drawn first as one forest panel per
metric (figures/comparison.png). Long agent names are shown under short labels (--label
FULL=SHORT to choose them; tables/agents.csv maps each label to its full name). Then
per-group metrics with CIs, ERF curves, RQI by reasoning type, calibration of the answer
decision, evidence prevalence and a per-trace audit with each flagged trace's steps. Without
FILE, the embedded sample traces (offline, labeled) are used.

The metrics are aggregated from one per-trace reduction of the steps. --jobs N computes the
groups' metrics in N worker processes when the bootstrap is large enough to gain from them
(traces x --n-boot of {PARALLEL_WORK // 1_000_000} million and more, as `seekbench metrics` does);
--engine ray makes the reduction on Ray Data tasks (the Ray cluster named by RAY_ADDRESS), reading
the trace files there, with their inline labels (not with --labels). The report is the same
whatever the engine and jobs.

With --rater (judged annotation sets), a judge-agreement section follows the comparison
(kappa, AC1, disagreement examples linked into the explorer, confusion matrices, kappa versus
cost, and how far the judges' labels move RQI, CE and ERF). With --agreement, only that
agreement report is written (DIR/agreement.html).

Examples:
  seekbench report -o demo-report
  seekbench report traces.jsonl --labels judge.jsonl -o report/
  seekbench report traces.jsonl --baseline fewshot-Qwen2.5-7B-Instruct -o report/
  seekbench report traces.jsonl --baseline best --label SearchR1-nq_hotpotqa_train-qwen2.5-7b=SearchR1 -o report/
  RAY_ADDRESS=auto seekbench report rollouts.parquet --engine ray -o report/
  seekbench report traces.jsonl --reference inline --rater judge.jsonl -o report/
  seekbench report --agreement traces.jsonl --reference human.jsonl --rater a.jsonl --rater b.jsonl -o agr/
"""


def register(sub) -> None:
    p = add_command(
        sub, "report", help="write the audit report (HTML, Markdown, figures, tables)", description=DESCRIPTION
    )
    add_input_arguments(p, files_required=False)
    add_label_arguments(p)
    add_metric_options(p)
    add_audit_options(p)
    p.add_argument("--worst", type=int, default=5, metavar="N", help="worst traces listed per agent (default 5)")
    p.add_argument(
        "--baseline",
        default=None,
        metavar="NAME",
        help="agent the comparison compares every other agent with (default: the first agent); "
        "'best': each metric's best agent",
    )
    p.add_argument(
        "--label",
        "--agent-label",
        dest="agent_labels",
        action="append",
        default=None,
        metavar="FULL=SHORT",
        help="show agent FULL as SHORT in every figure and table (repeat for several agents); names longer "
        "than 24 characters get a short label automatically (common prefixes and suffixes and filler words "
        "removed, model sizes and run tags kept); the report lists every label beside its full name, and the "
        "CSV tables keep the full names",
    )
    g = p.add_argument_group("judge agreement")
    add_reference_options(g)
    g.add_argument("--agreement", action="store_true", help="write only the agreement report")
    add_correct_options(g, reference=False)
    c = p.add_argument_group("seeking episodes")
    c.add_argument(
        "--conformal",
        default=None,
        metavar="ESTIMATES.jsonl",
        help="completeness estimates of synthetic belief states (seekbench env synth-beliefs): adds "
        "conformal coverage and q_hat per agent beside completeness",
    )
    c.add_argument("--alpha", type=float, default=0.1, help="conformal miscoverage level (default 0.1)")
    add_engine_arguments(
        p,
        about="The report holds every trace in memory (its explorer shows them all); the metrics are "
        "aggregated from one per-trace reduction of the steps, made here or on Ray.",
        jobs=f"worker processes computing the groups' metrics when traces x --n-boot reaches "
        f"{PARALLEL_WORK // 1_000_000} million (default: all cores; 1: this process only)",
    )
    add_output(p, metavar="DIR", help="report directory", directory=True)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis import analyze, analyze_agreement
    from ..report import parse_label_options, short_labels, write_report
    from ..scale import default_jobs, local_workers

    if args.agreement and not args.raters:
        raise UserInputError("--agreement needs at least one --rater annotation set")
    check_at_least(args, ("worst", 0), ("jobs", 1))
    if args.engine != "local" and (args.labels or args.agreement):
        what = "--labels is" if args.labels else "the agreement report is"
        raise UserInputError(f"{what} made with --engine local only")
    labels = parse_label_options(args.agent_labels)
    loaded = load_input(args)
    short_labels(loaded.traces["agent"].astype(str), overrides=labels)  # an unknown agent: exit 2 before the work
    kw = metric_kwargs(args)
    reference, raters = load_judged_sets(args, loaded.read.traces)
    judged = {"reference": reference, "raters": raters, "tiebreaker": args.tiebreaker}
    if args.agreement:
        from ..report import write_agreement_report

        agreement = analyze_agreement(traces=loaded.read.traces, **judged, **kw)
        print(wrote_report(args.output, "agreement", write_agreement_report(agreement, args.output)))
        return 0
    estimates = None
    if args.conformal:
        from ..env.conformal import read_estimates

        estimates = read_estimates(args.conformal)
    inputs = {"files": ", ".join(args.files), "labels": loaded.label_source, "skipped_records": loaded.read.n_skipped}
    jobs = default_jobs() if args.jobs is None else args.jobs
    with local_workers(jobs if len(loaded.traces) * args.n_boot >= PARALLEL_WORK else 1) as pool:
        analysis = analyze(
            loaded.steps,
            loaded.traces,
            trace_dicts=loaded.read.traces,
            inputs=inputs,
            audit_options=audit_kwargs(args),
            worst_n=args.worst,
            estimates=estimates,
            alpha=args.alpha,
            labels=loaded.labels,
            label_source=loaded.label_source,
            baseline=args.baseline,
            statistics=_statistics(args) if args.engine != "local" else None,
            executor=pool,
            **judged,
            **kw,
        )
    if args.correct:
        import dataclasses

        corrected = corrected_from_args(args, loaded, options=metric_options(args), audit_options=audit_kwargs(args))
        analysis = dataclasses.replace(analysis, corrected=corrected)
    files = write_report(analysis, args.output, labels=labels)
    print(
        f"wrote {files.html} ({len(files.figures)} figures, {len(files.tables)} tables), {files.markdown} and "
        f"{files.explorer}"
    )
    return 0


def _statistics(args: argparse.Namespace):
    """The per-trace statistics of ``args.files`` reduced on ``args.engine`` (its workers read the files)."""
    from ..metrics import trace_statistics
    from ..scale import reduce_traces

    red = reduce_traces(
        args.files,
        functools.partial(trace_statistics, options=metric_options(args)),
        engine=args.engine,
        format=args.format,
        skip_invalid=args.skip_invalid,
        **import_options(args),
    )
    return red.rows
