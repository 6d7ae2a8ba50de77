"""Training a learned judge with grouped-CV scores in its model card, and the card as Markdown."""

from __future__ import annotations

from ..annotate.offline import CARD_NOTE, LabelMap, LearnedModel, fit_with_card
from ._judge_eval import cross_validate_learned, format_number


def train_learned_model(
    traces: list[dict],
    labels: LabelMap,
    *,
    seed: int = 0,
    n_splits: int = 5,
    source: str | None = None,
    cv: bool = True,
) -> LearnedModel:
    """Fit the learned judge on all labeled traces and describe it in a model card.

    Parameters
    ----------
    traces, labels, seed, source :
        Passed to :func:`seekbench.annotate.offline.fit_with_card` (``seed`` also seeds the CV).
    n_splits : int, default 5
        Folds of the grouped cross-validation reported in the card.
    cv : bool, default True
        Run the grouped cross-validation for the card (skipped: ``card["cv"]`` is None).

    Returns
    -------
    LearnedModel
        Classifiers fitted on every labeled step, with ``card`` filled in.
    """
    result = cross_validate_learned(traces, labels, n_splits=n_splits, seed=seed) if cv else None
    card_cv = (
        None
        if result is None
        else {
            "method": f"GroupKFold(n_splits={len(result.folds)}) on the question; pooled out-of-fold labels",
            "n_splits": len(result.folds),
            "per_field": result.summary(),
        }
    )
    return fit_with_card(traces, labels, seed=seed, source=source, cv=card_cv)


def model_card_markdown(model: LearnedModel) -> str:
    """The model card as Markdown (written next to the model file by ``seekbench judge train``)."""
    c = model.card
    data = c.get("training_data") or {}
    lines = [
        "# Model card: seekbench learned judge",
        "",
        f"- trained: {c.get('trained_at')} with seekbench {c.get('seekbench_version')}, seed {c.get('seed')}",
        f"- training data: {data.get('source') or 'in-memory traces'}; content sha256 `{data.get('sha256')}` "
        "(the traces without file locations, plus the labels used)",
        f"- {data.get('n_traces')} traces, {data.get('n_questions')} questions, {data.get('n_labels')} labels",
        f"- classifiers: {', '.join(sorted(model.fields)) or 'none'}",
    ]
    for key, reason in sorted((c.get("unsupported") or {}).items()):
        lines.append(f"- not labeled: `{key}`: {reason}")
    cv = c.get("cv")
    if cv:
        lines += [
            "",
            f"## Agreement with the training labels under {cv['method']}",
            "",
            "| field | n | accuracy | Cohen's kappa |",
            "|---|---:|---:|---:|",
        ]
        for row, r in cv["per_field"].items():
            lines.append(f"| {row} | {r['n']} | {format_number(r['accuracy'])} | {format_number(r['kappa'])} |")
    lines += ["", c.get("note", CARD_NOTE), ""]
    return "\n".join(lines)
