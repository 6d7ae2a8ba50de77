"""The paired difference M(a) - M(b) of two agents on a headline metric: draws, interval, verdict.

One bootstrap over both agents' traces clustered by question (spec section 3; see
:mod:`seekbench.analysis._comparison` for the design), the degenerate rates' Newcombe interval,
and the three verdicts. :class:`PairedDifferences` computes each pair of agents' draws once.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from ..metrics import (
    Resampler,
    cluster_labels,
    far_side_share,
    monte_carlo_borderline,
    newcombe_interval,
    percentile_interval,
)
from ._headline import headline_columns

#: Differences within this of 0 are ties (sums of equal per-trace values can differ in the last bit).
TIE = 1e-12


class AgentData:
    """One agent's trace ids, question ids, and per metric its columns and statistic."""

    def __init__(self, st, tr, opts, overcautious_window, prevalence, defined):
        self.ids = tr["trace_id"].tolist()
        self.questions = tr["question_id"].tolist() if "question_id" in tr else [None] * len(tr)
        self.question_set = frozenset(q for q in self.questions if q is not None and not pd.isna(q))
        self.parts = headline_columns(
            st, options=opts, overcautious_window=overcautious_window, global_prevalence=prevalence, defined=defined
        )


#: Headline metrics that are per-agent rates (a share of traces): a degenerate paired bootstrap of
#: their difference gives way to Newcombe's hybrid score interval (spec section 3).
RATE_METRICS = ("accuracy", "overconfident", "overcautious")

#: How a difference's interval was computed (the ``interval`` column).
BOOTSTRAP, NEWCOMBE = "paired bootstrap", "Newcombe hybrid score"

#: The three verdicts of a difference (the ``verdict`` column).
CLEAR, BORDERLINE, NOT_CLEAR = "clear", "borderline", "not clear"


class Draws(NamedTuple):
    """A difference's bootstrap interval with what its verdict needs: the share of draws on the far side
    of 0, the number of finite draws, and whether every draw gave the same value."""

    lower: float
    upper: float
    far_share: float
    n_draws: int
    degenerate: bool


def pair_draws(a: AgentData, b: AgentData, *, resampler: Resampler, alpha: float) -> dict[str, Draws]:
    """Per metric the CI of M(a) - M(b), one bootstrap over both agents' traces clustered by question."""
    keys = list(a.parts)
    blocks_a = [a.parts[k][0] for k in keys]
    blocks_b = [b.parts[k][0] for k in keys]
    wa, wb = sum(c.shape[1] for c in blocks_a), sum(c.shape[1] for c in blocks_b)
    na, nb = len(a.ids), len(b.ids)
    full = np.zeros((na + nb, wa + wb))
    if na:
        full[:na, :wa] = np.concatenate(blocks_a, axis=1)
    if nb:
        full[na:, wa:] = np.concatenate(blocks_b, axis=1)
    units = cluster_labels(a.ids + b.ids, a.questions + b.questions, cluster="question")
    universe = sorted(set(units))  # the draws depend on the set of units only, not on which agent is first
    if not resampler.n_boot or not len(units):
        return dict.fromkeys(keys, Draws(np.nan, np.nan, np.nan, 0, False))
    sums = resampler.with_clusters(units, universe=universe).resampled_sums(full)
    out, ca, cb = {}, 0, wa
    with np.errstate(invalid="ignore", divide="ignore"):
        for k, xa, xb in zip(keys, blocks_a, blocks_b, strict=True):
            da = a.parts[k][1](sums[:, ca : ca + xa.shape[1]])
            db = b.parts[k][1](sums[:, cb : cb + xb.shape[1]])
            d = da - db
            lo, hi = percentile_interval(d, alpha=alpha)
            finite = d[np.isfinite(d)]
            degenerate = bool(finite.size) and float(finite.max() - finite.min()) <= TIE
            out[k] = Draws(lo, hi, far_side_share(d, tie=TIE), int(finite.size), degenerate)
            ca += xa.shape[1]
            cb += xb.shape[1]
    return out


def _counts(data: AgentData, key: str) -> tuple[float, float]:
    """A rate's count and denominator for one agent: the sums of its ``[v, defined]`` columns."""
    cols = data.parts[key][0]
    return float(cols[:, 0].sum()), float(cols[:, 1].sum())


def _at_one_boundary(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Both rates at 0, or both at 1 (with traces): the degenerate case spec section 3 names. A bootstrap
    that is degenerate for another reason (two agents identical on every shared question, fully paired)
    keeps its [0, 0]: the paired draws do vary nothing there, and an unpaired interval would not pair."""
    (xa, na), (xb, nb) = a, b
    return na > 0 and nb > 0 and ((xa == 0 and xb == 0) or (xa == na and xb == nb))


def difference_interval(
    a: AgentData, b: AgentData, key: str, draws: Draws, *, alpha: float
) -> tuple[float, float, str, str]:
    """The difference's interval, how it was computed and its verdict (spec section 3).

    The paired bootstrap's percentile interval, unless every draw gave the same value for a rate
    with both agents at 0, or both at 1: then Newcombe's hybrid score interval of the two rates. The
    verdict is *clear* when the interval excludes 0, and *borderline* instead of clear or not clear
    when the bootstrap's bound is within Monte Carlo error of 0
    (:func:`~seekbench.metrics.monte_carlo_borderline`); Newcombe's interval has no Monte Carlo error.
    """
    lo, hi = draws.lower, draws.upper
    if draws.degenerate and key in RATE_METRICS and a is not b and _at_one_boundary(_counts(a, key), _counts(b, key)):
        lo, hi = newcombe_interval(*_counts(a, key), *_counts(b, key), alpha=alpha)
        return lo, hi, NEWCOMBE, CLEAR if is_clear(lo, hi) else NOT_CLEAR
    if monte_carlo_borderline(draws.far_share, draws.n_draws, alpha=alpha):
        return lo, hi, BOOTSTRAP, BORDERLINE
    return lo, hi, BOOTSTRAP, CLEAR if is_clear(lo, hi) else NOT_CLEAR


def is_clear(lo: float, hi: float) -> bool:
    """The CI excludes 0 (beyond rounding: sums of equal per-trace values can differ in the last bit)."""
    return bool(lo > TIE or hi < -TIE)


class PairedDifferences:
    """The differences between agents on each metric, each pair's bootstrap drawn once.

    ``interval(a, b, key)`` is the interval of M(a) - M(b), how it was computed and its verdict;
    the pair's draws are computed in one order (sorted names) and negated for the other, so
    b - a is exactly the negation of a - b.
    """

    def __init__(self, data: dict[str, AgentData], *, resampler: Resampler, alpha: float) -> None:
        self.data, self.resampler, self.alpha = data, resampler, alpha
        self._draws: dict[tuple[str, str], dict[str, Draws]] = {}

    def interval(self, a: str, b: str, key: str) -> tuple[float, float, str, str]:
        """``(lower, upper, how, verdict)`` of M(a) - M(b) for the metric ``key``."""
        first, second = sorted((a, b))
        if (first, second) not in self._draws:
            self._draws[(first, second)] = pair_draws(
                self.data[first], self.data[second], resampler=self.resampler, alpha=self.alpha
            )
        draws = self._draws[(first, second)][key]
        lo, hi, how, verdict = difference_interval(self.data[first], self.data[second], key, draws, alpha=self.alpha)
        if a != first:
            lo, hi = 0.0 - hi, 0.0 - lo  # 0.0 - x: no -0.0
        return lo, hi, how, verdict


def shared_questions(a: AgentData, b: AgentData) -> int:
    """Questions both agents answered (traces without a question id never pair)."""
    return len(a.question_set & b.question_set)
