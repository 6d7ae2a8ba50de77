"""``seekbench agree``: tables, JSON, the agreement report, and user errors (exit code 2, one line)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from seekbench.labels import AnnotationSet


TRACE = {"schema_version": "1.0", "agent": "a", "question": "q", "steps": [
    {"index": 0, "kind": "reasoning", "text": "plan", "labels": {"grounding": "NotGrounded"}},
    {"index": 1, "kind": "search", "query": "q"},
    {"index": 2, "kind": "search_result", "documents": [], "labels": {"clarity": "Clear", "sufficiency": "Sufficient"}},
    {"index": 3, "kind": "reasoning", "text": "so", "labels": {"grounding": "Grounded"}},
    {"index": 4, "kind": "answer", "text": "x"}]}


def _traces(tmp_path, n=6, agents=("a", "b")):
    p = tmp_path / "traces.jsonl"
    with p.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({**TRACE, "trace_id": f"t{i}", "agent": agents[i % len(agents)]}) + "\n")
    return p


def _judge_file(tmp_path, traces_path, name, *, flip_steps=(), cost=0.004):
    """A judge's annotation set for the small traces: the inline labels, some grounding flipped."""
    from seekbench.traces import read_traces

    human = AnnotationSet.from_traces(read_traces(traces_path).traces)
    recs = []
    for r in human.to_records():
        r = dict(r, rater=name, provenance={"kind": "judge", "judge": name, "model": "m", "cost_usd": cost,
                                            "latency_s": 1.5, "input_tokens": 800, "output_tokens": 60,
                                            "cache_key": f"{name}-{r['trace_id']}"})
        if r["field"] == "grounding" and (r["trace_id"], r["step"]) in flip_steps:
            r["value"] = "Grounded" if r["value"] == "NotGrounded" else "Not Grounded"  # legacy spelling too
        recs.append(r)
    p = tmp_path / f"{name}.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return p


def test_agree_table_and_json(tmp_path, cli):
    tr = _traces(tmp_path)
    j1 = _judge_file(tmp_path, tr, "judge1", flip_steps={("t0", 0)})
    j2 = _judge_file(tmp_path, tr, "judge2", flip_steps={("t0", 0), ("t1", 3)}, cost=0.001)
    res = cli("agree", tr, "--reference", "inline", "--rater", j1, "--rater", j2, "--tiebreaker", "judge1",
              "--n-boot", "50", "--seed", "3")
    assert res.code == 0, res
    assert "kappa [95% CI]" in res.out and "judge1" in res.out and "panel:majority" in res.out
    assert "metric sensitivity" in res.out and "Kendall tau" in res.out
    res = cli("agree", tr, "--reference", "inline", "--rater", j1, "--rater", j2, "--tiebreaker", "judge1",
              "--n-boot", "50", "--json")
    assert res.code == 0, res
    out = json.loads(res.out)
    rows = {(r["rater"], r["field"], r["step_kind"]): r for r in out["summary"]}
    # 12 grounding labels, all on reasoning steps; judge1 flips one: agreement 11/12.
    assert rows[("judge1", "grounding", "reasoning")]["n_compared"] == 12
    assert rows[("judge1", "grounding", "reasoning")]["raw_agreement"] == pytest.approx(11 / 12)
    assert rows[("judge2", "grounding", "reasoning")]["raw_agreement"] == pytest.approx(10 / 12)
    # Panel of two judges: they disagree on (t1, 3) only; the tiebreaker judge1 decides it.
    assert rows[("panel:majority", "grounding", "reasoning")]["raw_agreement"] == pytest.approx(11 / 12)
    assert rows[("panel:majority", "grounding", "reasoning")]["n_unresolved_ties"] == 0
    costs = {c["rater"]: c for c in out["costs"]}
    assert costs["judge1"]["cost_per_trace"] == pytest.approx(0.004)
    assert costs["panel:majority"]["cost_per_trace"] == pytest.approx(0.005)
    assert out["sensitivity"]["rankings"] and out["inputs"]["reference"] == "inline"
    assert {m["field"] for m in out["multi_rater"]} >= {"grounding", "clarity"}


def test_agree_writes_the_agreement_report(tmp_path, cli):
    tr = _traces(tmp_path)
    j1 = _judge_file(tmp_path, tr, "judge1", flip_steps={("t0", 0), ("t2", 3)})
    res = cli("agree", tr, "--reference", "inline", "--rater", j1, "--n-boot", "20", "-o", tmp_path / "rep")
    assert res.code == 0, res
    page = (tmp_path / "rep" / "agreement.html").read_text()
    assert page.count("data:image/png;base64,") >= 2  # confusion matrices and kappa vs cost
    assert "<script" not in page and "How far the judge" in page
    for name in ("agreement", "agreement_confusion", "judge_costs", "sensitivity", "sensitivity_rankings"):
        assert (tmp_path / "rep" / "tables" / f"{name}.csv").exists(), name


def test_agree_on_shared_data_with_a_corrupted_copy(tmp_path, cli, shared_data, shared_traces):
    """Inline human labels vs a copy with 20% of grounding labels flipped (seeded)."""
    human = AnnotationSet.from_traces(shared_traces)
    recs = human.records.copy()
    idx = recs.index[recs["field"] == "grounding"]
    chosen = np.random.default_rng(1).choice(idx, size=round(0.2 * len(idx)), replace=False)
    recs.loc[chosen, "value"] = recs.loc[chosen, "value"].map({"Grounded": "NotGrounded", "NotGrounded": "Grounded"})
    recs["rater"] = "corrupted"
    path = tmp_path / "corrupted.jsonl"
    AnnotationSet(recs, name="corrupted").save(path)
    res = cli("agree", shared_data, "--reference", "inline", "--rater", path, "--n-boot", "100", "--json")
    assert res.code == 0, res
    out = json.loads(res.out)
    # Grounding of reasoning and of search steps are two rows; together they hold every flipped label.
    g = [r for r in out["summary"] if r["field"] == "grounding"]
    assert [r["step_kind"] for r in g] == ["reasoning", "search"]
    assert sum(r["n_compared"] for r in g) == len(idx)
    assert sum(r["n_compared"] * (1 - r["raw_agreement"]) for r in g) == pytest.approx(len(chosen))
    assert g[0]["kappa_lower"] < g[0]["kappa"] < g[0]["kappa_upper"]
    ce = [r for r in out["sensitivity"]["table"] if r["metric"] == "ce"]
    assert len(ce) == 5 and all(r["difference"] == 0 for r in ce)


def _one_error_line(res):
    assert res.code == 2, res
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert len(lines) == 1, res.err
    assert "Traceback" not in res.err
    return lines[0]


def test_agree_user_errors(tmp_path, cli):
    tr = _traces(tmp_path)
    j1 = _judge_file(tmp_path, tr, "judge1")
    line = _one_error_line(cli("agree", tr, "--reference", "inline", "--rater", tmp_path / "missing.jsonl"))
    assert "missing.jsonl" in line
    line = _one_error_line(cli("agree", tr, "--reference", "inline", "--rater", j1, "--rater", j1))
    assert "rater 'judge1' is also in" in line
    line = _one_error_line(cli("agree", tr, "--reference", "inline", "--rater", j1, "--tiebreaker", "judge1"))
    assert "needs a panel" in line
    bad = tmp_path / "bad.jsonl"
    rec = json.loads(j1.read_text().splitlines()[0])
    bad.write_text(json.dumps({**rec, "value": "Sorta"}) + "\n")
    line = _one_error_line(cli("agree", tr, "--reference", "inline", "--rater", bad))
    assert f"{bad}:1" in line and "outside the ontology" in line
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({**rec, "trace_id": "nope"}) + "\n")
    res = cli("agree", tr, "--reference", "inline", "--rater", other)
    assert res.code == 2 and "no label refers to a trace" in res.err
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({**TRACE, "trace_id": f"u{i}", "steps": [
        {k: v for k, v in s.items() if k != "labels"} for s in TRACE["steps"]]}) + "\n" for i in range(2)))
    line = _one_error_line(cli("agree", bare, "--reference", "inline", "--rater", j1))
    assert "no inline labels" in line


def test_agree_dead_judge_shows_n_0_and_never_none(tmp_path, cli):
    """A judge whose every call failed keeps only rule-derived labels. The old table showed it
    with overall agreement 1.000, AC1 1.000 [1.00, 1.00] (the rule's labels, right by
    construction) and `None` under "same ranking"; now its rows say n = 0 with no coefficient,
    the rule is a rater of its own, and every n/a carries its reason."""
    tr = _traces(tmp_path)
    j1 = _judge_file(tmp_path, tr, "judge1", flip_steps={("t0", 0)})
    recs = [json.loads(line) for line in _judge_file(tmp_path, tr, "dead").read_text().splitlines()]
    dead = [dict(r, value=None, unscored_reason="connection refused") for r in recs]
    dead.append({**recs[0], "step": 1, "field": "search_type", "value": "InitialQuery",
                 "provenance": {"kind": "rule", "judge": "dead", "rule": "first_search"}})
    (tmp_path / "dead.jsonl").write_text("".join(json.dumps(r) + "\n" for r in dead))
    res = cli("agree", tr, "--reference", "inline", "--rater", j1, "--rater", tmp_path / "dead.jsonl",
              "--n-boot", "30")
    assert res.code == 0, res
    assert not re.search(r"\b(None|nan|NaN)\b", res.out)
    table = res.out.split("\n\n")[1]  # the agreement table
    dead_rows = [ln for ln in table.splitlines() if ln.startswith("dead ")]
    assert len(dead_rows) == 4 and all("n = 0: no step compared" in ln for ln in dead_rows)
    # The reference labels no search_type here, so the rule's label is compared nowhere (no row).
    assert not any(ln.startswith("rule-derived ") for ln in table.splitlines())
    assert "a ranking needs two" in res.out  # "same ranking" of the dead judge: n/a with the reason
    out = json.loads(cli("agree", tr, "--reference", "inline", "--rater", j1, "--rater", tmp_path / "dead.jsonl",
                         "--n-boot", "30", "--json").out)
    pooled = next(r for r in out["summary"] if r["rater"] == "dead" and r["field"] == "all (pooled)")
    assert pooled["n_compared"] == 0 and pooled["ac1"] is None and pooled["raw_agreement"] is None
