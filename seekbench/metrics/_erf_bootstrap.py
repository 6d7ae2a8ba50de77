"""ERF at one time as a function of per-trace sums, for a vectorised bootstrap CI (spec sections 3-4).

The discrete Aalen-Johansen estimate at time h depends on the traces only through, for
each time u <= h, how many recover, stop and end at u, and the total N. Each trace
contributes a one-hot row of those counts, so resampling whole traces reweights the
rows (:func:`~seekbench.metrics._bootstrap.bootstrap_sums`) and the estimator is
evaluated on all B resampled sums at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ._bootstrap import bootstrap_statistic_ci, check_bootstrap_options
from ._erf import incidence_from_counts
from ._options import METHOD_OPTIONS, Method, check_option
from ._poisson import BootstrapMethod
from ._recovery_events import check_events
from ._resampler import Resampler, Seed


def erf_at_columns(
    events: pd.DataFrame, t: float, *, method: Method = "aalen_johansen"
) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """Per-trace columns and the vectorised statistic giving ERF(t) from their sums.

    Columns, for the k distinct durations u <= t: recovered at u, stopped at u, ended at u
    (any outcome), then 1 (to count N); a trace whose E is unknown (``evidence_unknown``, spec
    section 2) is a row of zeros, so it enters no count while the rows stay one per trace. The
    statistic maps ``(B x 3k+1)`` sums to B values:

        Aalen-Johansen: ERF(t) = sum_{u <= t} S(u-) d_rec(u) / n(u),
        ``method="km"``: 1 - prod_{u <= t} (1 - d_rec(u) / n(u)) (stopped traces censored),

    with n(u) = N minus the traces ended before u (ties: events before censoring, as in
    :class:`~seekbench.metrics.EvidenceRecoveryFitter`). NaN for a resample without traces.

    Examples
    --------
    >>> ev = pd.DataFrame({"duration": [1, 2, 2, 3], "event": ["recovered", "stopped", "recovered", "cut_off"]})
    >>> cols, stat = erf_at_columns(ev, 8)
    >>> float(stat(cols.sum(axis=0, keepdims=True))[0])  # as EvidenceRecoveryFitter: 1/4 + (3/4)(1/3)
    0.5
    """
    check_option("method", method, METHOD_OPTIONS)
    check_events(events)
    n = len(events)
    d = events["duration"].to_numpy(dtype=float)
    grid = np.unique(d[d <= t])
    k = len(grid)
    at = (d[:, None] == grid[None, :]).astype(float)
    kind = events["event"].to_numpy()
    rec = at * (kind == "recovered")[:, None]
    stop = at * (kind == "stopped")[:, None]
    cols = np.column_stack([rec, stop, at, np.ones(n)]) if n else np.zeros((0, 3 * k + 1))
    if n and "evidence_unknown" in events.columns:  # E unknown (spec section 2): a row of zeros, in no count
        cols[events["evidence_unknown"].to_numpy(dtype=bool)] = 0.0
    km = method == "km"

    def stat(s: np.ndarray) -> np.ndarray:
        r, st, end, total = s[:, :k], s[:, k : 2 * k], s[:, 2 * k : 3 * k], s[:, 3 * k]
        if k == 0:  # nothing ended by t: ERF(t) = 0 wherever there are traces
            return np.where(total > 0, 0.0, np.nan)
        at_risk = total[:, None] - np.concatenate([np.zeros((len(s), 1)), np.cumsum(end, axis=1)[:, :-1]], axis=1)
        if km:  # 1 - KM: stopping censors; the product form, as lifelines computes it
            with np.errstate(invalid="ignore", divide="ignore"):
                out = 1.0 - np.prod(1.0 - r / np.where(at_risk > 0, at_risk, 1.0), axis=1)
        else:
            out = incidence_from_counts(r, st, at_risk)[0][:, -1]
        return np.where(total > 0, out, np.nan)

    return cols, stat


def recovered_by_ci(
    events: pd.DataFrame,
    t: float,
    *,
    method: Method = "aalen_johansen",
    n_boot: int = 2000,
    seed: Seed = 0,
    alpha: float = 0.05,
    clusters: Sequence | np.ndarray | None = None,
    bootstrap: BootstrapMethod = "exact",
    resampler: Resampler | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap CI of ERF(t) resampling whole traces (or clusters of them).

    Parameters
    ----------
    events : DataFrame
        A :func:`~seekbench.metrics.recovery_events` frame (``duration`` and ``event``).
    t : float
        The time read off the curve (8 in the summary).
    method : {"aalen_johansen", "km"}
    n_boot, seed, alpha, clusters, bootstrap :
        As :func:`~seekbench.metrics.bootstrap_ci`; ``n_boot=0`` or no traces gives (NaN, NaN).
    resampler : Resampler, optional
        The resampling of the events' rows in place of ``n_boot, seed, clusters, bootstrap``
        (e.g. one shared with other statistics of the same traces).

    Returns
    -------
    (lo, hi) : tuple of float in [0, 1]

    Examples
    --------
    >>> ev = pd.DataFrame({"duration": [1, 2, 2, 3] * 5, "event": ["recovered", "stopped", "recovered",
    ...                                                             "cut_off"] * 5})
    >>> lo, hi = recovered_by_ci(ev, 8, n_boot=500, seed=0)
    >>> 0.0 <= lo < 0.5 < hi <= 1.0
    True
    """
    check_bootstrap_options(n_boot, alpha)
    cols, stat = erf_at_columns(events, t, method=method)
    return bootstrap_statistic_ci(
        cols, stat, n_boot=n_boot, seed=seed, alpha=alpha, clusters=clusters, bootstrap=bootstrap, resampler=resampler
    )
