"""Variance decomposition of final completeness: fixed-effects Type III ANOVA (spec section 8; paper C.1).

Model: c ~ belief * model + document, with sum-to-zero contrasts for every
factor (``C(x, Sum)`` in statsmodels), so that Type III sums of squares test
each main effect averaged over the other factor's levels. Reported per term:
df, SS, F = (SS / df) / (SS_resid / df_resid), its p-value,
eta^2 = SS / SS_total with SS_total = sum (c - mean c)^2, and
partial eta^2 = SS / (SS + SS_resid). On a balanced design the Type III sums
of squares add up to SS_total, so eta^2 over all rows (residual included)
sums to 1; on an unbalanced design they need not.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..._errors import SeekbenchWarning, UserInputError

ANOVA_COLUMNS = ["factor", "df", "sum_sq", "F", "p_value", "eta_sq", "partial_eta_sq"]
EPISODE_COLUMNS = ["trace_id", "model", "belief", "document", "completeness"]


def episodes_frame(traces: Iterable[dict]) -> pd.DataFrame:
    """Final completeness per episode with its model (the trace's agent), belief and document.

    Final completeness is ``env.final_completeness``, else the last step's
    ``completeness``. Traces without an ``env`` block or any completeness are
    skipped with a :class:`SeekbenchWarning`.
    """
    rows, skipped = [], 0
    for tr in traces:
        env = tr.get("env") or {}
        final = env.get("final_completeness")
        if final is None:
            path = [s["completeness"] for s in tr.get("steps") or [] if s.get("completeness") is not None]
            final = path[-1] if path else None
        if final is None or not env.get("document_id"):
            skipped += 1
            continue
        rows.append(
            {
                "trace_id": tr.get("trace_id"),
                "model": tr.get("agent"),
                "belief": env.get("belief"),
                "document": env.get("document_id"),
                "completeness": float(final),
            }
        )
    if skipped:
        warnings.warn(
            f"{skipped} trace(s) without seeking-environment completeness were left out of the variance decomposition",
            SeekbenchWarning,
            stacklevel=2,
        )
    return pd.DataFrame(rows, columns=EPISODE_COLUMNS)


def variance_decomposition(
    data: pd.DataFrame,
    *,
    response: str = "completeness",
    belief: str = "belief",
    model: str = "model",
    document: str = "document",
) -> pd.DataFrame:
    """Type III ANOVA of ``response ~ belief * model + document`` with sum-to-zero contrasts.

    Parameters
    ----------
    data : DataFrame
        One row per episode (:func:`episodes_frame`).
    response, belief, model, document : str
        Column names.

    Returns
    -------
    DataFrame
        Columns :data:`ANOVA_COLUMNS`; rows ``belief``, ``model``,
        ``belief x model``, ``document``, ``residual`` (terms whose factor has
        fewer than two levels are left out with a warning). eta^2 in [0, 1],
        higher = the factor explains more of the variance. The residual row
        has no F, p or partial eta^2 (NaN).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame([(b, m, d, 0.1 * b + 0.05 * m + 0.02 * d + rng.normal(0, 0.01))
    ...                    for b in range(3) for m in range(2) for d in range(4) for _ in range(2)],
    ...                   columns=["belief", "model", "document", "completeness"])
    >>> round(float(variance_decomposition(df)["eta_sq"].sum()), 6)
    1.0
    """
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    for col in (response, belief, model, document):
        if col not in data.columns:
            raise UserInputError(f"the data have no column {col!r}")
    df = pd.DataFrame(
        {
            "y": pd.to_numeric(data[response], errors="coerce"),
            "b": data[belief].astype(str),
            "m": data[model].astype(str),
            "d": data[document].astype(str),
        }
    ).dropna()
    if len(df) < 3:
        raise UserInputError(f"the variance decomposition needs at least 3 episodes, got {len(df)}")
    present = {k: df[k].nunique() >= 2 for k in ("b", "m", "d")}
    dropped = [name for k, name in (("b", "belief"), ("m", "model"), ("d", "document")) if not present[k]]
    if dropped:
        warnings.warn(
            f"factor(s) with a single level left out of the ANOVA: {', '.join(dropped)}", SeekbenchWarning, stacklevel=2
        )
    terms, labels = [], {}
    if present["b"]:
        terms.append("C(b, Sum)")
        labels["C(b, Sum)"] = "belief"
    if present["m"]:
        terms.append("C(m, Sum)")
        labels["C(m, Sum)"] = "model"
    if present["b"] and present["m"]:
        terms.append("C(b, Sum):C(m, Sum)")
        labels["C(b, Sum):C(m, Sum)"] = "belief x model"
    if present["d"]:
        terms.append("C(d, Sum)")
        labels["C(d, Sum)"] = "document"
    if not terms:
        raise UserInputError("no factor has two or more levels; nothing to decompose")
    fit = smf.ols("y ~ " + " + ".join(terms), data=df).fit()
    if fit.df_resid <= 0:
        warnings.warn(
            "the ANOVA has no residual degrees of freedom (one episode per cell); F and p are undefined",
            SeekbenchWarning,
            stacklevel=2,
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        table = anova_lm(fit, typ=3)
    ss_total = float(np.sum((df["y"] - df["y"].mean()) ** 2))
    ss_res = float(table.loc["Residual", "sum_sq"])
    rows = []
    for term, label in labels.items():
        ss = float(table.loc[term, "sum_sq"])
        rows.append(
            {
                "factor": label,
                "df": float(table.loc[term, "df"]),
                "sum_sq": ss,
                "F": float(table.loc[term, "F"]),
                "p_value": float(table.loc[term, "PR(>F)"]),
                "eta_sq": ss / ss_total if ss_total > 0 else math.nan,
                "partial_eta_sq": ss / (ss + ss_res) if ss + ss_res > 0 else math.nan,
            }
        )
    rows.append(
        {
            "factor": "residual",
            "df": float(table.loc["Residual", "df"]),
            "sum_sq": ss_res,
            "F": math.nan,
            "p_value": math.nan,
            "eta_sq": ss_res / ss_total if ss_total > 0 else math.nan,
            "partial_eta_sq": math.nan,
        }
    )
    order = {"belief": 0, "model": 1, "belief x model": 2, "document": 3, "residual": 4}
    out = pd.DataFrame(rows, columns=ANOVA_COLUMNS)
    return out.sort_values("factor", key=lambda s: s.map(order)).reset_index(drop=True)


def completeness_anova(traces: Iterable[dict]) -> pd.DataFrame:
    """:func:`variance_decomposition` of the final completeness of seeking-environment episodes."""
    return variance_decomposition(episodes_frame(traces))
