"""Do the agents' recovery curves differ? (spec section 4, last paragraph)

Implemented: the K-sample log-rank test on the cause-specific hazard of recovery,
with stopped and cut-off traces censored, via lifelines'
``multivariate_logrank_test`` (exact handling of tied turns through the
hypergeometric variance). Gray's test for cumulative incidence is not
implemented: there is no independent reference for it among seekbench's
dependencies to test an implementation against.

What it tests: H0 "the hazard of recovering at turn t, among traces still
searching at t, is the same in every group". That is not the same hypothesis as
"the ERF curves (cumulative incidences) are equal": two agents with equal
recovery hazards but different answering (stopping) hazards have different
ERFs, and this test will not see the difference. Read it beside the curves.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from ._recovery_events import check_events, known_events

TEST_NAME = "log-rank test on the cause-specific hazard of recovery (stopped and cut_off censored)"


@dataclass(frozen=True)
class RecoveryComparison:
    """Result of :func:`compare_recovery`.

    Attributes
    ----------
    test_name : str
    statistic : float
        Chi-square statistic (>= 0; larger = stronger evidence the groups differ). NaN if undefined.
    df : int
        Degrees of freedom, number of non-empty groups - 1.
    p_value : float
        In [0, 1]; NaN if undefined.
    groups : tuple of str
    n : tuple of int
        Traces per group.
    n_recovered : tuple of int
        Recovery events per group.
    """

    test_name: str
    statistic: float
    df: int
    p_value: float
    groups: tuple[str, ...]
    n: tuple[int, ...]
    n_recovered: tuple[int, ...]

    @property
    def test(self) -> str:
        """Alias of ``test_name``."""
        return self.test_name

    @property
    def summary(self) -> pd.DataFrame:
        """One row: test, statistic, df, p, and n / recovered per group."""
        row = {
            "test": self.test_name,
            "statistic": self.statistic,
            "df": self.df,
            "p_value": self.p_value,
            "groups": ", ".join(self.groups),
            "n": ", ".join(f"{g}={k}" for g, k in zip(self.groups, self.n, strict=True)),
            "n_recovered": ", ".join(f"{g}={k}" for g, k in zip(self.groups, self.n_recovered, strict=True)),
        }
        return pd.DataFrame([row])


def compare_recovery(events_by_group: Mapping[str, pd.DataFrame]) -> RecoveryComparison:
    """Test that the groups' evidence recovery differs (spec section 4).

    K-sample log-rank on the cause-specific hazard of recovery: with O_g(t) the
    recoveries in group g at time t and E_g(t) = n_g(t) d(t) / n(t) their expectation
    under H0 (n = at risk, d = recoveries, pooled over groups), the statistic is
    U' V^- U with U_g = sum_t (O_g(t) - E_g(t)) and V the hypergeometric covariance,
    chi-square with K - 1 df. Stopped and cut-off traces leave the risk set as censored.

    Parameters
    ----------
    events_by_group : mapping of str to DataFrame
        Group name (usually the agent) to its :func:`recovery_events` frame (columns
        ``duration`` and ``event``). All frames must use the same options and time scale.

    Returns
    -------
    RecoveryComparison
        ``statistic``, ``df``, ``p_value`` (small = the groups' recovery hazards differ),
        ``test_name``, and per-group counts.

    Notes
    -----
    This is not Gray's test: it compares cause-specific hazards, not cumulative
    incidence functions (see the module docstring). Empty groups are dropped. With
    fewer than two non-empty groups, or no recovery at all, the test is undefined:
    statistic and p-value are NaN with an :class:`UndefinedMetricWarning`.

    Examples
    --------
    >>> import pandas as pd
    >>> a = pd.DataFrame({"duration": [1, 1, 2, 3], "event": ["recovered"] * 3 + ["stopped"]})
    >>> b = pd.DataFrame({"duration": [2, 3, 4, 4], "event": ["stopped", "recovered", "cut_off", "recovered"]})
    >>> res = compare_recovery({"a": a, "b": b})
    >>> res.df, round(res.statistic, 3)
    (1, 2.394)
    """
    from lifelines.statistics import multivariate_logrank_test

    if not isinstance(events_by_group, Mapping):
        raise UserInputError("compare_recovery expects a dict mapping group name to its recovery_events frame")
    groups, n, n_rec, dur, grp, obs = [], [], [], [], [], []
    for name, ev in events_by_group.items():
        check_events(ev, what=f"events of group {name!r}")
        ev = known_events(ev)  # a trace whose E is unknown is in no risk set (spec section 2)
        if len(ev) == 0:
            continue
        groups.append(str(name))
        n.append(len(ev))
        rec = (ev["event"] == "recovered").to_numpy()
        n_rec.append(int(rec.sum()))
        dur.append(ev["duration"].to_numpy(dtype=float))
        grp.extend([str(name)] * len(ev))
        obs.append(rec)
    df = max(len(groups) - 1, 0)
    stat = p = np.nan
    if len(groups) < 2:
        warnings.warn(
            "compare_recovery: fewer than two non-empty groups; the test is undefined (NaN)",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    elif sum(n_rec) == 0:
        warnings.warn(
            "compare_recovery: no group has a recovery; the test is undefined (NaN)",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    else:
        res = multivariate_logrank_test(np.concatenate(dur), np.asarray(grp), np.concatenate(obs))
        stat, p = float(res.test_statistic), float(res.p_value)
    return RecoveryComparison(TEST_NAME, stat, df, p, tuple(groups), tuple(n), tuple(n_rec))
