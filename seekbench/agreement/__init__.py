"""Agreement: judges vs. human annotators, judge panels, and how far judge labels move the metrics.

Spec section 9. Two-rater coefficients (Cohen's kappa, Gwet's AC1) and multi-rater ones
(Fleiss' kappa, Krippendorff's alpha) each come as a scalar ``*_score`` function and a
rich-result function with a bootstrap CI over whole traces; :func:`compare_annotations`
runs them all over annotation sets, per label field and step kind (rule-derived labels
scored apart, as the rule's), and :func:`metric_sensitivity`
recomputes RQI, CE and ERF(8) per agent from each rater's labels; :func:`plan_annotation`
says how many more traces humans must label for a kappa CI of a given half-width, and which.
"""

from ._ac1 import AC1Result, gwet_ac1, gwet_ac1_score
from ._agreement_result import AgreementResult
from ._align import align_pair, normalize_annotations
from ._compare import compare_annotations
from ._fleiss import FleissResult, fleiss_kappa, fleiss_kappa_score
from ._judge_costs import judge_costs, pareto_front
from ._kappa import KappaResult, cohen_kappa, cohen_kappa_score
from ._krippendorff import AlphaResult, krippendorff_alpha, krippendorff_alpha_score
from ._panel import PANEL_RATER, TIE_LABEL, PanelResult, majority_panel, panel_annotation_set
from ._planning import AnnotationPlan, plan_annotation
from ._projection import projected_half_width, size_for_half_width
from ._sensitivity import SensitivityResult, metric_sensitivity
from ._strata import POOLED_FIELD, RULE_RATER, split_rule_derived

__all__ = [
    "PANEL_RATER",
    "POOLED_FIELD",
    "RULE_RATER",
    "TIE_LABEL",
    "AC1Result",
    "AgreementResult",
    "AlphaResult",
    "AnnotationPlan",
    "FleissResult",
    "KappaResult",
    "PanelResult",
    "SensitivityResult",
    "align_pair",
    "cohen_kappa",
    "cohen_kappa_score",
    "compare_annotations",
    "fleiss_kappa",
    "fleiss_kappa_score",
    "gwet_ac1",
    "gwet_ac1_score",
    "judge_costs",
    "krippendorff_alpha",
    "krippendorff_alpha_score",
    "majority_panel",
    "metric_sensitivity",
    "normalize_annotations",
    "panel_annotation_set",
    "pareto_front",
    "plan_annotation",
    "projected_half_width",
    "size_for_half_width",
    "split_rule_derived",
]
