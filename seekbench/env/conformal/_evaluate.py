"""Evaluating completeness estimators by split conformal calibration over repeated splits (spec section 8).

For each of S splits x R seeds, the states are split 50/50 into calibration
and test halves (by document by default: all states of a document fall on the
same side, since states of one document are not exchangeable with each other
across the split; ``split="state"`` is the paper's pooled split). Per
estimator and repeat: q_hat on the calibration half, then on the test half
the empirical coverage (share of |c - c_hat| <= q_hat) with a Clopper-Pearson
CI, the mean width of the clipped interval, coverage per bin of true
completeness (conditional coverage), and the raw R^2 = 1 - sum (c - c_hat)^2 /
sum (c - mean c)^2 (no refit: negative when c_hat is worse than the test
mean). Repeats are averaged within each split over its R seeds; the summary
is the mean and the standard deviation (ddof = 1) of the S split-level means.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, cast

import numpy as np
import pandas as pd

from ..._errors import SeekbenchWarning, UndefinedMetricWarning, UserInputError
from ._estimators import cross_fit_predict
from ._repeat import States, evaluate_repeat
from ._split_conformal import _check_alpha, conformal_quantile, nonconformity

METRICS = ("q_hat", "coverage", "width", "r2")


def calibration_mask(
    doc_ids, *, split: Literal["document", "state"], rng: np.random.Generator, cal_fraction: float = 0.5
) -> np.ndarray:
    """True for calibration rows: floor(cal_fraction * units) random units (documents or states)."""
    doc_ids = np.asarray(doc_ids)
    if split == "state":
        n = len(doc_ids)
        mask = np.zeros(n, dtype=bool)
        mask[rng.permutation(n)[: max(1, int(np.floor(cal_fraction * n)))]] = True
        return mask
    if split == "document":
        docs = np.unique(doc_ids)
        chosen = docs[rng.permutation(len(docs))[: max(1, int(np.floor(cal_fraction * len(docs))))]]
        return np.isin(doc_ids, chosen)
    raise UserInputError(f"split must be 'document' or 'state', got {split!r}")


@dataclass
class ConformalResult:
    """Everything :func:`evaluate_conformal` computed.

    Attributes
    ----------
    summary : DataFrame
        One row per estimator: states, unscored, mean calibration and test
        sizes, q_hat, coverage, width and r2 (mean and ``*_std`` over split
        means), the reference split's coverage CI, and ``q_hat_full``
        (calibrated on every scored state: the half-width to deploy).
    splits : DataFrame
        One row per (estimator, split, seed) with the Clopper-Pearson CI.
    bins : DataFrame
        Coverage per (estimator, completeness bin): mean and std over split means.
    reference : DataFrame
        The test half of split 0, seed 0 (for plots): c, c_hat, interval, covered.
    reference_scores : dict
        Estimator -> calibration nonconformity scores of split 0, seed 0.
    unscored : DataFrame
        Estimator, reason, count.
    stopping, stopping_summary, anova : DataFrame or None
        Filled in by the caller (see :func:`seekbench.env.conformal.evaluate_stopping`,
        :func:`seekbench.env.conformal.completeness_anova`).
    """

    options: dict
    summary: pd.DataFrame
    splits: pd.DataFrame
    bins: pd.DataFrame
    reference: pd.DataFrame
    reference_scores: dict[str, np.ndarray]
    unscored: pd.DataFrame
    stopping: pd.DataFrame | None = None
    stopping_summary: pd.DataFrame | None = None
    anova: pd.DataFrame | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def estimators(self) -> list[str]:
        return list(self.summary["estimator"])

    def q_hat(self, estimator: str) -> float:
        """The deployable q_hat of an estimator (calibrated on all its scored states)."""
        row = self.summary[self.summary["estimator"] == estimator]
        if row.empty:
            raise UserInputError(f"no estimator {estimator!r}; estimators: {', '.join(self.estimators)}")
        return float(row["q_hat_full"].iloc[0])

    def for_agents(self, agents: Iterable[str]) -> pd.DataFrame:
        """Per agent, the conformal numbers of its estimator, for a table beside RQI, ERF and CE.

        An agent's estimator is the one named like it, else ``llm:<agent>``;
        agents without one get NaN (not 0).
        """
        s = self.summary.set_index("estimator")
        cols = ["q_hat", "coverage", "ref_coverage_ci_lower", "ref_coverage_ci_upper", "width", "r2", "q_hat_full"]
        rows = []
        for a in agents:
            name = next((n for n in (a, f"llm:{a}") if n in s.index), None)
            rows.append(
                {
                    "agent": a,
                    "estimator": name,
                    **{c: (float(s.loc[name, c]) if name is not None else float("nan")) for c in cols},
                }
            )
        return pd.DataFrame(rows, columns=["agent", "estimator", *cols])

    def to_dict(self) -> dict:
        """JSON-ready: options, summary, bins, unscored, stopping summary, ANOVA, warnings."""

        def recs(df):
            return None if df is None else df.astype(object).where(df.notna(), None).to_dict(orient="records")

        return {
            "options": self.options,
            "summary": recs(self.summary),
            "bins": recs(self.bins),
            "unscored": recs(self.unscored),
            "stopping": recs(self.stopping_summary),
            "anova": recs(self.anova),
            "warnings": list(self.warnings),
        }


def _state_table(estimates: pd.DataFrame | None, features: pd.DataFrame | None) -> pd.DataFrame:
    parts = []
    if estimates is not None:
        parts.append(estimates[["state_id", "doc_id", "true_completeness"]])
    if features is not None:
        if "true_completeness" not in features.columns:
            raise UserInputError("features need a true_completeness column (use baseline_features)")
        parts.append(features.reset_index()[["state_id", "doc_id", "true_completeness"]])
    if not parts:
        raise UserInputError("nothing to evaluate: give estimates, or features and baselines")
    states = pd.concat(parts, ignore_index=True).drop_duplicates("state_id", keep="first")
    return states.sort_values(["doc_id", "state_id"], kind="stable").reset_index(drop=True)


def _split_means(rows: pd.DataFrame, keys: list[str], metrics: Iterable[str]) -> pd.DataFrame:
    """Mean over seeds within each split, then mean and std (ddof=1) over the S split means."""
    per_split = rows.groupby([*keys, "split"], sort=False)[list(metrics)].mean()
    g = per_split.groupby(level=list(range(len(keys))), sort=False)
    mean, std = g.mean(), g.std(ddof=1)
    out = mean.copy()
    for m in metrics:
        out[f"{m}_std"] = std[m]
    return out.reset_index()


def _check_options(
    n_splits: int, n_seeds: int, n_bins: int, baselines: Mapping[str, object] | None, features: pd.DataFrame | None
) -> None:
    """A user error for a count that is not a positive integer, or baselines without features."""
    for name, v in (("n_splits", n_splits), ("n_seeds", n_seeds), ("n_bins", n_bins)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise UserInputError(f"{name} must be an integer >= 1, got {v!r}")
    if baselines and features is None:
        raise UserInputError("baselines need features (baseline_features(states, views))")


def _fixed_estimates(estimates: pd.DataFrame | None, sid: np.ndarray) -> tuple[dict[str, np.ndarray], list[tuple]]:
    """Per estimator its c_hat in ``sid`` order (NaN: unscored or not estimated), and the
    ``(estimator, reason, n)`` rows counting the states left out."""
    fixed: dict[str, np.ndarray] = {}
    unscored_rows: list[tuple] = []
    if estimates is None:
        return fixed, unscored_rows
    for name, g in estimates.groupby("estimator", sort=True):
        fixed[name] = g.set_index("state_id")["c_hat"].reindex(sid).to_numpy(dtype=float)
        reasons = g.loc[g["c_hat"].isna(), "reason"].fillna("unscored")
        absent = int(len(sid) - g["state_id"].nunique())
        for reason, n in reasons.value_counts().items():
            unscored_rows.append((name, reason, int(n)))
        if absent:
            unscored_rows.append((name, "not estimated", absent))
    return fixed, unscored_rows


def evaluate_conformal(
    estimates: pd.DataFrame | None = None,
    *,
    alpha: float = 0.1,
    split: Literal["document", "state"] = "document",
    n_splits: int = 3,
    n_seeds: int = 10,
    seed: int = 0,
    n_bins: int = 5,
    confidence: float = 0.95,
    baselines: Mapping[str, object] | None = None,
    features: pd.DataFrame | None = None,
    cal_fraction: float = 0.5,
    n_folds: int = 5,
) -> ConformalResult:
    """Split conformal evaluation of completeness estimators over S splits x R seeds (spec section 8).

    Parameters
    ----------
    estimates : DataFrame, optional
        Columns ``doc_id, state_id, true_completeness, estimator, c_hat``
        (:func:`read_estimates`); NaN c_hat = unscored (left out of both
        halves for that estimator, counted in ``unscored``).
    alpha : float, default 0.1
        Target miscoverage; coverage aims at 1 - alpha.
    split : {"document", "state"}, default "document"
        Calibration/test split by document, or pooled over states (the paper).
    n_splits, n_seeds : int, default 3 and 10
        S and R; repeat (s, r) draws its split from ``SeedSequence([seed, s, r])``.
    seed : int, default 0
    n_bins : int, default 5
        Equal-width bins of true completeness for conditional coverage.
    confidence : float, default 0.95
        Of the Clopper-Pearson CIs.
    baselines : mapping name -> estimator, optional
        Estimators refitted on each calibration half (``MeanEstimator``,
        ``FeatureRegressionEstimator``); their calibration scores are
        out-of-fold within the half (``n_folds`` folds by document). Needs ``features``.
    features : DataFrame, optional
        :func:`baseline_features` of the states, indexed by ``state_id``.

    Returns
    -------
    ConformalResult
        Coverage is in [0, 1], higher is safer; width and q_hat in [0, 1],
        lower is tighter; r2 <= 1, higher is better.
    """
    alpha = _check_alpha(alpha)
    _check_options(n_splits, n_seeds, n_bins, baselines, features)
    table = _state_table(estimates, features)
    if split == "document" and table["doc_id"].nunique() < 2:
        raise UserInputError("a split by document needs states from at least 2 documents; use --split state")
    states = States.of(table, n_bins)
    c, docs = states.c, states.docs
    fixed, unscored_rows = _fixed_estimates(estimates, states.sid)
    feats = None if features is None else features.reindex(states.sid)
    names = list(fixed) + [b for b in (baselines or {}) if b not in fixed]
    rows, bin_rows, ref_rows, ref_scores = [], [], [], {}
    for s in range(n_splits):
        for r in range(n_seeds):
            rng = np.random.default_rng(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, s, r]))
            cal = calibration_mask(docs, split=split, rng=rng, cal_fraction=cal_fraction)
            for name in names:
                if name in fixed:
                    c_hat = fixed[name]
                else:
                    # a name not in fixed is one of the baselines: names is built from the two
                    c_hat = _refit(cast(Mapping[str, object], baselines)[name], feats, c, docs, cal, rng, n_folds)
                rep = evaluate_repeat(states, c_hat, cal, alpha=alpha, confidence=confidence)
                rows.append({"estimator": name, "split": s, "seed": r, **rep.row})
                bin_rows += [{"estimator": name, "split": s, "seed": r, **b} for b in rep.bins]
                if s == 0 and r == 0:  # the reference repeat: its scores and per-state intervals are kept
                    ref_scores[name] = rep.scores
                    ref_rows.append(rep.states_frame(name))
    splits_df = pd.DataFrame(rows)
    warn = _warnings(splits_df, unscored_rows, alpha)
    summary = _summary(splits_df, names, c, docs, fixed, baselines, feats, alpha, n_folds, seed, unscored_rows)
    bins_df = _split_means(pd.DataFrame(bin_rows), ["estimator", "bin"], ["n", "coverage"])
    unscored = pd.DataFrame(unscored_rows, columns=["estimator", "reason", "n"])
    options = {
        "alpha": alpha,
        "split": split,
        "n_splits": n_splits,
        "n_seeds": n_seeds,
        "seed": seed,
        "n_bins": n_bins,
        "confidence": confidence,
        "cal_fraction": cal_fraction,
    }
    for w in warn:
        warnings.warn(w, UndefinedMetricWarning if "R^2" in w else SeekbenchWarning, stacklevel=2)
    return ConformalResult(
        options,
        summary,
        splits_df,
        bins_df,
        pd.concat(ref_rows, ignore_index=True),
        ref_scores,
        unscored,
        warnings=warn,
    )


def _refit(estimator, feats: pd.DataFrame, c, docs, cal, rng, n_folds) -> np.ndarray:
    """A baseline refitted on the calibration half: out-of-fold c_hat there, the full fit on the test half."""
    has = feats.notna().all(axis=1).to_numpy() if feats is not None else np.zeros(len(c), dtype=bool)
    out = np.full(len(c), np.nan)
    fit_rows = cal & has
    if not fit_rows.any():
        return out
    fx = feats.drop(columns=["doc_id", "true_completeness"], errors="ignore")
    out[fit_rows] = cross_fit_predict(estimator, fx[fit_rows], c[fit_rows], docs[fit_rows], n_folds=n_folds, seed=rng)
    estimator.fit(fx[fit_rows], c[fit_rows])
    test_rows = ~cal & has
    if test_rows.any():
        out[test_rows] = estimator.predict(fx[test_rows])
    return out


def _summary(splits_df, names, c, docs, fixed, baselines, feats, alpha, n_folds, seed, unscored_rows):
    agg = _split_means(splits_df, ["estimator"], ["n_cal", "n_test", *METRICS])
    ref = splits_df[(splits_df["split"] == 0) & (splits_df["seed"] == 0)].set_index("estimator")
    full = {}
    for name in names:
        if name in fixed:
            c_hat = fixed[name]
        else:
            everything = np.ones(len(c), dtype=bool)
            c_hat = _refit(baselines[name], feats, c, docs, everything, np.random.default_rng(seed), n_folds)
        ok = np.isfinite(c_hat)
        full[name] = (float(conformal_quantile(nonconformity(c[ok], c_hat[ok]), alpha)), int(ok.sum()))
    n_uns: dict[str, int] = {}
    for name, _, n in unscored_rows:
        n_uns[name] = n_uns.get(name, 0) + n
    agg.insert(1, "n_states", len(c))
    agg.insert(2, "n_unscored", [n_uns.get(e, int(len(c) - full[e][1])) for e in agg["estimator"]])
    agg["target_coverage"] = 1 - alpha
    agg["ref_coverage"] = [ref.loc[e, "coverage"] for e in agg["estimator"]]
    agg["ref_coverage_ci_lower"] = [ref.loc[e, "coverage_ci_lower"] for e in agg["estimator"]]
    agg["ref_coverage_ci_upper"] = [ref.loc[e, "coverage_ci_upper"] for e in agg["estimator"]]
    agg["q_hat_full"] = [full[e][0] for e in agg["estimator"]]
    cols = [
        "estimator",
        "n_states",
        "n_unscored",
        "n_cal",
        "n_test",
        "target_coverage",
        "q_hat",
        "q_hat_std",
        "coverage",
        "coverage_std",
        "ref_coverage",
        "ref_coverage_ci_lower",
        "ref_coverage_ci_upper",
        "width",
        "width_std",
        "r2",
        "r2_std",
        "q_hat_full",
    ]
    return agg[cols]


def _warnings(splits_df: pd.DataFrame, unscored_rows, alpha: float) -> list[str]:
    out = []
    totals: dict[str, list] = {}
    for name, reason, n in unscored_rows:
        totals.setdefault(name, []).append((n, reason))
    for name, items in totals.items():
        n = sum(i[0] for i in items)
        top = max(items)[1]
        out.append(f"estimator {name!r}: {n} state(s) unscored and left out (most often: {top})")
    trivial = splits_df[splits_df["n_cal"] < np.ceil((splits_df["n_cal"] + 1) * (1 - alpha) - 1e-9)]
    for name in trivial["estimator"].unique():
        out.append(
            f"estimator {name!r}: a calibration half is too small for alpha = {alpha:g} "
            f"(k > n), so q_hat = 1 (the trivial interval) there"
        )
    nan_r2 = splits_df[splits_df["r2"].isna()]
    for name in nan_r2["estimator"].unique():
        out.append(
            f"estimator {name!r}: R^2 undefined (NaN) on some test halves: fewer than 2 states or "
            "constant true completeness"
        )
    return out
