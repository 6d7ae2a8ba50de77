"""Building a judge validation record (``schemas/judge_validation.schema.json``) from compared labels."""

from __future__ import annotations

import math
import warnings

from .._errors import UndefinedMetricWarning
from .._version import __version__
from ..agreement import compare_annotations
from ..labels import AnnotationSet
from ..llm import RECORD_FORMAT, RECORD_VERSION


def _num(x: object) -> float | None:
    return None if x is None or not isinstance(x, (int, float)) or math.isnan(float(x)) else round(float(x), 4)


def _finite(x: float | None) -> float | None:
    """A cost or time as JSON: NaN (not recorded) as None, numpy numbers as floats."""
    return None if x is None or math.isnan(float(x)) else float(x)


def validation_result(
    reference: AnnotationSet,
    judged: AnnotationSet,
    traces: list[dict],
    *,
    features: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> dict:
    """One ``results`` entry of a record: kappa and AC1 per field and step kind, and RQI per agent.

    Parameters
    ----------
    reference : AnnotationSet
        The human labels (one rater).
    judged : AnnotationSet
        The judge's labels (one rater; out-of-fold labels for a cross-validated record).
    traces : list of dict
        The traces both refer to (step kinds; RQI per agent).
    features : str, optional
        The feature set the labels come from (a learned judge's ``lexical`` or ``lexical+minilm``).
    n_boot, seed :
        Bootstrap resamples over whole traces for the 95% CIs, and their seed.

    Returns
    -------
    dict
        ``{"features", "rows", "rqi"}``: the judge's own strata of
        :func:`seekbench.agreement.compare_annotations` (rule-derived labels and the pooled row left
        out), and RQI per agent from each side's labels.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # undefined kappas are kept as null with a note
        res = compare_annotations(reference, judged, traces=traces, n_boot=n_boot, seed=seed)
    rater = judged.records["rater"].iloc[0]
    rows = []
    for r in res.summary.to_dict("records"):
        if r["rater"] != rater or r["step_kind"] == "all":
            continue
        row = {
            "field": r["field"],
            "step_kind": r["step_kind"],
            "n": int(r["n_compared"]),
            "raw_agreement": _num(r["raw_agreement"]),
            "kappa": _num(r["kappa"]),
            "kappa_ci": [_num(r["kappa_lower"]), _num(r["kappa_upper"])],
            "ac1": _num(r["ac1"]),
            "ac1_ci": [_num(r["ac1_lower"]), _num(r["ac1_upper"])],
        }
        if r.get("note"):
            row["note"] = str(r["note"])
        rows.append(row)
    rqi = []
    if res.sensitivity is not None:
        table = res.sensitivity.table
        for r in table[(table["rater"] == rater) & (table["metric"] == "rqi")].to_dict("records"):
            rqi.append({"agent": str(r["agent"]), "reference": _num(r["reference"]), "judge": _num(r["judged"])})
    return {"features": features, "rows": rows, "rqi": rqi}


def validation_record(
    judge: str,
    results: list[dict],
    *,
    method: str,
    method_detail: str,
    data: dict,
    judge_version: str | None = None,
    model: str | None = None,
    cost_per_trace_usd: float | None = 0.0,
    seconds_per_trace: float | None = None,
    n_boot: int = 2000,
    seed: int | None = 0,
    created_by: str = "",
) -> dict:
    """A complete record (see ``schemas/judge_validation.schema.json`` for every key).

    ``method`` is ``"cross-validated"``, ``"held-out"`` or ``"in-sample"``; ``method_detail`` one
    sentence saying how (folds and grouping, or why in-sample is fair). ``results`` come from
    :func:`validation_result`, one per feature set.
    """
    if method not in ("cross-validated", "held-out", "in-sample"):
        raise ValueError(f"method is {method!r}; use cross-validated, held-out or in-sample")
    return {
        "format": RECORD_FORMAT,
        "format_version": RECORD_VERSION,
        "judge": judge,
        "judge_version": judge_version,
        "model": model,
        "method": method,
        "method_detail": method_detail,
        "data": data,
        "results": results,
        "cost_per_trace_usd": _finite(cost_per_trace_usd),
        "seconds_per_trace": _finite(seconds_per_trace),
        "n_boot": n_boot,
        "seed": seed,
        "created_by": created_by,
        "seekbench_version": __version__,
    }
