"""Judge-corrected metrics from step tables: the per-trace values twice (judge labels, human labels), and
how the human-labeled traces were chosen.

:func:`judge_corrected_metrics` reduces the traces once with the judge's labels attached and once
(the human-labeled traces only) with the human labels, by the same
:func:`~seekbench.metrics.trace_statistics` and :func:`~seekbench.metrics.trace_audit`, and corrects
with :func:`~seekbench.metrics.corrected_metrics`. :func:`labeled_selection` says what can be seen of
how the human-labeled traces were chosen: PPI's guarantee assumes a uniformly random sample, which
no file can prove, but a sample that is the first N traces, or that leaves agents out, is visibly not one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._errors import UserInputError
from ._audit import trace_audit
from ._options import MetricOptions
from ._ppi_result import CorrectedMetrics, Interval, corrected_metrics
from ._ppi_trace_stats import ppi_trace_values
from ._trace_stats import trace_statistics

#: How to draw the human-labeled traces so that the guarantee holds (one line, for warnings and reports).
HOW_TO_SAMPLE = (
    "PPI's guarantee assumes the human-labeled traces are a uniformly random sample of these traces: "
    "draw them with `seekbench judge plan ... --order random --seed SEED` (or a seeded random sample, "
    "numpy.random.default_rng(SEED).choice(trace_ids, n, replace=False))"
)


def labeled_selection(traces: pd.DataFrame, labeled: set | list | pd.Index, *, by: str = "agent") -> dict:
    """What the human-labeled traces look like against all traces, and a warning when they are visibly not random.

    Parameters
    ----------
    traces : DataFrame
        The trace table (file order), with ``trace_id`` and ``by``.
    labeled : collection of trace ids
        The human-labeled traces.
    by : str, default "agent"

    Returns
    -------
    dict
        ``n_total``, ``n_labeled``, ``per_group`` ({group: [labeled, total]}), ``first_n`` (the
        labeled traces are exactly the first n of the file), ``missing_groups`` (groups with no
        labeled trace), ``concentration_p`` (chi-square test of the labeled counts per group
        against counts proportional to the group sizes; NaN with one group or all labeled) and
        ``warning``: one line when something shows the sample is not random, else None.

    Examples
    --------
    >>> t = pd.DataFrame({"trace_id": list("abcdef"), "agent": ["x", "x", "x", "y", "y", "y"]})
    >>> sel = labeled_selection(t, {"a", "b", "c"})
    >>> sel["first_n"], sel["missing_groups"]
    (True, ['y'])
    """
    ids = traces["trace_id"].astype(str).to_numpy()
    lab = np.isin(ids, [str(x) for x in labeled])
    n, big_n = int(lab.sum()), len(ids)
    groups = traces[by].astype(str).to_numpy()
    order = list(pd.unique(groups))
    per = {g: [int((lab & (groups == g)).sum()), int((groups == g).sum())] for g in order}
    first_n = bool(0 < n < big_n and lab[:n].all())
    missing = [g for g, (k, _) in per.items() if k == 0]
    p = float("nan")
    if 0 < n < big_n and len(order) > 1:
        from scipy.stats import chisquare  # here: slow to import, for one test

        obs = np.array([per[g][0] for g in order], dtype=float)
        exp = np.array([per[g][1] for g in order], dtype=float) * n / big_n
        p = float(chisquare(obs, exp).pvalue)
    signs = []
    if first_n:
        signs.append(f"they are the first {n} traces of the file")
    if missing and n:
        signs.append(f"no trace of {', '.join(missing)} is labeled")
    if p < 0.01 and not missing:
        signs.append(f"they are concentrated in some {by}s (chi-square p = {p:.2g})")
    warning = None
    if signs:
        warning = f"the human-labeled traces do not look randomly chosen ({'; '.join(signs)}); {HOW_TO_SAMPLE}"
    return {
        "n_total": big_n,
        "n_labeled": n,
        "per_group": per,
        "first_n": first_n,
        "missing_groups": missing,
        "concentration_p": p,
        "warning": warning,
    }


def judge_corrected_metrics(
    judge_steps: pd.DataFrame,
    human_steps: pd.DataFrame,
    traces: pd.DataFrame,
    labeled: set | list | pd.Index,
    *,
    options: MetricOptions | None = None,
    audit_options: dict | None = None,
    overcautious_window: int = 15,
    baseline: str | None = None,
    alpha: float = 0.05,
    interval: Interval = "auto",
    n_boot: int = 2000,
    seed: int = 0,
) -> CorrectedMetrics:
    """PPI++ judge-corrected metrics per agent from the step table with judge labels and with human labels.

    Parameters
    ----------
    judge_steps : DataFrame
        Step table of every trace with the judge's labels attached (``build_tables(traces, judge.records)``).
    human_steps : DataFrame
        Step table with the human labels attached (rows of other traces are ignored).
    traces : DataFrame
        The trace table.
    labeled : collection of trace ids
        The human-labeled traces (e.g. ``set(reference.records["trace_id"])``).
    options : MetricOptions, optional
    audit_options : dict, optional
        Keywords of :func:`~seekbench.metrics.trace_audit` (thresholds of the flags).
    overcautious_window, baseline, alpha, interval, n_boot, seed :
        As in :func:`~seekbench.metrics.corrected_metrics`.

    Returns
    -------
    CorrectedMetrics
        ``options["labeled_selection"]`` holds :func:`labeled_selection`, ``options["sampling_note"]``
        its warning, or the caveat that the guarantee assumes a random sample. Accuracy is left out
        when correctness is the same in both tables (``options["accuracy"]`` says so): it then
        comes from the traces, not from the labels, and needs no correction.
    """
    opts = MetricOptions.resolve(options)
    ids = traces["trace_id"].astype(str)
    keep = ids.isin({str(x) for x in labeled}).to_numpy()
    if not keep.any():
        raise UserInputError("the human labels fit no trace: none of their trace ids is among the traces read")
    audit_kw = {"recovery": opts.recovery, **opts.evidence, **(audit_options or {})}

    def values(steps: pd.DataFrame, tr: pd.DataFrame) -> pd.DataFrame:
        stats = trace_statistics(steps, tr, options=opts)
        return ppi_trace_values(stats, trace_audit(steps, tr, **audit_kw), overcautious_window=overcautious_window)

    judge = values(judge_steps, traces)
    sub = traces[keep].reset_index(drop=True)
    human = values(human_steps[human_steps["trace_id"].astype(str).isin(set(ids[keep]))], sub)
    metrics = None
    at = pd.Index(judge["trace_id"]).get_indexer(human["trace_id"])
    if np.array_equal(judge["accuracy"].to_numpy()[at], human["accuracy"].to_numpy(), equal_nan=True):
        from ._ppi_trace_stats import PPI_METRICS

        metrics = [m for m in PPI_METRICS if m != "accuracy" and m in judge.columns]
    result = corrected_metrics(
        judge, human, metrics=metrics, baseline=baseline, alpha=alpha, interval=interval, n_boot=n_boot, seed=seed
    )
    sel = labeled_selection(traces, set(ids[keep]))
    result.options["labeled_selection"] = sel
    result.options["sampling_note"] = sel["warning"] or f"{HOW_TO_SAMPLE}; nothing in the traces shows they were not"
    result.options["accuracy"] = (
        "left out: correctness comes from the traces, the same under both label sets"
        if metrics is not None
        else "corrected"
    )
    return result
