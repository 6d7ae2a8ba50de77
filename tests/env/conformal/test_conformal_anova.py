"""Type III ANOVA recovers planted effects; eta^2 sums to 1 on a balanced design."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _conformal_helpers import env_trace

from seekbench import SeekbenchWarning, UserInputError
from seekbench.env.conformal import ANOVA_COLUMNS, completeness_anova, episodes_frame, variance_decomposition

BELIEF = {"trajectory": -0.10, "deduplicated": 0.0, "oracle": 0.10}
MODEL = {"m1": -0.06, "m2": -0.02, "m3": 0.02, "m4": 0.06}


def _design(*, interaction: float = 0.0, reps: int = 3, n_docs: int = 10, noise: float = 0.02, seed: int = 0):
    """Balanced: every (belief, model, document) cell has ``reps`` episodes."""
    rng = np.random.default_rng(seed)
    doc_eff = rng.normal(0, 0.12, n_docs)
    doc_eff -= doc_eff.mean()
    rows, signal = [], []
    for bi, (b, be) in enumerate(BELIEF.items()):
        for mi, (m, me) in enumerate(MODEL.items()):
            # a sum-to-zero interaction pattern: +/- interaction on a checkerboard of the first two beliefs
            ie = interaction * ((1 if (bi + mi) % 2 == 0 else -1) if bi < 2 else 0) * (1 if mi < 2 else 0)
            for d in range(n_docs):
                for _ in range(reps):
                    mu = 0.4 + be + me + ie + doc_eff[d]
                    rows.append((b, m, f"doc{d}", mu + rng.normal(0, noise)))
                    signal.append((be, me, ie, doc_eff[d]))
    return pd.DataFrame(rows, columns=["belief", "model", "document", "completeness"]), np.array(signal)


def test_recovers_planted_effects_and_eta_sums_to_one():
    df, signal = _design()
    out = variance_decomposition(df).set_index("factor")
    assert list(out.columns) == ANOVA_COLUMNS[1:]
    assert list(out.index) == ["belief", "model", "belief x model", "document", "residual"]
    assert out["eta_sq"].sum() == pytest.approx(1.0, abs=1e-10)
    assert out["df"].to_dict() == {"belief": 2, "model": 3, "belief x model": 6, "document": 9,
                                   "residual": len(df) - 1 - 2 - 3 - 6 - 9}
    # Planted main effects and document are detected; the absent interaction is not.
    for f in ("belief", "model", "document"):
        assert out.loc[f, "p_value"] < 1e-10
    assert out.loc["belief x model", "p_value"] > 0.001
    # eta^2 of each planted effect ~ its noiseless sum of squares / SS_total.
    ss_total = ((df["completeness"] - df["completeness"].mean()) ** 2).sum()
    for j, f in enumerate(("belief", "model", None, "document")):
        if f is not None:
            # tolerance: noise moves a level mean by ~0.02 / sqrt(120), the SS by ~0.07 of 6
            assert out.loc[f, "eta_sq"] == pytest.approx((signal[:, j] ** 2).sum() / ss_total, abs=0.025)
    # F and partial eta^2 from their definitions.
    res = out.loc["residual"]
    b = out.loc["belief"]
    assert b["F"] == pytest.approx((b["sum_sq"] / b["df"]) / (res["sum_sq"] / res["df"]))
    assert b["partial_eta_sq"] == pytest.approx(b["sum_sq"] / (b["sum_sq"] + res["sum_sq"]))
    assert np.isnan(res["F"]) and np.isnan(res["partial_eta_sq"])


def test_planted_interaction_is_found():
    df, _ = _design(interaction=0.05, seed=1)
    out = variance_decomposition(df).set_index("factor")
    assert out.loc["belief x model", "p_value"] < 1e-10
    assert out["eta_sq"].sum() == pytest.approx(1.0, abs=1e-10)


def test_type3_equals_sequential_on_balanced_design():
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    df, _ = _design(seed=2)
    seq = anova_lm(smf.ols("completeness ~ C(belief) * C(model) + C(document)", data=df).fit(), typ=1)
    out = variance_decomposition(df).set_index("factor")
    assert out.loc["belief", "sum_sq"] == pytest.approx(seq.loc["C(belief)", "sum_sq"])
    assert out.loc["document", "sum_sq"] == pytest.approx(seq.loc["C(document)", "sum_sq"])


def test_unbalanced_runs_and_single_level_factor_dropped():
    df, _ = _design(seed=3)
    out = variance_decomposition(df.iloc[7:])  # unbalanced: eta^2 need not sum to 1, but it runs
    assert np.isfinite(out["F"].iloc[:-1]).all()
    one = df[df["belief"] == "oracle"]
    with pytest.warns(SeekbenchWarning, match="belief"):
        out = variance_decomposition(one)
    assert list(out["factor"]) == ["model", "document", "residual"]
    assert out["eta_sq"].sum() == pytest.approx(1.0, abs=1e-10)
    with pytest.raises(UserInputError, match="column"):
        variance_decomposition(df.drop(columns=["document"]))


def test_from_traces():
    traces = []
    rng = np.random.default_rng(4)
    for b, be in BELIEF.items():
        for m, me in list(MODEL.items())[:2]:
            for d in range(4):
                for r in range(2):
                    c = float(np.clip(0.4 + be + me + 0.05 * d + rng.normal(0, 0.01), 0, 1))
                    traces.append(env_trace(f"{b}-{m}-{d}-{r}", m, b, f"doc{d}", [c / 2, c], [None, None]))
    traces.append({"schema_version": "1.0", "trace_id": "qa", "agent": "m1", "question": "q", "steps": []})
    with pytest.warns(SeekbenchWarning, match="1 trace"):
        ep = episodes_frame(traces)
    assert len(ep) == 48 and set(ep["belief"]) == set(BELIEF)
    with pytest.warns(SeekbenchWarning):
        out = completeness_anova(traces).set_index("factor")
    assert out["eta_sq"].sum() == pytest.approx(1.0, abs=1e-10)
    assert out.loc["belief", "p_value"] < 1e-6
