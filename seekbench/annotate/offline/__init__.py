"""Offline judges: label steps with no API key, behind the same interface as the LLM judges.

Two judges, each built from a judge file by :func:`load_offline_judge`:

- ``rules`` (:class:`RulesJudge`): deterministic lexical heuristics over each
  step and the documents it can see, fixed in advance, never fitted.
- ``learned`` (:class:`LearnedJudge`): one scikit-learn logistic regression per
  (step kind, field), averaged with boosted trees for the grounding of reasoning
  steps, trained on human labels (``seekbench judge train``), saved as JSON
  (never pickle) with a model card.

Both return annotation records for every applicable field of every reasoning,
search and observation step: a value, or None with an ``unscored_reason``.
InitialQuery and RepeatQuery are rule-derived (``provenance.kind == "rule"``).
Their agreement with human labels is measured by ``seekbench judge evaluate``
(the learned judge under cross-validation grouped by question; the code lives in
:mod:`seekbench.analysis`, above :mod:`seekbench.agreement`) and reported as it comes out.

>>> judge = load_offline_judge({"name": "rules", "kind": "rules", "version": "1"})
>>> judge.name
'rules'
"""

from ._context import trace_views
from ._embed import EMBED_SCORE_NAMES, EMBEDDER_NAME, embedding_available, minilm_encoder
from ._fit import fit_learned_model
from ._human import LabelMap, human_labels, question_groups
from ._judge import Decision, OfflineJudge, rule_search_type
from ._learned import LEXICAL, WITH_MINILM, FieldModel, LearnedModel, add_embedding_scores
from ._learned_judge import LearnedJudge
from ._load import load_offline_judge, sample_model
from ._rules import THRESHOLDS, RulesJudge
from ._scores import CUES, SCORE_NAMES, step_scores
from ._train import CARD_NOTE, fit_with_card

__all__ = [
    "CARD_NOTE",
    "CUES",
    "Decision",
    "EMBEDDER_NAME",
    "EMBED_SCORE_NAMES",
    "FieldModel",
    "LEXICAL",
    "LabelMap",
    "LearnedJudge",
    "LearnedModel",
    "OfflineJudge",
    "RulesJudge",
    "SCORE_NAMES",
    "THRESHOLDS",
    "WITH_MINILM",
    "add_embedding_scores",
    "embedding_available",
    "fit_learned_model",
    "fit_with_card",
    "human_labels",
    "load_offline_judge",
    "minilm_encoder",
    "question_groups",
    "rule_search_type",
    "sample_model",
    "step_scores",
    "trace_views",
]
