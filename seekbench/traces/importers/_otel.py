"""Importer for OpenTelemetry traces: OTLP JSON and span tables, in the GenAI or OpenInference conventions.

Spans are read whole (a trace's spans may be spread over many lines) and each trace is rebuilt
from its span tree (trace id, parent span id, start time). One seekbench trace per outermost
agent span (OpenInference ``openinference.span.kind`` AGENT, GenAI ``gen_ai.operation.name``
invoke_agent), or per OTel trace when it has none. Walking the tree in start-time order:

- an LLM span (OpenInference LLM; GenAI chat / text_completion / generate_content) gives its output
  message's reasoning, and its text as reasoning, or as the answer when it is the last LLM call
  and makes no tool call;
- a tool span (TOOL; execute_tool) of a retrieving tool (:func:`._tools.is_search_tool`: by its
  name, by ``search_tools``, or because retriever spans sit under it) gives a search step
  (``tool.name`` / ``gen_ai.tool.name``; arguments from ``input.value`` /
  ``gen_ai.tool.call.arguments``, a bare string being the query) and a search_result
  (``output.value`` / ``gen_ai.tool.call.result``) whose documents are those of the retriever
  spans under the tool when there are any, else parsed from the output text; any other tool span
  (``bash``, ``create_dataset``, ``ask_user``) gives an action: an ``other`` step naming the tool,
  then an ``other`` step with its output;
- a retriever span (RETRIEVER; GenAI retrieval) outside a tool gives a search (``input.value`` /
  ``gen_ai.retrieval.query.text``) and a search_result with ``retrieval.documents.<i>.document.
  {id, content, score, metadata}`` (or ``gen_ai.retrieval.documents``);
- when a trace has no tool or retriever span, the tool calls in LLM output messages are the
  searches (or actions, classified the same way), and the ``tool`` messages answering them in
  later LLM inputs their results;
- a tool span or tool call of an answer tool (``final_answer``, ``submit`` ..., ``answer_tool``;
  :mod:`._answer_tools`) is the answer step, its argument the final answer; a later LLM's text is
  then reasoning, not a second answer.

Each tool's decided kind is kept in ``metadata["tool_kinds"]``.

Every step's ``source_ref.record_id`` is the id of the span it came from (``path`` names the
attribute), so labels can go back to the span (``seekbench export-labels``). The question is the
agent span's ``input.value`` (or its first user message, else the first LLM call's); gold answers,
dataset, question id and correctness come from the agent span's ``metadata`` (``gold_answers`` /
``golden_answers`` / ``ground_truth``, ``dataset``, ``question_id``, ``is_correct``). The agent is
``agent.name`` / ``gen_ai.agent.name`` and, when known, ``/`` + the first LLM call's model.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import cast

from ..._errors import UserInputError
from ..._limits import ReadLimits
from ._answer_tools import is_answer_tool, resolve_answer_tools
from ._base import ImportedRecord, RecordContext, new_trace
from ._openai_chat import StepBuilder, extract_answer, search_step
from ._otel_documents import as_text, span_documents
from ._otel_fields import agent_name, first_of, question_of, root_metadata, trace_sources
from ._otel_messages import messages
from ._otel_spans import Span, first_is_spans, json_value, malformed, read_spans, span_table_columns
from ._search_r1 import apply_fields, record_fields
from ._tools import is_search_tool, record_tool_kinds, resolve_search_tools

FORMAT = "otel"
_GENAI_KIND = {
    "chat": "LLM",
    "text_completion": "LLM",
    "generate_content": "LLM",
    "execute_tool": "TOOL",
    "invoke_agent": "AGENT",
    "retrieval": "RETRIEVER",
    "embeddings": "EMBEDDING",
}


def sniff(path: str, head: str, first: object) -> bool:
    """True for OTLP JSON, a span-table row (JSONL), or a span table stored as Parquet."""
    if head.startswith("PAR1"):
        import pyarrow.parquet as pq

        try:
            return span_table_columns(pq.ParquetFile(path).schema_arrow.names)
        except Exception:  # not readable as Parquet: the parquet importer says why
            return False
    return first_is_spans(first)


def span_kind(span: Span) -> str:
    """LLM, TOOL, RETRIEVER, AGENT, CHAIN, ... from either convention."""
    oi = span.attrs.get("openinference.span.kind")
    if isinstance(oi, str) and oi.strip():
        return oi.strip().upper()
    op = span.attrs.get("gen_ai.operation.name")
    if isinstance(op, str):
        return _GENAI_KIND.get(op, "CHAIN")
    if any(str(e.get("name", "")).startswith("gen_ai.") for e in span.events):
        return "LLM"
    return "CHAIN"


def iter_records(
    path: str | os.PathLike,
    *,
    agent: str | None = None,
    answer_tag: str | None = "answer",
    search_tools: str | Iterable[str] | None = None,
    answer_tool: str | Iterable[str] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[ImportedRecord]:
    """Rebuild the traces of an OpenTelemetry file (see the module docstring for the mapping).

    Parameters
    ----------
    path : str or PathLike
        OTLP JSON (one object per line, or one document), span-table JSONL, or span-table Parquet.
    agent : str, optional
        The agent when no span names one (``agent.name``, a model name, or ``service.name``).
    answer_tag : str or None, default "answer"
        Take ``final_answer`` from the last ``<answer_tag>`` block of the answer; None keeps the text.
    search_tools : str or list, optional
        The tool names that are searches; other tools are ``other`` steps (default: by name, :mod:`._tools`).
    answer_tool : str or list, optional
        More tool names whose call gives the answer, beside ``submit``, ``final_answer``, ... (:mod:`._answer_tools`).
    limits : ReadLimits, optional
        The byte limits of the read (default :data:`seekbench._limits.DEFAULT_LIMITS`).

    Yields
    ------
    ImportedRecord
        ``line`` is the line (or row) of the trace's root span.
    """
    file = str(path)
    chosen = (resolve_search_tools(search_tools), resolve_answer_tools(answer_tool))
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for line, item in read_spans(path, limits=limits):
        if isinstance(item, UserInputError):
            yield ImportedRecord(line, error=item)
            continue
        for span in item:
            by_trace[span.trace_id].append(span)
    for tid, spans in by_trace.items():
        tree = _Tree(spans)
        roots = tree.agent_roots()
        choices: list[Span | None] = [*roots] if roots else [None]
        for root in choices:
            line = (root or tree.roots[0]).line
            trace_id = tid if root is None or len(roots) <= 1 else f"{tid}:{root.span_id}"
            try:
                trace = _build(
                    tree, root, trace_id=trace_id, file=file, agent=agent, answer_tag=answer_tag, tools=chosen
                )
                yield ImportedRecord(line, trace=trace, sources=trace_sources(trace, root, agent))
            except UserInputError as e:
                yield ImportedRecord(line, error=e)
            except (TypeError, ValueError, AttributeError, KeyError, OverflowError) as e:  # attribute of odd type
                yield ImportedRecord(line, error=malformed(e, file=file, line=line, trace_id=trace_id))


class _Tree:
    """The spans of one OTel trace as a tree; children in start-time order (file order on ties)."""

    def __init__(self, spans: list[Span]) -> None:
        ids = {s.span_id for s in spans}
        self.children: dict[str | None, list[Span]] = defaultdict(list)
        for s in spans:  # a parent missing from the file makes its children roots
            self.children[s.parent_id if s.parent_id in ids else None].append(s)
        for kids in self.children.values():
            kids.sort(key=lambda s: (isinstance(s.start, str), s.start))
        self.roots = self.children[None]

    def agent_roots(self) -> list[Span]:
        out: list[Span] = []

        def visit(s: Span) -> None:
            if span_kind(s) == "AGENT":
                out.append(s)
                return
            for c in self.children[s.span_id]:
                visit(c)

        for r in self.roots:
            visit(r)
        return out

    def walk(self, start: list[Span]) -> Iterator[Span]:
        for s in start:
            yield s
            yield from self.walk(self.children[s.span_id])


class _SpanSteps(StepBuilder):
    """Steps whose ``source_ref`` names the span they came from."""

    span: Span
    search_tools: frozenset[str] | None = None
    answer_tools: frozenset[str] | None = None
    #: True once an answer tool was called: a later LLM's text is no second answer
    answered = False
    #: tool name -> "search" or "other", as decided (``metadata["tool_kinds"]``)
    kinds: dict[str, str]

    def _ref(self, path: str) -> dict:
        return {
            "format": FORMAT,
            "file": self.ctx["file"],
            "line": self.span.line,
            "record_id": self.span.span_id,
            "path": path,
        }


def _build(
    tree: _Tree,
    root: Span | None,
    *,
    trace_id: str,
    file: str,
    agent: str | None,
    answer_tag: str | None,
    tools: tuple[frozenset[str] | None, frozenset[str] | None],
) -> dict:
    """One seekbench trace from the spans under ``root``; ``tools`` are the search and the answer tools."""
    top = [root] if root is not None else tree.roots
    spans = [s for s in tree.walk(top) if s is not root]
    kinds = {s.span_id: span_kind(s) for s in spans}
    ctx: RecordContext = {"file": file, "line": (root or top[0]).line, "trace_id": trace_id}
    llms = [s for s in spans if kinds[s.span_id] == "LLM"]
    has_tools = any(kinds[s.span_id] in ("TOOL", "RETRIEVER") for s in spans)
    final = next((s for s in reversed(llms) if _answers(s)), None)
    meta = root_metadata(root)
    fields = record_fields(meta, ctx, "metadata")
    trace = new_trace(
        trace_id=trace_id,
        agent=agent_name(root, llms, fields, agent, top[0], ctx),
        question="",
        fmt=FORMAT,
        file=file,
        line=ctx["line"],
        record_id=top[0].trace_id,
    )
    b = _SpanSteps(FORMAT, ctx)
    (b.search_tools, b.answer_tools), b.kinds = tools, {}
    under_tool: set[str] = set()
    for s in spans:
        b.span = s
        kind = kinds[s.span_id]
        if s.span_id in under_tool:
            under_tool.update(c.span_id for c in tree.children[s.span_id])
            continue
        if kind == "LLM":
            answer = _llm(b, s, final=s is final and not b.answered, tool_calls=not has_tools, answer_tag=answer_tag)
            if answer is not None:
                trace["final_answer"] = answer
        elif kind == "TOOL":
            retrievers = [c for c in tree.walk(tree.children[s.span_id]) if span_kind(c) == "RETRIEVER"]
            answer = _tool(b, s, retrievers, ctx)
            if answer is not None:
                trace["final_answer"] = answer
            under_tool.update(c.span_id for c in tree.children[s.span_id])
        elif kind == "RETRIEVER":
            _retriever(b, s)
    if trace["final_answer"] is None and root is not None and root.attrs.get("output.value") is not None:
        b.span = root
        b.new_turn()
        # output.value is not None (checked above), and json_value keeps a value that is not None so
        text = cast(str, as_text(json_value(root.attrs["output.value"])))
        b.add({"kind": "answer", "text": text, "original_kind": "AGENT"}, "output.value")
        trace["final_answer"] = extract_answer(text, answer_tag)
    trace["question"] = fields["question"] or question_of(root, llms) or ""
    apply_fields(trace, fields)
    trace["steps"] = b.finish()
    trace["metadata"] = {
        "otel": {
            "trace_id": top[0].trace_id,
            "root_span_id": None if root is None else root.span_id,
            "root_name": (root or top[0]).name,
            "spans": len(spans) + (root is not None),
        }
    }
    if meta:
        trace["metadata"]["span_metadata"] = meta
    record_tool_kinds(trace, b.kinds)
    return trace


def _answers(s: Span) -> bool:
    out = messages(s, output=True)
    return bool(out) and not any(m["tool_calls"] for m in out) and bool((out[-1]["text"] or "").strip())


def _llm(b: _SpanSteps, s: Span, *, final: bool, tool_calls: bool, answer_tag: str | None) -> str | None:
    if tool_calls:  # results of earlier calls arrive as tool messages in this call's input
        waiting = {cid for cid, _ in b.pending}
        for m in messages(s, output=False):
            if m["role"] == "tool" and m["tool_call_id"] in waiting:
                waiting.discard(m["tool_call_id"])
                b.add_result(m["text"], m["tool_call_id"], m["path"], m["path"])
    answer = None
    for m in messages(s, output=True):
        calls = []
        for j, tc in enumerate(m["tool_calls"] if tool_calls else []):
            p = f"{m['path']}.tool_calls.{j}"
            step = search_step(
                tc["name"],
                _arguments(tc["arguments"]),
                b.ctx,
                p,
                p,
                classify=True,
                search_tools=b.search_tools,
                answer_tools=b.answer_tools,
            )
            b.kinds[step["tool"]] = step["kind"]
            if step["kind"] == "answer":
                answer, b.answered = step["text"], True
            calls.append(({**step, "original_kind": "tool_call"}, p, tc["id"] or f"{s.span_id}:{j}"))
        r = None if not m["reasoning"] else (m["reasoning"], "reasoning", m["path"])
        got = b.model_turn(
            r, m["text"], ("content", m["path"]), calls, final=final and not m["tool_calls"], answer_tag=answer_tag
        )
        answer = got if got is not None else answer
    return answer


def _arguments(raw: object) -> object:
    """Tool arguments as an object: JSON text or an object; any other text is the query itself."""
    value = json_value(raw)
    if isinstance(value, dict) or value is None:
        return value
    return {"query": value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}


def _tool(b: _SpanSteps, s: Span, retrievers: list[Span], ctx: RecordContext) -> str | None:
    """The steps of a tool span: its call and its output; returns the answer when the tool gives it."""
    a = s.attrs
    name = str(first_of(a, "tool.name", "gen_ai.tool.name") or s.name)
    args_key = "input.value" if "input.value" in a else "gen_ai.tool.call.arguments"
    args = _arguments(a.get(args_key))
    search = is_search_tool(name, b.search_tools, retrieves=bool(retrievers))
    answer = is_answer_tool(name, b.answer_tools)
    if answer:  # the answer, given as the tool's argument
        step = search_step(name, args, ctx, "tool.name", args_key, answer_tools=b.answer_tools)
        b.answered, search = True, False
    elif search:
        step = search_step(name, args, ctx, "tool.name", args_key)
    else:  # an action (bash, create_dataset, ask_user): its call and its output are other steps
        step = {"kind": "other", "tool": name, "text": as_text(json_value(a.get(args_key)))}
    b.kinds[name] = step["kind"]
    b.new_turn()
    key = f"span:{s.span_id}"
    b.add({**step, "original_kind": span_kind(s)}, args_key, key, is_call=True)
    call = b.steps[-1]
    out_key = "output.value" if "output.value" in a else "gen_ai.tool.call.result"
    text = as_text(json_value(a.get(out_key)))
    b.add_result(text, key, out_key, out_key)
    if retrievers and search:  # a retrieving tool: its documents are the retrievers' (with ids and scores)
        result = b.steps[next(i for i, st in enumerate(b.steps) if st is call) + 1]
        result["documents"] = [d for r in retrievers for d in span_documents(r)]
        for rank, d in enumerate(result["documents"], start=1):
            d["rank"] = rank
    return step["text"] if answer else None


def _retriever(b: _SpanSteps, s: Span) -> None:
    a = s.attrs
    q_key = "input.value" if "input.value" in a else "gen_ai.retrieval.query.text"
    query = as_text(json_value(a.get(q_key)))
    b.new_turn()
    key = f"span:{s.span_id}"
    b.add(
        {"kind": "search", "tool": s.name or "retriever", "query": query, "text": query, "original_kind": "RETRIEVER"},
        q_key,
        key,
        is_call=True,
    )
    docs = span_documents(s)
    text = as_text(json_value(a.get("output.value"))) or "\n\n".join(d["text"] or "" for d in docs)
    d_key = "gen_ai.retrieval.documents" if "gen_ai.retrieval.documents" in a else "retrieval.documents"
    b.add_result(text, key, d_key, d_key)
    b.steps[-1]["documents"] = docs
