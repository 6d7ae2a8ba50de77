"""One rater against the reference, stratum by stratum: the rows of :func:`compare_annotations`.

A :class:`RaterPair` names the two annotation sets and how their items are told apart; each
(field, step kind) stratum is aligned and counted into a :class:`Stratum`; the strata's
confusion matrices are resampled together (one product of the comparison's
:class:`~seekbench.metrics.Resampler`, the same draws of every trace for every rater) and give
each row's :class:`Agreement`; :func:`rater_tables` returns what the rater adds to the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from ..labels import AnnotationSet
from ..metrics import Resampler
from ._ac1 import ac1_from_confusion
from ._align import STATUSES, align_pair, field_labels
from ._counts import confusion, confusion_columns, encode_pairs, interval
from ._kappa import kappa_from_confusion
from ._panel import TIE_LABEL
from ._pooled import stratified_agreement
from ._strata import POOLED_FIELD, POOLED_KIND, kind_column


@dataclass(frozen=True)
class RaterPair:
    """One rater compared with the reference.

    ``kinds`` tells each step's kind; ``rule_keys`` are the (trace, step, field) items whose
    labels are the judges' rule-derived ones (excluded as such); ``ties`` the panel's open ties
    (scored as :data:`~seekbench.agreement._panel.TIE_LABEL`), None for a rater that is not the panel.
    """

    name: str
    reference: AnnotationSet
    rater: AnnotationSet
    kinds: dict
    rule_keys: set = field(default_factory=set)
    ties: set | None = None


@dataclass(frozen=True)
class Stratum:
    """One (field, step kind) stratum of a pair: its labels, counts and compared items."""

    field: str
    kind: str
    labels: list
    counts: pd.Series  # items per alignment status
    compared: pd.DataFrame  # the items both labeled: trace_id, step, reference, rater
    codes: tuple[np.ndarray, np.ndarray]  # the compared labels as codes of ``labels``
    groups: np.ndarray  # each compared item's trace (the resampling unit)

    @property
    def q(self) -> int:
        return len(self.labels)

    @cached_property
    def confusion(self) -> np.ndarray:
        """The q x q confusion matrix (rows: the reference's labels)."""
        return confusion(*self.codes, self.q)

    @property
    def q_labels(self) -> int:
        """AC1's number of categories: the field's labels, not the tie response."""
        return len(field_labels(self.field))

    @property
    def n_ties(self) -> int:
        return int((self.compared["rater"] == TIE_LABEL).sum())


@dataclass(frozen=True)
class Agreement:
    """The coefficients of one row: raw agreement, kappa and AC1 with their CIs."""

    raw: float
    kappa: float
    ac1: float
    kappa_ci: tuple[float, float]
    ac1_ci: tuple[float, float]


@dataclass(frozen=True)
class RowCounts:
    """The counts of one row: items per alignment status, traces compared, unresolved ties."""

    status: Mapping[str, int]
    n_traces: int
    n_ties: int


@dataclass(frozen=True)
class RaterTables:
    """What one rater adds to :class:`~seekbench.agreement.AgreementResult`."""

    rows: list[dict]
    confusion: dict
    prevalence: list[dict]
    exclusions: list[dict]
    disagreements: list[pd.DataFrame]


def aligned(pair: RaterPair, f: str, kind: str) -> pd.DataFrame:
    """:func:`align_pair` on one stratum, with the judge's rule-derived items excluded as such
    and the panel's open ties scored as :data:`TIE_LABEL`."""
    al = align_pair(pair.reference, pair.rater, f)
    al = al[(kind_column(al, pair.kinds) == kind).to_numpy()].reset_index(drop=True)
    keys = [(str(t), int(st), f) for t, st in zip(al["trace_id"], al["step"], strict=True)]
    if pair.rule_keys:
        is_rule = np.array([k in pair.rule_keys for k in keys], dtype=bool)
        al.loc[is_rule & (al["status"] == "reference only").to_numpy(), "status"] = "rule-derived"
    if pair.ties:
        tie = (
            np.array([k in pair.ties for k in keys], dtype=bool)
            & (al["status"] == "unscored by rater").to_numpy()
            & al["reference"].notna().to_numpy()
        )
        al.loc[tie, "status"] = "compared"
        al.loc[tie, "rater"] = TIE_LABEL
    return al


def stratum(pair: RaterPair, f: str, kind: str) -> Stratum:
    """The pair's items of one stratum, aligned, counted and coded."""
    labels = [*field_labels(f), *([TIE_LABEL] if pair.ties is not None else [])]
    al = aligned(pair, f, kind)
    comp = al[al["status"] == "compared"]
    c1, c2, _, g, _ = encode_pairs(
        comp["reference"].tolist(), comp["rater"].tolist(), labels, comp["trace_id"].tolist()
    )
    return Stratum(f, kind, labels, al["status"].value_counts(), comp, (c1, c2), g)


def _prevalence(name: str, st: Stratum) -> list[dict]:
    """Per label: its share among the reference's and the rater's labels of the compared items."""
    conf = st.confusion
    n = conf.sum()
    rows = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for k, lab in enumerate(st.labels):
            r_k, c_k = conf[k].sum(), conf[:, k].sum()
            rows.append(
                {
                    "rater": name,
                    "field": st.field,
                    "step_kind": st.kind,
                    "label": lab,
                    "reference_share": r_k / n,
                    "rater_share": c_k / n,
                    "pooled": (r_k + c_k) / (2 * n),
                }
            )
    return rows


def _exclusions(name: str, st: Stratum) -> list[dict]:
    return [
        {"rater": name, "field": st.field, "step_kind": st.kind, "reason": s, "n": int(st.counts[s])}
        for s in STATUSES[1:]
        if st.counts.get(s, 0)
    ]


def _disagreements(name: str, st: Stratum) -> list[pd.DataFrame]:
    """The compared items where the rater's label is not the reference's (none: an empty list)."""
    off = st.compared[(st.compared["reference"] != st.compared["rater"]).to_numpy()]
    if not len(off):
        return []
    frame = {
        "rater": name,
        "field": st.field,
        "step_kind": st.kind,
        "trace_id": off["trace_id"].astype(str).to_numpy(),
        "step": off["step"].astype(int).to_numpy(),
        "reference_value": off["reference"].astype(str).to_numpy(),
        "rater_value": off["rater"].astype(str).to_numpy(),
    }
    return [pd.DataFrame(frame)]


def resampled_confusions(strata: list[Stratum], resampler: Resampler) -> list[np.ndarray] | None:
    """Each stratum's B resampled confusion matrices ``(B, q, q)``, from one product over all
    strata's items (one-hot rows of the q*q cells, side by side); None without resamples or items."""
    width = sum(st.q**2 for st in strata)
    items: list[np.ndarray] = []
    groups: list = []
    offset = 0
    for st in strata:
        cols = np.zeros((len(st.groups), width))
        cols[:, offset : offset + st.q**2] = confusion_columns(*st.codes, st.q)
        items.append(cols)
        groups.extend(st.groups)
        offset += st.q**2
    if resampler.n_boot == 0 or not groups:
        return None
    # the items' traces, drawn from the comparison's universe: the same draws for every rater
    sums = resampler.with_clusters(groups, universe=resampler.universe).resampled_sums(np.concatenate(items))
    blocks, offset = [], 0
    for st in strata:
        blocks.append(sums[:, offset : offset + st.q**2].reshape(-1, st.q, st.q))
        offset += st.q**2
    return blocks


def _agreement(st: Stratum, boot: np.ndarray | None, alpha: float) -> Agreement:
    conf, q = st.confusion, st.q_labels
    n = conf.sum()
    return Agreement(
        raw=float(np.trace(conf) / n) if n else np.nan,
        kappa=float(kappa_from_confusion(conf)),
        ac1=float(ac1_from_confusion(conf, q)) if n else np.nan,
        kappa_ci=interval(None if boot is None else kappa_from_confusion(boot), alpha),
        ac1_ci=interval(None if boot is None else ac1_from_confusion(boot, q), alpha),
    )


def _pooled_agreement(strata: list[Stratum], boots: list[np.ndarray] | None, alpha: float) -> Agreement:
    """Every stratum pooled, each keeping its own chance agreement (:func:`stratified_agreement`)."""
    if not strata:
        return Agreement(np.nan, np.nan, np.nan, (np.nan, np.nan), (np.nan, np.nan))
    qs = [st.q_labels for st in strata]
    po, kappa, ac1 = (float(x[0]) for x in stratified_agreement([st.confusion[None] for st in strata], qs))
    cis = ((np.nan, np.nan), (np.nan, np.nan))
    if boots is not None:
        _, bk, ba = stratified_agreement(boots, qs)
        cis = (interval(bk, alpha), interval(ba, alpha))
    return Agreement(po, kappa, ac1, *cis)


def row(name: str, f: str, kind: str, counts: RowCounts, agreement: Agreement) -> dict:
    """One row of the summary (:data:`~seekbench.agreement._agreement_result.SUMMARY_COLUMNS`)."""
    status = counts.status
    out = {
        "rater": name,
        "field": f,
        "step_kind": kind,
        "n_compared": int(status.get("compared", 0)),
        "n_excluded": int(sum(status.get(s, 0) for s in STATUSES[1:])),
    }
    out.update({f"n_{s.replace(' ', '_').replace('-', '_')}": int(status.get(s, 0)) for s in STATUSES[1:]})
    out.update(
        {
            "n_unresolved_ties": int(counts.n_ties),
            "n_traces": int(counts.n_traces),
            "raw_agreement": agreement.raw,
            "kappa": agreement.kappa,
            "kappa_lower": agreement.kappa_ci[0],
            "kappa_upper": agreement.kappa_ci[1],
            "ac1": agreement.ac1,
            "ac1_lower": agreement.ac1_ci[0],
            "ac1_upper": agreement.ac1_ci[1],
        }
    )
    out["note"] = _note(out, status)
    return out


def _note(out: dict, status: Mapping[str, int]) -> str:
    """Why a coefficient of the row is missing (tables print it beside n/a); empty when none is."""
    if out["n_compared"] == 0:
        why = ", ".join(f"{int(status[s])} {s}" for s in STATUSES[1:] if status.get(s, 0))
        return f"n = 0: no step compared ({why or 'no label'}); no coefficient"
    if np.isnan(out["kappa"]):
        return "kappa undefined: one label on every compared step (chance agreement 1); see AC1"
    return ""


def rater_tables(pair: RaterPair, strata: list[tuple[str, str]], resampler: Resampler, alpha: float) -> RaterTables:
    """The pair's rows (one per stratum, then the pooled row), confusion matrices, prevalence,
    exclusions and disagreements; ``resampler`` has the comparison's universe of traces."""
    parts = [stratum(pair, f, kind) for f, kind in strata]
    boots = resampled_confusions(parts, resampler)
    rows = [
        row(pair.name, st.field, st.kind, _counts(st), _agreement(st, None if boots is None else boots[i], alpha))
        for i, st in enumerate(parts)
    ]
    total: dict[str, int] = {}
    for st in parts:
        for status, n in st.counts.items():
            total[status] = total.get(status, 0) + int(n)
    traces = {g for st in parts for g in st.groups}
    pooled = RowCounts(total, len(traces), sum(st.n_ties for st in parts))
    rows.append(row(pair.name, POOLED_FIELD, POOLED_KIND, pooled, _pooled_agreement(parts, boots, alpha)))
    return RaterTables(
        rows=rows,
        confusion={(pair.name, st.field, st.kind): _confusion_frame(pair, st) for st in parts},
        prevalence=[r for st in parts for r in _prevalence(pair.name, st)],
        exclusions=[r for st in parts for r in _exclusions(pair.name, st)],
        disagreements=[d for st in parts for d in _disagreements(pair.name, st)],
    )


def _counts(st: Stratum) -> RowCounts:
    return RowCounts(st.counts, st.compared["trace_id"].nunique(), st.n_ties)


def _confusion_frame(pair: RaterPair, st: Stratum) -> pd.DataFrame:
    return pd.DataFrame(
        st.confusion.astype(int),
        index=pd.Index(st.labels, name=pair.reference.name),
        columns=pd.Index(st.labels, name=pair.name),
    )
