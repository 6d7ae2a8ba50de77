"""Per-trace values of every agent-level metric that is a mean over traces: what PPI corrects.

Each column is one trace's contribution to a metric whose agent-level value is the mean of
the column over the agent's traces where it is defined (NaN where the trace does not enter the
metric): RQI_i and CE_i (trace aggregates, spec sections 3 and 5), the overconfident and
overcautious indicators (section 5), correctness, recovery by turn 8 (section 4: a mean only
where no trace is cut off, which :func:`~seekbench.metrics.corrected_metrics` checks per agent)
and the audit flags (:func:`~seekbench.metrics.trace_audit`). The values come from the per-trace
statistics table (:func:`~seekbench.metrics.trace_statistics`), so the same function applied to
a table made with a judge's labels and one made with human labels gives the paired values PPI
needs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._audit import FLAGS
from ._ce import _trace_ce, companion_values
from ._evidence import evidence_unknown
from ._group_summary import RECOVERED_BY
from ._trace_stats import calibration_part

#: The metric columns of :func:`ppi_trace_values`, with what the mean of each is (for docs and --help).
PPI_METRICS: dict[str, str] = {
    "rqi": "RQI (trace aggregate): per-trace share of labeled reasoning steps that are Grounded",
    "ce": "CE (trace aggregate): per-trace share of decision points where the agent did not do what the "
    "ideal policy does",
    "overconfident": "overconfident rate: answered with E < 2 (answered traces with known E)",
    "overcautious": "overcautious rate: reached E = 2 and did not answer within H turns (traces with known E)",
    "accuracy": "accuracy: the trace's answer is correct (traces with known correctness)",
    f"recovered_by_{RECOVERED_BY}": f"recovered by turn {RECOVERED_BY} (a mean only where no trace is cut off)",
    **{f"flag_{f}": f"share of traces with the audit flag {f}" for f in FLAGS},
}

#: The metrics of :data:`PPI_METRICS` whose per-trace values are 0/1 (rates): their corrected interval is a
#: Wilson score interval (:func:`~seekbench.metrics.corrected_metrics`); RQI and CE are shares per trace.
RATE_METRICS = tuple(m for m in PPI_METRICS if m not in ("rqi", "ce"))

#: Whether a lower value of each metric is better (the others: higher is better, or neither).
LOWER_IS_BETTER = ("ce", "overconfident", "overcautious", *(f"flag_{f}" for f in FLAGS))


def ppi_trace_values(
    stats: pd.DataFrame, audit: pd.DataFrame | None = None, *, overcautious_window: int = 15
) -> pd.DataFrame:
    """One row per trace: its value of each metric of :data:`PPI_METRICS` (NaN where it does not enter).

    Parameters
    ----------
    stats : DataFrame
        Rows of :func:`~seekbench.metrics.trace_statistics`.
    audit : DataFrame, optional
        :func:`~seekbench.metrics.trace_audit` of the same traces (matched by ``trace_id``), for the
        ``flag_*`` columns; without it those columns are left out.
    overcautious_window : int, default 15
        H of the overcautious indicator.

    Returns
    -------
    DataFrame
        ``trace_id, agent, question_id`` and the metric columns, floats: 1.0 / 0.0 for the
        indicators; NaN where undefined (RQI_i without a labeled reasoning step; the E-based
        values where the trace's E is unknown, spec section 2; overconfident when unanswered;
        accuracy when correctness is unknown).

    Examples
    --------
    >>> from seekbench.traces import build_tables
    >>> from seekbench.metrics import trace_statistics
    >>> tr = [{"trace_id": "a", "agent": "x", "steps": [
    ...     {"index": 0, "kind": "reasoning", "labels": {"grounding": "Grounded"}},
    ...     {"index": 1, "kind": "reasoning", "labels": {"grounding": "NotGrounded"}},
    ...     {"index": 2, "kind": "answer"}]}]
    >>> v = ppi_trace_values(trace_statistics(*build_tables(tr)))
    >>> v[["rqi", "ce", "overconfident", "recovered_by_8"]].iloc[0].tolist()  # answered at turn 0 with E = 0
    [0.5, 1.0, 1.0, 0.0]
    """
    per = calibration_part(stats)
    known = ~evidence_unknown(per["n_obs"].to_numpy(), per["n_obs_unlabeled"].to_numpy())
    with np.errstate(invalid="ignore", divide="ignore"):
        g, n = stats["rqi_g"].to_numpy(dtype=float), stats["rqi_n"].to_numpy(dtype=float)
        rqi = np.where(n > 0, g / np.where(n > 0, n, 1.0), np.nan)
    counts = per[["n0", "n1", "n2", "a0", "a1", "a2"]].to_numpy(dtype=float)
    ce = np.where(known, _trace_ce(counts), np.nan)
    over, caut = companion_values(per, overcautious_window=overcautious_window)
    event, duration = stats["erf_event"].to_numpy(), stats["erf_duration"].to_numpy(dtype=float)
    recovered = ((event == 1) & (duration <= RECOVERED_BY)).astype(float)
    out = pd.DataFrame(
        {
            "trace_id": stats["trace_id"].to_numpy(),
            "agent": stats["agent"].to_numpy(),
            "question_id": stats["question_id"].to_numpy(),
            "rqi": rqi,
            "ce": ce,
            "overconfident": over,
            "overcautious": caut,
            "accuracy": stats["correct"].to_numpy(dtype=float),
            f"recovered_by_{RECOVERED_BY}": np.where(known, recovered, np.nan),
            # cut off (event 0): not a mean over traces; the agent-level check reads this column
            "cut_off": (event == 0).astype(float),
        }
    )
    if audit is not None:
        flags = audit.set_index("trace_id")["flags"].reindex(out["trace_id"]).fillna("").str.split(",")
        for f in FLAGS:
            out[f"flag_{f}"] = flags.map(lambda p, f=f: f in p).to_numpy(dtype=float)
    return out
