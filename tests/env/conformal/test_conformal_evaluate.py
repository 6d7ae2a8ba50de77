"""Evaluation over splits: Clopper-Pearson, document split, aggregation, R^2, unscored states, baselines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _conformal_helpers import make_corpus
from sklearn.metrics import r2_score
from statsmodels.stats.proportion import proportion_confint

from seekbench import SeekbenchWarning, UserInputError
from seekbench.env.conformal import (
    FeatureRegressionEstimator,
    MeanEstimator,
    baseline_estimates,
    baseline_features,
    calibration_mask,
    clopper_pearson,
    conformal_quantile,
    cross_fit_predict,
    estimates_frame,
    evaluate_conformal,
    read_estimates,
    render_beliefs,
    synthesize_belief_states,
    write_estimates,
)


@pytest.mark.parametrize("k,n", [(0, 10), (10, 10), (9, 10), (1, 1), (0, 1), (45, 50), (270, 298), (3, 7)])
@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_clopper_pearson_matches_statsmodels(k, n, confidence):
    lo, hi = clopper_pearson(k, n, confidence=confidence)
    ref = proportion_confint(k, n, alpha=1 - confidence, method="beta")
    assert lo == pytest.approx(ref[0], abs=1e-12) and hi == pytest.approx(ref[1], abs=1e-12)


def test_clopper_pearson_empty():
    assert all(np.isnan(clopper_pearson(0, 0)))


def _pool(n_docs=30, per_doc=4, seed=0, noise=0.15):
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n_docs):
        bias = rng.normal(0, 0.05)
        for k in range(per_doc):
            c = rng.random()
            rows.append((f"d{d}", f"d{d}#{k}", c, float(np.clip(c + bias + rng.normal(0, noise), 0, 1))))
    df = pd.DataFrame(rows, columns=["doc_id", "state_id", "true_completeness", "c_hat"])
    return df.assign(estimator="est", reason=None)


def test_document_split_keeps_documents_together_and_halves():
    docs = np.repeat([f"d{i}" for i in range(11)], 3)
    for s in range(20):
        cal = calibration_mask(docs, split="document", rng=np.random.default_rng(s))
        per_doc = pd.Series(cal).groupby(docs).agg(["min", "max"])
        assert (per_doc["min"] == per_doc["max"]).all()
        assert cal.sum() == 5 * 3  # floor(11 / 2) documents
    cal = calibration_mask(docs, split="state", rng=np.random.default_rng(0))
    assert cal.sum() == 16  # floor(33 / 2) states
    with pytest.raises(UserInputError, match="split"):
        calibration_mask(docs, split="pooled", rng=np.random.default_rng(0))


def test_evaluate_recomputes_by_hand_and_aggregates_split_means():
    df = _pool()
    res = evaluate_conformal(df, alpha=0.1, n_splits=3, n_seeds=4, seed=9)
    sp = res.splits
    assert len(sp) == 12 and set(sp["split"]) == {0, 1, 2} and set(sp["seed"]) == {0, 1, 2, 3}
    # Repeat (1, 2) by hand with the documented seed sequence.
    rng = np.random.default_rng(np.random.SeedSequence([9, 1, 2]))
    states = df.sort_values(["doc_id", "state_id"]).reset_index(drop=True)
    cal = calibration_mask(states["doc_id"].to_numpy(), split="document", rng=rng)
    c, ch = states["true_completeness"].to_numpy(), states["c_hat"].to_numpy()
    q = conformal_quantile(np.abs(c[cal] - ch[cal]), 0.1)
    cov = np.mean(np.abs(c[~cal] - ch[~cal]) <= q)
    width = np.mean(np.clip(ch[~cal] + q, 0, 1) - np.clip(ch[~cal] - q, 0, 1))
    row = sp[(sp["split"] == 1) & (sp["seed"] == 2)].iloc[0]
    assert row["q_hat"] == q and row["coverage"] == pytest.approx(cov) and row["width"] == pytest.approx(width)
    assert row["r2"] == pytest.approx(r2_score(c[~cal], ch[~cal]))
    lo, hi = proportion_confint(round(cov * (~cal).sum()), int((~cal).sum()), alpha=0.05, method="beta")
    assert row["coverage_ci_lower"] == pytest.approx(lo) and row["coverage_ci_upper"] == pytest.approx(hi)
    # Summary: mean and std (ddof = 1) over the 3 split-level means.
    split_means = sp.groupby("split")["coverage"].mean()
    summ = res.summary.iloc[0]
    assert summ["coverage"] == pytest.approx(split_means.mean())
    assert summ["coverage_std"] == pytest.approx(split_means.std(ddof=1))
    assert summ["q_hat_full"] == conformal_quantile(np.abs(c - ch), 0.1)
    assert summ["target_coverage"] == pytest.approx(0.9)
    ref = sp[(sp["split"] == 0) & (sp["seed"] == 0)].iloc[0]
    assert summ["ref_coverage_ci_lower"] == ref["coverage_ci_lower"]
    # bins: 5 per estimator, n sums to the test size on average
    assert len(res.bins) == 5
    assert res.bins["n"].sum() == pytest.approx(sp["n_test"].mean())
    assert len(res.reference) == ref["n_test"] and len(res.reference_scores["est"]) == ref["n_cal"]


def test_single_split_has_nan_std_and_state_split_option():
    res = evaluate_conformal(_pool(), n_splits=1, n_seeds=3, split="state")
    assert np.isnan(res.summary["coverage_std"].iloc[0])
    assert res.options["split"] == "state"


def test_unscored_states_are_left_out_and_counted():
    df = _pool()
    df.loc[[0, 5, 9], "c_hat"] = np.nan
    df.loc[[0, 5, 9], "reason"] = "not JSON"
    with pytest.warns(SeekbenchWarning, match="3 state"):
        res = evaluate_conformal(df, n_splits=2, n_seeds=2)
    assert res.summary["n_unscored"].iloc[0] == 3
    assert res.unscored.to_dict("records") == [{"estimator": "est", "reason": "not JSON", "n": 3}]
    assert (res.splits["n_cal"] + res.splits["n_test"] == len(df) - 3).all()


def test_too_small_calibration_gives_trivial_q_hat_with_warning():
    df = _pool(n_docs=6, per_doc=1)
    with pytest.warns(SeekbenchWarning, match="too small"):
        res = evaluate_conformal(df, n_splits=2, n_seeds=2)
    assert (res.splits["q_hat"] == 1.0).all() and (res.splits["coverage"] == 1.0).all()


def test_input_errors():
    with pytest.raises(UserInputError, match="at least 2 documents"):
        evaluate_conformal(_pool(n_docs=1))
    with pytest.raises(UserInputError, match="n_splits"):
        evaluate_conformal(_pool(), n_splits=0)
    with pytest.raises(UserInputError, match="alpha"):
        evaluate_conformal(_pool(), alpha=1.2)


def _states_views(n_docs=24, seed=0):
    corpus = make_corpus(n_docs, seed=seed)
    states = synthesize_belief_states(corpus, seed=seed)
    return states, render_beliefs(states, corpus)


def test_baselines_cross_fitted_and_refit_per_split():
    states, views = _states_views()
    feats = baseline_features(states, views)
    c = feats["true_completeness"].to_numpy()
    # Cross-fitting never uses a state's own document: the mean of fold f equals the mean of the others.
    est = MeanEstimator()
    oof = cross_fit_predict(est, feats, c, feats["doc_id"].to_numpy(), n_folds=4, seed=0)
    assert np.isfinite(oof).all() and len(np.unique(oof.round(12))) == 4
    reg = FeatureRegressionEstimator().fit(feats, c)
    assert reg.coef_.shape == (5,) and ((reg.predict(feats) >= 0) & (reg.predict(feats) <= 1)).all()
    res = evaluate_conformal(baselines={"mean": MeanEstimator(), "regression": FeatureRegressionEstimator()},
                             features=feats, n_splits=2, n_seeds=3)
    s = res.summary.set_index("estimator")
    assert list(s.index) == ["mean", "regression"]
    # the regression on visible passages beats the mean (c = n_visible / N is partly visible)
    assert s.loc["regression", "r2"] > s.loc["mean", "r2"]
    assert abs(s.loc["mean", "r2"]) < 0.2
    with pytest.raises(UserInputError, match="features"):
        evaluate_conformal(baselines={"mean": MeanEstimator()})


def test_estimates_file_round_trip_and_errors(tmp_path):
    states, views = _states_views(n_docs=8)
    frames = [baseline_estimates(states, views, "mean"),
              estimates_frame(states, "llm:x", [0.5] * (len(states) - 1) + [None],
                              [None] * (len(states) - 1) + ["not JSON"])]
    p = tmp_path / "est.jsonl"
    assert write_estimates(p, frames) == 2 * len(states)
    back = read_estimates(p)
    assert len(back) == 2 * len(states) and back["c_hat"].isna().sum() == 1
    assert back.loc[back["c_hat"].isna(), "reason"].item() == "not JSON"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"doc_id": "a", "state_id": "a#0", "true_completeness": 0.5, "estimator": "m", "c_hat": 40}\n')
    with pytest.raises(UserInputError, match=r"bad.jsonl:1.*c_hat"):
        read_estimates(bad)
    dup = tmp_path / "dup.jsonl"
    line = '{"doc_id": "a", "state_id": "a#0", "true_completeness": 0.5, "estimator": "m", "c_hat": 0.4}\n'
    dup.write_text(line * 2)
    with pytest.raises(UserInputError, match=r"dup.jsonl:2.*two estimates"):
        read_estimates(dup)
    clash = tmp_path / "clash.jsonl"
    clash.write_text(line + line.replace('"m"', '"n"').replace("0.5", "0.6"))
    with pytest.raises(UserInputError, match="different"):
        read_estimates(clash)
