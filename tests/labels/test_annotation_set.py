"""Annotation sets: inline labels split out, round trip through JSONL, validation."""

import json

import pytest

from seekbench import UserInputError
from seekbench.labels import AnnotationSet, load_annotations
from seekbench.traces import build_tables

TRACE = {"schema_version": "1.0", "trace_id": "t1", "agent": "a", "question": "q",
         "inline_labels": {"rater": "ann-1", "kind": "human"}, "steps": [
             {"index": 0, "kind": "reasoning", "labels": {"reasoning_type": "PlanFormation",
                                                           "grounding": "NotGrounded"}},
             {"index": 1, "kind": "search", "query": "x", "labels": {"search_type": "InitialQuery"}},
             {"index": 2, "kind": "search_result", "labels": {"clarity": "Clear", "sufficiency": None}}]}


def test_from_traces_and_round_trip(tmp_path):
    aset = AnnotationSet.from_traces([TRACE], source="t.jsonl")
    assert aset.raters == ["ann-1"]
    # 4 labels: the null sufficiency is missing, not a label.
    assert len(aset) == 4
    p = tmp_path / "a.jsonl"
    aset.save(p)
    back = load_annotations(p)
    assert back.records[["trace_id", "step", "field", "value"]].equals(
        aset.records[["trace_id", "step", "field", "value"]])


def test_labels_from_set_replace_inline(tmp_path):
    p = tmp_path / "a.jsonl"
    recs = [{"schema_version": "1.0", "trace_id": "t1", "step": 0, "field": "groundness", "value": "grounded",
             "rater": "judge-x", "provenance": {"kind": "judge"}},
            {"schema_version": "1.0", "trace_id": "t1", "step": 2, "field": "clarity", "value": None,
             "unscored_reason": "parse failure", "rater": "judge-x", "provenance": {"kind": "judge"}}]
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    aset = load_annotations(p)
    steps, _ = build_tables([TRACE], aset.records)
    assert steps.loc[0, "grounding"] == "Grounded"       # spelling normalised
    assert steps.loc[0, "reasoning_type"] is None        # the set has no such label: missing
    assert steps.loc[2, "clarity"] is None               # unscored stays missing


def test_unscored_needs_reason(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text(json.dumps({"schema_version": "1.0", "trace_id": "t1", "step": 0, "field": "grounding",
                             "value": None, "rater": "r", "provenance": {"kind": "judge"}}) + "\n")
    with pytest.raises(UserInputError, match=r"a.jsonl:1, trace t1, at \$: 'unscored_reason' is a required"):
        load_annotations(p)


def test_value_outside_ontology(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text(json.dumps({"schema_version": "1.0", "trace_id": "t9", "step": 0, "field": "clarity",
                             "value": "Murky", "rater": "r", "provenance": {"kind": "human"}}) + "\n")
    with pytest.raises(UserInputError) as e:
        load_annotations(p)
    assert str(e.value) == f"{p}:1, trace t9, at $.value: label 'Murky' is outside the ontology for clarity"
