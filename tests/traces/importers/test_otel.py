"""OpenTelemetry traces: real SDK spans (OpenInference and GenAI attributes) exported to files, imported back."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seekbench import UserInputError
from seekbench.traces import detect_format, read_traces
from seekbench.traces.importers._otel import iter_records

from _importer_support import FIXTURES, load_records, write_jsonl

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("openinference.semconv")

from _otel_files import (QUESTION, OtlpJsonExporter, SpanTableExporter, genai_event_run, genai_run,  # noqa: E402
                         openinference_run, provider)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("otel")
    b64, hexed, table = OtlpJsonExporter(d / "oi_b64.jsonl", hex_ids=False), \
        OtlpJsonExporter(d / "oi_hex.jsonl", hex_ids=True), SpanTableExporter()
    tp = provider(b64, hexed, table)
    openinference_run(tp)
    openinference_run(tp, question="Capital of France?", qid="q2")
    g = OtlpJsonExporter(d / "genai.jsonl", hex_ids=True)
    tp2 = provider(g)
    genai_run(tp2)
    genai_event_run(tp2)
    return {"oi_b64": d / "oi_b64.jsonl", "oi_hex": d / "oi_hex.jsonl", "genai": d / "genai.jsonl",
            "table_jsonl": table.write(d / "spans.jsonl"), "table_parquet": table.write(d / "spans.parquet")}


def _shape(t: dict) -> list[tuple]:
    return [(s["kind"], s.get("tool"), s.get("query"), [(d["id"], d["title"], d.get("score")) for d in
                                                         s.get("documents", [])]) for s in t["steps"]]


OI_STEPS = [("reasoning", None, None, []),
            ("search", "web_search", "capital of France", []),
            # a retrieving tool: its documents are the retriever's under it, with ids and scores
            ("search_result", None, None, [("wiki-Paris", "Paris", 0.9), ("wiki-France", "France", 0.8)]),
            # a retriever outside any tool is a search of its own
            ("search", "kb-lookup", "Paris population", []),
            ("search_result", None, None, [("kb-7", None, 0.5)]),
            ("answer", None, None, [])]


@pytest.mark.parametrize("name", ["oi_b64", "oi_hex", "table_jsonl", "table_parquet"])
def test_openinference_spans_rebuild_one_trace_per_agent(files, name):
    path = files[name]
    assert detect_format(path) == "otel"
    traces = read_traces(path).traces
    assert [t["question_id"] for t in traces] == ["q1", "q2"]
    t = traces[0]
    assert t["agent"] == "capital-agent/gpt-test" and t["dataset"] == "capitals"
    assert t["question"] == QUESTION and t["gold_answers"] == ["Paris"] and t["final_answer"] == "Paris"
    assert _shape(t) == OI_STEPS
    assert t["steps"][2]["depends_on"] == [1] and t["steps"][4]["depends_on"] == [3]
    assert t["steps"][2]["documents"][0]["url"] == "https://en.wikipedia.org/wiki/Paris"
    # every step names its span; the two steps of a tool span share it
    refs = [s["source_ref"]["record_id"] for s in t["steps"]]
    assert all(len(r) == 16 for r in refs) and refs[1] == refs[2] and refs[3] == refs[4] and len(set(refs)) == 4
    assert t["trace_id"] == t["source"]["record_id"] and len(t["trace_id"]) == 32


def test_id_encodings_and_table_shapes_agree(files):
    def key(path):
        return [(t["trace_id"], [s["source_ref"]["record_id"] for s in t["steps"]], _shape(t))
                for t in read_traces(path).traces]

    ref = key(files["oi_hex"])
    for name in ("oi_b64", "table_jsonl", "table_parquet"):
        assert key(files[name]) == ref, name


def test_genai_spans(files):
    t = read_traces(files["genai"]).traces[0]
    assert t["agent"] == "capital-agent/gpt-test" and t["question"] == QUESTION
    assert t["gold_answers"] == ["Paris", "City of Paris"] and t["final_answer"] == "Paris"
    assert _shape(t) == [
        ("reasoning", None, None, []),  # the reasoning part of the chat output
        ("search", "web_search", "capital of France", []),
        ("search_result", None, None, [(None, "Paris", None), (None, "France", None)]),  # parsed from the result
        ("search", "retrieval kb", "Paris population", []),
        ("search_result", None, None, [("kb-7", None, 0.5)]),
        ("answer", None, None, [])]
    assert t["steps"][0]["text"] == "The user wants a capital; search first."
    assert [s["source_ref"]["path"] for s in t["steps"]][1:5] == [
        "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.retrieval.query.text",
        "gen_ai.retrieval.documents"]


def test_deprecated_event_form_without_agent_or_tool_spans(files):
    traces = read_traces(files["genai"]).traces
    t = traces[1]  # one trace per OTel trace when it has no agent span
    assert t["agent"] == "gpt-old" and t["question"] == QUESTION and t["final_answer"] == "Paris"
    assert [s["kind"] for s in t["steps"]] == ["search", "search_result", "answer"]
    call, result, answer = t["steps"]
    assert call["query"] == "capital of France" and result["depends_on"] == [0]
    assert [d["title"] for d in result["documents"]] == ["Paris", "France"]
    # the call is in the first chat span's output, its result in the second chat span's input
    assert call["source_ref"]["record_id"] != result["source_ref"]["record_id"] == answer["source_ref"]["record_id"]


def test_one_document_file_and_bad_lines(files, tmp_path):
    lines = files["oi_hex"].read_text().splitlines()
    merged = {"resourceSpans": [rs for ln in lines for rs in json.loads(ln)["resourceSpans"]]}
    doc = tmp_path / "one.json"
    doc.write_text(json.dumps(merged, indent=2))
    assert detect_format(doc) == "otel"
    assert [_shape(t) for t in read_traces(doc).traces] == [OI_STEPS, OI_STEPS]
    bad = write_jsonl(tmp_path, *lines[:3], '{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "zz"}]}]}]}',
                      *lines[3:], name="bad.jsonl")
    recs = load_records(iter_records, bad)
    errors = [r for r in recs if isinstance(r, UserInputError)]
    assert len(errors) == 1 and errors[0].line == 4 and "traceId" in str(errors[0])
    assert len([r for r in recs if isinstance(r, dict)]) == 2  # the neighbours' traces are kept


def test_orphan_spans_and_missing_agent(tmp_path):
    span = {"traceId": "0" * 31 + "1", "spanId": "0" * 15 + "2", "parentSpanId": "0" * 15 + "9", "name": "x",
            "startTimeUnixNano": "1", "attributes": [{"key": "gen_ai.operation.name",
                                                      "value": {"stringValue": "chat"}}]}
    path = write_jsonl(tmp_path, {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}, name="o.jsonl")
    recs = load_records(iter_records, path)
    assert isinstance(recs[0], UserInputError) and "no agent name" in str(recs[0])
    assert load_records(iter_records, path, agent="me")[0]["agent"] == "me"


def test_phoenix_span_json_with_nested_attributes(files, tmp_path):
    # Phoenix's span JSON: a "context" object and one nested "attributes" object per span
    def nest(flat: dict) -> dict:
        out: dict = {}
        for key, value in flat.items():
            node = out
            parts = key.split(".")
            for p in parts[:-1]:
                node = node.setdefault(p, {})
            node[parts[-1]] = value
        return out

    rows = []
    for line in files["table_jsonl"].read_text().splitlines():
        row = json.loads(line)
        attrs = {k[len("attributes."):]: v for k, v in row.items() if k.startswith("attributes.")}
        rows.append({"name": row["name"], "span_kind": row["span_kind"], "parent_id": row["parent_id"],
                     "start_time": row["start_time"], "end_time": row["end_time"],
                     "context": {"trace_id": row["context.trace_id"], "span_id": row["context.span_id"]},
                     "attributes": nest(attrs)})
    path = write_jsonl(tmp_path, *rows, name="phoenix_spans.jsonl")
    assert detect_format(path) == "otel"
    assert [_shape(t) for t in read_traces(path).traces] == [OI_STEPS, OI_STEPS]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(list(range(9))))
def test_line_order_does_not_matter(files, tmp_path, order):
    # Spans arrive in end order, one export per line; the trees are rebuilt from ids and start times.
    lines = files["oi_hex"].read_text().splitlines()
    assert len(lines) == 12  # 6 spans per agent run, each exported when it ends
    path = write_jsonl(tmp_path, *[lines[i] for i in order], *lines[9:], name="shuffled.jsonl")
    ref = sorted((t["trace_id"], json.dumps(_shape(t))) for t in read_traces(files["oi_hex"]).traces)
    assert sorted((t["trace_id"], json.dumps(_shape(t))) for t in read_traces(path).traces) == ref


SHAPES = FIXTURES / "shapes"


def test_opaque_ids_and_action_tools_otlp():
    # our OTLP JSON with ids that are neither hex nor base64 ("run-2026-05-07-a", "tool:bash"): kept as they are
    (t,) = read_traces(SHAPES / "otel_opaque_ids.json").traces
    assert (t["trace_id"], t["source"]["record_id"]) == ("run-2026-05-07-a", "run-2026-05-07-a")
    assert t["agent"] == "data-helper/small-model" and t["gold_answers"] == ["1,204 rows"]
    assert t["question"] == "How many rows does the Tarn survey table have, and where is it described?"
    # create_dataset, bash and kb retrieve nothing by name: actions (call, then output), in start order;
    # the first chat span's tool call is not a step of its own (the tool spans are the calls)
    assert _shape(t) == [("other", "create_dataset", None, []), ("other", None, None, []),
                         ("other", "bash", None, []), ("other", None, None, []),
                         ("search", "web_search", "Tarn survey table documentation", []),
                         ("search_result", None, None, [(None, "Tarn survey", None)]),
                         ("other", "kb", None, []), ("other", None, None, []),
                         ("answer", None, None, [])]
    assert [s["source_ref"]["record_id"] for s in t["steps"]][:4] == [
        "tool:create_dataset", "tool:create_dataset", "tool:bash", "tool:bash"]
    assert t["steps"][2]["text"] == "wc -l tarn.csv" and t["steps"][3]["text"] == "1205 tarn.csv"
    assert t["steps"][3]["original_kind"] == "tool_result" and t["steps"][3]["depends_on"] == [2]
    assert t["final_answer"] == "1,204 rows; see https://example.org/tarn"
    assert t["metadata"]["tool_kinds"] == {"bash": "other", "create_dataset": "other", "kb": "other",
                                           "web_search": "search"}


def test_search_tools_with_otel():
    # exactly the listed tools are searches: kb joins web_search, the others stay actions
    (t,) = read_traces(SHAPES / "otel_opaque_ids.json", search_tools="web_search,kb").traces
    assert [s["kind"] for s in t["steps"]] == ["other", "other", "other", "other", "search", "search_result",
                                               "search", "search_result", "answer"]
    assert (t["steps"][6]["query"], [d["title"] for d in t["steps"][7]["documents"]]) == (
        "Tarn survey codebook", ["Codebook"])
    (t,) = read_traces(SHAPES / "otel_opaque_ids.json", search_tools=["bash"]).traces
    assert [s.get("tool") for s in t["steps"] if s["kind"] == "search"] == ["bash"]
    assert t["steps"][2]["query"] == "wc -l tarn.csv"  # a bare string argument is the query


def test_phoenix_span_rows_with_string_ids_and_actions():
    (t,) = read_traces(SHAPES / "otel_phoenix_tools.jsonl").traces
    assert (t["trace_id"], t["agent"], t["question"]) == (
        "phx-trace-17", "notebook-agent", "Which lake in the Tarn survey is deepest?")
    assert _shape(t) == [("other", "ask_user", None, []), ("other", None, None, []),
                         ("search", "search_docs", "Tarn survey deepest lake", []),
                         ("search_result", None, None, [(None, "Lake Orrin", None), (None, "Lake Sel", None)]),
                         ("other", "run_python", None, []), ("other", None, None, []),
                         ("answer", None, None, [])]
    assert [s["source_ref"]["record_id"] for s in t["steps"]] == ["S-ask", "S-ask", "S-search", "S-search",
                                                                   "S-py", "S-py", "S-Agent"]
    assert (t["final_answer"], t["correct"]["value"]) == ("Lake Orrin", True)


@pytest.mark.parametrize("value, why", [(None, "got nothing"), ("", "got an empty string"), (7, "got 7")])
def test_missing_empty_or_non_string_ids_are_user_errors(tmp_path, value, why):
    row = json.loads((SHAPES / "otel_phoenix_tools.jsonl").read_text().splitlines()[1])
    row["context"]["span_id"] = value
    (err,) = [r for r in load_records(iter_records, write_jsonl(tmp_path, row, name="r.jsonl"))
              if isinstance(r, UserInputError)]
    assert "context.span_id must be a non-empty string id" in str(err) and why in str(err) and err.line == 1


def test_labels_round_trip_on_mixed_case_span_ids(tmp_path):
    from seekbench.labels import AnnotationSet, read_span_labels, span_index, span_label_records, write_span_labels

    traces = read_traces(SHAPES / "otel_phoenix_tools.jsonl").traces
    labels = AnnotationSet.from_records([
        {"trace_id": "phx-trace-17", "step": 3, "field": "clarity", "value": "Clear", "unscored_reason": None,
         "rater": "alice", "provenance": {"kind": "human", "time": "2026-05-08T00:00:00Z"}}])
    index = span_index(traces)
    for tool in ("phoenix", "langfuse"):
        export = span_label_records(labels, index, to=tool)
        assert (export.records[0].get("span_id") or export.records[0]["observationId"]) == "S-search"
        write_span_labels(tmp_path / f"{tool}.jsonl", export)
        # the id is opaque: "S-search" comes back to its step, not lowercased into no span
        (back,) = read_span_labels(tmp_path / f"{tool}.jsonl", index, source=tool).labels.to_records()
        assert (back["trace_id"], back["step"], back["value"]) == ("phx-trace-17", 3, "Clear")
