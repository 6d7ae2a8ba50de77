"""PPI++ (seekbench.metrics.ppi_mean and corrected_metrics) against the authors' package ppi-python.

ppi_py's conventions, matched here: lambda = cov / ((1 + n/N) var) with cov the 1/n cross
moment and var np.cov (ddof 1) of all judge values, clipped to [0, 1]; the interval is
normal (statsmodels' _zconfint_generic, z not t) with np.std (ddof 0) standard errors; its
default alpha is 0.1, so alpha is passed explicitly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seekbench._errors import UserInputError
from seekbench.metrics import (
    Resampler,
    corrected_metrics,
    labeled_selection,
    power_tuning,
    ppi_bootstrap_interval,
    ppi_difference,
    ppi_mean,
    wilson_interval,
)

ppi_py = pytest.importorskip("ppi_py")  # in the test extra: installed wherever the suite runs


def _cases():
    """Seeded inputs: binary and continuous, good, poor and anti-correlated judges, lambda clipped at 0 and 1."""
    rng = np.random.default_rng(31)
    out = []
    for n, big_n in ((8, 30), (20, 170), (40, 150), (80, 110)):
        y = rng.integers(0, 2, n).astype(float)
        flip = rng.random(n) < 0.2
        out.append(("binary", y, np.where(flip, 1 - y, y), rng.integers(0, 2, big_n).astype(float)))
        yc = rng.random(n)
        out.append(("continuous", yc, np.clip(yc + rng.normal(0, 0.2, n), 0, 1), rng.random(big_n)))
    y = rng.random(30)
    out.append(("clip at 0", y, 1 - y, rng.random(100)))  # anti-correlated: cov < 0
    out.append(("clip at 1", 2 * y, y, rng.random(100) * 0.1))  # cov = 2 var(f) on the labeled, > (1 + n/N) var
    return out


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_equals_ppi_python(case, alpha):
    _, y, f, fu = case
    est = ppi_mean(y, f, fu, alpha=alpha)
    ref = float(np.asarray(ppi_py.ppi_mean_pointestimate(y, f, fu)).ravel()[0])
    lo, hi = (float(np.asarray(v).ravel()[0]) for v in ppi_py.ppi_mean_ci(y, f, fu, alpha=alpha))
    assert est.value == pytest.approx(ref, abs=1e-10)
    assert est.ci[0] == pytest.approx(lo, abs=1e-10) and est.ci[1] == pytest.approx(hi, abs=1e-10)


def test_lambda_clipping_cases_are_at_the_bounds():
    cases = {c[0]: c for c in _cases()}
    _, y, f, fu = cases["clip at 0"]
    assert power_tuning(y, f, fu) == 0.0
    _, y, f, fu = cases["clip at 1"]
    assert power_tuning(y, f, fu) == 1.0


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_fixed_lambda_equals_ppi_python(lam):
    _, y, f, fu = _cases()[3]
    est = ppi_mean(y, f, fu, lam=lam, alpha=0.05)
    lo, hi = (float(np.asarray(v).ravel()[0]) for v in ppi_py.ppi_mean_ci(y, f, fu, alpha=0.05, lam=lam))
    assert est.ci == pytest.approx((lo, hi), abs=1e-10)


def test_lambda_zero_is_the_classical_interval():
    # Hand derivation: lambda = 0 gives mean(Y) -+ z * std(Y, ddof 0) / sqrt(n).
    y = np.array([1.0, 0.0, 1.0, 1.0])
    est = ppi_mean(y, y, [0.0, 1.0], lam=0.0)
    se = np.sqrt(0.1875 / 4)  # var = 3/4 * 1/4
    assert est.value == 0.75 and est.se == pytest.approx(se)
    assert est.ci == pytest.approx((0.75 - 1.959963984540054 * se, 0.75 + 1.959963984540054 * se))


def test_t_interval_is_wider_and_uses_ddof_1():
    _, y, f, fu = _cases()[1]
    z, t = ppi_mean(y, f, fu), ppi_mean(y, f, fu, interval="t")
    assert t.value == z.value and t.lam == z.lam
    assert t.ci[1] - t.ci[0] > z.ci[1] - z.ci[0]
    from scipy.stats import t as student

    rect = y - t.lam * f
    se = np.sqrt(rect.var(ddof=1) / len(y) + (t.lam * fu).var(ddof=1) / len(fu))
    assert t.ci[1] == pytest.approx(t.value + student.ppf(0.975, len(y) - 1) * se)


def test_undefined_and_bad_inputs():
    est = ppi_mean([1.0], [1.0], [0.0, 1.0])
    assert np.isnan(est.value) and "at least 2" in est.reason
    with pytest.raises(UserInputError, match="pair"):
        ppi_mean([1.0, 0.0], [1.0], [0.0])
    with pytest.raises(UserInputError, match="finite"):
        ppi_mean([1.0, np.nan], [1.0, 0.0], [0.0])
    with pytest.raises(UserInputError, match="interval"):
        ppi_mean([1.0, 0.0], [1.0, 0.0], [0.0], interval="wald")
    # N = 0: every trace human-labeled, lambda 0, the human mean
    assert ppi_mean([1.0, 0.0, 1.0], [0.0, 0.0, 0.0], []).value == pytest.approx(2 / 3)


def test_bootstrap_interval_brackets_the_estimate_and_is_seeded():
    _, y, f, fu = _cases()[4]
    est = ppi_mean(y, f, fu)
    a = ppi_bootstrap_interval(y, f, fu, resampler=Resampler(n_boot=400, seed=3))
    b = ppi_bootstrap_interval(y, f, fu, resampler=Resampler(n_boot=400, seed=3))
    assert a == b and a[0] < est.value < a[1]
    # the bootstrap and CLT intervals agree roughly at n = 40 (a check, not an identity)
    assert abs((a[1] - a[0]) - (est.ci[1] - est.ci[0])) < 0.5 * (est.ci[1] - est.ci[0])


def test_difference_of_independent_estimates():
    a, b = ppi_mean([1.0, 0.0, 1.0, 1.0], [1, 0, 1, 0], [1, 1, 0]), ppi_mean([0.0, 0.0, 1.0], [0, 1, 1], [0, 0])
    d, ci, se = ppi_difference(a, b)
    assert d == pytest.approx(a.value - b.value) and se == pytest.approx(np.hypot(a.se, b.se))
    assert ci[0] < d < ci[1]


def _values(rqi, agent="x", prefix=""):
    ids = [f"{prefix}{i}" for i in range(len(rqi))]
    return pd.DataFrame({"trace_id": ids, "agent": agent, "question_id": ids, "rqi": rqi, "cut_off": 0.0})


def test_corrected_metrics_rows_and_reasons():
    judge = pd.concat([_values([1.0, 0.5, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0]), _values([0.2, 0.4, 0.6], "y", "y")])
    human = pd.concat([_values([0.5, 0.5, 1.0, 1.0]), _values([0.2], "y", "y")])
    res = corrected_metrics(judge, human, n_boot=200)
    x, y = res.summary.iloc[0], res.summary.iloc[1]
    # judge only: mean of the 8 judge values; human only: mean of the 4 human values (hand sums)
    assert x["judge_only"] == pytest.approx(6.0 / 8) and x["human_only"] == pytest.approx(3.0 / 4)
    est = ppi_mean([0.5, 0.5, 1.0, 1.0], [1.0, 0.5, 1.0, 1.0], [0.5, 1.0, 0.0, 1.0], interval="t")
    assert x["corrected"] == pytest.approx(est.value) and x["lam"] == pytest.approx(est.lam)
    assert 0.0 <= x["corrected_ci_low"] <= x["corrected_ci_high"] <= 1.0
    assert np.isnan(y["corrected"]) and "at least 2" in y["reason"] and y["n_labeled"] == 1
    assert res.differences.iloc[0]["note"].startswith("undefined")
    with pytest.raises(UserInputError, match="not among the judged"):
        corrected_metrics(judge, _values([0.5], prefix="z"))


def test_recovery_by_8_is_not_a_mean_when_a_trace_is_cut_off():
    judge = _values([1.0, 0.0, 1.0]).rename(columns={"rqi": "recovered_by_8"})
    judge.loc[2, "cut_off"] = 1.0
    res = corrected_metrics(judge, judge.iloc[:2], metrics=["recovered_by_8"], n_boot=0)
    row = res.summary.iloc[0]
    assert np.isnan(row["corrected"]) and np.isnan(row["judge_only"]) and np.isnan(row["human_only"])
    assert "cut off" in row["reason"]


def test_binary_without_spread_gets_the_wilson_interval_not_a_point():
    # 0 of 6 labeled traces flagged by humans and judge alike: a normal interval would be [0, 0]
    judge = _values([0.0] * 6 + [1.0, 0.0, 0.0]).rename(columns={"rqi": "flag_ungrounded"})
    human = _values([0.0] * 6).rename(columns={"rqi": "flag_ungrounded"})
    row = corrected_metrics(judge, human, n_boot=0).summary.iloc[0]
    assert row["corrected_ci_low"] == 0.0 and row["corrected_ci_high"] > 0.3  # Wilson 0 of 6: [0, 0.39]
    assert "Wilson" in row["reason"]


def test_labeled_selection_flags_first_n_and_missing_agents():
    t = pd.DataFrame({"trace_id": [str(i) for i in range(20)], "agent": ["a"] * 10 + ["b"] * 10})
    sel = labeled_selection(t, {str(i) for i in range(5)})
    assert sel["first_n"] and sel["missing_groups"] == ["b"] and "first 5" in sel["warning"]
    spread = labeled_selection(t, {"1", "4", "12", "17"})
    assert not spread["first_n"] and spread["warning"] is None and spread["per_group"] == {"a": [2, 10], "b": [2, 10]}


# The Wilson interval at the effective sample size (interval="wilson"; "wilson-df", the default for rates in
# corrected_metrics, with Korn and Graubard's degrees-of-freedom factor)


def test_wilson_at_lambda_zero_is_the_human_wilson_interval():
    # lambda = 0: se0^2 = Ybar (1 - Ybar) / n, so n_eff = n and the interval is Wilson(3 of 5)
    est = ppi_mean([1, 0, 1, 1, 0], [1, 0, 1, 1, 1], [1, 1, 0, 1, 0], lam=0.0, interval="wilson")
    assert est.value == pytest.approx(0.6) and est.n_eff == pytest.approx(5.0)
    assert est.ci == pytest.approx(wilson_interval(3, 5), abs=1e-12)
    assert est.se == pytest.approx(np.sqrt(0.3 / 5))  # the "t" standard error (ddof 1), for differences


def test_wilson_effective_sample_size_by_hand():
    # Hand derivation, lambda = 1/2: Y - lambda f = [1/2, 1, 0, 0], mean 3/8, var (ddof 0) 11/64;
    # lambda f~ = [1/2, 0, 1/2, 0], mean 1/4, var 1/16; theta = 1/4 + 3/8 = 5/8;
    # se0^2 = (11/64) / 4 + (1/16) / 4 = 15/256; n_eff = (5/8)(3/8) / (15/256) = 4.
    est = ppi_mean([1, 1, 0, 0], [1, 0, 0, 0], [1, 0, 1, 0], lam=0.5, interval="wilson")
    assert est.value == pytest.approx(5 / 8) and est.n_eff == pytest.approx(4.0)
    assert est.ci == pytest.approx(wilson_interval(2.5, 4), abs=1e-12)
    # same estimate and lambda as the other intervals; only the interval differs
    t = ppi_mean([1, 1, 0, 0], [1, 0, 0, 0], [1, 0, 1, 0], lam=0.5, interval="t")
    assert t.value == est.value and t.se == est.se


def test_wilson_guard_outside_zero_one():
    # theta = mean f~ + mean(Y - f) = 0 + (1/4 - 3/4) = -1/2 with lambda 1: n_eff would be negative;
    # the guard uses n = 4 and p = 0, Wilson's 0 of 4: [0, z^2 / (4 + z^2)] = [0, 0.4899]
    est = ppi_mean([0, 0, 0, 1], [1, 1, 0, 1], [0, 0, 0, 0], lam=1.0, interval="wilson")
    assert est.value == pytest.approx(-0.5) and est.n_eff == 4.0
    z2 = 1.959963984540054**2
    assert est.ci == pytest.approx((0.0, z2 / (4 + z2)), abs=1e-12)


def test_wilson_is_narrower_than_the_human_one_with_a_good_judge():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 10).astype(float)
    f = y.copy()
    f[0] = 1 - f[0]  # right on 9 of 10
    est = ppi_mean(y, f, rng.integers(0, 2, 90).astype(float), interval="wilson")
    lo, hi = wilson_interval(y.sum(), 10)
    assert est.lam > 0.5 and est.n_eff > 10 and est.ci[1] - est.ci[0] < hi - lo


def test_wilson_df_shrinks_the_effective_sample_size_by_korn_graubard():
    # The hand example above (n_eff = 4, n = 4 labeled): n_eff_df = 4 (z / t_3)^2 with the table value
    # t_(3, 0.975) = 3.182446305284263, so 4 * (1.959963984540054 / 3.182446305284263)^2 = 1.5172
    est = ppi_mean([1, 1, 0, 0], [1, 0, 0, 0], [1, 0, 1, 0], lam=0.5, interval="wilson-df")
    assert est.n_eff == pytest.approx(4 * (1.959963984540054 / 3.182446305284263) ** 2, rel=1e-9)
    assert est.ci == pytest.approx(wilson_interval(0.625 * est.n_eff, est.n_eff), abs=1e-12)
    plain = ppi_mean([1, 1, 0, 0], [1, 0, 0, 0], [1, 0, 1, 0], lam=0.5, interval="wilson")
    assert est.ci[0] < plain.ci[0] and est.ci[1] > plain.ci[1]
    # the guard has no factor: theta outside (0, 1) gives Wilson's 0 of n as before
    out = ppi_mean([0, 0, 0, 1], [1, 1, 0, 1], [0, 0, 0, 0], lam=1.0, interval="wilson-df")
    assert out.n_eff == 4.0


def test_wilson_needs_0_1_values():
    for interval in ("wilson", "wilson-df"):
        with pytest.raises(UserInputError, match="0/1"):
            ppi_mean([0.5, 1.0], [1.0, 0.0], [0.0], interval=interval)


def test_corrected_metrics_interval_is_fixed_by_the_metric():
    # 8 labeled traces where the judge errs once, 40 judged alone: the judge narrows both intervals
    y = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    f = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0]
    judge = _values(f + [1.0, 0.0, 0.0, 1.0, 0.0] * 8)
    judge["flag_ungrounded"] = judge["rqi"]
    judge["my_rate"] = judge["rqi"]  # not a PPI metric, every value 0/1: a rate
    human = judge.iloc[:8].assign(rqi=y, flag_ungrounded=y)
    human["my_rate"] = human["flag_ungrounded"]
    metrics = ["rqi", "flag_ungrounded", "my_rate"]
    rows = corrected_metrics(judge, human, metrics=metrics, n_boot=0).summary.set_index("metric")
    args = (y, f, judge["rqi"].to_numpy()[8:])
    wil, t = ppi_mean(*args, interval="wilson-df"), ppi_mean(*args, interval="t")
    assert wil.lam > 0 and wil.ci != pytest.approx(t.ci)  # the two intervals differ here
    # and each is narrower than its lambda = 0 counterpart (Wilson of 3 of 8; t of the human values)
    lo, hi = wilson_interval(3, 8)
    assert wil.ci[1] - wil.ci[0] < hi - lo
    t0 = ppi_mean(*args, interval="t", lam=0.0)
    assert t.ci[1] - t.ci[0] < t0.ci[1] - t0.ci[0]
    for m in ("flag_ungrounded", "my_rate"):
        assert (rows.loc[m, "corrected_ci_low"], rows.loc[m, "corrected_ci_high"]) == pytest.approx(wil.ci)
    assert rows.loc["rqi", "corrected_ci_high"] == pytest.approx(min(t.ci[1], 1.0))
    assert rows.loc["rqi", "corrected_ci_low"] == pytest.approx(max(t.ci[0], 0.0))
    with pytest.raises(UserInputError, match="interval"):
        corrected_metrics(judge, human, interval="wilson")


def test_a_judge_that_widens_the_interval_gets_lambda_zero():
    # 5 labeled traces, 5 judged alone. PPI++'s lambda (0.343) lowers the variance a little, but the
    # Korn-Graubard factor at n = 5 widens the rate's interval beyond the human values' own Wilson
    # interval (2 of 5): width 0.723 against 0.652, so the row shows lambda 0, the human-only value.
    y, f, fu = [1.0, 0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 1.0, 1.0, 1.0]
    wil = ppi_mean(y, f, fu, interval="wilson-df")
    lo, hi = wilson_interval(2, 5)
    assert wil.lam > 0 and wil.ci[1] - wil.ci[0] > hi - lo
    judge = _values(f + fu).rename(columns={"rqi": "flag_ungrounded"})
    human = judge.iloc[:5].assign(flag_ungrounded=y)
    row = corrected_metrics(judge, human, n_boot=0).summary.iloc[0]
    assert row["lam"] == 0.0 and row["corrected"] == pytest.approx(0.4)
    assert (row["corrected_ci_low"], row["corrected_ci_high"]) == pytest.approx((lo, hi))
    assert (row["human_only_ci_low"], row["human_only_ci_high"]) == pytest.approx((lo, hi))
    assert "does not narrow" in row["reason"]


@settings(max_examples=150, deadline=None)
@given(
    y=st.lists(st.sampled_from([0.0, 1.0]), min_size=2, max_size=12),
    errors=st.lists(st.booleans(), min_size=12, max_size=12),
    fu=st.lists(st.sampled_from([0.0, 1.0]), min_size=0, max_size=30),
)
def test_a_corrected_rate_is_never_wider_than_the_human_wilson_interval(y, errors, fu):
    # the judge errs on the labeled traces where ``errors`` says so; whatever lambda PPI++ picks,
    # the row's interval is at most the human values' own Wilson interval
    f = [1.0 - v if e else v for v, e in zip(y, errors, strict=False)]
    judge = _values(f + fu).rename(columns={"rqi": "flag_ungrounded"})
    human = judge.iloc[: len(y)].assign(flag_ungrounded=y)
    row = corrected_metrics(judge, human, n_boot=0).summary.iloc[0]
    lo, hi = wilson_interval(float(sum(y)), len(y))
    assert row["corrected_ci_high"] - row["corrected_ci_low"] <= hi - lo + 1e-12
