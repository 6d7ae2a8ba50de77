"""The rows of an annotation plan: per stratum, kappa (or a difference in kappa) now, its CI
half-width, and the additional whole traces projected to reach the target half-width.

:func:`~seekbench.agreement.plan_annotation` builds its tables from these rows.
"""

from __future__ import annotations

import math

import numpy as np

from ._align import field_labels
from ._kappa import cohen_kappa
from ._plan_counts import cluster_bootstrap_ci, kappa_difference_statistic, kappa_statistic, trace_counts
from ._projection import size_for_half_width


def plan_row(counts, statistic, ci, n_overlap, target, projection) -> dict:
    """Half-width now and additional whole traces needed, from one stratum's per-trace counts."""
    n = counts.shape[0]
    half = (ci[1] - ci[0]) / 2 if np.isfinite(ci).all() else float("nan")
    out = {
        "half_width": half,
        "traces_needed": float("nan"),
        "traces_searched": float("nan"),
        "projected_half_width": float("nan"),
        "note": "",
    }
    if not np.isfinite(half):
        out["note"] = "no CI (kappa undefined: one label on every item, or too few items)"
        return out
    if half <= target:
        out.update(traces_needed=0, projected_half_width=half)
        if half == 0:
            out["note"] = "every resample gives the same value (a rater gives one label throughout)"
        return out
    max_size = max(1000, 50 * n)
    size, h = size_for_half_width(counts, statistic, target, max_size=max_size, **projection)
    # the projection counts traces with items of this stratum; a new trace has such items as often
    # as the traces labeled so far do (share n / n_overlap), so whole traces are k / share
    share = n / n_overlap
    beyond = math.ceil((max_size - n) / share)
    if size is None:
        out["note"] = f"target not reached within {beyond} more traces (projected half-width there {h:.3f})"
        out.update(projected_half_width=h, traces_searched=beyond)
        return out
    out.update(traces_needed=max(1, math.ceil((size - n) / share)), projected_half_width=h, traces_searched=beyond)
    return out


def kappa_rows(
    items: dict, overlap: dict, target: float, projection: dict, *, n_boot: int, seed: int | None, alpha: float
) -> list[dict]:
    """Per (judge, field, step kind) with items compared: kappa now, its CI and the traces needed."""
    rows = []
    for (j, f, k), it in items.items():
        if not len(it):
            continue
        q = len(field_labels(f))
        _, counts = trace_counts(it, f)
        res = cohen_kappa(
            it["reference"].tolist(),
            it["rater"].tolist(),
            labels=list(field_labels(f)),
            groups=it["trace_id"].astype(str).tolist(),
            n_boot=n_boot,
            seed=seed,
            alpha=alpha,
        )
        base = {"rater": j, "field": f, "step_kind": k, "n_traces": counts.shape[0], "n_items": res.n}
        base.update(kappa=res.value, kappa_lower=res.ci[0], kappa_upper=res.ci[1])
        base.update(plan_row(counts, kappa_statistic(q), np.array(res.ci), len(overlap[j]), target, projection))
        rows.append(base)
    return rows


def difference_rows(
    items: dict,
    pairs: list[tuple],
    overlap: dict,
    target: float,
    projection: dict,
    *,
    n_boot: int,
    seed: int | None,
    alpha: float,
) -> list[dict]:
    """Per (judge a, judge b, field, step kind) of ``pairs`` on the items the reference and both labeled:
    kappa_a - kappa_b now, its CI and the traces needed."""
    diffs = []
    for a, b, f, k in pairs:
        ia, ib = items[(a, f, k)], items[(b, f, k)]
        both = ia.merge(ib[["trace_id", "step", "rater"]], on=["trace_id", "step"], suffixes=("", "_b"))
        if not len(both):
            continue
        q = len(field_labels(f))
        _, counts = trace_counts(both, f, ("rater", "rater_b"))
        stat = kappa_difference_statistic(q)
        with np.errstate(invalid="ignore"):
            value = float(stat(counts.sum(axis=0)))
        ci = cluster_bootstrap_ci(counts, stat, n_boot=n_boot, seed=seed, alpha=alpha)
        n_both = len(overlap[a] & overlap[b])
        row = {"rater_a": a, "rater_b": b, "field": f, "step_kind": k, "n_traces": counts.shape[0]}
        row.update(n_items=len(both), difference=value, difference_lower=ci[0], difference_upper=ci[1])
        row.update(plan_row(counts, stat, np.array(ci), n_both, target, projection))
        diffs.append(row)
    return diffs
