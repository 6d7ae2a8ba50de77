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
from ._disagreements import disagreement_examples
from ._result import AgreementAnalysis


def kappa_cost_table(
    summary: pd.DataFrame, costs: pd.DataFrame, *, field: str = POOLED_FIELD, score: str = "kappa"
) -> pd.DataFrame:
    """Each judge's ``score`` on ``field`` beside its cost per trace, and whether it is on the Pareto front.

    Judges without a cost row (such as the rule-derived labels) are left out; a judge whose
    cost is not recorded has ``known`` False and is never on the front.
    """
    rows = summary[summary["field"] == field].merge(costs[["rater", "cost_per_trace"]], on="rater", how="inner")
    cost = rows["cost_per_trace"].to_numpy(dtype=float)
    val = rows[score].to_numpy(dtype=float)
    return pd.DataFrame(
        {
            "rater": rows["rater"],
            "cost_per_trace": cost,
            "score": val,
            "lower": rows[f"{score}_lower"].to_numpy(dtype=float),
            "upper": rows[f"{score}_upper"].to_numpy(dtype=float),
            "known": np.isfinite(cost),
            "on_front": pareto_front(cost, val),
        }
    )


def agreement_analysis(result: AgreementResult, *, score: str = "kappa") -> AgreementAnalysis:
    """Wrap a :func:`seekbench.agreement.compare_annotations` result with its kappa-versus-cost table."""
    return AgreementAnalysis(
        result=result, kappa_cost=kappa_cost_table(result.summary, result.costs, score=score), score=score
    )


def analyze_agreement(
    reference: AnnotationSet,
    raters: Sequence[AnnotationSet],
    *,
    traces: list[dict],
    tiebreaker: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    **metric_options,
) -> AgreementAnalysis:
    """Compare each rater with the reference (:func:`seekbench.agreement.compare_annotations`), with a few
    disagreement examples per field (:func:`disagreement_examples`).

    Undefined coefficients are not warned about here: the result lists them with their reasons.
    ``metric_options`` are the metric options of the sensitivity table (``by`` is ignored).

    Examples
    --------
    >>> from seekbench.data import sample_traces_path
    >>> from seekbench.labels import AnnotationSet, load_annotations
    >>> from seekbench.traces import read_traces
    >>> traces = read_traces(sample_traces_path()).traces
    >>> ref = AnnotationSet.from_traces(traces)
    >>> judge = load_annotations(sample_traces_path().with_name("sample_second_annotator.jsonl"))
    >>> a = analyze_agreement(ref, [judge], traces=traces, n_boot=20)
    >>> list(a.kappa_cost.columns)
    ['rater', 'cost_per_trace', 'score', 'lower', 'upper', 'known', 'on_front']
    """
    opts = {k: v for k, v in metric_options.items() if k not in ("by", "n_boot", "seed")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # reported in the result itself
        result = compare_annotations(
            reference, *raters, tiebreaker=tiebreaker, traces=traces, n_boot=n_boot, seed=seed, **opts
        )
    examples = disagreement_examples(reference, raters, traces)
    return replace(agreement_analysis(result), examples=examples)
