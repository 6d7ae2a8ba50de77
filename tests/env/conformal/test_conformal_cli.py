"""``seekbench env synth-beliefs`` and ``seekbench conformal``: exit codes and outputs."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from _conformal_helpers import env_trace, make_corpus, write_corpus, write_traces

from seekbench.env.conformal import DEFAULT_PROMPT


@pytest.fixture
def run(cli):
    """``seekbench ARGS`` in-process (the shared fixture of tests/conftest.py)."""
    return cli


@pytest.fixture
def corpus_file(tmp_path):
    return write_corpus(tmp_path / "corpus.jsonl", make_corpus(30, seed=5))


def test_synth_beliefs_then_conformal(run, corpus_file, tmp_path):
    beliefs = tmp_path / "beliefs.jsonl"
    r = run("env", "synth-beliefs", corpus_file, "-o", beliefs, "--delta", "8", "--seed", "3",
            "--estimator", "mean", "--estimator", "regression")
    assert r.code == 0, r
    assert "belief states of 30 documents" in r.out
    states = [json.loads(x) for x in beliefs.read_text().splitlines()]
    assert all(s["delta"] == 8 and s["seed"] == 3 for s in states)
    est_path = tmp_path / "beliefs.estimates.jsonl"
    est = pd.read_json(est_path, lines=True)
    assert set(est["estimator"]) == {"mean", "regression"} and len(est) == 2 * len(states)
    assert set(est.columns) >= {"doc_id", "state_id", "true_completeness", "estimator", "c_hat"}

    out = tmp_path / "report"
    r = run("conformal", est_path, "-o", out, "--splits", "2", "--seeds", "3", "--alpha", "0.2")
    assert r.code == 0, r
    assert "regression" in r.out and "target coverage 0.8" in r.out
    page = (out / "conformal.html").read_text()
    assert "<section id='conformal'>" in page and "data:image/png;base64," in page and "<script" not in page
    assert (out / "conformal.md").exists()
    figs = {p.name for p in (out / "figures").iterdir()}
    assert {"conformal_coverage_bins.png", "conformal_scatter_mean.png", "conformal_nonconformity_regression.png"} <= figs
    summary = pd.read_csv(out / "tables" / "conformal_summary.csv")
    assert list(summary["estimator"]) == ["mean", "regression"]
    assert (summary["q_hat"] > 0).all() and (summary["coverage"] > 0.6).all()

    r = run("conformal", est_path, "-o", out, "--split", "state", "--splits", "2", "--seeds", "2", "--json",
            "--estimator", "mean")
    assert r.code == 0, r
    data = json.loads(r.out)
    assert data["options"]["split"] == "state" and [s["estimator"] for s in data["summary"]] == ["mean"]
    assert data["files"]["html"].endswith("conformal.html")


def test_conformal_with_traces_stopping_and_anova(run, tmp_path):
    rows = []
    for d in range(10):
        for k in range(4):
            c = (k + 1) / 4
            rows.append({"doc_id": f"doc{d}", "state_id": f"doc{d}#{k}", "true_completeness": c,
                         "estimator": "llm:agent-a", "c_hat": min(1.0, c + 0.05 * ((d % 3) - 1))})
    est = tmp_path / "est.jsonl"
    est.write_text("".join(json.dumps(r) + "\n" for r in rows))
    traces = [env_trace(f"{a}-{b}-{d}", a, b, f"doc{d}", [0.2, 0.5, 0.7 + 0.01 * d], [0.4, 0.9, 0.95])
              for a in ("agent-a", "agent-b") for b in ("deduplicated", "oracle") for d in range(3)]
    tfile = write_traces(tmp_path / "traces.jsonl", traces)
    r = run("conformal", est, "-o", tmp_path / "o", "--traces", tfile, "--delta", "0.6", "--json",
            "--splits", "2", "--seeds", "2")
    assert r.code == 0, r
    data = json.loads(r.out)
    assert {s["agent"] for s in data["stopping"]} == {"agent-a", "agent-b"}  # the only estimator serves all
    assert [a["factor"] for a in data["anova"]] == ["belief", "model", "belief x model", "document", "residual"]
    assert (tmp_path / "o" / "tables" / "completeness_anova.csv").exists()
    assert (tmp_path / "o" / "tables" / "conformal_stopping_summary.csv").exists()
    r = run("conformal", est, "-o", tmp_path / "o", "--traces", tfile, "--stop-estimator", "nope")
    assert r.code == 2 and "nope" in r.err


def test_llm_estimator_from_the_command_line(run, corpus_file, tmp_path):
    from seekbench.testing import OpenAIServer

    judge = tmp_path / "mock.toml"
    judge.write_text(f'name = "mock"\nkind = "openai"\nmodel = "mock-model"\nbase_url = "http://127.0.0.1:9/v1"\n'
                     f'api_key_env = "SEEKBENCH_TEST_NO_SUCH_KEY"\nprompt = "{DEFAULT_PROMPT.as_posix()}"\n'
                     'prompt_version = "completeness_estimate_v1"\nresponse_format = "json_object"\n'
                     'price_input_per_mtok = 0.0\nprice_output_per_mtok = 0.0\nmax_attempts = 2\n')

    def policy(request):
        content = request["messages"][-1]["content"]
        return json.dumps({"completeness": min(1.0, content.count('"n":') / 30), "reasoning": "counted"})

    with OpenAIServer(policy=policy) as srv:
        r = run("env", "synth-beliefs", corpus_file, "-o", tmp_path / "b.jsonl", "--estimator", "llm",
                "--judge", judge, "--base-url", srv.base_url, "--cache", tmp_path / "c.sqlite",
                "--estimates", tmp_path / "e.jsonl", "--json")
    assert r.code == 0, r
    info = json.loads(r.out)
    assert info["estimators"][0]["estimator"] == "llm:mock" and info["estimators"][0]["unscored"] == 0
    est = pd.read_json(tmp_path / "e.jsonl", lines=True)
    assert set(est["estimator"]) == {"llm:mock"} and est["c_hat"].between(0, 1).all()


@pytest.mark.parametrize("args,needle", [
    (("env", "synth-beliefs", "{missing}", "-o", "{tmp}/b.jsonl"), "file not found"),
    (("env", "synth-beliefs", "{corpus}", "-o", "{tmp}/b.jsonl", "--estimator", "llm"), "--judge"),
    (("env", "synth-beliefs", "{corpus}", "-o", "{tmp}/b.jsonl", "--delta", "0"), "delta"),
    (("conformal", "{missing}", "-o", "{tmp}/o"), "file not found"),
    (("conformal", "{est}", "-o", "{tmp}/o", "--alpha", "1.5"), "alpha"),
    (("conformal", "{est}", "-o", "{tmp}/o", "--splits", "0"), "n_splits"),
    (("conformal", "{est}", "-o", "{tmp}/o", "--estimator", "nope"), "nope"),
    (("conformal", "{one_doc}", "-o", "{tmp}/o"), "at least 2 documents"),
    (("conformal", "{corpus}", "-o", "{tmp}/o"), "missing or empty string field"),
])
def test_user_errors_exit_2_with_one_line(run, corpus_file, tmp_path, args, needle):
    est = tmp_path / "est.jsonl"
    est.write_text('{"doc_id": "a", "state_id": "a#0", "true_completeness": 0.5, "estimator": "m", "c_hat": 0.4}\n'
                   '{"doc_id": "b", "state_id": "b#0", "true_completeness": 0.7, "estimator": "m", "c_hat": 0.4}\n')
    one = tmp_path / "one.jsonl"
    one.write_text('{"doc_id": "a", "state_id": "a#0", "true_completeness": 0.5, "estimator": "m", "c_hat": 0.4}\n')
    fill = {"missing": tmp_path / "nope.jsonl", "tmp": tmp_path, "corpus": corpus_file, "est": est, "one_doc": one}
    r = run(*(a.format(**fill) for a in args))
    assert r.code == 2, r
    assert needle in r.err
    assert "Traceback" not in r.err
    errors = [line for line in r.err.splitlines() if line.startswith("seekbench: error:")]
    assert len(errors) == 1 or "usage:" in r.err
