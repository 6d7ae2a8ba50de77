"""Measuring the offline judges against human labels: per-field agreement and grouped cross-validation.

Agreement is computed per label field and step kind on the steps both sides
labeled: n, accuracy (raw agreement) and Cohen's kappa
(:func:`seekbench.agreement.cohen_kappa_score`, the one kappa of the package).
Grounding of reasoning steps and of search steps are separate rows, never one number.
Steps the human labeled but the judge left unscored are counted, not compared. A judge is scored on its own decisions
only: the rule-derived InitialQuery / RepeatQuery labels (``provenance.kind ==
"rule"``) are left out of its ``search_type`` row and reported in a row of
their own, as the rule's. Every row says why a number is undefined (``note``).

The learned judge is measured out of fold: traces are split with scikit-learn's
``GroupKFold`` on the question (traces sharing a question id or a normalised
question text form one group, :func:`seekbench.annotate.offline.question_groups`), so train and
test never share a question and therefore never a trace; each
fold's model labels only its test traces, and agreement is computed on the
pooled out-of-fold labels. Hyperparameters are fixed in advance; nothing is
tuned on a test split.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from ..agreement import cohen_kappa_score
from ..annotate.offline import LabelMap, LearnedJudge, OfflineJudge, fit_learned_model, question_groups, trace_views

#: Report rows: (row name, field, step kind, whose labels: the judge's own or the rule-derived ones).
ROWS: tuple[tuple[str, str, str, str], ...] = (
    ("reasoning_type", "reasoning_type", "reasoning", "judge"),
    ("grounding (reasoning)", "grounding", "reasoning", "judge"),
    ("grounding (search)", "grounding", "search", "judge"),
    ("search_type (judge-decided)", "search_type", "search", "judge"),
    ("search_type (rule-derived)", "search_type", "search", "rule"),
    ("clarity", "clarity", "search_result", "judge"),
    ("sufficiency", "sufficiency", "search_result", "judge"),
)

AGREEMENT_COLUMNS = [
    "row",
    "field",
    "kind",
    "n",
    "accuracy",
    "kappa",
    "n_unscored",
    "n_no_reference",
    "classes",
    "note",
]


def kappa_score(reference: list[str], judged: list[str]) -> float:
    """Cohen's kappa, :func:`seekbench.agreement.cohen_kappa_score`; NaN when no pair exists or one
    class is all either side used.

    NaN, not 0, because kappa is undefined there (spec: one policy for undefined values); the
    table's ``note`` says why, so the estimator's warning is not repeated here.

    Examples
    --------
    >>> kappa_score(["Grounded", "Grounded", "NotGrounded", "NotGrounded"],
    ...             ["Grounded", "NotGrounded", "NotGrounded", "NotGrounded"])  # p_o = 3/4, p_e = 1/2
    0.5
    >>> kappa_score(["Clear", "Clear"], ["Clear", "Clear"])
    nan
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return cohen_kappa_score(reference, judged)


def agreement_table(traces: list[dict], records: list[dict], reference: LabelMap) -> pd.DataFrame:
    """Per-field agreement of judge ``records`` with ``reference`` labels.

    Parameters
    ----------
    traces : list of dict
        The traces both label sets refer to (for each step's kind).
    records : list of dict
        A judge's annotation records (value or None + unscored_reason).
    reference : dict
        ``(trace_id, step, field) -> value`` (human labels).

    Returns
    -------
    DataFrame
        One row per entry of :data:`ROWS`, columns :data:`AGREEMENT_COLUMNS`. ``kappa`` in
        [-1, 1], higher is better, NaN when undefined; ``accuracy`` in [0, 1], NaN when n = 0.
    """
    kinds = {(tr["trace_id"], int(st["index"])): st["kind"] for tr in traces for st in tr.get("steps") or ()}
    rows = []
    for row, fname, kind, source in ROWS:
        ref_vals, got_vals = [], []
        n_unscored = n_no_ref = 0
        for rec in records:
            key = (rec["trace_id"], int(rec["step"]), rec["field"])
            if rec["field"] != fname or kinds.get(key[:2]) != kind:
                continue
            if ((rec.get("provenance") or {}).get("kind") == "rule") != (source == "rule"):
                continue
            ref = reference.get(key)
            if ref is None:
                n_no_ref += rec["value"] is not None
                continue
            if rec["value"] is None:
                n_unscored += 1
                continue
            ref_vals.append(ref)
            got_vals.append(rec["value"])
        n = len(ref_vals)
        acc = float(np.mean(np.asarray(ref_vals) == np.asarray(got_vals))) if n else math.nan
        classes = sorted(set(ref_vals) | set(got_vals))
        rows.append(
            {
                "row": row,
                "field": fname,
                "kind": kind,
                "n": n,
                "accuracy": acc,
                "kappa": kappa_score(ref_vals, got_vals),
                "n_unscored": n_unscored,
                "n_no_reference": n_no_ref,
                "classes": classes,
                "note": _note(n, n_unscored, classes),
            }
        )
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def _note(n: int, n_unscored: int, classes: list) -> str:
    """Why accuracy or kappa is undefined in a row (empty when both are defined)."""
    if n == 0:
        return (
            f"n = 0: no step compared ({n_unscored} unscored by the judge)"
            if n_unscored
            else "n = 0: no step labeled by both"
        )
    if len(classes) < 2:
        return "kappa undefined: one class only"
    return ""


def evaluate_judge(judge: OfflineJudge, traces: list[dict], reference: LabelMap) -> pd.DataFrame:
    """Label ``traces`` with ``judge`` and return :func:`agreement_table` against ``reference``."""
    return agreement_table(traces, judge.label_traces(traces, rater=judge.name), reference)


def grouped_folds(traces: list[dict], *, n_splits: int = 5) -> list[tuple[np.ndarray, np.ndarray]]:
    """Train/test trace indices from ``GroupKFold`` on the traces' question groups.

    Parameters
    ----------
    traces : list of dict
    n_splits : int, default 5
        Reduced to the number of distinct questions when there are fewer (at least 2 needed).

    Returns
    -------
    list of (train_idx, test_idx)
        Index arrays into ``traces``; no question (and so no trace) is in both halves of a fold.
    """
    from sklearn.model_selection import GroupKFold

    groups = question_groups(traces)
    n_groups = len(set(groups))
    if n_groups < 2:
        raise UserInputError(f"grouped cross-validation needs traces of at least 2 questions, got {n_groups}")
    k = min(n_splits, n_groups)
    return [(tr, te) for tr, te in GroupKFold(n_splits=k).split(np.zeros(len(traces)), groups=groups)]


@dataclass
class CVResult:
    """Out-of-fold evaluation of the learned judge.

    Attributes
    ----------
    table : DataFrame
        :func:`agreement_table` of the pooled out-of-fold labels.
    folds : list of (train_idx, test_idx)
    fold_tables : list of DataFrame
        The same table per fold (test traces of that fold only).
    records : list of dict
        Every out-of-fold annotation record.
    seed : int
    """

    table: pd.DataFrame
    folds: list
    fold_tables: list = field(default_factory=list)
    records: list = field(default_factory=list)
    seed: int = 0

    def summary(self) -> dict:
        """JSON-ready per-row numbers (:func:`agreement_summary`) with the per-fold kappas."""
        out = agreement_summary(self.table)
        for i, row in enumerate(self.table["row"]):
            out[row]["fold_kappas"] = [json_number(ft.iloc[i]["kappa"]) for ft in self.fold_tables]
        return out


def agreement_summary(table: pd.DataFrame) -> dict:
    """JSON-ready ``{row: {n, accuracy, kappa, n_unscored, note}}`` of an :func:`agreement_table` (NaN as None)."""
    return {
        r["row"]: {
            "n": int(r["n"]),
            "accuracy": json_number(r["accuracy"]),
            "kappa": json_number(r["kappa"]),
            "n_unscored": int(r["n_unscored"]),
            "note": r.get("note", ""),
        }
        for _, r in table.iterrows()
    }


def json_number(x: float | None) -> float | None:
    """A number for JSON: rounded to 4 decimals, None for missing or NaN."""
    return None if x is None or math.isnan(x) else round(float(x), 4)


def format_number(x: float | None) -> str:
    """A number for a table: 3 decimals, ``n/a`` for missing or NaN."""
    return "n/a" if x is None or math.isnan(x) else f"{x:.3f}"


def cross_validate_learned(
    traces: list[dict],
    reference: LabelMap,
    *,
    n_splits: int = 5,
    seed: int = 0,
    name: str = "learned",
    encoder: Callable | None = None,
    views: list | None = None,
    folds: list[tuple[np.ndarray, np.ndarray]] | None = None,
) -> CVResult:
    """Grouped cross-validation of the learned judge (see the module docstring).

    Parameters
    ----------
    traces : list of dict
        Labeled canonical traces.
    reference : dict
        Their human labels, ``(trace_id, step, field) -> value``.
    n_splits : int, default 5
    seed : int, default 0
    encoder : callable, optional
        An embedder (``seekbench.annotate.offline`` ``minilm_encoder()``): the folds' models are
        scored with their embedding variant. The embedding scores depend on each trace alone, never
        on labels, so computing them once for all traces leaks nothing between folds.
    views : list of list of StepView, optional
        ``trace_views(traces)`` when already computed (embedding scores in their caches are reused).
    folds : list of (train_idx, test_idx), optional
        Index arrays into ``traces`` to use instead of :func:`grouped_folds` (another assignment of
        the questions to folds, to see how much a figure depends on it); a question on both sides
        of a fold is refused.

    Returns
    -------
    CVResult
    """
    if folds is None:
        folds = grouped_folds(traces, n_splits=n_splits)
    else:
        groups = question_groups(traces)
        for train_idx, test_idx in folds:
            if {groups[i] for i in train_idx} & {groups[i] for i in test_idx}:
                raise UserInputError("folds: a question has traces on both sides of a fold")
    views = trace_views(traces) if views is None else views
    records: list[dict] = []
    fold_tables = []
    for train_idx, test_idx in folds:
        train = [traces[i] for i in train_idx]
        test = [traces[i] for i in test_idx]
        train_ids = {t["trace_id"] for t in train}
        model = fit_learned_model(
            train,
            {k: v for k, v in reference.items() if k[0] in train_ids},
            seed=seed,
            views=[views[i] for i in train_idx],
            encoder=encoder,
        )
        judge = LearnedJudge(model, name=name, encoder=encoder)
        recs = judge.label_views([views[i] for i in test_idx], rater=name)
        fold_tables.append(agreement_table(test, recs, reference))
        records.extend(recs)
    return CVResult(
        table=agreement_table(traces, records, reference),
        folds=folds,
        fold_tables=fold_tables,
        records=records,
        seed=seed,
    )
