"""Agreement coefficients (spec section 9) against independent references, and their edge cases.

References used only here: scikit-learn's ``cohen_kappa_score``, statsmodels' ``fleiss_kappa``
and the ``krippendorff`` package. Hand derivations are written next to the other expectations.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench import UndefinedMetricWarning, UserInputError
from seekbench.agreement import (
    cohen_kappa,
    cohen_kappa_score,
    fleiss_kappa,
    fleiss_kappa_score,
    gwet_ac1,
    gwet_ac1_score,
    krippendorff_alpha,
    krippendorff_alpha_score,
)

TOL = 1e-9
labels_st = st.integers(min_value=0, max_value=3)


@st.composite
def label_pairs(draw, max_n=60):
    n = draw(st.integers(min_value=1, max_value=max_n))
    y1 = draw(st.lists(labels_st, min_size=n, max_size=n))
    y2 = draw(st.lists(labels_st, min_size=n, max_size=n))
    return y1, y2


@st.composite
def rating_matrices(draw, missing: bool):
    n_items = draw(st.integers(min_value=1, max_value=30))
    n_raters = draw(st.integers(min_value=2, max_value=6))
    cell = st.one_of(st.none(), labels_st) if missing else labels_st
    return [draw(st.lists(cell, min_size=n_raters, max_size=n_raters)) for _ in range(n_items)]


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOL


# --------------------------------------------------------------------------- Cohen's kappa

@settings(max_examples=300, deadline=None)
@given(label_pairs())
def test_kappa_equals_sklearn(pair):
    from sklearn.metrics import cohen_kappa_score as sk_kappa

    y1, y2 = pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = cohen_kappa_score(y1, y2)
        ref = float(sk_kappa(y1, y2))
    assert _same(ours, ref), (ours, ref)


@settings(max_examples=100, deadline=None)
@given(label_pairs(), st.randoms(use_true_random=False))
def test_kappa_invariances(pair, rnd):
    """Symmetric in the raters, invariant to item order and to duplicating every item."""
    y1, y2 = pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = cohen_kappa_score(y1, y2)
        order = list(range(len(y1)))
        rnd.shuffle(order)
        assert _same(k, cohen_kappa_score(y2, y1))
        assert _same(k, cohen_kappa_score([y1[i] for i in order], [y2[i] for i in order]))
        assert _same(k, cohen_kappa_score(y1 * 2, y2 * 2))
        a = gwet_ac1_score(y1, y2, labels=range(4))
    assert -1.0 - TOL <= a <= 1.0 + TOL
    if not math.isnan(k):
        assert -1.0 - TOL <= k <= 1.0 + TOL


def test_kappa_hand_example_and_missing_pairs():
    # p_o = 3/4; rater 1 has (a, b) = (2, 2), rater 2 (1, 3): p_e = (2*1 + 2*3) / 16 = 1/2; kappa = 1/2.
    assert cohen_kappa_score(["a", "a", "b", "b"], ["a", "b", "b", "b"]) == pytest.approx(0.5, abs=TOL)
    res = cohen_kappa(["a", "a", "b", "b", None, "a"], ["a", "b", "b", "b", "a", float("nan")], n_boot=0)
    assert (res.n, res.n_excluded) == (4, 2)
    assert res.value == pytest.approx(0.5, abs=TOL)
    assert res.confusion.to_numpy().tolist() == [[1, 1], [0, 2]]
    assert res.prevalence.loc["a"].tolist() == pytest.approx([0.5, 0.25, 0.375])


def test_identical_raters_kappa_one_with_degenerate_ci():
    rng = np.random.default_rng(3)
    y = rng.choice(["Grounded", "NotGrounded"], size=200).tolist()
    groups = np.repeat(np.arange(40), 5)
    res = cohen_kappa(y, y, groups=groups, n_boot=500, seed=1)
    assert res.value == 1.0
    assert res.ci == (1.0, 1.0)
    assert res.ac1 == 1.0 and res.ac1_ci == (1.0, 1.0)


def test_constant_raters_kappa_nan_with_warning_ac1_defined():
    """Both raters say Grounded on every step: p_o = p_e = 1, kappa = 0/0; Gwet's p_e = 0, AC1 = 1."""
    y = ["Grounded"] * 30
    with pytest.warns(UndefinedMetricWarning, match="p_e = 1"):
        k = cohen_kappa_score(y, y)
    assert math.isnan(k)
    assert gwet_ac1_score(y, y) == 1.0
    assert gwet_ac1_score(y, y, labels=["Grounded", "NotGrounded"]) == 1.0
    with pytest.warns(UndefinedMetricWarning):
        res = cohen_kappa(y, y, n_boot=50)
    assert math.isnan(res.value) and res.ac1 == 1.0


def test_constant_judge_against_varying_reference():
    """A judge that always says Grounded: kappa is exactly 0 (as scikit-learn), AC1 stays informative.

    Reference: 27 Grounded, 3 NotGrounded; judge all Grounded. p_o = 0.9, Cohen p_e = 0.9 -> 0.
    Gwet: pi_G = (0.9 + 1) / 2 = 0.95, p_e = 2 * 0.95 * 0.05 / 1 = 0.095, AC1 = 0.805 / 0.905.
    """
    ref = ["Grounded"] * 27 + ["NotGrounded"] * 3
    judge = ["Grounded"] * 30
    assert cohen_kappa_score(ref, judge) == 0.0
    assert gwet_ac1_score(ref, judge) == pytest.approx(0.805 / 0.905, abs=TOL)


def test_ac1_hand_example():
    # p_o = 0.8; pi_G = 0.9, pi_N = 0.1: p_e = (0.09 + 0.09) / (2 - 1) = 0.18; AC1 = 0.62 / 0.82.
    y1 = ["G"] * 9 + ["N"]
    y2 = ["G"] * 8 + ["N", "G"]
    assert gwet_ac1_score(y1, y2) == pytest.approx(0.62 / 0.82, abs=TOL)
    res = gwet_ac1(y1, y2, n_boot=0)
    assert (res.observed_agreement, res.expected_agreement) == pytest.approx((0.8, 0.18))


def test_bootstrap_resamples_whole_groups():
    """The CI equals a slow bootstrap that redraws whole groups with the same generator and scores
    each resample with scikit-learn (an independent check of the vectorised resampling)."""
    from sklearn.metrics import cohen_kappa_score as sk_kappa

    rng = np.random.default_rng(5)
    groups = np.repeat([f"t{i}" for i in range(25)], rng.integers(1, 6, size=25))
    y1 = rng.choice(["a", "b", "c"], size=len(groups))
    y2 = np.where(rng.random(len(groups)) < 0.7, y1, rng.choice(["a", "b", "c"], size=len(groups)))
    res = cohen_kappa(y1.tolist(), y2.tolist(), groups=groups.tolist(), n_boot=300, seed=11)
    draws = np.random.default_rng(11).multinomial(25, np.full(25, 1 / 25), size=300)
    ids = list(dict.fromkeys(groups))
    stats = []
    for counts in draws:
        idx = np.concatenate([np.flatnonzero(groups == g) for g, c in zip(ids, counts) for _ in range(c)])
        stats.append(sk_kappa(y1[idx], y2[idx]))
    assert res.ci == pytest.approx(tuple(np.percentile(stats, [2.5, 97.5])), abs=1e-12)
    # Seeded: the same seed gives the same interval.
    assert cohen_kappa(y1.tolist(), y2.tolist(), groups=groups.tolist(), n_boot=300, seed=11).ci == res.ci


def test_label_outside_given_labels_is_an_error():
    with pytest.raises(UserInputError, match="not among labels"):
        cohen_kappa_score(["a", "x"], ["a", "a"], labels=["a", "b"])
    with pytest.raises(UserInputError, match="same length"):
        cohen_kappa_score(["a"], ["a", "b"])


# --------------------------------------------------------------------------- Fleiss' kappa

@settings(max_examples=200, deadline=None)
@given(rating_matrices(missing=False))
def test_fleiss_equals_statsmodels(ratings):
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    table, _ = aggregate_raters(np.asarray(ratings))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = float(sm_fleiss(table, method="fleiss"))
        ours = fleiss_kappa_score(ratings)
    if not math.isfinite(ref):
        assert math.isnan(ours)
    else:
        assert abs(ours - ref) <= TOL, (ours, ref)


def test_fleiss_uses_complete_items_only_and_warns_when_undefined():
    res = fleiss_kappa([["a", "b", None], ["a", "a", "a"], ["b", "b", "a"]], n_boot=0)
    assert (res.n_items, res.n_excluded, res.n_raters) == (2, 1, 3)
    with pytest.warns(UndefinedMetricWarning, match="single label"):
        assert math.isnan(fleiss_kappa_score([["a", "a", "a"], ["a", "a", "a"]]))


# --------------------------------------------------------------------------- Krippendorff's alpha

@settings(max_examples=200, deadline=None)
@given(rating_matrices(missing=True))
def test_alpha_equals_krippendorff_package(ratings):
    import krippendorff

    data = np.array([[np.nan if v is None else float(v) for v in row] for row in ratings]).T  # raters x units
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ref = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
        except ValueError:  # one value in the domain, or no data: alpha undefined
            ref = float("nan")
        ours = krippendorff_alpha_score(ratings)
    if not math.isfinite(ref):
        assert math.isnan(ours)
    else:
        assert abs(ours - ref) <= TOL, (ours, ref)


def test_alpha_counts_and_ci():
    rng = np.random.default_rng(2)
    truth = rng.choice(["x", "y"], size=120)
    ratings = [[t if rng.random() < 0.9 else ("y" if t == "x" else "x") for _ in range(3)] for t in truth]
    ratings[0][1] = ratings[0][2] = None  # one rating left: not pairable
    res = krippendorff_alpha(ratings, groups=np.repeat(np.arange(40), 3), n_boot=300, seed=0)
    assert (res.n_items, res.n_excluded) == (119, 1)
    assert res.ci[0] <= res.value <= res.ci[1]
    # Raters who flip 10% independently: alpha close to (1 - 2 * 0.1)^2 = 0.64.
    assert 0.45 < res.value < 0.8


@pytest.mark.parametrize("coefficient", [krippendorff_alpha, fleiss_kappa])
def test_undefined_reason_is_in_the_result_and_the_warning_repeats_it(coefficient):
    # One label covers every rating: P_e = 1, so alpha and Fleiss' kappa are 0 / 0.
    with pytest.warns(UndefinedMetricWarning) as caught:
        res = coefficient([["a", "a"], ["a", "a"]], n_boot=0)
    assert math.isnan(res.value) and res.undefined
    assert res.undefined in str(caught[0].message)
    assert coefficient([["a", "b"], ["a", "a"], ["b", "b"]], n_boot=0).undefined == ""
