"""The SeekBench importer on the real release data and on hand-made records."""

import json

import pytest

from seekbench import UserInputError
from seekbench.traces import build_tables, detect_format, read_traces

pytestmark = pytest.mark.shared_data


def test_corpus_counts(shared_tables):
    steps, traces = shared_tables
    assert len(traces) == 190
    counts = steps["kind"].value_counts().to_dict()
    assert counts == {"reasoning": 630, "search": 529, "search_result": 490, "answer": 188}
    assert traces["agent"].nunique() == 5
    assert len(steps) == 1837


def test_legacy_spellings_normalised(shared_tables):
    steps, _ = shared_tables
    assert set(steps["grounding"].dropna()) == {"Grounded", "NotGrounded"}
    assert set(steps.loc[steps.kind == "search_result", "clarity"].dropna()) == {"Clear", "Unclear"}
    # 23 observations carry no annotation in the release: missing, never defaulted.
    assert steps.loc[steps.kind == "search_result", "sufficiency"].isna().sum() == 23


def test_answer_types_agree_with_is_correct(shared_traces):
    for tr in shared_traces:
        answers = [s for s in tr["steps"] if s["kind"] == "answer"]
        for a in answers:
            assert (a["original_kind"] == "CorrectAnswer") == tr["correct"]["value"]


def test_source_ref_points_back(shared_data, shared_traces):
    lines = shared_data.read_text().splitlines()
    tr = shared_traces[7]
    st = tr["steps"][2]
    ref = st["source_ref"]
    raw = json.loads(lines[ref["line"] - 1])
    pos = int(ref["path"].split("[")[1].rstrip("]"))
    assert raw["trace"][pos]["step_index"] == st["index"]
    assert str(raw["id"]) == tr["trace_id"]


def test_detected(shared_data):
    assert detect_format(shared_data) == "seekbench"


def _record(**over):
    rec = {"id": 1, "model": "m", "dataset": "d", "question": "q?", "ground_truth": ["x"], "is_correct": True,
           "final_answer": "x", "trace": [
               {"type": "reasoning", "content": "plan", "step_index": 0,
                "annotation": {"type": "PlanFormation", "attributes": {"groundness": "not grounded"}}},
               {"type": "search", "query": "x?", "step_index": 1, "trace_dependency": {"dependent_on": 0}},
               {"type": "CorrectAnswer", "content": "x", "step_index": 2}]}
    rec.update(over)
    return rec


def test_label_case_insensitive(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps(_record()) + "\n")
    steps, _ = build_tables(read_traces(p, format="seekbench").traces)
    assert steps.loc[0, "grounding"] == "NotGrounded"
    assert steps.loc[0, "reasoning_type"] == "PlanFormation"


def test_label_outside_ontology(tmp_path):
    rec = _record()
    rec["trace"][0]["annotation"]["attributes"]["groundness"] = "Sorta"
    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps(rec) + "\n")
    with pytest.raises(UserInputError) as e:
        read_traces(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}:1, trace 1, at $.trace[0].annotation.attributes.groundness: ")
    assert "'Sorta' is outside the ontology for grounding" in msg


def test_spellings_are_kept_up_to_a_bound(tmp_path):
    # A step type spelled anew on every line must not grow the reader's memory: past the bound the
    # spellings are worked out each time (the same kinds either way: unknown types are "other").
    from seekbench.traces.importers._seekbench import _MAX_SPELLINGS, _Spellings, convert

    names = _Spellings()
    n = _MAX_SPELLINGS + 50
    for i in range(n):
        rec = _record(id=i, trace=[{"type": f"custom-{i}", "step_index": 0}, {"type": "think", "step_index": 1}])
        trace = convert(rec, file="t.jsonl", line=i + 1, rater="r", names=names)
        assert [s["kind"] for s in trace["steps"]] == ["other", "reasoning"]
    assert len(names.kinds) == _MAX_SPELLINGS


def test_a_score_beyond_float_range_is_not_kept(tmp_path):
    # 10**400 and -10**309 are beyond float range (float() raised OverflowError: a traceback)
    rec = _record()
    docs = [{"title": "a", "content": "x", "score": 10**400}, {"title": "b", "content": "y", "score": -(10**309)},
            {"title": "c", "content": "z", "score": 2}]
    rec["trace"].insert(2, {"type": "search_result", "documents": docs, "step_index": 2})
    rec["trace"][3]["step_index"] = 3
    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps(rec) + "\n")
    got = read_traces(p, format="seekbench").traces[0]["steps"][2]["documents"]
    assert ["score" in d for d in got] == [False, False, True] and got[2]["score"] == 2.0
