"""The embedded default corpus: built offline at run time from text installed with Python."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from seekbench.env import QualityFilter, default_corpus, goal_passages, validate_document
from seekbench.env._default_corpus import parse_pydoc_topic

REPO = Path(__file__).resolve().parents[2]


def test_builds_offline_with_topics(monkeypatch):
    def no_network(*a, **k):
        raise AssertionError("the default corpus must not touch the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    build = default_corpus()
    docs = build.documents
    assert 20 <= len(docs) <= 30, build.summary()
    assert len({d["topic"] for d in docs}) >= 6
    assert len({d["doc_id"] for d in docs}) == len(docs)
    for d in docs:
        validate_document(d)
        ids = [p["id"] for p in goal_passages(d)]
        assert ids == [f"p{i}" for i in range(len(ids))]
        assert 8 <= len(ids) <= 60
        assert d["abstract"] and "Python " in d["source"]
        assert QualityFilter(min_passages=8, max_short_ratio=0.2).reason(d) is None


def test_deterministic(default_docs):
    again = default_corpus().documents
    assert json.dumps(again, sort_keys=True) == json.dumps(default_docs, sort_keys=True)


def test_passages_are_prose_not_code(default_docs):
    texts = [p["text"] for d in default_docs for p in goal_passages(d)]
    assert not any(">>>" in t or "::=" in t for t in texts)
    assert sum(len(t) < 192 for t in texts) / len(texts) < 0.05


def test_no_corpus_text_is_committed(default_docs):
    """No passage of the built corpus appears in the repository's source (the text is built, never stored)."""
    sources = "\n".join(p.read_text(encoding="utf-8", errors="replace")
                        for p in (REPO / "seekbench").rglob("*.py"))
    sample = [goal_passages(d)[len(goal_passages(d)) // 2]["text"][:80] for d in default_docs]
    assert not [s for s in sample if s in sources]


def test_parse_pydoc_topic_headings():
    text = ("Title\n*****\n\nIntro paragraph that is long enough to count as prose here.\n\n"
            "Part\n====\n\nA sentence of prose in the part section goes here.\n\n   code_block()\n")
    title, intro, sections = parse_pydoc_topic(text)
    assert title == "Title"
    assert intro == ["Intro paragraph that is long enough to count as prose here."]
    assert sections == [("Part", ["A sentence of prose in the part section goes here."])]


def test_stripped_docstrings_still_build_or_fail_clearly():
    code = "from seekbench.env import default_corpus; b = default_corpus(); print(len(b.documents))"
    proc = subprocess.run([sys.executable, "-OO", "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO), "PATH": ""}, timeout=120, check=False)
    if proc.returncode == 0:
        assert int(proc.stdout) >= 4  # the pydoc documents remain
    else:
        assert "docstrings stripped" in proc.stderr or "-OO" in proc.stderr


@pytest.mark.parametrize("doc_id", ["pydoc/compound", "module/json"])
def test_known_documents_present(default_docs, doc_id):
    assert doc_id in {d["doc_id"] for d in default_docs}
