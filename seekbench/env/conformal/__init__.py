"""Completeness uncertainty: synthetic belief states, estimators, split conformal, variance decomposition.

Spec section 8. Synthetic belief states give exchangeable calibration data
with known completeness; an estimator (an LLM's verbalised estimate, or a
baseline needing no LLM) maps each state to c_hat; split conformal turns c_hat
into an interval [c_hat - q_hat, c_hat + q_hat] with 1 - alpha coverage, and
the stopping rule c_hat - q_hat >= delta is evaluated on episodes. The Type III
ANOVA decomposes the variance of final completeness into belief, model,
their interaction and document.

>>> from seekbench.env.conformal import conformal_quantile
>>> conformal_quantile([0.05 * i for i in range(1, 20)], alpha=0.1)   # 18th smallest of 19
0.9
"""

import warnings as _warnings

from ._anova import ANOVA_COLUMNS, completeness_anova, episodes_frame, variance_decomposition
from ._estimators import (
    ESTIMATE_COLUMNS,
    FEATURES,
    FeatureRegressionEstimator,
    MeanEstimator,
    baseline_estimates,
    baseline_features,
    belief_features,
    cross_fit_predict,
    estimates_frame,
    make_baseline,
    read_estimates,
    write_estimates,
)
from ._evaluate import ConformalResult, calibration_mask, evaluate_conformal
from ._llm import (
    DEFAULT_PROMPT,
    DEFAULT_PROMPT_VERSION,
    EstimatePrompt,
    LLMCompletenessEstimator,
    LLMEstimate,
    ParsedEstimate,
    parse_completeness_answer,
    render_messages,
)
from ._repeat import clopper_pearson
from ._split_conformal import (
    SplitConformal,
    conformal_interval,
    conformal_quantile,
    conformal_rank,
    evaluate_stopping,
    nonconformity,
    summarize_stopping,
)
from ._synthetic import (
    DEFAULT_DELTA,
    BeliefState,
    BeliefView,
    GoalPassage,
    document_belief_states,
    document_goal_passages,
    load_corpus_records,
    missing_range,
    read_belief_states,
    render_belief,
    render_beliefs,
    synthesize_belief_states,
    write_belief_states,
)

__all__ = [
    "ANOVA_COLUMNS",
    "BeliefState",
    "BeliefView",
    "ConformalResult",
    "DEFAULT_DELTA",
    "DEFAULT_PROMPT",
    "DEFAULT_PROMPT_VERSION",
    "ESTIMATE_COLUMNS",
    "EstimatePrompt",
    "FEATURES",
    "FeatureRegressionEstimator",
    "GoalPassage",
    "LLMCompletenessEstimator",
    "LLMEstimate",
    "MeanEstimator",
    "ParsedEstimate",
    "SplitConformal",
    "baseline_estimates",
    "baseline_features",
    "belief_features",
    "calibration_mask",
    "clopper_pearson",
    "completeness_anova",
    "conformal_interval",
    "conformal_quantile",
    "conformal_rank",
    "cross_fit_predict",
    "document_belief_states",
    "document_goal_passages",
    "episodes_frame",
    "estimates_frame",
    "evaluate_conformal",
    "evaluate_stopping",
    "load_corpus_records",
    "make_baseline",
    "missing_range",
    "nonconformity",
    "parse_completeness_answer",
    "read_belief_states",
    "read_estimates",
    "render_belief",
    "render_beliefs",
    "render_messages",
    "summarize_stopping",
    "synthesize_belief_states",
    "variance_decomposition",
    "write_belief_states",
    "write_estimates",
]


def __getattr__(name: str):
    # seekbench.env.goal_passages returns the raw passage dicts; this package's typed one was
    # also called goal_passages until the two were told apart.
    if name == "goal_passages":
        _warnings.warn(
            "seekbench.env.conformal.goal_passages is renamed document_goal_passages; the old name will be removed",
            FutureWarning,
            stacklevel=2,
        )
        return document_goal_passages
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
