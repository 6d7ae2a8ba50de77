"""CIs of ERF(8) (bootstrap), the overconfident rate and the overcautious rate (Wilson), spec sections 3-5.

The vectorised CIs must equal the plain definition: draw the same resamples of whole traces
(``numpy.random.default_rng(seed).multinomial``, as the bootstrap module documents), refit
or recount on each resample one by one, and take the 2.5% and 97.5% percentiles.
"""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import make_trace, tables

from seekbench.metrics import (
    EvidenceRecoveryFitter,
    answer_calibration,
    recovered_by_ci,
    recovery_events,
    wilson_interval,
)

pytestmark = pytest.mark.filterwarnings("ignore::seekbench._errors.UndefinedMetricWarning")

# Nine traces of one agent, one of each shape (E: evidence state after each turn):
SHAPES = [
    [("s",), ("o", "C", "S"), ("a",)],                            # recovered at 1, answers at E 2
    [("s",), ("o", "U", "I"), ("a",)],                            # stops at 1 (wrong), E 0
    [("s",), ("o", "U", "I"), ("s",), ("o", "C", "S"), ("a",)],   # recovered at 2
    [("a",)],                                                     # stops at 0 (wrong), E 0
    [("s",), ("o", "C", "S"), ("s",), ("o", "C", "S")],           # recovered at 1, never answers
    [("s",), ("o", "U", "S"), ("s",), ("o", "U", "I")],           # cut off at 2, never E 2
    [("s",), ("o", "C", "I"), ("a",)],                            # stops at 1, E 1
    [("s",), ("o", "C", "S"), ("s",), ("s",), ("a",)],            # recovered at 1, answers at 3
    [("s",), ("o", "U", "I"), ("s",), ("s",), ("s",), ("a",)],    # stops at 4
]
B, SEED = 300, 7


@pytest.fixture
def corpus():
    traces = [make_trace(shape, trace_id=f"t{i}", correct=False) for i, shape in enumerate(SHAPES)]
    return tables(traces)


def _draws(n: int) -> np.ndarray:
    return np.random.default_rng(SEED).multinomial(n, np.full(n, 1.0 / n), size=B)


def _percentiles(values) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    lo, hi = np.percentile(v, [2.5, 97.5])
    return float(lo), float(hi)


def test_hand_values(corpus):
    # Answered: 7 traces; with E < 2 at the answer: traces 1, 3, 6, 8 -> overconfident 4/7.
    # Reached E = 2: traces 0, 2, 4, 7; trace 4 never answers -> overcautious 1/9.
    # ERF(8): recovered 0, 2, 4, 7 (4 of 9), trace 5 cut off at 2 after every recovery but one at 2
    # (trace 2, tied: still at risk) -> Aalen-Johansen = raw share 4/9.
    res = answer_calibration(*corpus, n_boot=0)
    assert res.overconfident_rate == pytest.approx(4 / 7)
    assert res.overcautious_rate == pytest.approx(1 / 9)
    assert EvidenceRecoveryFitter().fit(*corpus).recovered_by(8) == pytest.approx(4 / 9)


def test_erf8_ci_equals_refitting_each_resample(corpus):
    events = recovery_events(*corpus)
    stats = []
    for counts in _draws(len(events)):
        resample = events.loc[events.index.repeat(counts)]
        stats.append(EvidenceRecoveryFitter().fit_events(resample).recovered_by(8))
    assert recovered_by_ci(events, 8, n_boot=B, seed=SEED) == pytest.approx(_percentiles(stats), abs=1e-12)
    km = [EvidenceRecoveryFitter(method="km").fit_events(events.loc[events.index.repeat(c)]).recovered_by(8)
          for c in _draws(len(events))]
    assert recovered_by_ci(events, 8, method="km", n_boot=B, seed=SEED) == pytest.approx(_percentiles(km),
                                                                                          abs=1e-12)


def test_companion_rate_cis_are_wilson_intervals(corpus):
    # Spec section 3: a per-agent rate gets the Wilson score interval over its n traces.
    # Overconfident 4 of 7 answered, overcautious 1 of 9 (test_hand_values); z = 1.959963984540054.
    # Wilson at x = 1, n = 9, z^2 = 3.841459: centre (1/9 + z^2/18) / (1 + z^2/9) = 0.324525 / 1.426829
    # = 0.227445; half = z / 1.426829 * sqrt((1/9)(8/9)/9 + z^2/324) = 1.373644 * 0.151097 = 0.207554.
    res = answer_calibration(*corpus, n_boot=B, seed=SEED)
    assert res.overconfident_ci == pytest.approx(wilson_interval(4, 7), abs=1e-12)
    assert res.overcautious_ci == pytest.approx(wilson_interval(1, 9), abs=1e-12)
    assert res.overcautious_ci == pytest.approx((0.019891, 0.434999), abs=1e-6)
    assert res.summary.loc["overconfident_rate", ["lower", "upper"]].tolist() == pytest.approx(
        list(res.overconfident_ci))
