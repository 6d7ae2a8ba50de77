"""All raters together, per (field, step kind) stratum: Krippendorff's alpha, Fleiss' kappa, pairwise kappas."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..labels import AnnotationSet
from ..metrics import Resampler
from ._align import field_labels
from ._counts import confusion, encode_pairs, undefined_message
from ._fleiss import fleiss_result
from ._kappa import kappa_from_confusion
from ._krippendorff import alpha_result
from ._strata import kind_column

MULTI_COLUMNS = [
    "field",
    "step_kind",
    "n_raters",
    "alpha",
    "alpha_lower",
    "alpha_upper",
    "alpha_n_items",
    "fleiss_kappa",
    "fleiss_lower",
    "fleiss_upper",
    "fleiss_n_items",
    "fleiss_n_excluded",
]


def wide_labels(sets: dict[str, AnnotationSet], field: str, kind: str, kinds: dict) -> pd.DataFrame:
    """Items (trace, step) of one stratum as rows, raters as columns, None where missing."""
    keys = ["trace_id", "step"]
    frames = []
    for name, s in sets.items():
        r = s.records
        r = r.loc[r["field"] == field, [*keys, "value"]].drop_duplicates(keys, keep="last")
        r = r[(kind_column(r, kinds) == kind).to_numpy()]
        frames.append(r.set_index(keys)["value"].rename(name))
    wide = pd.concat(frames, axis=1).sort_index()
    return wide.astype(object).where(wide.notna(), None)


def pairwise_kappa(wide: pd.DataFrame, cats: list) -> pd.DataFrame:
    """Cohen's kappa of every pair of columns on the rows both labeled (diagonal 1)."""
    names = list(wide.columns)
    out = pd.DataFrame(np.nan, index=pd.Index(names, name="rater"), columns=names)
    for i, a in enumerate(names):
        for b in names[i:]:
            c1, c2, _, _, _ = encode_pairs(wide[a].tolist(), wide[b].tolist(), cats)
            k = float(kappa_from_confusion(confusion(c1, c2, len(cats)))) if a != b else 1.0
            out.loc[a, b] = out.loc[b, a] = k
    return out


def multi_rater_table(
    sets: dict[str, AnnotationSet],
    strata: list[tuple[str, str]],
    kinds: dict,
    *,
    resampler: Resampler,
    alpha: float,
) -> tuple[pd.DataFrame, list[str]]:
    """Per stratum: Krippendorff's alpha (all pairable items) and Fleiss' kappa (items every rater
    labeled), and why a coefficient is undefined (one sentence each, in stratum order)."""
    rows, undefined = [], []
    for f, kind in strata:
        wide = wide_labels(sets, f, kind, kinds)
        cats = list(field_labels(f))
        groups = [t for t, _ in wide.index]
        al = alpha_result(wide, labels=cats, groups=groups, resampler=resampler, alpha=alpha)
        fl = fleiss_result(wide, labels=cats, groups=groups, resampler=resampler, alpha=alpha)
        undefined += [undefined_message("Krippendorff's alpha", al.undefined)] if al.undefined else []
        undefined += [undefined_message("Fleiss' kappa", fl.undefined)] if fl.undefined else []
        rows.append(
            {
                "field": f,
                "step_kind": kind,
                "n_raters": wide.shape[1],
                "alpha": al.value,
                "alpha_lower": al.ci[0],
                "alpha_upper": al.ci[1],
                "alpha_n_items": al.n_items,
                "fleiss_kappa": fl.value,
                "fleiss_lower": fl.ci[0],
                "fleiss_upper": fl.ci[1],
                "fleiss_n_items": fl.n_items,
                "fleiss_n_excluded": fl.n_excluded,
            }
        )
    return pd.DataFrame(rows, columns=MULTI_COLUMNS), undefined
