"""Real spans from the OpenTelemetry SDK, written to files by real exporters (SpanExporter subclasses).

``OtlpJsonExporter`` writes each export batch as one OTLP JSON line: the SDK's own protobuf encoder
(``opentelemetry-exporter-otlp-proto-common``) then protobuf's JSON mapping, with ids either as
protobuf writes bytes (base64) or as the OTLP JSON encoding says (hex). ``SpanTableExporter`` writes
one row per span in the shape of a Phoenix span DataFrame (``context.span_id``, ``parent_id``,
``span_kind``, ``attributes.<key>`` columns holding lists of objects), as JSONL or Parquet.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from collections.abc import Sequence
from pathlib import Path

from google.protobuf import json_format
from openinference.semconv.trace import (DocumentAttributes, MessageAttributes, OpenInferenceSpanKindValues,
                                         SpanAttributes, ToolCallAttributes)
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

QUESTION = "What is the capital of France?"
RESULTS = [{"title": "Paris", "text": "Paris is the capital and largest city of France.",
            "url": "https://en.wikipedia.org/wiki/Paris"},
           {"title": "France", "text": "France is a country in Western Europe.",
            "url": "https://en.wikipedia.org/wiki/France"}]


class OtlpJsonExporter(SpanExporter):
    """Append each batch of finished spans to ``path`` as one OTLP JSON object per line."""

    def __init__(self, path: Path, *, hex_ids: bool) -> None:
        self.path, self.hex_ids = path, hex_ids

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        doc = json_format.MessageToDict(encode_spans(spans))
        if self.hex_ids:  # the OTLP JSON encoding: ids as hex, not protobuf's base64
            for rs in doc["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for sp in ss["spans"]:
                        for key in ("traceId", "spanId", "parentSpanId"):
                            if key in sp:
                                sp[key] = base64.b64decode(sp[key]).hex()
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(doc) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def _nest(attrs: dict) -> dict:
    """OpenInference's flat keys as a Phoenix DataFrame holds them: ``llm.input_messages`` -> a list of
    ``{"message.role": ..., "message.tool_calls": [{"tool_call.id": ...}]}``."""
    out: dict = {}
    for key, value in attrs.items():
        m = re.match(r"^(.*?)\.(\d+)\.(.+)$", key)
        if not m:
            out[key] = value
            continue
        items = out.setdefault(m.group(1), [])
        while len(items) <= int(m.group(2)):
            items.append({})
        items[int(m.group(2))].update(_nest({m.group(3): value}))
    return out


class SpanTableExporter(SpanExporter):
    """Collect finished spans as Phoenix-style span rows; ``write`` saves them as JSONL or Parquet."""

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for s in spans:
            attrs = dict(s.attributes or {})
            row = {"name": s.name, "span_kind": attrs.get(SpanAttributes.OPENINFERENCE_SPAN_KIND, "UNKNOWN"),
                   "parent_id": None if s.parent is None else format(s.parent.span_id, "016x"),
                   "start_time": dt.datetime.fromtimestamp(s.start_time / 1e9, dt.timezone.utc).isoformat(),
                   "end_time": dt.datetime.fromtimestamp(s.end_time / 1e9, dt.timezone.utc).isoformat(),
                   "status_code": s.status.status_code.name,
                   "context.span_id": format(s.context.span_id, "016x"),
                   "context.trace_id": format(s.context.trace_id, "032x")}
            for key, value in _nest(attrs).items():
                row[f"attributes.{key}"] = list(value) if isinstance(value, tuple) else value
            self.rows.append(row)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def write(self, path: Path) -> Path:
        if path.suffix == ".parquet":
            import pandas as pd

            pd.DataFrame(self.rows).to_parquet(path)
        else:
            path.write_text("".join(json.dumps(r) + "\n" for r in self.rows), encoding="utf-8")
        return path


def provider(*exporters: SpanExporter) -> TracerProvider:
    p = TracerProvider(resource=Resource.create({"service.name": "capital-service"}))
    for e in exporters:
        p.add_span_processor(SimpleSpanProcessor(e))
    return p


def _messages(prefix: str, messages: list[dict]) -> dict:
    out = {}
    for i, m in enumerate(messages):
        base = f"{prefix}.{i}."
        out[base + MessageAttributes.MESSAGE_ROLE] = m["role"]
        if m.get("content") is not None:
            out[base + MessageAttributes.MESSAGE_CONTENT] = m["content"]
        for j, tc in enumerate(m.get("tool_calls", [])):
            tb = f"{base}{MessageAttributes.MESSAGE_TOOL_CALLS}.{j}."
            out[tb + ToolCallAttributes.TOOL_CALL_ID] = tc["id"]
            out[tb + ToolCallAttributes.TOOL_CALL_FUNCTION_NAME] = tc["name"]
            out[tb + ToolCallAttributes.TOOL_CALL_FUNCTION_ARGUMENTS_JSON] = json.dumps(tc["arguments"])
    return out


def openinference_run(tp: TracerProvider, *, question: str = QUESTION, qid: str = "q1") -> None:
    """An agent (OpenInference): LLM call -> retrieving tool (with a retriever under it) -> retriever -> LLM answer."""
    kind = SpanAttributes.OPENINFERENCE_SPAN_KIND
    t = tp.get_tracer("capital-agent")
    args = {"query": "capital of France"}
    with t.start_as_current_span("capital-agent", attributes={
            kind: OpenInferenceSpanKindValues.AGENT.value, SpanAttributes.INPUT_VALUE: question,
            SpanAttributes.AGENT_NAME: "capital-agent",
            SpanAttributes.METADATA: json.dumps({"gold_answers": ["Paris"], "dataset": "capitals",
                                                 "question_id": qid})}) as agent:
        with t.start_as_current_span("ChatCompletion", attributes={
                kind: OpenInferenceSpanKindValues.LLM.value, SpanAttributes.LLM_MODEL_NAME: "gpt-test",
                **_messages(SpanAttributes.LLM_INPUT_MESSAGES, [{"role": "system", "content": "Answer briefly."},
                                                                 {"role": "user", "content": question}]),
                **_messages(SpanAttributes.LLM_OUTPUT_MESSAGES, [{
                    "role": "assistant", "content": "I should look this up.",
                    "tool_calls": [{"id": "call_1", "name": "web_search", "arguments": args}]}])}):
            pass
        with t.start_as_current_span("web_search", attributes={
                kind: OpenInferenceSpanKindValues.TOOL.value, SpanAttributes.TOOL_NAME: "web_search",
                SpanAttributes.INPUT_VALUE: json.dumps(args), SpanAttributes.OUTPUT_VALUE: json.dumps(RESULTS)}):
            docs = {}
            for i, r in enumerate(RESULTS):
                base = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{i}."
                docs.update({base + DocumentAttributes.DOCUMENT_ID: f"wiki-{r['title']}",
                             base + DocumentAttributes.DOCUMENT_CONTENT: r["text"],
                             base + DocumentAttributes.DOCUMENT_SCORE: 0.9 - i / 10,
                             base + DocumentAttributes.DOCUMENT_METADATA: json.dumps({"title": r["title"],
                                                                                     "url": r["url"]})})
            with t.start_as_current_span("wiki-retriever", attributes={
                    kind: OpenInferenceSpanKindValues.RETRIEVER.value,
                    SpanAttributes.INPUT_VALUE: "capital of France", **docs}):
                pass
        base = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.0."
        with t.start_as_current_span("kb-lookup", attributes={
                kind: OpenInferenceSpanKindValues.RETRIEVER.value, SpanAttributes.INPUT_VALUE: "Paris population",
                base + DocumentAttributes.DOCUMENT_ID: "kb-7",
                base + DocumentAttributes.DOCUMENT_CONTENT: "Paris has 2.1 million inhabitants.",
                base + DocumentAttributes.DOCUMENT_SCORE: 0.5}):
            pass
        with t.start_as_current_span("ChatCompletion", attributes={
                kind: OpenInferenceSpanKindValues.LLM.value, SpanAttributes.LLM_MODEL_NAME: "gpt-test",
                **_messages(SpanAttributes.LLM_OUTPUT_MESSAGES, [{"role": "assistant",
                                                                  "content": "<answer>Paris</answer>"}])}):
            pass
        agent.set_attribute(SpanAttributes.OUTPUT_VALUE, "Paris")


def genai_run(tp: TracerProvider) -> None:
    """An agent (OTel GenAI attributes): chat with reasoning and a tool call -> execute_tool -> retrieval -> chat."""
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as g

    t = tp.get_tracer("capital-agent")
    args = {"query": "capital of France"}
    user = [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]
    with t.start_as_current_span("invoke_agent capital-agent", attributes={
            g.GEN_AI_OPERATION_NAME: "invoke_agent", g.GEN_AI_AGENT_NAME: "capital-agent",
            g.GEN_AI_INPUT_MESSAGES: json.dumps(user),
            "metadata": json.dumps({"gold_answers": ["Paris", "City of Paris"], "question_id": "q1"})}):
        with t.start_as_current_span("chat gpt-test", attributes={
                g.GEN_AI_OPERATION_NAME: "chat", g.GEN_AI_REQUEST_MODEL: "gpt-test",
                g.GEN_AI_INPUT_MESSAGES: json.dumps(user),
                g.GEN_AI_OUTPUT_MESSAGES: json.dumps([{"role": "assistant", "finish_reason": "tool_call", "parts": [
                    {"type": "reasoning", "content": "The user wants a capital; search first."},
                    {"type": "tool_call", "id": "call_1", "name": "web_search", "arguments": args}]}])}):
            pass
        with t.start_as_current_span("execute_tool web_search", attributes={
                g.GEN_AI_OPERATION_NAME: "execute_tool", g.GEN_AI_TOOL_NAME: "web_search",
                g.GEN_AI_TOOL_CALL_ID: "call_1", g.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(args),
                g.GEN_AI_TOOL_CALL_RESULT: json.dumps(RESULTS)}):
            pass
        with t.start_as_current_span("retrieval kb", attributes={
                g.GEN_AI_OPERATION_NAME: "retrieval", g.GEN_AI_RETRIEVAL_QUERY_TEXT: "Paris population",
                g.GEN_AI_RETRIEVAL_DOCUMENTS: json.dumps([{"id": "kb-7", "score": 0.5,
                                                           "content": "Paris has 2.1 million inhabitants."}])}):
            pass
        with t.start_as_current_span("chat gpt-test", attributes={
                g.GEN_AI_OPERATION_NAME: "chat", g.GEN_AI_REQUEST_MODEL: "gpt-test",
                g.GEN_AI_OUTPUT_MESSAGES: json.dumps([{"role": "assistant", "finish_reason": "stop", "parts": [
                    {"type": "text", "content": "<answer>Paris</answer>"}]}])}):
            pass


def genai_event_run(tp: TracerProvider) -> None:
    """The deprecated GenAI event form, no agent or tool span: two chat spans whose messages are span events."""
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as g

    t = tp.get_tracer("legacy-client")
    call = {"id": "call_9", "type": "function",
            "function": {"name": "web_search", "arguments": json.dumps({"query": "capital of France"})}}
    with t.start_as_current_span("handle_request"):  # a plain parent: one OTel trace, no agent span
        with t.start_as_current_span("chat gpt-old", attributes={g.GEN_AI_OPERATION_NAME: "chat",
                                                                 g.GEN_AI_REQUEST_MODEL: "gpt-old"}) as s:
            s.add_event("gen_ai.user.message", {"content": QUESTION})
            s.add_event("gen_ai.choice", {"index": 0, "finish_reason": "tool_calls",
                                          "message": json.dumps({"role": "assistant", "tool_calls": [call]})})
        with t.start_as_current_span("chat gpt-old", attributes={g.GEN_AI_OPERATION_NAME: "chat",
                                                                 g.GEN_AI_REQUEST_MODEL: "gpt-old"}) as s:
            s.add_event("gen_ai.user.message", {"content": QUESTION})
            s.add_event("gen_ai.assistant.message", {"tool_calls": json.dumps([call])})
            s.add_event("gen_ai.tool.message", {"id": "call_9", "content": json.dumps(RESULTS)})
            s.add_event("gen_ai.choice", {"index": 0, "finish_reason": "stop",
                                          "message": json.dumps({"role": "assistant", "content": "Paris"})})
