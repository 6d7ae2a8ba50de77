"""scripts/bench/learned_rqi.py: RQI per trace and per agent, derived by hand, and the shipped record's figures."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def script(bench_script):
    return bench_script("learned_rqi")


def test_rqi_per_trace_counts_only_the_labeled_steps_asked_for(script):
    labels = {("a", 1, "grounding"): "Grounded", ("a", 3, "grounding"): "NotGrounded",
              ("a", 5, "grounding"): "Grounded", ("b", 1, "grounding"): "NotGrounded",
              ("b", 2, "reasoning_type"): "PlanFormation"}
    # Trace a: steps 1, 3, 5 asked for, 2 of 3 Grounded; b: step 1 NotGrounded (0.0); c: no label, left out.
    got = script.per_trace_rqi(labels, {("a", 1), ("a", 3), ("a", 5), ("b", 1), ("c", 1)})
    assert got == {"a": pytest.approx(2 / 3), "b": 0.0}
    # Step 5 not asked for: a is 1 of 2.
    assert script.per_trace_rqi(labels, {("a", 1), ("a", 3)}) == {"a": 0.5}


def test_record_figures_and_exit_code(script, tmp_path, capsys):
    rec = {"results": [{"features": "lexical", "rqi": [
        {"agent": "x", "reference": 0.25, "judge": 0.28}, {"agent": "y", "reference": 0.40, "judge": 0.33}]}]}
    path = tmp_path / "learned.json"
    path.write_text(json.dumps(rec))
    assert script.from_record(path) == {"lexical": [("x", 0.25, 0.28, None), ("y", 0.40, 0.33, None)]}
    # Largest |difference| 0.07 (y): above 0.05 -> exit 1, within 0.08 -> exit 0.
    assert script.main(["--record", str(path)]) == 1
    assert "max |difference| 0.070 (above 0.05)" in capsys.readouterr().out
    assert script.main(["--record", str(path), "--tolerance", "0.08"]) == 0


def test_shipped_record_states_rqi_for_every_agent_and_feature_set(script):
    got = script.from_record(script.RECORD)
    assert set(got) == {"lexical", "lexical+minilm"}
    for rows in got.values():
        assert len(rows) == 5 and all(0 <= h <= 1 and 0 <= j <= 1 for _, h, j, _ in rows)


def test_shuffled_folds_keep_questions_together_and_depend_on_the_seed(script):
    # 12 traces of 6 questions (two traces each); 3 folds.
    traces = [{"trace_id": f"t{i}", "question_id": f"q{i // 2}", "question": f"question {i // 2}?"} for i in range(12)]
    seen = set()
    for seed in (1, 2, 3):
        folds = script.shuffled_folds(traces, seed, n_splits=3)
        tests = [set(te.tolist()) for _, te in folds]
        assert sorted(i for t in tests for i in t) == list(range(12))  # every trace tested exactly once
        for tr, te in folds:
            assert {i // 2 for i in tr}.isdisjoint({i // 2 for i in te})  # no question on both sides
            assert len(te) == 4  # 6 questions dealt round-robin: 2 per fold
        seen.add(tuple(sorted(tuple(sorted(t)) for t in tests)))
    assert len(seen) > 1  # the seed changes the assignment
