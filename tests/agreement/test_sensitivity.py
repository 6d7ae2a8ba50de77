"""Metric sensitivity on the shared SeekBench data: human labels vs deliberately corrupted copies.

Needs ../shared/data/seekbench_human_190.jsonl (read in place; skipped when absent, fails
under CI=true).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from seekbench import UndefinedMetricWarning
from seekbench.agreement import compare_annotations, metric_sensitivity
from seekbench.agreement._sensitivity import _per_agent
from seekbench.labels import AnnotationSet
from seekbench.metrics import MetricOptions, Resampler
from seekbench.metrics._ce import evidence_prevalence
from seekbench.metrics._summary import summarize
from seekbench.traces import build_tables

pytestmark = pytest.mark.shared_data

FLIP = {"Grounded": "NotGrounded", "NotGrounded": "Grounded"}
SHARE = 0.3
SEED = 20240611


def _renamed(human: AnnotationSet, rater: str, records: pd.DataFrame | None = None) -> AnnotationSet:
    recs = (human.records if records is None else records).copy()
    recs["rater"] = rater
    return AnnotationSet(recs.reset_index(drop=True), name=rater)


def _flipped(human: AnnotationSet, share: float, rater: str, seed: int = SEED) -> tuple[AnnotationSet, np.ndarray]:
    """Flip exactly round(share * N) of the N grounding labels, chosen uniformly (seeded)."""
    recs = human.records.copy()
    idx = recs.index[recs["field"] == "grounding"]
    chosen = np.random.default_rng(seed).choice(idx, size=round(share * len(idx)), replace=False)
    recs.loc[chosen, "value"] = recs.loc[chosen, "value"].map(FLIP)
    return _renamed(human, rater, recs), chosen


@pytest.fixture(scope="module")
def study(shared_traces):
    human = AnnotationSet.from_traces(shared_traces)
    partial, chosen = _flipped(human, SHARE, "flip30")
    full, _ = _flipped(human, 1.0, "flip_all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        res = compare_annotations(human, _renamed(human, "copy"), partial, full, traces=shared_traces,
                                  panel="never", n_boot=400, seed=7)
    return human, res, chosen


def _rows(res, rater, metric):
    t = res.sensitivity.table
    return t[(t["rater"] == rater) & (t["metric"] == metric)].set_index("agent")


def test_identical_labels_move_nothing(study):
    _, res, _ = study
    for metric in ("rqi", "ce", "erf@8"):
        r = _rows(res, "copy", metric)
        assert (r["difference"] == 0).all() and (r["lower"] == 0).all() and (r["upper"] == 0).all()
    rk = res.sensitivity.rankings.set_index(["rater", "metric"])
    assert rk.loc[("copy", "rqi"), "kendall_tau"] == pytest.approx(1.0)
    assert bool(rk.loc[("copy", "rqi"), "same_ranking"])
    s = res.summary[res.summary["rater"] == "copy"]
    assert (s["raw_agreement"] == 1.0).all() and (s["ac1"] == 1.0).all()
    # Humans labeled every search step Grounded: kappa is undefined there (p_e = 1), and only there.
    one_class = (s["field"] == "grounding") & (s["step_kind"] == "search")
    assert s.loc[one_class, "kappa"].isna().all() and one_class.sum() == 1
    s = s[~one_class]
    assert (s["kappa"] == 1.0).all() and (s["kappa_lower"] == 1.0).all() and (s["kappa_upper"] == 1.0).all()


def test_flipping_every_grounding_label_mirrors_rqi(study):
    """G' = 1 - G on every reasoning step, so RQI'_i = 1 - RQI_i and the agent mean too:
    difference = 1 - 2 RQI exactly, and the agents' RQI order reverses (tau = -1)."""
    _, res, _ = study
    r = _rows(res, "flip_all", "rqi")
    np.testing.assert_allclose(r["judged"], 1 - r["reference"], atol=1e-12)
    np.testing.assert_allclose(r["difference"], 1 - 2 * r["reference"], atol=1e-12)
    rk = res.sensitivity.rankings.set_index(["rater", "metric"])
    assert rk.loc[("flip_all", "rqi"), "kendall_tau"] == pytest.approx(-1.0)
    g = res.summary[(res.summary["rater"] == "flip_all") & (res.summary["field"] == "grounding")]
    assert set(g["step_kind"]) == {"reasoning", "search"} and (g["raw_agreement"] == 0.0).all()


def test_flipping_a_known_share_moves_rqi_by_the_expected_amount(study, shared_traces):
    """Expected shift, derived.

    k = round(0.3 N) of the N grounding labels are flipped, chosen uniformly without
    replacement, so every label is flipped with probability p = k / N (search-step labels
    take part too; RQI only reads reasoning steps). A flipped label gives G' = 1 - G, so
    E[G'] = G + p (1 - 2G). RQI_agent = (1/m) sum_i (1/n_i) sum_j G_ij is linear in the labels
    (m traces with labeled reasoning, n_i labeled reasoning steps in trace i), hence
        E[RQI'_agent] - RQI_agent = p (1 - 2 RQI_agent).
    Spread: the shift is D = sum_j c_j F_j with c_j = (1 - 2 G_j) / (m n_i) and F_j the flip
    indicators; under sampling without replacement Var(D) <= p (1 - p) N / (N - 1) sum_j c_j^2,
    and c_j^2 = 1 / (m n_i)^2. We require |D - E[D]| <= 4 of those standard deviations.
    CE and ERF read only clarity, sufficiency and correctness: they must not move at all.
    """
    human, res, chosen = study
    n_labels = int((human.records["field"] == "grounding").sum())
    p = len(chosen) / n_labels
    assert p == pytest.approx(SHARE, abs=1 / n_labels)
    steps, traces = build_tables(shared_traces)
    r_steps = steps[(steps["kind"] == "reasoning") & steps["grounding"].notna()]
    n_i = r_steps.groupby("trace_id").size()
    agent_of = traces.set_index("trace_id")["agent"]
    rows = _rows(res, "flip30", "rqi")
    for agent, row in rows.iterrows():
        n_a = n_i[agent_of.reindex(n_i.index) == agent]
        m = len(n_a)
        expected = p * (1 - 2 * row["reference"])
        sd = math.sqrt(p * (1 - p) * n_labels / (n_labels - 1) * float((n_a * (1.0 / (m * n_a)) ** 2).sum()))
        assert abs(row["difference"] - expected) <= 4 * sd, (agent, row["difference"], expected, sd)
        assert row["lower"] <= row["difference"] <= row["upper"]
    for metric in ("ce", "erf@8"):
        r = _rows(res, "flip30", metric)
        assert (r["difference"] == 0).all() and (r["lower"] == 0).all() and (r["upper"] == 0).all()
    # Agreement on the corrupted field: exactly k of the N grounding labels disagree, over the two
    # strata (reasoning and search steps, scored apart).
    g = res.summary[(res.summary["rater"] == "flip30") & (res.summary["field"] == "grounding")]
    assert int(g["n_compared"].sum()) == n_labels
    assert float((g["n_compared"] * (1 - g["raw_agreement"])).sum()) == pytest.approx(len(chosen), abs=1e-9)
    other = res.summary[(res.summary["rater"] == "flip30")
                        & ~res.summary["field"].isin(["grounding", "all (pooled)"])]
    assert (other["kappa"] == 1.0).all()


OPTION_SETS = [
    {},
    {"erf_method": "km", "ce_aggregate": "pooled", "ce_prevalence": "global", "rqi_aggregate": "step",
     "evidence_mapping": "sufficiency_first"},
    {"ce_aggregate": "pooled", "ce_prevalence": "group", "time": "step", "recovery": "evidence",
     "evidence_scope": "latest", "decision_points": "step"},
]


@pytest.mark.parametrize("options", OPTION_SETS)
def test_bootstrap_statistics_reproduce_summarize(shared_traces, options):
    """The per-trace sums the paired bootstrap resamples give summarize's numbers on the full sample."""
    traces = shared_traces[::3]
    steps, tdf = build_tables(traces)
    opts = MetricOptions(**options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        summary = summarize(steps, tdf, by=("agent",), n_boot=0, **options)
        weights = evidence_prevalence(steps, tdf, decision_points=opts.decision_points,
                                      **opts.evidence).to_numpy()
        agents = sorted(tdf["agent"].unique())
        values, _ = _per_agent(steps, tdf, agents, opts=opts, weights=weights, resampler=Resampler(n_boot=0))
    for g in summary.groups:
        v = values[g["agent"]]
        assert v["rqi"] == pytest.approx(g["rqi"], abs=1e-12)
        assert v["ce"] == pytest.approx(g["ce"], abs=1e-12)
        assert v["erf@8"] == pytest.approx(g["recovered_by_8"], abs=1e-12)


def test_sensitivity_with_missing_judge_labels_is_nan_with_warning(shared_traces):
    human = AnnotationSet.from_traces(shared_traces[:20])
    judge = _renamed(human, "partial", human.records[human.records["field"] == "grounding"])
    with pytest.warns(UndefinedMetricWarning) as caught:
        res = metric_sensitivity(shared_traces[:20], human, judge, n_boot=50)
    messages = [str(w.message) for w in caught]
    assert any(m.startswith("partial: CE is undefined") for m in messages), messages
    assert any("Kendall's tau is undefined" in m and "partial/ce" in m for m in messages), messages
    ce = res.table[res.table["metric"] == "ce"]
    assert ce["judged"].isna().all() and ce["difference"].isna().all()
