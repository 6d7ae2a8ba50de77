"""Training a learned judge with grouped-CV scores in its model card, and the card as Markdown."""

from __future__ import annotations

from collections.abc import Callable

from ..annotate.offline import CARD_NOTE, LabelMap, LearnedModel, fit_with_card, trace_views
from ._judge_eval import cross_validate_learned, format_number


def train_learned_model(
    traces: list[dict],
    labels: LabelMap,
    *,
    seed: int = 0,
    n_splits: int = 5,
    source: str | None = None,
    cv: bool = True,
    encoder: Callable | None = None,
    trained_at: str | None = "now",
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
    encoder : callable, optional
        An embedder: fit (and cross-validate) the embedding variant too; the card's CV section is
        then the embedding variant's.
    trained_at : str or None, default "now"
        Passed to :func:`seekbench.annotate.offline.fit_with_card`.

    Returns
    -------
    LearnedModel
        Classifiers fitted on every labeled step, with ``card`` filled in.
    """
    views = trace_views(traces)
    result = (
        cross_validate_learned(traces, labels, n_splits=n_splits, seed=seed, encoder=encoder, views=views)
        if cv
        else None
    )
    card_cv = (
        None
        if result is None
        else {
            "method": f"GroupKFold(n_splits={len(result.folds)}) on the question; pooled out-of-fold labels",
            "n_splits": len(result.folds),
            "per_field": result.summary(),
            "features": "lexical+minilm" if encoder is not None else "lexical",
        }
    )
    return fit_with_card(
        traces, labels, seed=seed, source=source, cv=card_cv, encoder=encoder, views=views, trained_at=trained_at
    )


def model_card_markdown(model: LearnedModel) -> str:
    """The model card as Markdown (written next to the model file by ``seekbench judge train``)."""
    c = model.card
    data = c.get("training_data") or {}
    lines = [
        "# Model card: seekbench learned judge",
        "",
        f"- trained: {c.get('trained_at') or 'time not recorded (reproducible build)'} with seekbench "
        f"{c.get('seekbench_version')}, seed {c.get('seed')}",
        f"- training data: {data.get('source') or 'in-memory traces'}; content sha256 `{data.get('sha256')}` "
        "(the traces without file locations, plus the labels used)",
        f"- {data.get('n_traces')} traces, {data.get('n_questions')} questions, {data.get('n_labels')} labels",
        f"- classifiers: {', '.join(sorted(model.fields)) or 'none'}",
    ]
    if model.embed_fields:
        lines.append(
            f"- feature sets: lexical, and lexical + {model.embedder} similarities (used when the "
            "`local-embed` extra is installed)"
        )
        lexical_only = sorted(set(model.fields) - set(model.embed_fields))
        if lexical_only:
            lines.append(
                f"- no embedding variant (labeled by the lexical classifier in both feature sets): "
                f"{', '.join(f'`{k}`' for k in lexical_only)}"
            )
    for table, label in ((model.fields, "lexical"), (model.embed_fields, "with embeddings")):
        for key, m in sorted(table.items()):
            if m.trees is not None:
                lines.append(
                    f"- `{key}` ({label}): probability of {m.classes[1]} = mean of the logistic regression's and "
                    f"that of {len(m.trees['trees'])} boosted trees on its {len(m.score_names)} numeric scores"
                )
            if m.threshold is not None:
                lines.append(
                    f"- `{key}` ({label}): predicts {m.classes[1]} when its probability is at least "
                    f"{m.threshold:.4f} (prior-matched by inner cross-validation grouped by question)"
                )
    if data.get("license"):
        lines.append(f"- training data license: {data['license']}")
    for key, reason in sorted((c.get("unsupported") or {}).items()):
        lines.append(f"- not labeled: `{key}`: {reason}")
    cv = c.get("cv")
    if cv:
        # One table per feature set (a model trained with an embedder has two), else the one set.
        sets = cv.get("per_feature_set") or {cv.get("features", "lexical"): cv["per_field"]}
        for features, per_field in sets.items():
            lines += [
                "",
                f"## Agreement with the training labels under {cv['method']} ({features} features)",
                "",
                "| field | n | accuracy | Cohen's kappa |",
                "|---|---:|---:|---:|",
            ]
            for row, r in per_field.items():
                lines.append(f"| {row} | {r['n']} | {format_number(r['accuracy'])} | {format_number(r['kappa'])} |")
            rqi = (cv.get("rqi") or {}).get(features)
            if rqi:  # the training script adds RQI per agent from the same out-of-fold labels
                lines += [
                    "",
                    "RQI per agent (share of grounded reasoning, spec section 3), humans against the "
                    "out-of-fold labels:",
                    "",
                    "| agent | humans | judge | difference |",
                    "|---|---:|---:|---:|",
                ]
                lines += [
                    f"| {r['agent']} | {format_number(r['reference'])} | {format_number(r['judge'])} | "
                    f"{r['judge'] - r['reference']:+.3f} |"
                    for r in rqi
                ]
                worst = max(abs(r["judge"] - r["reference"]) for r in rqi)
                lines.append(f"\nLargest difference: {worst:.3f}.")
    lines += ["", c.get("note", CARD_NOTE), ""]
    return "\n".join(lines)
