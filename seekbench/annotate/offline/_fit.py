"""Fitting a learned judge: one classifier per (step kind, field), and decision thresholds by inner CV.

Balanced class weights make a classifier label the minority class more often than the
annotators did, which inflates a step-share metric such as RQI (the share of grounded
reasoning). For the fields of :data:`CALIBRATED` the decision threshold is instead chosen
so that the classifier labels as many steps with each class as the training labels have
(prior matching), on probabilities the classifier gives to steps it did not see: an inner
cross-validation grouped by question, inside the training data only. A cross-validation of
the whole judge (:func:`seekbench.analysis.cross_validate_learned`) calls
:func:`fit_learned_model` on each training fold, so the thresholds are nested: never chosen
on a test fold.
"""

from __future__ import annotations

import numpy as np

from ._context import StepView, trace_views
from ._embed import EMBEDDER_NAME, Encoder
from ._human import LabelMap, question_groups
from ._judge import applicable_fields
from ._learned import (
    LEXICAL,
    LEXICAL_ONLY_FIELDS,
    WITH_MINILM,
    FieldModel,
    LearnedModel,
    add_embedding_scores,
    fit_field_model,
    training_examples,
    view_inputs,
)
from ._scores import SCORE_NAMES

#: (kind, field) pairs whose binary decision threshold is prior-matched by inner CV.
CALIBRATED: frozenset[tuple[str, str]] = frozenset({("reasoning", "grounding")})

#: Inner cross-validation folds (grouped by question) for the thresholds; fixed in advance.
INNER_SPLITS = 5


def prior_matched_threshold(
    kind: str,
    field_name: str,
    views: list[StepView],
    ys: list[str],
    groups: list[str],
    *,
    seed: int = 0,
    features: str = LEXICAL,
    n_splits: int = INNER_SPLITS,
) -> float | None:
    """The probability threshold of ``classes[1]`` that labels the training share of it, from inner CV.

    Parameters
    ----------
    kind, field_name, views, ys, seed, features :
        As for :func:`._learned.fit_field_model` (``ys``: two classes).
    groups : list of str
        The question group of each step (:func:`._human.question_groups` of its trace).
    n_splits : int
        Inner ``GroupKFold`` folds (fewer when there are fewer groups).

    Returns
    -------
    float or None
        The ``1 - share`` quantile of the out-of-fold probabilities of ``classes[1]``
        (sorted class names; :meth:`._learned.FieldModel.proba`, trees included), where
        ``share`` is its share of ``ys``; None (the default 0.5 decision) when there are
        fewer than two groups or an inner training fold has a single class.
    """
    from sklearn.model_selection import GroupKFold

    classes = sorted(set(ys))
    k = min(n_splits, len(set(groups)))
    if len(classes) != 2 or k < 2:
        return None
    y = np.asarray(ys)
    proba = np.zeros(len(ys))
    for tr, te in GroupKFold(n_splits=k).split(np.zeros(len(ys)), groups=groups):
        if len(set(y[tr])) < 2:
            return None
        m = fit_field_model(kind, field_name, [views[i] for i in tr], list(y[tr]), seed=seed, features=features)
        texts, scores = view_inputs([views[i] for i in te], m.score_names)
        proba[te] = m.proba(texts, scores)
    share = float(np.mean(y == classes[1]))
    # Strictly inside (0, 1): a model file's threshold is checked to be there.
    return float(np.clip(np.quantile(proba, 1.0 - share), 1e-6, 1.0 - 1e-6))


def _fit(
    kind: str, f: str, views: list[StepView], ys: list[str], groups: list[str], seed: int, features: str
) -> FieldModel:
    m = fit_field_model(kind, f, views, ys, seed=seed, features=features)
    if (kind, f) in CALIBRATED:
        m.threshold = prior_matched_threshold(kind, f, views, ys, groups, seed=seed, features=features)
    return m


def fit_learned_model(
    traces: list[dict],
    labels: LabelMap,
    *,
    seed: int = 0,
    views: list[list[StepView]] | None = None,
    encoder: Encoder | None = None,
) -> LearnedModel:
    """Fit a classifier per (kind, field) with at least two classes among the labeled steps.

    Parameters
    ----------
    traces : list of dict
        Canonical traces.
    labels : dict
        Reference labels, ``(trace_id, step, field) -> value`` (see :func:`._human.human_labels`).
    seed : int
        ``random_state`` of each classifier.
    views : list of list of StepView, optional
        ``_context.trace_views(traces)`` when already computed (embedding scores already in
        their caches are reused).
    encoder : callable, optional
        An embedder (:func:`._embed.minilm_encoder`): also fit the embedding variant (of every
        field but those of :data:`._learned.LEXICAL_ONLY_FIELDS`).

    Returns
    -------
    LearnedModel
        Without a card (:func:`fit_with_card` adds one; :func:`seekbench.analysis.train_learned_model`
        also its grouped-CV scores). The fields of :data:`CALIBRATED` carry an inner-CV threshold.
    """
    fields: dict[str, FieldModel] = {}
    embed_fields: dict[str, FieldModel] = {}
    unsupported: dict[str, str] = {}
    views = trace_views(traces) if views is None else views
    if encoder is not None:
        add_embedding_scores(views, encoder)
    group_of = dict(zip((str(t["trace_id"]) for t in traces), question_groups(traces), strict=True))
    examples = training_examples(views, labels)
    for kind in SCORE_NAMES:
        for f in applicable_fields(kind):
            key = LearnedModel.key(kind, f)
            field_views, ys = examples.get((kind, f), ([], []))
            classes = sorted(set(ys))
            if len(classes) < 2:
                seen = f"only {classes[0]!r}" if classes else "none"
                unsupported[key] = (
                    f"no learned classifier for {f} on {kind} steps: the training labels "
                    f"have fewer than two classes ({len(ys)} labeled, {seen})"
                )
                continue
            groups = [group_of[str(v.trace_id)] for v in field_views]
            fields[key] = _fit(kind, f, field_views, ys, groups, seed, LEXICAL)
            if encoder is not None and (kind, f) not in LEXICAL_ONLY_FIELDS:
                embed_fields[key] = _fit(kind, f, field_views, ys, groups, seed, WITH_MINILM)
    return LearnedModel(
        fields=fields,
        unsupported=unsupported,
        embed_fields=embed_fields,
        embedder=EMBEDDER_NAME if encoder is not None else None,
    )
