"""Labels out to Phoenix / Langfuse and back: keyed by span, nothing lost, loud when a label fits no step."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seekbench import UserInputError
from seekbench.labels import AnnotationSet, read_span_labels, span_index, span_label_records, write_span_labels
from seekbench.traces import FIELDS_BY_KIND, LABEL_VALUES, read_traces

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("openinference.semconv")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "traces" / "importers"))
from _otel_files import OtlpJsonExporter, genai_event_run, genai_run, openinference_run, provider  # noqa: E402

PROV = {"judge": {"kind": "judge", "judge": "gpt-judge", "model": "gpt-4.1-mini", "prompt_sha256": "a" * 64,
                  "time": "2026-01-01T00:00:00Z", "cost_usd": 0.001},
        "human": {"kind": "human", "time": "2026-01-02T00:00:00Z"},
        "rule": {"kind": "rule", "judge": "gpt-judge", "rule": "first_search_is_initial"}}


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    path = tmp_path_factory.mktemp("spans") / "spans.jsonl"
    tp = provider(OtlpJsonExporter(path, hex_ids=True))
    openinference_run(tp)
    openinference_run(tp, question="Capital of France?", qid="q2")
    genai_run(tp)
    genai_event_run(tp)
    return read_traces(path).traces


def _slots(traces: list[dict]) -> list[tuple[str, int, str]]:
    """Every (trace, step, field) a label can go to, answers' correctness included."""
    out = []
    for t in traces:
        for s in t["steps"]:
            fields = FIELDS_BY_KIND[s["kind"]] + (("correct",) if s["kind"] == "answer" else ())
            out.extend((t["trace_id"], s["index"], f) for f in fields)
    return out


def _label_set(traces, choice) -> AnnotationSet:
    recs = []
    for i, (tid, step, fld) in enumerate(_slots(traces)):
        kind, pick = choice(i)
        value = (pick % 2 == 0) if fld == "correct" else LABEL_VALUES[fld][pick % len(LABEL_VALUES[fld])]
        recs.append({"trace_id": tid, "step": step, "field": fld, "value": value, "unscored_reason": None,
                     "rater": f"{kind}-rater", "provenance": PROV[kind]})
    return AnnotationSet.from_records(recs)


def _key(aset: AnnotationSet) -> list[tuple]:
    return sorted((r["trace_id"], r["step"], r["field"], r["value"], r["rater"],
                   json.dumps({k: v for k, v in r["provenance"].items() if k != "source"}, sort_keys=True))
                  for r in aset.to_records())


def _round_trip(traces, labels, tool, tmp_path) -> AnnotationSet:
    index = span_index(traces)
    out = tmp_path / f"{tool}.jsonl"
    write_span_labels(out, span_label_records(labels, index, to=tool))
    return read_span_labels(out, index, source=tool).labels


@pytest.mark.parametrize("tool", ["phoenix", "langfuse"])
def test_round_trip_loses_nothing(traces, tool, tmp_path):
    labels = _label_set(traces, lambda i: (("judge", "human", "rule")[i % 3], i))
    # three agent traces: reasoning 2 + (search 2 + result 2) x 2 + answer 1 (correct) = 11 labels each;
    # the event-form trace: search 2 + result 2 + answer 1 = 5; 3 x 11 + 5 = 38
    assert len(labels) == len(_slots(traces)) == 38
    back = _round_trip(traces, labels, tool, tmp_path)
    assert _key(back) == _key(labels)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.tuples(st.sampled_from(["judge", "human", "rule"]), st.integers(0, 3)), min_size=38,
                      max_size=38), tool=st.sampled_from(["phoenix", "langfuse"]))
def test_round_trip_property(traces, tmp_path, picks, tool):
    labels = _label_set(traces, lambda i: picks[i])
    assert _key(_round_trip(traces, labels, tool, tmp_path)) == _key(labels)


def test_phoenix_records_are_keyed_by_span(traces):
    t = traces[0]
    labels = AnnotationSet.from_records([
        {"trace_id": t["trace_id"], "step": 2, "field": "clarity", "value": "Clear", "unscored_reason": None,
         "rater": "gpt-judge", "provenance": PROV["judge"]},
        {"trace_id": t["trace_id"], "step": 5, "field": "correct", "value": True, "unscored_reason": None,
         "rater": "alice", "provenance": PROV["human"]},
        {"trace_id": t["trace_id"], "step": 0, "field": "grounding", "value": None, "unscored_reason": "abstained",
         "rater": "gpt-judge", "provenance": PROV["judge"]}])
    index = span_index(traces)
    ph = span_label_records(labels, index, to="phoenix")
    assert ph.unscored == 1 and len(ph.records) == 2
    first, second = ph.records
    assert first["span_id"] == t["steps"][2]["source_ref"]["record_id"]
    assert (first["name"], first["annotator_kind"], first["result"]["label"], first["result"]["score"]) == (
        "clarity", "LLM", "Clear", None)
    assert first["metadata"]["model"] == "gpt-4.1-mini" and first["metadata"]["prompt_sha256"] == "a" * 64
    assert (second["annotator_kind"], second["result"]["label"], second["result"]["score"]) == ("HUMAN", "true", 1.0)
    lf = span_label_records(labels, index, to="langfuse").records
    assert lf[0]["traceId"] == t["source"]["record_id"] and lf[0]["observationId"] == first["span_id"]
    assert (lf[0]["value"], lf[0]["dataType"], lf[1]["value"], lf[1]["dataType"]) == (
        "Clear", "CATEGORICAL", 1, "BOOLEAN")


def test_annotations_made_in_the_tools(traces, tmp_path):
    t = traces[0]
    reasoning_span, result_span = (t["steps"][i]["source_ref"]["record_id"] for i in (0, 2))
    ph = tmp_path / "phoenix.json"  # as the span-annotations API answers
    ph.write_text(json.dumps({"data": [
        {"id": "U3Bhbjox", "span_id": reasoning_span, "name": "groundedness", "annotator_kind": "HUMAN",
         "result": {"label": "not grounded", "score": 0, "explanation": "no source yet"}, "user_id": "alice",
         "identifier": "", "source": "APP", "created_at": "2026-01-01T00:00:00+00:00"},
        {"span_id": result_span, "name": "hallucination", "annotator_kind": "LLM", "result": {"label": "no"}}]}))
    got = read_span_labels(ph, span_index(traces), source="phoenix")
    assert got.ignored_names == {"hallucination": 1}
    [rec] = got.labels.to_records()
    assert (rec["trace_id"], rec["step"], rec["field"], rec["value"], rec["rater"], rec["provenance"]["kind"]) == (
        t["trace_id"], 0, "grounding", "NotGrounded", "alice", "human")
    lf = tmp_path / "scores.jsonl"  # Langfuse's blob-storage export (snake_case)
    lf.write_text(json.dumps({"id": "s1", "trace_id": t["source"]["record_id"], "observation_id": result_span,
                              "name": "sufficiency", "value": 0, "string_value": "Insufficient",
                              "data_type": "CATEGORICAL", "source": "EVAL", "comment": "thin"}) + "\n")
    [rec] = read_span_labels(lf, span_index(traces), source="langfuse").labels.to_records()
    assert (rec["step"], rec["field"], rec["value"], rec["rater"], rec["provenance"]["kind"]) == (
        2, "sufficiency", "Insufficient", "langfuse-judge", "judge")


def test_loud_failures(traces, tmp_path):
    index = span_index(traces)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"span_id": "0" * 16, "name": "clarity", "result": {"label": "Clear"}}) + "\n"
                   + json.dumps({"span_id": traces[0]["steps"][2]["source_ref"]["record_id"], "name": "clarity",
                                 "result": {"label": "Blurry"}}) + "\n")
    with pytest.raises(UserInputError, match="bad.jsonl:1.*no step of the traces comes from this span"):
        read_span_labels(bad, index, source="phoenix")
    got = read_span_labels(bad, index, source="phoenix", skip_invalid=True)
    assert len(got.labels) == 0 and [e.line for e in got.skipped] == [1, 2]
    assert "outside the ontology" in str(got.skipped[1])
    # a field that fits no step of the span: clarity on a reasoning span
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text(json.dumps({"span_id": traces[0]["steps"][0]["source_ref"]["record_id"], "name": "clarity",
                                 "result": {"label": "Clear"}}) + "\n")
    with pytest.raises(UserInputError, match="has no step clarity applies to"):
        read_span_labels(wrong, index, source="phoenix")


def test_traces_not_from_spans(traces):
    other = [{**t, "source": {**t["source"], "format": "inspect"},
              "steps": [{**s, "source_ref": {**s["source_ref"], "format": "inspect"}} for s in t["steps"]]}
             for t in traces]
    with pytest.raises(UserInputError, match=r"not imported from spans \(format inspect\)"):
        span_index(other)
    labels = AnnotationSet.from_records([{"trace_id": "elsewhere", "step": 0, "field": "clarity", "value": "Clear",
                                          "unscored_reason": None, "rater": "r", "provenance": PROV["human"]}])
    with pytest.raises(UserInputError, match="its trace is not in the trace files"):
        span_label_records(labels, span_index(traces), to="phoenix")
    assert len(span_label_records(labels, span_index(traces), to="phoenix", skip_invalid=True).skipped) == 1


def test_phoenix_annotation_dataframe_as_parquet(traces, tmp_path):
    # get_span_annotations_dataframe's flattened columns, saved with DataFrame.to_parquet
    import pandas as pd

    t = traces[1]
    rows = [{"span_id": t["steps"][1]["source_ref"]["record_id"], "annotation_name": "search_type",
             "annotator_kind": "LLM", "result.label": "InitialQuery", "result.score": None,
             "result.explanation": "first query", "metadata": json.dumps({"rater": "gpt-judge"})},
            {"span_id": t["steps"][4]["source_ref"]["record_id"], "annotation_name": "clarity",
             "annotator_kind": "LLM", "result.label": "unclear", "result.score": None, "result.explanation": None,
             "metadata": json.dumps({"rater": "gpt-judge"})}]
    path = tmp_path / "annotations.parquet"
    pd.DataFrame(rows).to_parquet(path)
    got = read_span_labels(path, span_index(traces), source="phoenix").labels.to_records()
    assert [(r["trace_id"], r["step"], r["field"], r["value"], r["rater"], r["provenance"]["kind"]) for r in got] == [
        (t["trace_id"], 1, "search_type", "InitialQuery", "gpt-judge", "judge"),
        (t["trace_id"], 4, "clarity", "Unclear", "gpt-judge", "judge")]
    assert got[0]["provenance"]["explanation"] == "first query"


def test_trace_level_correctness_goes_to_the_answer(traces, tmp_path):
    t = traces[2]  # the GenAI agent trace: one answer step
    path = tmp_path / "scores.json"
    path.write_text(json.dumps([{"traceId": t["source"]["record_id"], "observationId": None, "name": "correct",
                                 "value": 1, "dataType": "BOOLEAN", "source": "ANNOTATION", "authorUserId": "bob"}]))
    [rec] = read_span_labels(path, span_index(traces), source="langfuse").labels.to_records()
    answer = next(s["index"] for s in t["steps"] if s["kind"] == "answer")
    assert (rec["trace_id"], rec["step"], rec["field"], rec["value"], rec["rater"]) == (
        t["trace_id"], answer, "correct", True, "bob")
