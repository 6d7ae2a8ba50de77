"""A panel of judges as one rater: the majority label, ties broken by a named judge or left missing."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from .._errors import UserInputError
from ..labels import AnnotationSet
from ._counts import is_missing

#: The rater name of the panel in comparisons and reports.
PANEL_RATER = "panel:majority"
#: The panel's response where a tie stayed open: scored, and never equal to a reference label.
TIE_LABEL = "(unresolved tie)"
_TIE_REASON = "tie between "


@dataclass
class PanelResult:
    """What :func:`majority_panel` computes.

    Attributes
    ----------
    labels : Series
        The panel's label per item (index of ``ratings``); None where the panel has no label.
    reasons : Series
        Why an item has no label (``"tie between A and B"``, ``"no member labeled it"``); None
        where it has one.
    n_items, n_labeled : int
    n_ties : int
        Items where two or more labels shared the most votes.
    n_ties_broken : int
        Ties the tiebreaker settled (its own label was one of the tied labels).
    n_no_votes : int
        Items no member labeled.
    """

    labels: pd.Series
    reasons: pd.Series
    members: list[str]
    tiebreaker: str | None
    n_items: int
    n_labeled: int
    n_ties: int
    n_ties_broken: int
    n_no_votes: int
    options: dict = field(default_factory=dict)

    @property
    def summary(self) -> pd.DataFrame:
        """One row ``panel``: members, tiebreaker and the counts."""
        return pd.DataFrame(
            [
                {
                    "members": ", ".join(self.members),
                    "tiebreaker": self.tiebreaker,
                    "n_items": self.n_items,
                    "n_labeled": self.n_labeled,
                    "n_ties": self.n_ties,
                    "n_ties_broken": self.n_ties_broken,
                    "n_ties_missing": self.n_ties - self.n_ties_broken,
                    "n_no_votes": self.n_no_votes,
                }
            ],
            index=pd.Index(["panel"]),
        )


def majority_panel(ratings: pd.DataFrame, *, tiebreaker: str | None = None) -> PanelResult:
    """The panel label of each item: the label most members gave (spec section 9).

    Votes are the members' non-missing labels; the label with the most votes wins (a
    plurality, which for two labels and an odd panel is a strict majority). When two or more
    labels tie for the most votes, the ``tiebreaker`` member's label decides if it is one of
    them; otherwise (no tiebreaker, or it abstained or voted for a label not tied for first)
    the item stays missing, with the reason. An item no member labeled stays missing.

    Parameters
    ----------
    ratings : DataFrame
        One row per item, one column per member (the column name is the member's name).
    tiebreaker : str, optional
        The member whose label breaks ties; must be a column of ``ratings``.

    Returns
    -------
    PanelResult

    Examples
    --------
    >>> r = pd.DataFrame({"j1": ["a", "a", "b"], "j2": ["a", "b", None], "j3": ["b", "b", "a"]})
    >>> majority_panel(r).labels.tolist()
    ['a', 'b', None]
    >>> majority_panel(r, tiebreaker="j3").labels.tolist()
    ['a', 'b', 'a']
    """
    members = [str(c) for c in ratings.columns]
    if tiebreaker is not None and tiebreaker not in members:
        raise UserInputError(f"tiebreaker {tiebreaker!r} is not a panel member; choose one of: {', '.join(members)}")
    labels: list[object] = []
    reasons: list[str | None] = []
    n_ties = n_broken = n_none = 0
    tb_col = members.index(tiebreaker) if tiebreaker is not None else None
    for row in ratings.itertuples(index=False, name=None):
        votes = Counter(v for v in row if not is_missing(v))
        if not votes:
            labels.append(None)
            reasons.append("no member labeled it")
            n_none += 1
            continue
        top = max(votes.values())
        tied = [v for v, k in votes.items() if k == top]
        if len(tied) == 1:
            labels.append(tied[0])
            reasons.append(None)
            continue
        n_ties += 1
        tb_vote = row[tb_col] if tb_col is not None else None
        if tb_vote is not None and not is_missing(tb_vote) and tb_vote in tied:
            labels.append(tb_vote)
            reasons.append(None)
            n_broken += 1
        else:
            labels.append(None)
            why = "no tiebreaker" if tiebreaker is None else f"tiebreaker {tiebreaker} did not vote for one of them"
            reasons.append(f"{_TIE_REASON}{' and '.join(sorted(map(str, tied)))} ({why})")
    lab = pd.Series(labels, index=ratings.index, dtype=object, name="panel")
    return PanelResult(
        labels=lab,
        reasons=pd.Series(reasons, index=ratings.index, dtype=object, name="reason"),
        members=members,
        tiebreaker=tiebreaker,
        n_items=len(ratings),
        n_labeled=int(lab.notna().sum()),
        n_ties=n_ties,
        n_ties_broken=n_broken,
        n_no_votes=n_none,
        options={"tiebreaker": tiebreaker},
    )


def panel_annotation_set(
    members: list[AnnotationSet], *, tiebreaker: str | None = None, rater: str = PANEL_RATER
) -> tuple[AnnotationSet, PanelResult]:
    """The majority panel of several single-rater annotation sets, as an annotation set of its own.

    Every (trace, step, field) some member has a record for gets one panel record: the
    majority label (:func:`majority_panel`), or ``value=None`` with the ``unscored_reason``
    (a tie left open, or no member labeled it). Provenance names the members and the
    tiebreaker. Values are compared as given: normalise them first
    (:func:`~seekbench.agreement.normalize_annotations`).

    Returns
    -------
    (AnnotationSet, PanelResult)

    Examples
    --------
    >>> def judge(name, value):
    ...     return AnnotationSet.from_records([{"trace_id": "t", "step": 0, "field": "grounding", "value": value,
    ...         "unscored_reason": None, "rater": name, "provenance": {"kind": "judge"}}], name=name)
    >>> panel, res = panel_annotation_set([judge("a", "Grounded"), judge("b", "NotGrounded")])
    >>> panel.records[["value", "unscored_reason"]].values.tolist()
    [[None, 'tie between Grounded and NotGrounded (no tiebreaker)']]
    """
    names = [m.name for m in members]
    if len(set(names)) != len(names):
        raise UserInputError(f"panel members must have distinct rater names, got {names}")
    keys = ["trace_id", "step", "field"]
    frames = [
        m.records[[*keys, "value"]].drop_duplicates(keys, keep="last").set_index(keys)["value"].rename(n)
        for m, n in zip(members, names, strict=True)
    ]
    wide = pd.concat(frames, axis=1) if frames else pd.DataFrame()
    wide = wide.astype(object).where(wide.notna(), None)
    result = majority_panel(wide, tiebreaker=tiebreaker)
    prov = {"kind": "judge", "judge": "panel", "model": None, "members": names, "tiebreaker": tiebreaker}
    recs = [
        {
            "trace_id": t,
            "step": int(s),
            "field": f,
            "value": v,
            "unscored_reason": why,
            "rater": rater,
            "provenance": prov,
        }
        for (t, s, f), v, why in zip(wide.index, result.labels, result.reasons, strict=True)
    ]
    return AnnotationSet.from_records(recs, name=rater), result


def tie_keys(panel: AnnotationSet) -> set[tuple[str, int, str]]:
    """The (trace id, step, field) items where the panel's tie stayed open (no tiebreaker label)."""
    r = panel.records
    tie = r["value"].isna() & r["unscored_reason"].astype(str).str.startswith(_TIE_REASON)
    return {
        (str(t), int(s), f)
        for t, s, f in zip(r.loc[tie, "trace_id"], r.loc[tie, "step"], r.loc[tie, "field"], strict=True)
    }
