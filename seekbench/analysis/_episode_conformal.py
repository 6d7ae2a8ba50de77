"""Each seeking agent's own completeness estimates, calibrated by split conformal (spec sections 7 and 8).

At the first step of every environment step an agent may estimate the completeness of the belief
it was shown (``self_estimate``); that step's ``completeness`` is the true value it estimated.
Those pairs are the agent's calibration data: split by document into calibration and test halves
(:func:`seekbench.env.conformal.evaluate_conformal`), they give the agent's q_hat, the coverage of
its interval with a Clopper-Pearson CI, and the interval width, which the report puts beside the
agent's completeness, RQI, ERF and CE.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from .._errors import UserInputError
from ..env import env_traces
from ..env.conformal import ESTIMATE_COLUMNS, evaluate_conformal

#: Columns of :func:`agent_self_conformal`.
SELF_CONFORMAL_COLUMNS = [
    "agent",
    "self_estimates",
    "q_hat",
    "coverage",
    "coverage_ci_lower",
    "coverage_ci_upper",
    "width",
    "conformal_note",
]


def self_estimate_states(traces: Iterable[dict]) -> pd.DataFrame:
    """One row per step carrying an agent's self-estimate, in the estimates-file layout (estimator = agent).

    ``state_id`` is ``<trace_id>#<step index>``, ``doc_id`` the episode's document, ``true_completeness``
    the step's ``completeness`` and ``c_hat`` its ``self_estimate``. Traces without ``env`` are skipped.

    Examples
    --------
    >>> ep = {"trace_id": "t", "agent": "a", "env": {"document_id": "d"},
    ...       "steps": [{"index": 0, "kind": "search", "completeness": 0.2, "self_estimate": 0.5},
    ...                 {"index": 1, "kind": "search_result", "completeness": 0.4}]}
    >>> self_estimate_states([ep])[["state_id", "true_completeness", "estimator", "c_hat"]].values.tolist()
    [['t#0', 0.2, 'a', 0.5]]
    """
    rows = []
    for t in env_traces(list(traces)):
        doc = (t.get("env") or {}).get("document_id")
        for i, s in enumerate(t.get("steps") or []):
            if s.get("self_estimate") is None or s.get("completeness") is None:
                continue
            rows.append(
                {
                    "doc_id": doc,
                    "state_id": f"{t['trace_id']}#{s.get('index', i)}",
                    "true_completeness": float(s["completeness"]),
                    "estimator": t.get("agent"),
                    "c_hat": float(s["self_estimate"]),
                    "reason": None,
                }
            )
    return pd.DataFrame(rows, columns=ESTIMATE_COLUMNS)


def agent_self_conformal(traces: Iterable[dict], *, alpha: float = 0.1, seed: int = 0) -> pd.DataFrame:
    """Per agent with self-estimates: split conformal calibration of its own completeness estimates.

    Parameters
    ----------
    traces : iterable of dict
        Canonical traces; only seeking-environment episodes with ``self_estimate`` steps count.
    alpha : float, default 0.1
        Target miscoverage: the interval [c_hat - q_hat, c_hat + q_hat] aims at 1 - alpha coverage.
    seed : int, default 0
        Seed of the calibration/test splits.

    Returns
    -------
    DataFrame
        :data:`SELF_CONFORMAL_COLUMNS`, one row per agent that estimated at least once: number of
        self-estimates, q_hat and width (means over the 3 x 10 splits of
        :func:`~seekbench.env.conformal.evaluate_conformal`, split by document), and coverage on
        split 0 with its Clopper-Pearson 95% CI. An agent whose estimates cover a single document
        cannot be split by document: its numbers are NaN and ``conformal_note`` says why.

    Examples
    --------
    >>> eps = [{"trace_id": f"t{d}", "agent": "a", "env": {"document_id": f"d{d}"},
    ...         "steps": [{"index": i, "kind": "search", "completeness": i / 10, "self_estimate": i / 10 + 0.05}
    ...                   for i in range(10)]} for d in range(4)]
    >>> row = agent_self_conformal(eps).iloc[0]
    >>> row["agent"], int(row["self_estimates"]), round(float(row["q_hat"]), 2), float(row["coverage"])
    ('a', 40, 0.05, 1.0)
    """
    states = self_estimate_states(traces)
    rows = []
    for agent, g in states.groupby("estimator", sort=True):
        row = {"agent": agent, "self_estimates": len(g), "conformal_note": ""}
        try:
            s = evaluate_conformal(g, alpha=alpha, seed=seed).summary.iloc[0]
        except UserInputError as err:  # one document: no split by document is possible
            row.update(dict.fromkeys(SELF_CONFORMAL_COLUMNS[2:7], math.nan), conformal_note=str(err))
        else:
            row.update(
                q_hat=float(s["q_hat"]),
                coverage=float(s["ref_coverage"]),
                coverage_ci_lower=float(s["ref_coverage_ci_lower"]),
                coverage_ci_upper=float(s["ref_coverage_ci_upper"]),
                width=float(s["width"]),
            )
        rows.append(row)
    return pd.DataFrame(rows, columns=SELF_CONFORMAL_COLUMNS)
