"""Training a learned judge with its model card (data hash, n, seed, grouped-CV scores)."""

from __future__ import annotations

import os

from ..._version import __version__
from ...llm import utc_now
from ._evaluate import cross_validate_learned, format_number
from ._human import LabelMap, question_groups, training_data_sha256
from ._learned import FORMAT, PARAMS, LearnedModel, fit_learned_model

CARD_NOTE = ("Quality is whatever grouped cross-validation measured (train and test folds never share a "
             "question or a trace); hyperparameters are fixed in advance and nothing was tuned on a test "
             "split. A model only knows the agents, datasets and annotators of its training data.")


def train_learned_model(traces: list[dict], labels: LabelMap, *, seed: int = 0, n_splits: int = 5,
                        source: str | None = None, cv: bool = True) -> LearnedModel:
    """Fit the learned judge on all labeled traces and describe it in a model card.

    Parameters
    ----------
    traces : list of dict
        Canonical traces.
    labels : dict
        Their human labels, ``(trace_id, step, field) -> value``.
    seed : int, default 0
        ``random_state`` of the classifiers (recorded in the card).
    n_splits : int, default 5
        Folds of the grouped cross-validation reported in the card.
    source : str, optional
        Where the training data came from (a file name, for the card).
    cv : bool, default True
        Run the grouped cross-validation for the card (skipped: ``card["cv"]`` is None).

    Returns
    -------
    LearnedModel
        Classifiers fitted on every labeled step, with ``card`` filled in.
    """
    model = fit_learned_model(traces, labels, seed=seed)
    result = cross_validate_learned(traces, labels, n_splits=n_splits, seed=seed) if cv else None
    n_labels = {LearnedModel.key(m.kind, m.field): m.n_train for m in model.fields.values()}
    model.card = {
        "judge": "learned",
        "format": FORMAT,
        "seekbench_version": __version__,
        "trained_at": utc_now(),
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
        "hyperparameters": dict(PARAMS, class_weight="balanced", classifier="LogisticRegression",
                                text="TF-IDF word 1-2-grams, sublinear tf, l2"),
        "unsupported": dict(model.unsupported),
        "cv": None if result is None else {
            "method": f"GroupKFold(n_splits={len(result.folds)}) on the question; pooled out-of-fold labels",
            "n_splits": len(result.folds),
            "per_field": result.summary(),
        },
        "note": CARD_NOTE,
    }
    return model


def model_card_markdown(model: LearnedModel) -> str:
    """The model card as Markdown (written next to the model file by ``seekbench judge train``)."""
    c = model.card
    data = c.get("training_data") or {}
    lines = ["# Model card: seekbench learned judge", "",
             f"- trained: {c.get('trained_at')} with seekbench {c.get('seekbench_version')}, seed {c.get('seed')}",
             f"- training data: {data.get('source') or 'in-memory traces'}; content sha256 `{data.get('sha256')}` "
             "(the traces without file locations, plus the labels used)",
             f"- {data.get('n_traces')} traces, {data.get('n_questions')} questions, {data.get('n_labels')} labels",
             f"- classifiers: {', '.join(sorted(model.fields)) or 'none'}"]
    for key, reason in sorted((c.get("unsupported") or {}).items()):
        lines.append(f"- not labeled: `{key}`: {reason}")
    cv = c.get("cv")
    if cv:
        lines += ["", f"## Agreement with the training labels under {cv['method']}", "",
                  "| field | n | accuracy | Cohen's kappa |", "|---|---:|---:|---:|"]
        for row, r in cv["per_field"].items():
            lines.append(f"| {row} | {r['n']} | {format_number(r['accuracy'])} | {format_number(r['kappa'])} |")
    lines += ["", c.get("note", CARD_NOTE), ""]
    return "\n".join(lines)
