"""``seekbench report``: the process audit as HTML, Markdown, figures and tables, optionally with judge agreement."""

from __future__ import annotations

import argparse
import sys

from .._errors import UserInputError
from ._explore import add_audit_options, audit_kwargs
from ._inputs import add_input_arguments, add_label_arguments, load_input
from ._metrics import add_metric_options, metric_kwargs

DESCRIPTION = """\
Write DIR/report.html (self-contained, opens offline), DIR/report.md, DIR/figures/*.png and
DIR/tables/*.csv: per-group metrics with CIs, ERF curves, RQI by reasoning type, calibration
of the answer decision, evidence prevalence and a per-trace audit with each flagged trace's
steps. Without FILE, the embedded sample traces (offline, labeled) are used.

With --rater (judged annotation sets), the report gains a judge-agreement section (kappa,
AC1, confusion matrices, kappa versus cost, and how far the judges' labels move RQI, CE and
ERF). With --agreement, only that agreement report is written (DIR/agreement.html).

Examples:
  seekbench report -o demo-report
  seekbench report traces.jsonl --labels judge.jsonl -o report/
  seekbench report traces.jsonl --reference inline --rater judge.jsonl -o report/
  seekbench report --agreement traces.jsonl --reference human.jsonl --rater a.jsonl --rater b.jsonl -o agr/
"""


def register(sub) -> None:
    p = sub.add_parser(
        "report",
        help="write the audit report (HTML, Markdown, figures, tables)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
        help="agent the comparison's pairwise table compares every other agent with (default: the first agent)",
    )
    g = p.add_argument_group("judge agreement")
    g.add_argument(
        "--reference",
        default="inline",
        metavar="HUMAN.jsonl",
        help="reference labels for the agreement section: an annotation set or 'inline' (default)",
    )
    g.add_argument(
        "--rater",
        action="append",
        default=[],
        dest="raters",
        metavar="JUDGED.jsonl",
        help="judged annotation set to compare with the reference (repeatable)",
    )
    g.add_argument("--tiebreaker", default=None, metavar="NAME", help="rater that breaks majority-panel ties")
    g.add_argument("--agreement", action="store_true", help="write only the agreement report")
    c = p.add_argument_group("seeking episodes")
    c.add_argument(
        "--conformal",
        default=None,
        metavar="ESTIMATES.jsonl",
        help="completeness estimates of synthetic belief states (seekbench env synth-beliefs): adds "
        "conformal coverage and q_hat per agent beside completeness",
    )
    c.add_argument("--alpha", type=float, default=0.1, help="conformal miscoverage level (default 0.1)")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="report directory")
    p.set_defaults(run=run, output_is_directory=True)  # -o names a folder


def run(args: argparse.Namespace) -> int:
    from ..analysis import analyze, analyze_agreement
    from ..report import write_report

    if args.agreement and not args.raters:
        raise UserInputError("--agreement needs at least one --rater annotation set")
    if args.worst < 0:
        raise UserInputError("--worst must be >= 0")
    loaded = load_input(args)
    kw = metric_kwargs(args)
    from ._agree import _load_sets

    reference, raters = _load_sets(args, loaded.read.traces) if args.raters else (None, [])
    if args.agreement:
        from ..report import write_agreement_report

        agreement = analyze_agreement(reference, raters, traces=loaded.read.traces, tiebreaker=args.tiebreaker, **kw)
        agr = write_agreement_report(agreement, args.output)
        from ..report import record_written

        record_written(args.output, "agreement", [agr.html, *agr.figures, *agr.tables])
        print(f"wrote {agr.html} ({len(agr.figures)} figures, {len(agr.tables)} tables)")
        return 0
    by = kw.pop("by")
    estimates = None
    if args.conformal:
        from ..env.conformal import read_estimates

        estimates = read_estimates(args.conformal)
    inputs = {"files": ", ".join(args.files), "labels": loaded.label_source, "skipped_records": loaded.read.n_skipped}
    analysis = analyze(
        loaded.steps,
        loaded.traces,
        trace_dicts=loaded.read.traces,
        by=by,
        inputs=inputs,
        audit_options=audit_kwargs(args),
        worst_n=args.worst,
        reference=reference,
        raters=raters,
        tiebreaker=args.tiebreaker,
        estimates=estimates,
        alpha=args.alpha,
        labels=loaded.labels,
        label_source=loaded.label_source,
        baseline=args.baseline,
        **kw,
    )
    files = write_report(analysis, args.output)
    print(
        f"wrote {files.html} ({len(files.figures)} figures, {len(files.tables)} tables), {files.markdown} and "
        f"{files.explorer}",
        file=sys.stdout,
    )
    return 0
