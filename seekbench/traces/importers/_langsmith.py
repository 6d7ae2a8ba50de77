"""Importer for LangSmith runs: the SDK's batch-ingest payloads and run exports (:mod:`._langsmith_runs`).

One trace per LangSmith trace (``trace_id``). Walking its runs (parents first, siblings by
``start_time``):

- an ``llm`` run gives its output message's reasoning and text (reasoning, or the answer when it is
  the last llm run with text and no tool call); its output is an OpenAI chat completion
  (``choices[0].message``, as ``wrap_openai`` logs it), a LangChain ``generations`` list, a message
  or text; when the trace has no ``tool`` or ``retriever`` run, its tool calls are the searches (or
  actions, or the answer) and the ``tool`` messages of later llm inputs their results;
- a ``tool`` run of a retrieving tool (:func:`._tools.is_search_tool`: by name, ``search_tools``, or
  a ``retriever`` run under it) gives a search (the query from its ``inputs``) and a search_result
  (its ``outputs``; the documents of the retrievers under it, else parsed from the output); a tool of
  ``answer_tool`` (``submit``, ``final_answer`` ...) the answer; any other tool an action (``other``
  call and ``other`` output);
- a ``retriever`` run outside a tool gives a search and a search_result with its ``documents``;
- ``chain``, ``prompt``, ``parser`` and ``embedding`` runs give no step; their children are walked.

The question is the root run's ``inputs`` (``question`` / ``query`` / ``input`` text, or the first
user message), else the first llm run's first user message; the answer falls back to the root run's
``outputs`` (``output`` / ``answer`` ...) when no llm run gives one. Gold answers, dataset, question
id, ``is_correct`` and ``agent`` come from the root run's ``extra.metadata``. The agent is
``metadata.agent``, else the root run's name and ``/`` + the first llm's ``ls_model_name``, else
``--agent``, else the file name. Each step's ``source_ref.record_id`` is its run's id.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from ..._errors import UserInputError
from ..._limits import ReadLimits
from ._answer_tools import is_answer_tool, resolve_answer_tools
from ._base import ImportedRecord, RecordContext, agent_note, default_agent, expect_type, new_trace
from ._chat_steps import StepBuilder, content_text, extract_answer, search_step
from ._fields import apply_fields, record_fields
from ._langfuse_steps import as_text, documents, messages_at, tool_arguments, tool_calls
from ._langsmith_runs import Run, below, is_batch, is_run, read_runs, traces, walk
from ._tools import is_search_tool, record_tool_kinds, resolve_search_tools

FORMAT = "langsmith"
_QUESTION_KEYS = ("question", "query", "input")
_ANSWER_KEYS = ("output", "answer", "content", "text")


def sniff(path: str, head: str, first: object) -> bool:
    """True for a batch-ingest payload, a run, or a list of runs."""
    if isinstance(first, list):
        return bool(first) and all(is_run(x) for x in first[:3])
    return is_batch(first) or is_run(first)


def iter_records(
    path: str | os.PathLike,
    *,
    agent: str | None = None,
    answer_tag: str | None = "answer",
    search_tools: str | Iterable[str] | None = None,
    answer_tool: str | Iterable[str] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[ImportedRecord]:
    """Convert each LangSmith trace in ``path`` to a canonical trace (see the module docstring).

    Parameters
    ----------
    path : str or PathLike
        Batch-ingest payloads (``{post, patch}``), a JSON list of runs, JSONL of runs, or one run.
    agent : str, optional
        The agent when the trace names none (no ``metadata.agent``, root run name or model).
    answer_tag : str or None, default "answer"
        Take ``final_answer`` from the last ``<answer_tag>`` block of the answer; None keeps the text.
    search_tools : str or list, optional
        The tool names that are searches; other tools are ``other`` steps (default: by name, :mod:`._tools`).
    answer_tool : str or list, optional
        More tool names whose call gives the answer, beside ``submit``, ``final_answer``, ... (:mod:`._answer_tools`).
    limits : ReadLimits, optional
        The byte limits of the read.

    Yields
    ------
    ImportedRecord
    """
    file = str(path)
    runs: list[Run] = []
    for item in read_runs(path, limits):
        if isinstance(item, UserInputError):
            yield ImportedRecord(item.line, error=item)
        else:
            runs.append(item)
    options = (resolve_search_tools(search_tools), resolve_answer_tools(answer_tool))
    for tid, group in traces(runs).items():
        ordered = walk(group)
        ctx: RecordContext = {"file": file, "line": ordered[0].line, "trace_id": tid}  # the root run's line
        try:
            yield _convert(tid, ordered, ctx, agent=agent, answer_tag=answer_tag, tools=options)
        except UserInputError as e:
            yield ImportedRecord(ctx["line"], error=e)


class RunSteps(StepBuilder):
    """Steps whose ``source_ref.record_id`` is the id of the run they came from."""

    def __init__(self, ctx: RecordContext) -> None:
        super().__init__(FORMAT, ctx)
        self.run_id: object = None
        self.run_line: int | None = ctx["line"]  # a run export's runs sit on lines of their own
        self.kinds: dict[str, str] = {}
        self.answered: str | None = None  # where an answer tool's call put the answer

    def _ref(self, path: str) -> dict:
        ref = {**super()._ref(path), "record_id": self.run_id if isinstance(self.run_id, str) else None}
        ref["line"] = self.run_line
        return ref


def output_messages(run: Run) -> list[tuple[dict, str]]:
    """``(message, path)`` of an llm run's output: ``choices[i].message``, ``generations[0][i].message``
    (LangChain, its ``kwargs`` when serialised), a message, a message list, or text."""
    out, at = run.get("outputs"), run.at.get("outputs", f"{run.path}.outputs")
    if isinstance(out, dict) and isinstance(out.get("choices"), list):
        return [
            (c["message"], f"{at}.choices[{i}].message")
            for i, c in enumerate(out["choices"])
            if isinstance(c, dict) and isinstance(c.get("message"), dict)
        ]
    if isinstance(out, dict) and isinstance(out.get("generations"), list):
        gens = out["generations"][0] if out["generations"] and isinstance(out["generations"][0], list) else []
        msgs = []
        for i, g in enumerate(gens):
            gp = f"{at}.generations[0][{i}]"
            msg = g.get("message") if isinstance(g, dict) else None
            if isinstance(msg, dict) and isinstance(msg.get("kwargs"), dict):
                msgs.append((_lc_message(msg["kwargs"]), f"{gp}.message.kwargs"))
            elif isinstance(msg, dict):
                msgs.append((msg, f"{gp}.message"))
            elif isinstance(g, dict) and isinstance(g.get("text"), str):
                msgs.append(({"role": "assistant", "content": g["text"]}, f"{gp}.text"))
        return msgs
    if isinstance(out, dict) and isinstance(out.get("output"), (str, dict)):
        out, at = out["output"], f"{at}.output"
    return messages_at(out, at) if out not in (None, {}) else []


def _lc_message(kwargs: dict) -> dict:
    """A LangChain message's ``kwargs`` as a chat message (``tool_calls`` ``{name, args, id}``)."""
    calls = [
        {"id": c.get("id"), "name": c.get("name"), "arguments": c.get("args")}
        for c in kwargs.get("tool_calls") or []
        if isinstance(c, dict)
    ]
    return {"role": "assistant", "content": kwargs.get("content"), "tool_calls": calls}


def _has_calls(m: dict) -> bool:
    return bool(m.get("tool_calls") or m.get("function_call"))


def _llm(b: RunSteps, run: Run, *, final: bool, with_calls: bool, tools: tuple, answer_tag: str | None) -> str | None:
    """An llm run's steps; returns the final answer when it gives one."""
    search_tools, answer_tools = tools
    if with_calls:  # tool messages in the input answer earlier calls
        waiting = {cid for cid, _ in b.pending}
        for m, p in messages_at(run.get("inputs"), run.at.get("inputs", f"{run.path}.inputs")):
            if m.get("role") == "tool" and m.get("tool_call_id") in waiting:
                waiting.discard(m["tool_call_id"])
                b.add_result(content_text(m.get("content"), b.ctx, f"{p}.content"), m["tool_call_id"], p, p)
    answer = None
    for m, p in output_messages(run):
        text = content_text(m.get("content"), b.ctx, f"{p}.content")
        calls: list[tuple[dict, str, str | None]] = []
        for name, args, cid, tp in tool_calls(m, b.ctx, p) if with_calls else []:
            step = search_step(
                name, args, b.ctx, tp, tp, classify=True, search_tools=search_tools, answer_tools=answer_tools
            )
            b.kinds[step["tool"]] = step["kind"]
            if step["kind"] == "answer":
                answer, b.answered = step["text"], tp
            calls.append(({**step, "original_kind": "tool_call"}, tp, cid or f"{run.get('id')}:{tp}"))
        reasoning = next((m[k] for k in ("reasoning_content", "reasoning") if isinstance(m.get(k), str)), None)
        r = None if reasoning is None else (reasoning, "reasoning", p)
        last = final and not _has_calls(m) and b.answered is None
        content_at = f"{p}.content" if isinstance(m.get("content"), str) else p
        got = b.model_turn(r, text, ("llm", content_at), calls, final=last, answer_tag=answer_tag)
        answer = got if got is not None else answer
    return answer


def _tool(b: RunSteps, run: Run, runs: list[Run], tools: tuple) -> str | None:
    """A tool run: a search and its result, an action, or the answer (returned)."""
    search_tools, answer_tools = tools
    name = expect_type(run.get("name"), str, what="run name", path=run.at.get("name", run.path), **b.ctx)
    retrievers = [r for r in below(run, runs) if r.get("run_type") == "retriever"]
    inputs, in_at = run.get("inputs"), run.at.get("inputs", f"{run.path}.inputs")
    out_at = run.at.get("outputs", f"{run.path}.outputs")
    args = tool_arguments(_unwrap(inputs))
    answer = is_answer_tool(name, answer_tools)
    search = not answer and is_search_tool(name, search_tools, retrieves=bool(retrievers))
    if answer or search:
        step = search_step(name, args, b.ctx, run.at.get("name", run.path), in_at, answer_tools=answer_tools)
        if search:
            step["text"] = as_text(inputs)
    else:
        step = {"kind": "other", "tool": name, "text": as_text(inputs)}
    if answer:
        b.answered = in_at
    b.kinds[name] = step["kind"]
    b.new_turn()
    key = f"run:{run.get('id')}"
    b.add({**step, "original_kind": "tool"}, in_at, key, is_call=True)
    out = run.get("outputs")
    text = as_text(_unwrap(out)) if out not in (None, {}) else run.get("error")
    b.add_result(text, key, out_at, out_at)
    if search:
        docs = [d for r in retrievers for d in documents(r.get("outputs"))] if retrievers else documents(_unwrap(out))
        result = next(s for s in reversed(b.steps) if s["kind"] == "search_result")
        result["documents"] = [{**d, "rank": rank} for rank, d in enumerate(docs, start=1)]
    return step["text"] if answer else None


def _unwrap(value: object) -> object:
    """A tool's ``{"input": x}`` / ``{"output": x}`` wrapper (how LangChain logs one argument) as ``x``."""
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ("input", "output"):
        return next(iter(value.values()))
    return value


def _retriever(b: RunSteps, run: Run) -> None:
    inputs, in_at = run.get("inputs"), run.at.get("inputs", f"{run.path}.inputs")
    args = tool_arguments(_unwrap(inputs))
    query = next((args[k] for k in _QUESTION_KEYS if isinstance(args, dict) and isinstance(args.get(k), str)), None)
    name = run["name"] if isinstance(run.get("name"), str) and run["name"] else "retriever"
    b.kinds[name] = "search"
    b.new_turn()
    key = f"run:{run.get('id')}"
    b.add(
        {"kind": "search", "tool": name, "query": query, "text": as_text(inputs), "original_kind": "retriever"},
        in_at,
        key,
        is_call=True,
    )
    out_at = run.at.get("outputs", f"{run.path}.outputs")
    b.add_result(as_text(run.get("outputs")), key, out_at, out_at)
    b.steps[-1]["documents"] = documents(run.get("outputs"))


def _convert(
    tid: str, runs: list[Run], ctx: RecordContext, *, agent: str | None, answer_tag: str | None, tools: tuple
) -> ImportedRecord:
    root = runs[0]
    extra: dict = root["extra"] if isinstance(root.get("extra"), dict) else {}
    meta_in: dict = extra["metadata"] if isinstance(extra.get("metadata"), dict) else {}
    meta_at = f"{root.at.get('extra', root.path + '.extra')}.metadata"
    fields = record_fields({k: v for k, v in meta_in.items() if k != "model"}, ctx, meta_at)
    llms = [r for r in runs if r.get("run_type") == "llm"]
    model_run = next((r for r in llms if _model(r)), None)
    name = root.get("name") if isinstance(root.get("name"), str) and root.get("name") else None
    model = _model(model_run) if model_run is not None else None
    who = fields["agent"] or (f"{name}/{model}" if name and model else name or model) or agent
    # a batch payload's trace is its runs, posted and patched: the record is the payload, not the root's post
    where = root.path.split(".post[")[0]  # "$.post[0]" -> "$"; a run export's root keeps its own path
    trace = new_trace(
        trace_id=tid,
        agent=who or default_agent(ctx["file"]),
        question="",
        fmt=FORMAT,
        file=ctx["file"],
        line=ctx["line"],
        record_id=tid,
        path=where,
    )
    b = RunSteps(ctx)
    has_tools = any(r.get("run_type") in ("tool", "retriever") for r in runs)
    final = next(
        (
            r
            for r in reversed(llms)
            if any(
                not _has_calls(m) and (content_text(m.get("content"), ctx, p) or "").strip()
                for m, p in output_messages(r)[-1:]
            )
        ),
        None,
    )
    inside: set[int] = set()
    for run in runs:
        if id(run) in inside:
            continue
        b.run_id, b.run_line = run.get("id"), run.line
        kind = run.get("run_type")
        got = None
        if kind == "llm":
            got = _llm(b, run, final=run is final, with_calls=not has_tools, tools=tools, answer_tag=answer_tag)
        elif kind == "tool":
            got = _tool(b, run, runs, tools)
            inside.update(id(r) for r in below(run, runs))
        elif kind == "retriever":
            _retriever(b, run)
        trace["final_answer"] = got if got is not None else trace["final_answer"]
    sources = dict(fields["sources"])
    if not fields["agent"] and (name or model):
        parts = ([root.at.get("name", root.path)] if name else []) + ([_where(model_run, root)] if model else [])
        sources["agent"] = f"joined: {', '.join(parts)}" if len(parts) > 1 else parts[0]
    answers = [s for s in b.steps if s["kind"] == "answer"]
    if answers:
        last = answers[-1]
        at = b.answered if b.answered and last.get("tool") else last["source_ref"]["path"]
        line = last["source_ref"]["line"]
        sources["final_answer"] = at if line == root.line else f"line {line}: {at}"
    elif root.get("outputs") not in (None, {}) and root.get("run_type") != "llm":
        value, at = _root_answer(root)
        b.run_id, b.run_line = root.get("id"), root.line
        b.new_turn()
        b.add({"kind": "answer", "text": value, "original_kind": "outputs"}, at)
        trace["final_answer"], sources["final_answer"] = extract_answer(value, answer_tag), at
    question, q_at = _question(root, fields, llms, ctx)  # q_at says "line N: " when not the root's line
    trace["question"] = question or ""
    if q_at:
        sources["question"] = q_at
    apply_fields(trace, fields)
    trace["steps"] = b.finish()
    trace["metadata"] = {"langsmith": {"trace_id": tid, "runs": len(runs), "root_name": name}}
    if meta_in:
        trace["metadata"]["run_metadata"] = meta_in
    record_tool_kinds(trace, b.kinds)
    return ImportedRecord(ctx["line"], trace=trace, sources=sources, notes=[] if who else [agent_note(ctx["file"])])


def _model(run: Run) -> str | None:
    extra: dict = run["extra"] if isinstance(run.get("extra"), dict) else {}
    meta: dict = extra["metadata"] if isinstance(extra.get("metadata"), dict) else {}
    value = meta.get("ls_model_name")
    return value if isinstance(value, str) and value else None


def _where(run: Run | None, root: Run) -> str:
    """Where ``run``'s model name sits: a path, after ``line N:`` when the run is on another line than the root."""
    assert run is not None
    at = f"{run.at.get('extra', run.path + '.extra')}.metadata.ls_model_name"
    return at if run.line == root.line else f"line {run.line}: {at}"


def _root_answer(root: Run) -> tuple[str, str]:
    out, at = root["outputs"], root.at.get("outputs", f"{root.path}.outputs")
    if isinstance(out, dict):
        key = next((k for k in _ANSWER_KEYS if isinstance(out.get(k), str)), None)
        if key is not None:
            return out[key], f"{at}.{key}"
    return as_text(out) or "", at


def _question(root: Run, fields: dict, llms: list[Run], ctx: RecordContext) -> tuple[str | None, str | None]:
    if fields["question"] is not None:
        return fields["question"], fields["sources"].get("question")
    value, at = root.get("inputs"), root.at.get("inputs", f"{root.path}.inputs")
    if isinstance(value, dict) and root.get("run_type") != "llm":
        key = next((k for k in _QUESTION_KEYS if isinstance(value.get(k), str) and value[k].strip()), None)
        if key is not None:
            return value[key], f"{at}.{key}"
    candidates = [(value, at, root.line)] + [
        (r.get("inputs"), r.at.get("inputs", f"{r.path}.inputs"), r.line) for r in llms[:1]
    ]
    for v, p, line in candidates:
        for m, mp in messages_at(v, p):
            if m.get("role") in ("user", "human"):
                where = f"{mp}.content" if line == root.line else f"line {line}: {mp}.content"
                return content_text(m.get("content"), ctx, f"{mp}.content"), where
    return None, None
