"""``seekbench env run`` and ``seekbench env theta``: outputs, exit codes, one-line user errors."""

from __future__ import annotations

import json

from _env_helpers import make_document

from seekbench.env import write_corpus
from seekbench.testing import OpenAIServer
from seekbench.traces import read_traces


def test_env_run_on_the_default_corpus(env_cli, tmp_path):
    out = tmp_path / "episodes.jsonl"
    r = env_cli("env", "run", "--corpus", "default", "--agent", "keyphrase,sentence", "--belief", "deduplicated",
                "--belief", "oracle", "--steps", "3", "--limit", "2", "--seeds", "2", "-o", out)
    assert r.code == 0, r
    traces = read_traces(out).traces
    assert len(traces) == 2 * 2 * 2 * 2
    assert {t["env"]["seed"] for t in traces} == {0, 1} and all(t["dataset"] == "default" for t in traces)
    assert "16 episodes, 2 documents, embedder tfidf (theta 0.15)" in r.out
    assert "keyphrase" in r.out and "oracle" in r.out and f"wrote {out}" in r.out


def test_env_run_corpus_file_documents_and_theta(env_cli, tmp_path):
    corpus = tmp_path / "c.jsonl"
    write_corpus(corpus, [make_document("d0"), make_document("d1")])
    out = tmp_path / "e.jsonl"
    r = env_cli("env", "run", "--corpus", corpus, "--agent", "keyphrase", "--documents", "d1", "--theta", "0.05",
                "--steps", "2", "-o", out)
    assert r.code == 0, r
    (t,) = read_traces(out).traces
    assert t["env"]["document_id"] == "d1" and t["env"]["theta"] == 0.05 and t["env"]["belief"] == "deduplicated"


def test_env_run_user_errors_are_one_line(env_cli, tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"doc_id": "x"}\n')
    cases = [
        (("--corpus", corpus, "--agent", "keyphrase"), "c.jsonl:1"),
        (("--corpus", "default", "--agent", "wizard"), "unknown agent 'wizard'"),
        (("--corpus", "default", "--agent", "keyphrase", "--belief", "summary"), "unknown belief 'summary'"),
        (("--corpus", "default", "--agent", "keyphrase", "--embedder", "bert"), "unknown embedder 'bert'"),
        (("--corpus", "default", "--agent", "keyphrase", "--documents", "nope"), "no document 'nope'"),
        (("--corpus", tmp_path / "missing.jsonl", "--agent", "keyphrase"), "file not found"),
    ]
    for args, fragment in cases:
        r = env_cli("env", "run", *args, "-o", tmp_path / "o.jsonl")
        assert r.code == 2 and fragment in r.err and r.err.count("\n") == 1, (args, r)
        assert "Traceback" not in r.err


def test_env_run_llm_agent(env_cli, tmp_path):
    def policy(request):
        return json.dumps({"reasoning": "r", "queries": ["cats hunting mice"], "self_estimate": 0.5})

    corpus = tmp_path / "c.jsonl"
    write_corpus(corpus, [make_document()])
    with OpenAIServer(policy=policy) as srv:
        r = env_cli("env", "run", "--corpus", corpus, "--agent", "llm:seekbench-mock", "--base-url", srv.base_url,
                    "--max-tokens-param", "max_tokens", "--cache", tmp_path / "cache.sqlite", "--steps", "2",
                    "--theta", "0.1", "-o", tmp_path / "e.jsonl")
    assert r.code == 0, r
    (t,) = read_traces(tmp_path / "e.jsonl").traces
    assert t["agent"] == "llm:seekbench-mock" and t["env"]["final_completeness"] > 0


def test_env_theta(env_cli):
    r = env_cli("env", "theta", "--corpus", "default", "--limit", "3", "--steps", "3", "--thetas", "0.05,0.15,0.5")
    assert r.code == 0, r
    lines = [ln for ln in r.out.splitlines() if ln.strip()[:1].isdigit()]
    values = [float(ln.split()[1]) for ln in lines]
    assert len(values) == 3 and values == sorted(values, reverse=True)  # higher theta, lower completeness
    assert "<- default" in lines[1]
    r = env_cli("env", "theta", "--corpus", "default", "--limit", "2", "--steps", "2", "--json")
    data = json.loads(r.out)
    assert data["embedder"] == "tfidf" and data["default_theta"] == 0.15 and len(data["rows"]) == 7
    r = env_cli("env", "theta", "--corpus", "default", "--thetas", "0.1,high")
    assert r.code == 2 and "--thetas" in r.err


def test_conformal_subcommand_is_registered():
    """``synth-beliefs`` comes from seekbench.env.conformal.register_env_cli, imported directly (it always exists)."""
    import argparse

    from seekbench.cli import _env

    parser = argparse.ArgumentParser()
    _env.register(parser.add_subparsers(dest="command"))
    env_sub = next(a for a in parser._subparsers._group_actions[0].choices["env"]._actions
                   if isinstance(a, argparse._SubParsersAction))
    assert "synth-beliefs" in env_sub.choices


def test_env_theta_llm_agent_dead_endpoint_says_what_failed(env_cli, tmp_path):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    r = env_cli("env", "theta", "--corpus", "default", "--limit", "2", "--steps", "2", "--thetas", "0.1,0.2",
                "--agent", "llm:some-model", "--base-url", dead, "--cache", tmp_path / "c.sqlite")
    assert r.code == 3, r
    # 2 documents x 2 thetas; an episode id names the document, so the count is of documents. The sweep
    # writes no file and prints no table, and the message says no more than that.
    assert "2 of 2 documents failed" in r.err and "no table is printed" in r.err, r
    assert "written" not in r.err and r.out == ""
    assert "cannot connect after 2 attempts" in r.err and "Traceback" not in r.err
