"""The ``learned`` judge: one logistic regression per (step kind, field), trained on human labels.

Features of a step: TF-IDF of its text (reasoning text, query, or its
documents; word 1-2-grams, sublinear tf) next to the standardised lexical
scores of :mod:`._scores` (overlaps with earlier evidence and with the previous
query, cue-phrase counts, position, turn); the grounding of reasoning steps also
reads the evidence-detail scores of :mod:`._evidence_scores` (single documents,
numbers, names, bigrams, question coverage of single documents, and the same
scores of the trace's other reasoning steps). Each classifier is scikit-learn's
``LogisticRegression(class_weight="balanced")``; the grounding of reasoning steps
averages its probability with that of boosted trees on the numeric scores
(:data:`TREE_FIELDS`, :mod:`._trees`); a binary one may carry a decision
threshold chosen by inner cross-validation (:mod:`._fit`).

Models are saved as plain JSON (vocabulary, idf, scaler, coefficients and a
model card; trees as node arrays), never pickle, so loading a model file cannot
run code. Prediction recomputes the features from the JSON with numpy and scipy
(and walks the trees with numpy), the same code path right after training and
after loading.

With an embedder (the ``local-embed`` extra, :mod:`._embed`), a second set of
classifiers is fitted on the same features plus the embedding similarities of
:data:`._embed.EMBED_SCORE_NAMES` (not for the fields of :data:`LEXICAL_ONLY_FIELDS`,
which keep their lexical classifier). A model file holds both; the judge uses the
embedding variant when the extra is installed and the lexical one otherwise,
and says which in every label's provenance (``model`` ends in ``+minilm`` and
``heuristic`` names the feature set).

``search_type`` models are trained only on the searches the rules do not
decide (not first, not a repeat), since only those reach the model. A field
whose training labels have fewer than two classes gets no classifier; its
steps are then unscored with that reason (in the SeekBench human labels,
search-step grounding is only ever ``Grounded``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TypedDict

import numpy as np
import scipy.sparse as sp

from ..._errors import UserInputError
from ...traces import LABEL_VALUES
from ._context import StepView
from ._embed import EMBED_SCORE_NAMES, Encoder, embedding_scores
from ._evidence_scores import CONTEXT_SCORE_NAMES, EVIDENCE_SCORE_NAMES, grounding_scores
from ._human import LabelMap
from ._judge import applicable_fields, rule_search_type
from ._scores import SCORE_NAMES, step_scores
from ._trees import check_trees, fit_trees, tree_proba

FORMAT = "seekbench.offline.learned"
FORMAT_VERSION = 4
#: Model files this version reads (1: no embedding variant; 2: no decision thresholds; 3: no trees).
READ_VERSIONS = (1, 2, 3, 4)

#: Extra score columns of one (kind, field) classifier: grounding of reasoning reads single documents.
FIELD_SCORE_NAMES: dict[tuple[str, str], tuple[str, ...]] = {
    ("reasoning", "grounding"): EVIDENCE_SCORE_NAMES + CONTEXT_SCORE_NAMES
}

#: (kind, field) classifiers that average the logistic regression with boosted trees on the scores (:mod:`._trees`).
TREE_FIELDS: frozenset[tuple[str, str]] = frozenset({("reasoning", "grounding")})

#: (kind, field) classifiers with no embedding variant: with the ``local-embed`` extra the judge labels
#: them with the lexical classifier. On the SeekBench human labels (grouped cross-validation, seven fold
#: assignments, ``scripts/bench/learned_grounding_variants.py``) the MiniLM similarities lowered the kappa
#: of reasoning grounding (0.485 against 0.508 in the mean) and moved one agent's RQI further from the
#: humans' (issue 30).
LEXICAL_ONLY_FIELDS: frozenset[tuple[str, str]] = frozenset({("reasoning", "grounding")})

#: Feature sets: the lexical ones always; the MiniLM similarities with the ``local-embed`` extra.
LEXICAL = "lexical"
WITH_MINILM = "lexical+minilm"


class _Params(TypedDict):
    ngram_max: int
    min_df: int
    max_features: int
    C: float
    max_iter: int


#: Hyperparameters (fixed; not searched on any split).
PARAMS: _Params = {"ngram_max": 2, "min_df": 2, "max_features": 2000, "C": 1.0, "max_iter": 5000}


@dataclass
class FieldModel:
    """A fitted classifier for one (step kind, field), in a JSON-safe form."""

    kind: str
    field: str
    classes: list[str]
    vocabulary: list[str]
    idf: list[float]
    ngram_max: int
    score_names: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[list[float]]
    intercept: list[float]
    n_train: int
    class_counts: dict[str, int] = dataclasses.field(default_factory=dict)  # `field` is an attribute here
    feature_set: str = LEXICAL
    #: Binary classifiers: predict ``classes[1]`` when its probability is at least this (None: 0.5,
    #: i.e. ``LogisticRegression.predict``); chosen by inner cross-validation (:mod:`._fit`).
    threshold: float | None = None
    #: Binary classifiers of :data:`TREE_FIELDS`: boosted trees on the raw scores (:func:`._trees.fit_trees`),
    #: whose probability is averaged with the logistic regression's.
    trees: dict | None = None

    def features(self, texts: Sequence[str], scores: np.ndarray) -> sp.csr_matrix:
        """The feature matrix: l2-normalised sublinear TF-IDF of ``texts`` then standardised ``scores``."""
        from sklearn.feature_extraction.text import CountVectorizer

        n = len(texts)
        if self.vocabulary:
            vec = CountVectorizer(
                vocabulary={t: i for i, t in enumerate(self.vocabulary)},
                ngram_range=(1, self.ngram_max),
                lowercase=True,
            )
            tf = vec.transform(texts).astype(np.float64).tocsr()
            tf.data = 1.0 + np.log(tf.data)
            tf = tf @ sp.diags(np.asarray(self.idf))
            norms = np.sqrt(np.asarray(tf.multiply(tf).sum(axis=1)).ravel())
            norms[norms == 0] = 1.0
            tf = sp.diags(1.0 / norms) @ tf
        else:
            tf = sp.csr_matrix((n, 0))
        num = (np.asarray(scores, dtype=np.float64).reshape(n, -1) - np.asarray(self.mean)) / np.asarray(self.scale)
        return sp.hstack([tf, sp.csr_matrix(num)], format="csr")

    def decision(self, texts: Sequence[str], scores: np.ndarray) -> np.ndarray:
        """The linear scores (``LogisticRegression.decision_function``): one column, or one per class."""
        return np.asarray(self.features(texts, scores) @ np.asarray(self.coef).T + np.asarray(self.intercept))

    def proba(self, texts: Sequence[str], scores: np.ndarray) -> np.ndarray:
        """A binary classifier's probability of ``classes[1]``: the regression's, averaged with the trees' if any."""
        p = 1.0 / (1.0 + np.exp(-self.decision(texts, scores).ravel()))
        if self.trees is not None:
            p = 0.5 * (p + tree_proba(self.trees, np.asarray(scores, dtype=np.float64).reshape(len(texts), -1)))
        return p

    def predict(self, texts: Sequence[str], scores: np.ndarray) -> list[str]:
        """Predicted labels: ``LogisticRegression.predict``, or :meth:`proba` against :attr:`threshold` (or 0.5)."""
        if len(self.classes) == 2:
            if self.threshold is None and self.trees is None:
                return [self.classes[int(v > 0)] for v in self.decision(texts, scores).ravel()]
            cut = 0.5 if self.threshold is None else self.threshold
            return [self.classes[int(v >= cut)] for v in self.proba(texts, scores)]
        return [self.classes[i] for i in self.decision(texts, scores).argmax(axis=1)]


def score_names(kind: str, features: str, field_name: str | None = None) -> list[str]:
    """Numeric feature columns of the ``field_name`` classifier for ``kind`` steps with feature set ``features``.

    The lexical scores of the kind, then the field's own scores (:data:`FIELD_SCORE_NAMES`), then
    the embedding similarities of the ``lexical+minilm`` feature set.
    """
    return (
        list(SCORE_NAMES[kind])
        + list(FIELD_SCORE_NAMES.get((kind, field_name or ""), ()))
        + (list(EMBED_SCORE_NAMES[kind]) if features == WITH_MINILM else [])
    )


def add_embedding_scores(views_per_trace: Sequence[Sequence[StepView]], encode: Encoder) -> None:
    """Store each step's embedding scores in ``view.cache["embed"]`` (traces already done are skipped)."""
    todo = [views for views in views_per_trace if views and "embed" not in views[0].cache]
    for views, scores in zip(todo, embedding_scores(todo, encode), strict=True):
        for v, sc in zip(views, scores, strict=True):
            v.cache["embed"] = sc


def _evidence(v: StepView) -> dict[str, float]:
    return grounding_scores(v) if v.kind == "reasoning" else {}


def view_inputs(views: Sequence[StepView], names: Sequence[str]) -> tuple[list[str], np.ndarray]:
    texts = [v.text for v in views]
    rows = []
    for v in views:
        sc = {**step_scores(v), **_evidence(v), **v.cache.get("embed", {})}
        rows.append([sc[n] for n in names])
    return texts, np.asarray(rows, dtype=np.float64).reshape(len(views), len(names))


def fit_field_model(
    kind: str, field_name: str, views: Sequence[StepView], y: Sequence[str], *, seed: int = 0, features: str = LEXICAL
) -> FieldModel:
    """Fit one classifier (see the module docstring). ``y`` must hold at least two classes."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    names = score_names(kind, features, field_name)
    texts, scores = view_inputs(views, names)
    min_df = PARAMS["min_df"] if len(texts) >= 20 else 1
    vec = TfidfVectorizer(
        ngram_range=(1, PARAMS["ngram_max"]),
        min_df=min_df,
        max_features=PARAMS["max_features"],
        sublinear_tf=True,
        lowercase=True,
    )
    try:
        tfidf = vec.fit_transform(texts)
        vocab = sorted(vec.vocabulary_, key=vec.vocabulary_.get)
        idf = vec.idf_.tolist()
    except ValueError:  # empty vocabulary: no usable words in the training texts
        tfidf, vocab, idf = sp.csr_matrix((len(texts), 0)), [], []
    scaler = StandardScaler().fit(scores)
    x = sp.hstack([tfidf, sp.csr_matrix(scaler.transform(scores))], format="csr")
    from threadpoolctl import threadpool_limits

    # Small problems: one BLAS thread is faster than many competing ones, and the result is the same.
    with threadpool_limits(limits=1):
        clf = LogisticRegression(
            C=PARAMS["C"], class_weight="balanced", max_iter=PARAMS["max_iter"], random_state=seed
        ).fit(x, list(y))
    counts = {c: int(sum(1 for v in y if v == c)) for c in clf.classes_}
    trees = None
    if (kind, field_name) in TREE_FIELDS and len(clf.classes_) == 2:
        trees = fit_trees(scores, np.asarray(y) == clf.classes_[1], seed=seed)
    return FieldModel(
        kind=kind,
        field=field_name,
        classes=[str(c) for c in clf.classes_],
        vocabulary=vocab,
        idf=idf,
        ngram_max=PARAMS["ngram_max"],
        score_names=names,
        mean=scaler.mean_.tolist(),
        scale=scaler.scale_.tolist(),
        coef=clf.coef_.tolist(),
        intercept=clf.intercept_.tolist(),
        n_train=len(y),
        class_counts=counts,
        feature_set=features,
        trees=trees,
    )


def training_examples(
    views_per_trace: list[list[StepView]], labels: LabelMap
) -> dict[tuple[str, str], tuple[list, list]]:
    """Labeled steps per (kind, field): ``(views, values)``; rule-decided searches left out of search_type."""
    out: dict[tuple[str, str], tuple[list, list]] = {}
    for views in views_per_trace:
        for view in views:
            for f in applicable_fields(view.kind):
                value = labels.get((view.trace_id, view.step, f))
                if value is None or view.is_empty:
                    continue
                if f == "search_type" and rule_search_type(view) is not None:
                    continue
                views, ys = out.setdefault((view.kind, f), ([], []))
                views.append(view)
                ys.append(value)
    return out


@dataclass
class LearnedModel:
    """The per-field classifiers of a learned judge, its card, and the fields it cannot label.

    ``fields`` use the lexical features; ``embed_fields`` (empty when trained without an
    embedder) the same plus the embedding similarities computed with ``embedder``.
    """

    fields: dict[str, FieldModel]
    unsupported: dict[str, str] = field(default_factory=dict)
    card: dict = field(default_factory=dict)
    embed_fields: dict[str, FieldModel] = field(default_factory=dict)
    embedder: str | None = None

    @staticmethod
    def key(kind: str, field_name: str) -> str:
        return f"{kind}.{field_name}"

    def to_dict(self) -> dict:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "card": self.card,
            "unsupported": self.unsupported,
            "fields": {k: asdict(m) for k, m in sorted(self.fields.items())},
            "embed_fields": {k: asdict(m) for k, m in sorted(self.embed_fields.items())},
            "embedder": self.embedder,
        }

    @property
    def sha256(self) -> str:
        """Hash of the classifiers (not the card), naming the model in label provenance."""

        # A lexical-only model keeps the hash it had before feature sets (and trees) existed.
        def plain(m: FieldModel, drop: tuple[str, ...]) -> dict:
            return {a: v for a, v in asdict(m).items() if a not in drop and not (a == "trees" and v is None)}

        parts: dict = {k: plain(m, ("feature_set",)) for k, m in sorted(self.fields.items())}
        if self.embed_fields:
            parts["embed"] = {k: plain(m, ()) for k, m in sorted(self.embed_fields.items())}
        body = json.dumps(parts, sort_keys=True)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()

    def save(self, path: str | os.PathLike) -> None:
        """Write the model as JSON (atomically)."""
        from ..._io import write_text

        write_text(path, json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":")) + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike) -> LearnedModel:
        """Read a model written by :meth:`save`. JSON only: loading never executes code from the file."""
        from ..._io import read_text

        file = str(path)
        try:
            obj = json.loads(read_text(path))
        except json.JSONDecodeError as e:
            raise UserInputError(
                f"not a learned-judge model (invalid JSON: {e.msg}); train one with `seekbench judge train`", file=file
            ) from e
        return cls.from_dict(obj, file=file)

    @classmethod
    def from_dict(cls, obj: object, *, file: str | None = None) -> LearnedModel:
        if not isinstance(obj, dict) or obj.get("format") != FORMAT:
            raise UserInputError(
                f"not a learned-judge model (expected format {FORMAT!r}); train one with `seekbench judge train`",
                file=file,
            )
        if obj.get("format_version") not in READ_VERSIONS:
            raise UserInputError(
                f"model format version {obj.get('format_version')!r} is not supported "
                f"(this seekbench reads {', '.join(map(str, READ_VERSIONS))}); retrain with `seekbench judge train`",
                file=file,
            )
        parsed: dict[str, dict[str, FieldModel]] = {"fields": {}, "embed_fields": {}}
        for part, want in (("fields", LEXICAL), ("embed_fields", WITH_MINILM)):
            for key, raw in (obj.get(part) or {}).items():
                try:
                    m = FieldModel(**raw)
                    if m.feature_set != want:
                        raise ValueError(f"features {m.feature_set!r} in {part}, expected {want!r}")
                    _check_shapes(m)
                except (TypeError, ValueError) as e:
                    raise UserInputError(f"model entry {key!r} is malformed ({e}); retrain the model", file=file) from e
                parsed[part][key] = m
        return cls(
            fields=parsed["fields"],
            unsupported=dict(obj.get("unsupported") or {}),
            card=dict(obj.get("card") or {}),
            embed_fields=parsed["embed_fields"],
            embedder=obj.get("embedder") if parsed["embed_fields"] else None,
        )


def _check_shapes(m: FieldModel) -> None:
    allowed = LABEL_VALUES.get(m.field, ())
    if m.kind not in SCORE_NAMES or not set(m.classes) <= set(allowed) or len(m.classes) < 2:
        raise ValueError(f"kind {m.kind!r}, field {m.field!r} or classes {m.classes!r} outside the ontology")
    # A subset, in any order: models trained before a score was added keep working.
    unknown = set(m.score_names) - set(score_names(m.kind, m.feature_set, m.field))
    if unknown:
        raise ValueError(f"unknown score names {sorted(unknown)}")
    if m.threshold is not None and (len(m.classes) != 2 or not 0.0 < m.threshold < 1.0):
        raise ValueError("a threshold needs a binary classifier and a value in (0, 1)")
    if m.trees is not None:
        if len(m.classes) != 2:
            raise ValueError("trees need a binary classifier")
        check_trees(m.trees, len(m.score_names))
    width = len(m.vocabulary) + len(m.score_names)
    rows = 1 if len(m.classes) == 2 else len(m.classes)
    if (
        len(m.idf) != len(m.vocabulary)
        or len(m.mean) != len(m.score_names)
        or len(m.scale) != len(m.score_names)
        or len(m.coef) != rows
        or any(len(r) != width for r in m.coef)
        or len(m.intercept) != rows
    ):
        raise ValueError("array shapes do not match")
    for name in ("coef", "intercept", "idf", "mean", "scale"):
        if not np.isfinite(np.asarray(getattr(m, name), dtype=float)).all():
            raise ValueError(f"non-finite values in {name}")
    if any(s <= 0 for s in m.scale):
        raise ValueError("scale must be positive")
