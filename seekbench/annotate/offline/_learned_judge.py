"""The ``learned`` judge: labels steps with a :class:`._learned.LearnedModel` (features and fitting there)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ._context import StepView
from ._embed import Encoder, minilm_encoder
from ._judge import Decision, OfflineJudge
from ._learned import LEXICAL, WITH_MINILM, LearnedModel, add_embedding_scores, view_inputs


class LearnedJudge(OfflineJudge):
    """Labels steps with a :class:`LearnedModel`.

    Parameters
    ----------
    model : LearnedModel
    name : str, default "learned"
    version : str, default "1"
    encoder : callable, "auto" or None, default "auto"
        The embedder for the model's embedding variant: ``"auto"`` uses MiniLM when the
        ``local-embed`` extra is installed; None never embeds. A model without an embedding
        variant never embeds either. :attr:`features` says which feature set labels the steps;
        a field the embedding variant has no classifier for (:data:`._learned.LEXICAL_ONLY_FIELDS`)
        is labeled by the lexical one, and its labels' ``heuristic`` says so.
    """

    kind = "learned"

    def __init__(
        self,
        model: LearnedModel,
        name: str = "learned",
        *,
        version: str = "1",
        encoder: Encoder | None | Literal["auto"] = "auto",
    ) -> None:
        super().__init__(name, version=version)
        self.model = model
        if model.embed_fields and encoder == "auto":
            encoder = minilm_encoder()
        self._encoder = encoder if model.embed_fields and callable(encoder) else None
        #: The feature set the labels come from: "lexical" or "lexical+minilm".
        self.features = WITH_MINILM if self._encoder is not None else LEXICAL
        suffix = "+minilm" if self._encoder is not None else ""
        self._model_id = f"learned@{self.version}:{model.sha256[:12]}{suffix}"

    @property
    def model_id(self) -> str:
        return self._model_id

    def label_views(self, views_per_trace: list[list[StepView]], *, rater: str) -> list[dict]:
        if self._encoder is not None:
            add_embedding_scores(views_per_trace, self._encoder)
        return super().label_views(views_per_trace, rater=rater)

    def _decide(self, kind: str, field: str, views: Sequence[StepView]) -> list[Decision]:
        key = LearnedModel.key(kind, field)
        m = self.model.embed_fields.get(key) if self._encoder is not None else None
        # Fields without an embedding variant (LEXICAL_ONLY_FIELDS) keep the lexical classifier.
        m = m or self.model.fields.get(key)
        if m is None:
            reason = self.model.unsupported.get(key, f"the model has no classifier for {field} on {kind} steps")
            return [Decision(None, reason=reason) for _ in views]
        todo = [i for i, v in enumerate(views) if not v.is_empty]
        predicted: dict[int, str] = {}
        if todo:
            texts, scores = view_inputs([views[i] for i in todo], m.score_names)
            predicted = dict(zip(todo, m.predict(texts, scores), strict=True))
        method = "logistic-regression" if m.trees is None else "logistic-regression+boosted-trees"
        plain = m.feature_set == LEXICAL and self._encoder is None
        basis = f"{method}:{key}" + ("" if plain else f" ({m.feature_set})")
        return [
            Decision(None, reason=f"{kind} step has no text to judge")
            if v.is_empty
            else Decision(predicted[i], basis=basis)
            for i, v in enumerate(views)
        ]
