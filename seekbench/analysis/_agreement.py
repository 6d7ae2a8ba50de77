"""Judge agreement for the report: the comparison of annotation sets and each judge against its cost."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning
from ..agreement import POOLED_FIELD, AgreementResult, compare_annotations, pareto_front
from ..labels import AnnotationSet
from ..metrics import Resampler
from ._disagreements import disagreement_examples
from ._result import AgreementAnalysis

#: What a judge can be plotted against, in order of preference: the first axis with a recorded positive value.
COST_AXES = ("cost_per_trace", "latency_s_per_trace", "tokens_per_trace")


def kappa_cost_axis(points: pd.DataFrame) -> str | None:
    """The first of :data:`COST_AXES` some judge recorded a positive value of; None when none did.

    A judge that makes no model calls (rules) or whose provider reports no price has no cost,
    and an axis on which every judge sits at 0 or n/a would be a fake range.
    """
    for axis in COST_AXES:
        if axis in points.columns:
            values = points[axis].to_numpy(dtype=float)
            if np.isfinite(values).any() and np.nanmax(values) > 0:
                return axis
    return None


def kappa_cost_table(
    summary: pd.DataFrame, costs: pd.DataFrame, *, field: str = POOLED_FIELD, score: str = "kappa"
) -> pd.DataFrame:
    """Each judge's ``score`` on ``field`` beside its cost, latency and tokens per trace, and its Pareto front.

    Judges without a cost row (such as the rule-derived labels) are left out. The front is taken
    on the axis of :func:`kappa_cost_axis` (cost, else latency, else tokens); ``known`` says the
    judge has a value on that axis, and a judge without one is never on the front.
    """
    shown = [c for c in COST_AXES if c in costs.columns]
    rows = summary[summary["field"] == field].merge(costs[["rater", *shown]], on="rater", how="inner")
    out = pd.DataFrame({"rater": rows["rater"]})
    for col in COST_AXES:
        out[col] = rows[col].to_numpy(dtype=float) if col in rows.columns else np.nan
    val = rows[score].to_numpy(dtype=float)
    out["score"] = val
    out["lower"] = rows[f"{score}_lower"].to_numpy(dtype=float)
    out["upper"] = rows[f"{score}_upper"].to_numpy(dtype=float)
    axis = kappa_cost_axis(out)
    x = out[axis].to_numpy(dtype=float) if axis else np.full(len(out), np.nan)
    out["known"] = np.isfinite(x)
    out["on_front"] = pareto_front(x.tolist(), val.tolist())
    return out


def agreement_analysis(result: AgreementResult, *, score: str = "kappa") -> AgreementAnalysis:
    """Wrap a :func:`seekbench.agreement.compare_annotations` result with its kappa-versus-cost table."""
    points = kappa_cost_table(result.summary, result.costs, score=score)
    return AgreementAnalysis(result=result, kappa_cost=points, score=score, cost_axis=kappa_cost_axis(points))


def analyze_agreement(
    reference: AnnotationSet,
    raters: Sequence[AnnotationSet],
    *,
    traces: list[dict],
    tiebreaker: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    resampler: Resampler | None = None,
    **metric_options,
) -> AgreementAnalysis:
    """Compare each rater with the reference (:func:`seekbench.agreement.compare_annotations`), with a few
    disagreement examples per field (:func:`disagreement_examples`).

    Undefined coefficients are not warned about here: the result lists them with their reasons.
    ``metric_options`` are the metric options of the sensitivity table (``by`` is ignored).
    ``resampler`` (a :class:`~seekbench.metrics.Resampler`) replaces ``n_boot`` and ``seed``.

    Examples
    --------
    >>> from seekbench.data import sample_traces_path
    >>> from seekbench.labels import AnnotationSet, load_annotations
    >>> from seekbench.traces import read_traces
    >>> traces = read_traces(sample_traces_path()).traces
    >>> ref = AnnotationSet.from_traces(traces)
    >>> judge = load_annotations(sample_traces_path().with_name("sample_second_annotator.jsonl"))
    >>> a = analyze_agreement(ref, [judge], traces=traces, n_boot=20)
    >>> list(a.kappa_cost.columns[-5:])
    ['score', 'lower', 'upper', 'known', 'on_front']
    >>> a.cost_axis is None  # a human annotator records no cost, latency or tokens
    True
    """
    opts = {k: v for k, v in metric_options.items() if k not in ("by", "n_boot", "seed")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # reported in the result itself
        boot = {"n_boot": n_boot, "seed": seed} if resampler is None else {"resampler": resampler}
        result = compare_annotations(reference, *raters, tiebreaker=tiebreaker, traces=traces, **boot, **opts)
    examples = disagreement_examples(reference, raters, traces)
    return replace(agreement_analysis(result), examples=examples)
