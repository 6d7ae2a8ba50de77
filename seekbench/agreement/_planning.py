"""Annotation planning: how many more traces humans must label, and which (issue 30, item 3).

Given a pilot (reference labels on some traces) and judges' labels, per label field and
step kind: the kappa CI half-width now, and the additional traces needed to reach a
target half-width, projected by resampling the pilot's whole traces at larger sizes
(:func:`~seekbench.agreement.projected_half_width`); the same for the difference in kappa
between two judges; and the unlabeled traces ranked to label next
(:mod:`seekbench.agreement._next_traces`).
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from .._errors import UndefinedMetricWarning, UserInputError
from ..labels import AnnotationSet
from ._align import FIELDS, rater_sets
from ._next_traces import ORDERS, rank_traces, trace_disagreements
from ._plan_counts import (
    compared_items,
)
from ._plan_rows import difference_rows, kappa_rows
from ._strata import split_rule_derived, step_kinds, strata

#: The columns of :attr:`AnnotationPlan.kappa`.
KAPPA_COLUMNS = [
    "rater",
    "field",
    "step_kind",
    "n_traces",
    "n_items",
    "kappa",
    "kappa_lower",
    "kappa_upper",
    "half_width",
    "traces_needed",
    "traces_searched",
    "projected_half_width",
    "note",
]
#: The columns of :attr:`AnnotationPlan.differences`.
DIFFERENCE_COLUMNS = [
    "rater_a",
    "rater_b",
    "field",
    "step_kind",
    "n_traces",
    "n_items",
    "difference",
    "difference_lower",
    "difference_upper",
    "half_width",
    "traces_needed",
    "traces_searched",
    "projected_half_width",
    "note",
]


@dataclass
class AnnotationPlan:
    """What :func:`plan_annotation` computes.

    Attributes
    ----------
    reference : str
        The reference rater.
    raters : list of str
        The judges (their own decisions; rule-derived labels are left out, as in ``agree``).
    kappa : DataFrame
        :data:`KAPPA_COLUMNS`, one row per (judge, field, step kind): traces and items compared
        now, Cohen's kappa with its 95% bootstrap CI over whole traces, ``half_width`` =
        (upper - lower) / 2, ``traces_needed`` = additional reference-labeled traces to reach
        the target half-width (0 when it is reached; NaN with a ``note`` when the target is
        beyond the sizes searched (``traces_searched`` more) or kappa is undefined), and
        ``projected_half_width`` at that size.
    differences : DataFrame
        :data:`DIFFERENCE_COLUMNS`: the same for kappa_a - kappa_b of every pair of judges,
        on the items the reference and both judges labeled (empty with one judge).
    ranking : DataFrame
        The unlabeled traces, ranked to label next (columns of
        :data:`~seekbench.agreement._next_traces.RANK_COLUMNS`).
    options : dict
        target, assurance, order, fields, n_boot, n_worlds, n_draws, spread, seed, alpha, explorer.
    warnings : list of str
    """

    reference: str
    raters: list[str]
    kappa: pd.DataFrame
    differences: pd.DataFrame
    ranking: pd.DataFrame
    options: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-ready (NaN stays NaN here; ``seekbench._io.dumps`` writes it as null)."""
        return {
            "reference": self.reference,
            "raters": self.raters,
            "kappa": self.kappa.to_dict("records"),
            "differences": self.differences.to_dict("records"),
            "ranking": self.ranking.to_dict("records"),
            "options": self.options,
            "warnings": self.warnings,
        }


def _check_options(
    n_raters: int,
    *,
    target: float,
    assurance: float,
    order: str,
    n_boot: int,
    n_worlds: int,
    n_draws: int,
    spread: float,
) -> None:
    """A user error for a plan without a judge or with an option out of its range."""
    if not n_raters:
        raise UserInputError("give at least one judge's labels (--rater) to plan against the reference")
    if not target > 0:
        raise UserInputError(f"--target must be > 0, got {target}")
    if not 0.5 <= assurance < 1:
        raise UserInputError(f"--assurance must be in [0.5, 1), got {assurance}")
    if order not in ORDERS:
        raise UserInputError(f"--order must be one of {', '.join(ORDERS)}, got {order!r}")
    if n_boot < 0 or (0 < n_boot < 10) or n_worlds < 1 or n_draws < 10 or not spread >= 1:
        raise UserInputError("n_boot must be 0 or >= 10, n_worlds >= 1, n_draws >= 10 and spread >= 1")


def _fields(fields: list[str] | None, ref: AnnotationSet) -> list[str]:
    """The label fields to plan for: ``fields``, else those the reference labels in ontology order; an
    unknown field is a user error."""
    if fields is None:
        fields = [f for f in FIELDS if f in set(ref.records["field"])]
    bad = [f for f in fields if f not in FIELDS]
    if bad:
        raise UserInputError(f"unknown label field {bad[0]!r}; choose from: {', '.join(FIELDS)}")
    return fields


def _compared(
    ref: AnnotationSet, ref_name: str, judges: dict[str, AnnotationSet], all_strata: list, kinds: dict
) -> tuple[dict, dict[str, set[str]]]:
    """Per (judge, field, step kind) the items the reference and the judge both labeled, and per judge the
    traces holding them; a user error when no judge labeled a step the reference labeled."""
    items = {(j, f, k): compared_items(ref, judges[j], f, k, kinds) for j in judges for f, k in all_strata}
    overlap = {
        j: {t for (jj, _, _), it in items.items() if jj == j for t in it["trace_id"].astype(str)} for j in judges
    }
    if not any(overlap.values()):
        raise UserInputError(
            f"no step is labeled by both the reference {ref_name!r} and a judge ({', '.join(judges)}); "
            "the judges must label the traces the reference labels"
        )
    return items, overlap


def plan_annotation(
    reference: AnnotationSet,
    *raters: AnnotationSet,
    traces: list[dict],
    fields: list[str] | None = None,
    target: float = 0.05,
    assurance: float = 0.9,
    order: Literal["stratified", "disagreement", "random"] = "stratified",
    n_boot: int = 2000,
    n_worlds: int = 100,
    n_draws: int = 200,
    spread: float = 2.0,
    seed: int | None = 0,
    alpha: float = 0.05,
    explorer: str = "explorer.html",
) -> AnnotationPlan:
    """How many more traces to label for a kappa CI of half-width ``target``, and which ones.

    Per judge and (field, step kind) stratum, on the items the reference and the judge both
    labeled (the judge's rule-derived labels left out, as in :func:`compare_annotations`):
    Cohen's kappa with its percentile bootstrap CI over whole traces (:func:`cohen_kappa`),
    its half-width h = (upper - lower) / 2, and the smallest number of additional labeled
    traces k for which the projected half-width is at most ``target``. The projection
    (:func:`~seekbench.agreement.projected_half_width`) draws n + k traces with replacement
    from the pilot's n, in ``n_worlds`` resamples of the pilot, and takes the ``assurance``
    quantile over them: the plan is large enough in that share of plausible follow-ups.
    The same for kappa_a - kappa_b of every pair of judges, on the items all three labeled.
    Then every trace not labeled by the reference, ranked to label next (see
    :func:`~seekbench.agreement._next_traces.rank_traces`).

    Parameters
    ----------
    reference : AnnotationSet
        One rater's labels (the humans') on some of ``traces``.
    *raters : AnnotationSet
        The judges' labels (a set with several raters counts as each).
    traces : list of dict
        The canonical traces: each step's kind, each trace's agent, the unlabeled candidates.
    fields : list of str, optional
        Default: the fields the reference labels.
    target : float
        The CI half-width wanted (> 0).
    assurance : float
        In (0.5, 1): the share of the projection's worlds in which k traces suffice.
    order : {"stratified", "disagreement", "random"}
        How to rank the unlabeled traces.
    n_boot : int
        Resamples of the CI now (0: no CI and no plan).
    n_worlds, n_draws : int
        The projection's worlds and resamples per world.
    spread : float
        How much the worlds' spread is widened (see
        :func:`~seekbench.agreement.projected_half_width`; >= 1).
    seed : int or None
        Seeds every resampling and the ranking's random order.
    alpha : float
        1 - the CI's level.
    explorer : str
        The trace explorer page the ranking links to (``seekbench explore -o DIR`` writes
        DIR/explorer.html): ``explorer.html#trace=ID``.

    Returns
    -------
    AnnotationPlan

    Raises
    ------
    UserInputError
        No judge, a reference with no trace in ``traces``, or no item labeled by both the
        reference and a judge; a bad option.

    Examples
    --------
    >>> def rec(t, s, v, r):
    ...     return {"trace_id": t, "step": s, "field": "grounding", "value": v, "unscored_reason": None,
    ...             "rater": r, "provenance": {"kind": "human" if r == "h" else "judge"}}
    >>> traces = [{"trace_id": f"t{i}", "agent": "a", "steps": [{"index": 0, "kind": "reasoning"},
    ...            {"index": 1, "kind": "reasoning"}]} for i in range(12)]
    >>> g, ng = "Grounded", "NotGrounded"
    >>> human = AnnotationSet.from_records([rec(f"t{i}", s, [g, ng][(i + s) % 2], "h")
    ...                                     for i in range(8) for s in (0, 1)])
    >>> judge = AnnotationSet.from_records([rec(f"t{i}", s, [g, ng][(i + s + (i == 0)) % 2], "j")
    ...                                     for i in range(12) for s in (0, 1)])
    >>> plan = plan_annotation(human, judge, traces=traces, target=0.2, n_boot=200, n_worlds=20, n_draws=100)
    >>> row = plan.kappa.iloc[0]
    >>> int(row["n_traces"]), int(row["n_items"]), round(float(row["kappa"]), 3)  # 14 of 16 agree: kappa 0.75
    (8, 16, 0.75)
    >>> bool(row["traces_needed"] > 0), len(plan.ranking)  # t8 .. t11 are not labeled yet
    (True, 4)
    """
    _check_options(
        len(raters),
        target=target,
        assurance=assurance,
        order=order,
        n_boot=n_boot,
        n_worlds=n_worlds,
        n_draws=n_draws,
        spread=spread,
    )
    sets = rater_sets(reference, raters)
    ref_name, *judge_names = list(sets)
    ref = sets[ref_name]
    trace_ids = {str(t["trace_id"]) for t in traces}
    ref_ids = set(ref.records["trace_id"].astype(str))
    if not ref_ids & trace_ids:
        raise UserInputError(f"the reference {ref_name!r} labels none of the traces given; check the trace ids")
    judges = {n: split_rule_derived(sets[n])[0] for n in judge_names}
    fields = _fields(fields, ref)
    kinds = step_kinds(traces, *sets.values())
    all_strata = strata([ref, *judges.values()], list(fields), kinds)
    projection = {
        "n_boot": n_draws,
        "n_worlds": n_worlds,
        "assurance": assurance,
        "alpha": alpha,
        "seed": seed,
        "spread": spread,
    }
    items, overlap = _compared(ref, ref_name, judges, all_strata, kinds)
    msgs: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        rows = kappa_rows(items, overlap, target, projection, n_boot=n_boot, seed=seed, alpha=alpha)
        pairs = [(a, b, f, k) for a, b in itertools.combinations(judges, 2) for f, k in all_strata]
        diffs = difference_rows(items, pairs, overlap, target, projection, n_boot=n_boot, seed=seed, alpha=alpha)
    msgs += list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UndefinedMetricWarning)))
    msgs += [
        f"judge {j!r}: no step compared with the reference (no label, or all unscored)"
        for j in judges
        if not overlap[j]
    ]
    per = trace_disagreements(ref, judges, traces, all_strata, kinds)
    ranking = rank_traces(per, order=order, seed=seed, explorer=explorer)
    if not len(ranking):
        msgs.append("every trace given is labeled by the reference: no trace left to rank")
    for m in msgs:
        warnings.warn(m, UndefinedMetricWarning, stacklevel=2)
    return AnnotationPlan(
        reference=ref_name,
        raters=list(judges),
        kappa=pd.DataFrame(rows, columns=KAPPA_COLUMNS),
        differences=pd.DataFrame(diffs, columns=DIFFERENCE_COLUMNS),
        ranking=ranking,
        options={
            "target": target,
            "assurance": assurance,
            "order": order,
            "fields": list(fields),
            "n_boot": n_boot,
            "n_worlds": n_worlds,
            "n_draws": n_draws,
            "spread": spread,
            "seed": seed,
            "alpha": alpha,
            "explorer": explorer,
        },
        warnings=msgs,
    )
