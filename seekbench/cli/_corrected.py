"""``--correct``: judge-corrected (PPI++) metrics on ``seekbench metrics`` and ``seekbench report``.

The judge's labels are ``--labels``; the human labels ``--reference`` (a file, or ``inline``: the
labels inline in the traces), the same option ``agree`` and ``report`` read the human reference from.
"""

from __future__ import annotations

import argparse
import math
import sys

from .._errors import UserInputError
from ._output import fixed_width

CORRECT_HELP = (
    "judge-corrected metrics (prediction-powered inference, PPI++): the judge's labels (--labels) on every "
    "trace, corrected by the judge's errors on the human-labeled traces (--reference); per agent and metric: "
    "judge only, human only (n) and corrected, with intervals (docs/metrics/ppi.md)"
)
REFERENCE_HELP = (
    "with --correct: the human annotation set, or 'inline' for the labels inline in the traces (default); "
    "its traces are the human-labeled ones"
)


def add_correct_options(p, *, reference: bool = True) -> None:
    """``--correct`` (and ``--reference`` where the command has none yet)."""
    p.add_argument("--correct", action="store_true", help=CORRECT_HELP)
    if reference:
        p.add_argument("--reference", default="inline", metavar="HUMAN.jsonl", help=REFERENCE_HELP)


def human_labels(args: argparse.Namespace, traces: list[dict]):
    """The human annotation set of ``--reference``, restricted to the traces read (exit 2 when it fits none)."""
    from ..labels import AnnotationSet, load_annotations
    from ._inputs import report_skipped

    ids = {str(t["trace_id"]) for t in traces}
    if args.reference == "inline":
        ref = AnnotationSet.from_traces(traces, source=", ".join(args.files))
        if not len(ref):
            raise UserInputError("--correct: the traces carry no inline labels; pass --reference HUMAN.jsonl")
        return ref
    ref = load_annotations(args.reference, skip_invalid=args.skip_invalid)
    report_skipped(ref.skipped, what=f"label records in {args.reference}")
    keep = ref.records["trace_id"].astype(str).isin(ids)
    if not keep.any():
        raise UserInputError(
            f"--correct: the reference labels fit no trace: none of their {ref.records['trace_id'].nunique()} "
            f"trace ids is among the {len(ids)} traces read; give the human labels of these traces",
            file=args.reference,
        )
    return AnnotationSet(ref.records[keep].reset_index(drop=True), name=ref.name, skipped=ref.skipped)


def corrected_from_args(args: argparse.Namespace, loaded, *, options, audit_options: dict | None = None):
    """The :class:`~seekbench.metrics.CorrectedMetrics` of the loaded traces as the flags say, and a
    one-line warning on stderr (the sampling caveat, and what shows the sample is not random)."""
    from ..metrics import judge_corrected_metrics
    from ..traces import attach_labels

    if not getattr(args, "labels", None):
        raise UserInputError("--correct needs the judge's labels: --labels JUDGE.jsonl (and --reference HUMAN.jsonl)")
    ref = human_labels(args, loaded.read.traces)
    labeled = set(ref.records.loc[ref.records["value"].notna(), "trace_id"].astype(str))
    human_steps = attach_labels(loaded.steps, ref.records)
    result = judge_corrected_metrics(
        loaded.steps,
        human_steps,
        loaded.traces,
        labeled,
        options=options,
        audit_options=audit_options,
        n_boot=args.n_boot,
        seed=args.seed,
    )
    print(f"seekbench: warning: --correct: {result.options['sampling_note']}", file=sys.stderr, flush=True)
    result.options["reference"] = args.reference
    result.options["judge_labels"] = args.labels
    return result


def _f(v) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def _ci(v, lo, hi) -> str:
    s = _f(v)
    if s != "n/a" and not any(x is None or (isinstance(x, float) and math.isnan(x)) for x in (lo, hi)):
        s += f" [{lo:.2f}, {hi:.2f}]"
    return s


def format_corrected(block: dict) -> str:
    """The corrected block of ``metrics --json`` as a text table, with its notes."""
    cols = ["agent", "metric", "judge only [95% CI]", "human only [95% CI] (n)", "corrected [95% CI]", "lambda"]
    rows, notes = [], []
    for r in block["summary"]:
        rows.append(
            [
                str(r["agent"]),
                r["metric"],
                _ci(r["judge_only"], r["judge_only_ci_low"], r["judge_only_ci_high"]),
                _ci(r["human_only"], r["human_only_ci_low"], r["human_only_ci_high"]) + f" ({r['human_only_n']})",
                _ci(r["corrected"], r["corrected_ci_low"], r["corrected_ci_high"]),
                _f(r["lam"]),
            ]
        )
        if r["reason"]:
            notes.append(f"  {r['agent']} {r['metric']}: {r['reason']}")
    sel = block["options"]["labeled_selection"]
    per = ", ".join(f"{g} {k}/{n}" for g, (k, n) in sel["per_group"].items())
    head = [
        "",
        f"judge-corrected metrics (PPI++; judge labels {block['options'].get('judge_labels')}, human labels "
        f"{block['options'].get('reference')}): {sel['n_labeled']} of {sel['n_total']} traces human-labeled ({per})",
    ]
    tail = [f"accuracy: {block['options']['accuracy']}"]
    if notes:
        tail += ["notes:", *notes]
    return "\n".join(head + fixed_width(cols, rows) + tail)
