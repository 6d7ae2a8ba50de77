"""The judge-answers, evidence-metrics and coverage commands, offline, on the embedded sample and files."""

from __future__ import annotations

import json

import pytest
from answers_support import score_file

from seekbench.data import sample_traces_path


@pytest.fixture
def run(cli):
    """The CLI, in-process."""
    return cli


def test_judge_answers_em_offline_on_the_sample(run, tmp_path):
    out = tmp_path / "judged.jsonl"
    r = run("judge-answers", sample_traces_path(), "-o", out, "--overwrite", "all", "--no-progress", "--json",
            "--decisions", tmp_path / "d.csv")
    assert r.code == 0, r
    summary = json.loads(r.out)
    assert summary["judges"] == ["em"] and summary["traces"] == 48 and summary["written"] == 48
    assert summary["requests"] == 0 and summary["paid_usd"] == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 48 and {x["correct"]["source"] for x in rows} == {"em"}
    assert (tmp_path / "d.csv").read_text().startswith("trace_id,slot,value")
    r = run("metrics", out, "--json", "--n-boot", "0")
    assert r.code == 0, r


def test_judge_answers_user_errors(run, tmp_path):
    r = run("judge-answers", sample_traces_path(), "-o", tmp_path / "o.jsonl", "--judge", "rules")
    assert r.code == 2 and "offline step-label judge" in r.err
    r = run("judge-answers", sample_traces_path(), "-o", tmp_path / "o.jsonl", "--judge", "nope")
    assert r.code == 2 and "unknown judge 'nope'" in r.err
    r = run("judge-answers", sample_traces_path(), "-o", tmp_path / "o.jsonl", "--concurrency", "0")
    assert r.code == 2


def test_evidence_metrics_on_an_infodeepseek_score_file(run, tmp_path):
    path = score_file(tmp_path)
    r = run("evidence-metrics", path, "--json", "--attribute", "multi_hop", "--attribute", "domain")
    assert r.code == 0, r
    out = json.loads(r.out)
    g = out["groups"][0]
    assert g["agent"] == "deepseek-chat+ddg" and g["questions"] == 4
    assert g["ACC"] == pytest.approx(1 / 3) and g["IA@2"] == 0.5 and g["IC"] == 2.0 and g["pending_acc"] == 1
    mh = {row["value"]: row for row in out["attributes"]["multi_hop"]}
    assert set(mh) == {"True", "False"} and mh["True"]["questions"] == 2
    r = run("evidence-metrics", path, "--by", "none")
    assert r.code == 0 and "IA@5" in r.out and "n/a" not in r.out.splitlines()[2]
    r = run("evidence-metrics", path, "--attribute", "colour")
    assert r.code == 2 and "no question has the attribute 'colour'" in r.err
    r = run("evidence-metrics", sample_traces_path())
    assert r.code == 2 and "no trace carries an evidence set" in r.err


def test_coverage_command_offline(run, tmp_path):
    # q01 of the sample (hand derivation in tests/metrics/test_coverage.py): the synthesizer finds the
    # birthplace but never the river, and answers wrongly: 1/2; the other three agents cover both: 1.
    sk = tmp_path / "sk.jsonl"
    sk.write_text(json.dumps({"question_id": "q01", "steps": [
        {"id": "s1", "role": "intermediate", "statement": "born in Orlesk"},
        {"id": "s2", "role": "answer", "statement": "River Sallow"}]}) + "\n", encoding="utf-8")
    r = run("coverage", sample_traces_path(), "--skeleton", sk, "--json", "--per-trace", tmp_path / "pt.csv")
    assert r.code == 0, r
    out = json.loads(r.out)
    groups = {g["agent"]: g for g in out["groups"]}
    assert groups["synthesizer"]["coverage"] == 0.5 and groups["looper"]["coverage"] == 1.0
    assert out["no_skeleton"] == 44
    assert out["options"]["matcher"] == "rules" and out["options"]["history"] == "observations"
    r = run("coverage", sample_traces_path(), "--skeleton", sk, "--cap", "-1")
    assert r.code == 2
