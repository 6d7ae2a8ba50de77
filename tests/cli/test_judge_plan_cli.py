"""``seekbench judge plan`` on the bundled sample: the table, the ranking file, the user errors."""

from __future__ import annotations

import csv
import json

import pytest

from seekbench.data import sample_traces_path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The sample traces, a pilot of human labels (questions 1-6 of each agent), the rules judge's labels."""
    from seekbench.annotate import annotate
    from seekbench.labels import AnnotationSet, load_annotations

    d = tmp_path_factory.mktemp("plan")
    traces = sample_traces_path()
    human = load_annotations(traces.with_name("sample_human.jsonl"))
    recs = human.records
    pilot = recs[recs["trace_id"].str.fullmatch(r"sample-[a-z-]+-q0[1-6]")]
    AnnotationSet(pilot.reset_index(drop=True), name=human.name).save(d / "pilot.jsonl")
    annotate(traces, "rules", d / "rules.jsonl", cache=d / "cache.sqlite")
    return {"traces": traces, "pilot": d / "pilot.jsonl", "rules": d / "rules.jsonl", "dir": d}


def _plan(cli, files, *extra):
    return cli(
        "judge", "plan", files["traces"], "--reference", files["pilot"], "--rater", files["rules"], "--n-boot", "200",
        *extra,
    )  # fmt: skip


def test_plan_prints_the_table_and_writes_the_ranking(cli, files):
    out = files["dir"] / "next.csv"
    res = _plan(cli, files, "--target", "0.1", "--top", "3", "-o", out)
    assert res.code == 0, res
    assert "more traces for ±0.1" in res.out and "kappa [95% CI]" in res.out
    line = next(x for x in res.out.splitlines() if x.startswith("rules") and " grounding " in x and "reasoning" in x)
    assert line.split()[3:5] == ["24", "87"]  # 24 pilot traces, 87 reasoning steps compared
    assert "next traces to label (top 3 of 24 unlabeled" in res.out
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert len(rows) == 24 and [r["rank"] for r in rows[:3]] == ["1", "2", "3"]
    assert all(r["trace_id"][-3:] in {f"q{i:02d}" for i in range(7, 13)} for r in rows)  # only unlabeled traces
    assert rows[0]["explorer"] == "explorer.html#trace=" + rows[0]["trace_id"]


def test_plan_json_and_jsonl_agree(cli, files):
    out = files["dir"] / "next.jsonl"
    res = _plan(cli, files, "--json", "--seed", "3", "-o", out)
    assert res.code == 0, res
    body = json.loads(res.out)
    assert body["options"]["target"] == 0.05 and body["options"]["seed"] == 3
    ranked = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["trace_id"] for r in ranked] == [r["trace_id"] for r in body["ranking"]]
    assert {r["field"] for r in body["kappa"]} >= {"grounding", "reasoning_type"}


def test_user_errors_exit_2(cli, files, tmp_path):
    stray = tmp_path / "stray.jsonl"
    record = {"schema_version": "1.0", "trace_id": "nowhere", "step": 0, "field": "grounding", "value": "Grounded",
              "unscored_reason": None, "rater": "h", "provenance": {"kind": "human"}}  # fmt: skip
    stray.write_text(json.dumps(record) + "\n", encoding="utf-8")
    res = cli("judge", "plan", files["traces"], "--reference", stray, "--rater", files["rules"])
    assert res.code == 2 and "no label refers to a trace" in res.err
    # the judge labeled only traces the reference did not: nothing to compare
    from seekbench.labels import AnnotationSet, load_annotations

    rules = load_annotations(files["rules"]).records
    other = tmp_path / "other.jsonl"
    AnnotationSet(rules[rules["trace_id"].str.endswith(("q10", "q11", "q12"))].reset_index(drop=True)).save(other)
    res = cli("judge", "plan", files["traces"], "--reference", files["pilot"], "--rater", other)
    assert res.code == 2 and "no step is labeled by both" in res.err
    assert _plan(cli, files, "-o", tmp_path / "next.txt").code == 2
    assert _plan(cli, files, "--target", "0").code == 2


def test_help_explains(cli):
    res = cli("judge", "plan", "--help")
    assert res.code == 0
    for word in ("--target", "--assurance", "--order", "explorer.html#trace=ID", "whole traces", "--seed"):
        assert word in res.out
