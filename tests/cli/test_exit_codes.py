"""Exit code 3 (done with failures) and the first server error in full, for every command that asks a model.

Issue 13: `annotate --judge local` against a dead endpoint retried every trace for a minute and exited 0 with
its error cut at "last error"; `env run --agent llm:...` against a dead endpoint printed `completeness 0.000`
and exited 0; `judge-answers` said "judged 190 answers" when it had decided none. Each case here runs the real
CLI against a real local server (or a closed port) and checks the exit code, the counts and the full error.
"""

from __future__ import annotations

import json

from seekbench.data import sample_traces_path
from seekbench.testing import OpenAIServer, PolicyError

#: A server message longer than anything the old summary showed (it cut errors at their first colon).
LONG = "the model refuses this request: " + "very " * 80 + "long reason, end of message"


def _reject(request):
    raise PolicyError(LONG, status=400)


def _first_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if "first error:" in ln]
    assert len(lines) == 1, err
    return lines[0]


def test_annotate_dead_endpoint_stops_at_once_with_exit_3(cli, tmp_path, dead_url):
    out = tmp_path / "labels.jsonl"
    r = cli("annotate", sample_traces_path(), "--judge", "local", "--base-url", dead_url, "-o", out,
            "--cache", tmp_path / "c.sqlite", "--no-progress", "--concurrency", "2")
    assert r.code == 3, r
    first = _first_error(r.err)
    # two connection attempts, not eight per trace; the endpoint and the cause are named
    assert "cannot connect after 2 attempts" in first and f"{dead_url}/chat/completions" in first
    assert "ConnectError" in first
    assert "stopped: the endpoint cannot be reached or keeps failing; 48 traces not started" in r.err
    r = cli("annotate", sample_traces_path(), "--judge", "local", "--base-url", dead_url, "-o", out,
            "--cache", tmp_path / "c.sqlite", "--no-progress", "--json")
    summary = json.loads(r.out)
    assert r.code == 3 and summary["not_started"] == 48 and summary["complete"] is False
    assert summary["first_error"].startswith("cannot connect after 2 attempts")


def test_annotate_rejected_requests_show_the_whole_first_error(cli, tmp_path):
    with OpenAIServer(policy=_reject) as srv:
        r = cli("annotate", sample_traces_path(), "--judge", "local", "--base-url", srv.base_url, "--limit", "3",
                "-o", tmp_path / "l.jsonl", "--cache", tmp_path / "c.sqlite", "--no-progress")
        url = srv.base_url
    assert r.code == 3, r
    first = _first_error(r.err)
    assert f"HTTP 400: seekbench mock server: {LONG}" not in first  # the policy's own text, not a wrapper
    assert f"HTTP 400: {LONG} (POST {url}/chat/completions)" in first
    assert "3 traces failed" in r.err


def test_judge_answers_says_decided_skipped_pending_and_why(cli, tmp_path, dead_url):
    out = tmp_path / "judged.jsonl"
    # Default --overwrite machine: the sample's 48 human decisions are kept, none is sent, exit 0.
    r = cli("judge-answers", sample_traces_path(), "--judge", "answer-local", "--base-url", dead_url, "-o", out,
            "--cache", tmp_path / "c.sqlite", "--no-progress")
    assert r.code == 0, r
    assert "decided 0 | unscored 0 (no verdict) | skipped 48 (already decided, kept) | pending 0" in r.err
    assert "--overwrite machine keeps their decisions (48 from human); --overwrite all replaces them" in r.err
    # --overwrite all against a dead endpoint: every answer pending (4 sample traces have no answer: unscored,
    # never sent), the reason and the first error named.
    r = cli("judge-answers", sample_traces_path(), "--judge", "answer-local", "--base-url", dead_url, "-o", out,
            "--cache", tmp_path / "c.sqlite", "--no-progress", "--overwrite", "all")
    assert r.code == 3, r
    assert "decided 0 | unscored 4 (no verdict) | skipped 0 (already decided, kept) | pending 44" in r.err
    assert "pending because:" in r.err and "not sent: the endpoint cannot be reached or keeps failing" in r.err
    assert "cannot connect after 2 attempts" in _first_error(r.err)
    # A server that rejects every request: the full message, status and endpoint.
    with OpenAIServer(policy=_reject) as srv:
        r = cli("judge-answers", sample_traces_path(), "--judge", "answer-local", "--base-url", srv.base_url,
                "-o", out, "--cache", tmp_path / "c.sqlite", "--no-progress", "--overwrite", "all", "--json")
        url = srv.base_url
    res = json.loads(r.out)
    assert r.code == 3 and res["pending"] == 44 and res["decided"] == 0
    assert res["first_error"] == f"HTTP 400: {LONG} (POST {url}/chat/completions)"
    # the circuit breaker: after 5 rejections in a row nothing more is sent (the requests in flight then
    # still end as they end); every answer is pending with one of the two reasons
    reasons = res["pending_reasons"]
    assert set(reasons) == {"request_failed: HTTP 400", "not sent: the endpoint cannot be reached or keeps failing"}
    assert sum(reasons.values()) == 44 and 5 <= reasons["request_failed: HTTP 400"] < 44


def test_env_run_llm_agent_dead_endpoint_is_not_completeness_zero(cli, tmp_path, dead_url):
    out = tmp_path / "e.jsonl"
    r = cli("env", "run", "--corpus", "default", "--limit", "2", "--agent", "llm:some-model,keyphrase",
            "--base-url", dead_url, "--cache", tmp_path / "c.sqlite", "--steps", "2", "-o", out)
    assert r.code == 3, r
    assert "2 of 4 episodes failed" in r.err and "cannot connect after 2 attempts" in _first_error(r.err)
    rows = [ln for ln in r.out.splitlines() if ln.startswith(("llm:", "keyphrase"))]
    assert [ln.split()[0] for ln in rows] == ["keyphrase"]  # no row claims the failed agent's completeness
    assert "0.000" not in " ".join(ln for ln in r.out.splitlines() if ln.startswith("llm:"))
    assert len(out.read_text().splitlines()) == 4  # every episode is still written


def test_env_run_llm_agent_missing_key_names_the_agent_not_a_judge(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("SEEKBENCH_TEST_NO_KEY", raising=False)
    r = cli("env", "run", "--corpus", "default", "--limit", "1", "--agent", "llm:m", "--api-key-env",
            "SEEKBENCH_TEST_NO_KEY", "--base-url", "https://api.example.invalid/v1", "--steps", "1",
            "-o", tmp_path / "e.jsonl")
    assert r.code == 2 and "agent 'llm:m' needs an API key" in r.err and "--judge" not in r.err, r
    assert "--agent keyphrase" in r.err


def test_llm_completeness_estimator_dead_endpoint_exits_3(cli, tmp_path, dead_url):
    corpus = tmp_path / "corpus.jsonl"
    r = cli("env", "build-corpus", "--default", "-o", corpus)
    assert r.code == 0, r
    r = cli("env", "synth-beliefs", corpus, "-o", tmp_path / "b.jsonl", "--estimator", "llm", "--judge", "local",
            "--base-url", dead_url, "--cache", tmp_path / "c.sqlite")
    assert r.code == 3, r
    assert "estimates of llm:local failed" in r.err and "cannot connect after 2 attempts" in _first_error(r.err)


def test_coverage_judge_dead_endpoint_exits_3(cli, tmp_path, dead_url):
    skeleton = tmp_path / "skeleton.jsonl"
    skeleton.write_text(json.dumps({"question_id": "q01", "steps": [
        {"id": "s1", "role": "answer", "statement": "Idris Pellam was born in Orlesk",
         "evidence": ["born in Orlesk"]}]}) + "\n")
    r = cli("coverage", sample_traces_path(), "--skeleton", skeleton, "--judge", "answer-local",
            "--base-url", dead_url, "--cache", tmp_path / "c.sqlite")
    assert r.code == 3, r
    assert "the coverage judge failed on" in r.err and "cannot connect after 2 attempts" in _first_error(r.err)


def test_an_answer_judge_given_to_annotate_says_use_judge_answers(cli, tmp_path):
    r = cli("annotate", sample_traces_path(), "--judge", "answer-local", "-o", tmp_path / "l.jsonl")
    assert r.code == 2 and "use `seekbench judge-answers --judge answer-local`" in r.err, r
    assert r.err.count("\n") == 1


def test_help_documents_the_exit_codes(cli):
    r = cli("--help")
    assert r.code == 0
    for line in ("0  done", "2  user error", "3  done with failures"):
        assert line in r.out, r.out
