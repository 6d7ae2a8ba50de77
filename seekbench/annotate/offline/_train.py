"""Fitting a learned judge with its model card (data hash, n, seed; the grouped-CV scores come from analysis)."""

from __future__ import annotations

import os

from ..._version import __version__
from ...llm import utc_now
from ._context import StepView
from ._embed import Encoder
from ._fit import CALIBRATED, INNER_SPLITS, fit_learned_model
from ._human import LabelMap, question_groups, training_data_sha256
from ._learned import FORMAT, LEXICAL, PARAMS, TREE_FIELDS, WITH_MINILM, LearnedModel
from ._trees import TREE_PARAMS

CARD_NOTE = (
    "Quality is whatever grouped cross-validation measured (train and test folds never share a "
    "question or a trace); hyperparameters are fixed in advance and nothing was tuned on a test "
    "split. A model only knows the agents, datasets and annotators of its training data."
)


def fit_with_card(
    traces: list[dict],
    labels: LabelMap,
    *,
    seed: int = 0,
    source: str | None = None,
    cv: dict | None = None,
    encoder: Encoder | None = None,
    views: list[list[StepView]] | None = None,
    trained_at: str | None = "now",
) -> LearnedModel:
    """Fit the learned judge on all labeled traces and describe it in a model card (``cv``: its CV section).

    Parameters
    ----------
    traces, labels, seed :
        Passed to :func:`fit_learned_model` (the card records the seed and a hash of the data).
    source : str, optional
        Where the training data came from (a file name, for the card).
    cv : dict, optional
        The card's ``cv`` section (:func:`seekbench.analysis.train_learned_model` fills it; None: no CV).
    encoder, views :
        Passed to :func:`fit_learned_model` (an embedder: fit the embedding variant too).
    trained_at : str or None, default "now"
        The card's time stamp: ``"now"`` (UTC), a fixed string, or None (a reproducible build
        writes none, so training twice gives the same bytes).

    Returns
    -------
    LearnedModel
        Classifiers fitted on every labeled step, with ``card`` filled in.
    """
    model = fit_learned_model(traces, labels, seed=seed, views=views, encoder=encoder)
    n_labels = {LearnedModel.key(m.kind, m.field): m.n_train for m in model.fields.values()}
    model.card = {
        "judge": "learned",
        "format": FORMAT,
        "seekbench_version": __version__,
        "trained_at": utc_now() if trained_at == "now" else trained_at,
        "seed": seed,
        "training_data": {
            "sha256": training_data_sha256(traces, labels),
            "source": os.path.basename(source) if source else None,
            "n_traces": len(traces),
            "n_questions": len(set(question_groups(traces))),
            "n_labels": len(labels),
            "n_train_steps": n_labels,
            "class_counts": {k: m.class_counts for k, m in sorted(model.fields.items())},
        },
        "hyperparameters": dict(
            PARAMS,
            class_weight="balanced",
            classifier="LogisticRegression",
            text="TF-IDF word 1-2-grams, sublinear tf, l2",
            trees={
                f"{k}.{f}": dict(
                    TREE_PARAMS,
                    classifier="HistGradientBoostingClassifier on the numeric scores",
                    combined="mean of its probability and the logistic regression's",
                )
                for k, f in sorted(TREE_FIELDS)
            },
            decision_threshold={
                f"{k}.{f}": (
                    f"probability threshold matching the training class shares, from {INNER_SPLITS}-fold inner "
                    "cross-validation grouped by question on the training data (prior matching)"
                )
                for k, f in sorted(CALIBRATED)
            },
        ),
        "unsupported": dict(model.unsupported),
        "feature_sets": [LEXICAL, *([WITH_MINILM] if model.embed_fields else [])],
        "embedder": model.embedder,
        "cv": cv,
        "note": CARD_NOTE,
    }
    return model
