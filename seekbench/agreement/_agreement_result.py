"""What :func:`~seekbench.agreement.compare_annotations` returns: :class:`AgreementResult` and its columns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from ._align import STATUSES
from ._panel import PanelResult
from ._strata import POOLED_FIELD, stratum_label

if TYPE_CHECKING:  # _sensitivity imports compare_annotations' callers; the class is needed for the annotation only
    from ._sensitivity import SensitivityResult

SUMMARY_COLUMNS = [
    "rater",
    "field",
    "step_kind",
    "n_compared",
    "n_excluded",
    *[f"n_{s.replace(' ', '_').replace('-', '_')}" for s in STATUSES[1:]],
    "n_unresolved_ties",
    "n_traces",
    "raw_agreement",
    "kappa",
    "kappa_lower",
    "kappa_upper",
    "ac1",
    "ac1_lower",
    "ac1_upper",
    "note",
]
#: The row pooling every (field, step kind) stratum of a rater; it says so in its name.
OVERALL = POOLED_FIELD
#: The columns of :attr:`AgreementResult.disagreements`.
DISAGREEMENT_COLUMNS = ["rater", "field", "step_kind", "trace_id", "step", "reference_value", "rater_value"]


@dataclass
class AgreementResult:
    """What :func:`compare_annotations` computes.

    Attributes
    ----------
    reference : str
        The reference rater (e.g. the human annotators).
    raters : list of str
        The raters compared with it: each judge (its own decisions only), the majority panel
        when there is one, then :data:`~seekbench.agreement._strata.RULE_RATER` holding the
        judges' rule-derived labels (InitialQuery, RepeatQuery), scored as the rule's.
    fields : list of str
    strata : list of (str, str)
        The (field, step kind) pairs compared, e.g. ``("grounding", "reasoning")`` and
        ``("grounding", "search")``: never pooled into one row.
    summary : DataFrame
        One row per (rater, field, step_kind), then per rater one row with ``field ==
        "all (pooled)"`` and ``step_kind == "all"``: ``n_compared``, ``n_excluded`` and its
        reasons (``n_reference_only``, ``n_rater_only``, ``n_unscored_by_rater``,
        ``n_unscored_by_reference``, ``n_rule_derived``), ``n_unresolved_ties`` (the panel's
        open ties, scored as misses), ``n_traces``, ``raw_agreement``, Cohen's ``kappa`` and
        Gwet's ``ac1`` with 95% bootstrap CIs over whole traces; NaN (no coefficient) where
        ``n_compared`` is 0. The pooled row stratifies: p_o and the chance agreement p_e are
        n-weighted means of the strata's (a label of one stratum never matches another's by
        chance), then kappa = (p_o - p_e) / (1 - p_e).
    confusion : dict
        ``(rater, field, step_kind) -> DataFrame`` of counts, rows the reference's labels (the
        panel's have a column for :data:`~seekbench.agreement._panel.TIE_LABEL`).
    prevalence : DataFrame
        Per rater, field, step kind and label: its share among the reference's and the
        rater's labels on the compared items, and pooled.
    exclusions : DataFrame
        ``rater, field, step_kind, reason, n``: the items not compared and why.
    multi_rater : DataFrame
        With three or more raters (reference and judges, not the panel), per stratum:
        Krippendorff's alpha (nominal, all pairable items) and Fleiss' kappa (items every
        rater labeled) with CIs and item counts. Empty otherwise.
    pairwise : dict
        ``(field, step_kind) -> DataFrame``: Cohen's kappa of every pair of raters (reference,
        judges, panel) on the items both labeled; diagonal 1.
    panel : PanelResult or None
    costs : DataFrame
        Per judge (and the panel, whose cost is its members' sum): see
        :func:`~seekbench.agreement.judge_costs`.
    sensitivity : SensitivityResult or None
        With ``traces``: how far each rater's labels move RQI, CE and ERF(8) per agent.
    disagreements : DataFrame
        :data:`DISAGREEMENT_COLUMNS`: every compared item where the rater's label is not the
        reference's, per (rater, field, step_kind) stratum, the items behind the off-diagonal
        cells of ``confusion`` (so a stratum has ``n_compared`` x (1 - ``raw_agreement``) of
        them). Not in :meth:`to_dict` (one row per item); the trace explorer lists them.
    """

    reference: str
    raters: list[str]
    fields: list[str]
    summary: pd.DataFrame
    confusion: dict
    prevalence: pd.DataFrame
    exclusions: pd.DataFrame
    multi_rater: pd.DataFrame
    pairwise: dict
    panel: PanelResult | None
    costs: pd.DataFrame
    sensitivity: SensitivityResult | None = None
    options: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    strata: list = field(default_factory=list)
    disagreements: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=DISAGREEMENT_COLUMNS))

    def to_dict(self) -> dict:
        """JSON-ready (NaN stays NaN here; ``seekbench._io.dumps`` writes it as null)."""
        out = {
            "reference": self.reference,
            "raters": self.raters,
            "fields": self.fields,
            "strata": [{"field": f, "step_kind": k} for f, k in self.strata],
            "summary": self.summary.to_dict("records"),
            "confusion": [
                {
                    "rater": r,
                    "field": f,
                    "step_kind": k,
                    "labels": [str(x) for x in m.index],
                    "matrix": m.to_numpy().tolist(),
                }
                for (r, f, k), m in self.confusion.items()
            ],
            "prevalence": self.prevalence.to_dict("records"),
            "exclusions": self.exclusions.to_dict("records"),
            "multi_rater": self.multi_rater.to_dict("records"),
            "pairwise": {stratum_label(f, k): m.to_dict() for (f, k), m in self.pairwise.items()},
            "panel": None if self.panel is None else self.panel.summary.iloc[0].to_dict(),
            "costs": self.costs.to_dict("records"),
            "sensitivity": None
            if self.sensitivity is None
            else {
                "table": self.sensitivity.table.to_dict("records"),
                "rankings": self.sensitivity.rankings.to_dict("records"),
                "options": self.sensitivity.options,
            },
            "options": self.options,
            "warnings": self.warnings,
        }
        return out
