"""Importer for smolagents runs: the benchmark's and ``run_gaia.py``'s answer records.

One record per JSONL line (a JSON list of them, or one record, is read too):
``{model_id, agent_action_type, question, original_question, answer, true_answer, source,
intermediate_steps, start_time, end_time, token_counts}`` (``examples/smolagents_benchmark/run.py``)
or ``{agent_name, question, augmented_question, prediction, intermediate_steps, true_answer, task,
task_id, ...}`` (``examples/open_deep_research/run_gaia.py``). ``intermediate_steps`` is the agent's
memory as chat messages or as memory step dicts (:mod:`._smolagents_steps`); for the ``vanilla``
action type (no agent) it is the model's reply, a string.

Mapping: the question is ``original_question`` (the dataset's question, before the benchmark adds
"Answer with only the final number."), else ``question``, else the task; the asked prompt, when it
differs, goes to ``metadata["prompt"]``. Gold answers are ``true_answer``; ``source`` (SimpleQA,
GAIA, ...) is the dataset and ``task_id`` the question id. The agent is the action type and the
model (``tool-calling/gpt-4o``). Each model output is reasoning; each tool call a search (by the one
tool classification, :mod:`._tools`, and ``search_tools``), an action (``other``), or the answer
(``final_answer``, :mod:`._answer_tools`); each observation the result of its call. The answer is the
``final_answer`` call's argument, else the final step's ``action_output``, else the record's
``answer`` (``prediction``), added as the last step.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from ..._errors import UserInputError
from ..._limits import ReadLimits
from ._answer_tools import resolve_answer_tools
from ._base import ImportedRecord, RecordContext, expect_type, new_trace
from ._fields import gold_list
from ._json_documents import import_documents
from ._smolagents_steps import FORMAT, RunSteps, is_item, memory_step, message
from ._tools import record_tool_kinds, resolve_search_tools

#: Keys only a smolagents answer record has beside ``intermediate_steps`` and ``question``.
_MARKS = ("true_answer", "agent_action_type", "augmented_question")
_QUESTION_KEYS = ("original_question", "question", "augmented_question")
_ANSWER_KEYS = ("answer", "prediction")


def is_record(obj: object) -> bool:
    """A smolagents answer record: ``question``, ``intermediate_steps`` (memory items, or the vanilla
    reply) and ``true_answer`` / ``agent_action_type`` / ``augmented_question``."""
    if not (isinstance(obj, dict) and isinstance(obj.get("question"), str) and any(k in obj for k in _MARKS)):
        return False
    steps = obj.get("intermediate_steps")
    return isinstance(steps, str) or (isinstance(steps, list) and all(is_item(s) for s in steps[:3]))


def sniff(path: str, head: str, first: object) -> bool:
    """True for a smolagents answer record (or a list of them)."""
    return is_record(first[0] if isinstance(first, list) and first else first)


def iter_records(
    path: str | os.PathLike,
    *,
    agent: str | None = None,
    search_tools: str | Iterable[str] | None = None,
    answer_tool: str | Iterable[str] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[ImportedRecord]:
    """Convert each smolagents answer record in ``path`` to a canonical trace (see the module docstring).

    Parameters
    ----------
    path : str or PathLike
        JSONL of answer records, a JSON list of them, or one record.
    agent : str, optional
        The agent when a record names no model (``model_id`` / ``agent_name``).
    search_tools : str or list, optional
        The tool names that are searches; other tools are ``other`` steps (default: by name, :mod:`._tools`).
    answer_tool : str or list, optional
        More tool names whose call gives the answer, beside ``final_answer``, ... (:mod:`._answer_tools`).
    limits : ReadLimits, optional
        The byte limits of the read.

    Yields
    ------
    ImportedRecord
    """
    yield from import_documents(
        path,
        lambda _: False,
        _convert,
        limits=limits,
        agent=agent,
        search_tools=resolve_search_tools(search_tools),
        answer_tools=resolve_answer_tools(answer_tool),
    )


def _convert(
    rec: object,
    *,
    file: str,
    line: int,
    prefix: str,
    agent: str | None,
    search_tools: frozenset[str] | None,
    answer_tools: frozenset[str] | None,
) -> ImportedRecord:
    ctx: RecordContext = {"file": file, "line": line, "trace_id": None}
    rec = expect_type(rec, dict, what="smolagents answer record", path=prefix, **ctx)
    for key in ("task_id", "id"):
        if rec.get(key) is not None:
            expect_type(rec[key], (str, int), what=key, path=f"{prefix}.{key}", **ctx)
    rid_key = next((k for k in ("task_id", "id") if rec.get(k) not in (None, "")), None)
    rid = None if rid_key is None else str(rec[rid_key])
    trace_id = rid or f"{os.path.basename(file)}:{line}" + ("" if prefix == "$" else prefix[1:])
    ctx["trace_id"] = trace_id
    sources: dict[str, str] = {} if rid_key is None else {"trace_id": f"{prefix}.{rid_key}"}
    who, sources_agent = _agent(rec, prefix, agent)
    if sources_agent:
        sources["agent"] = sources_agent
    trace = new_trace(
        trace_id=trace_id,
        agent=who or os.path.splitext(os.path.basename(file))[0],
        question="",
        fmt=FORMAT,
        file=file,
        line=line,
        record_id=rid,
        path=prefix,
    )
    b = RunSteps(ctx, search_tools, answer_tools)
    raw = rec.get("intermediate_steps")
    sp = f"{prefix}.intermediate_steps"
    if isinstance(raw, str):
        if rec.get("agent_action_type") != "vanilla":
            raise UserInputError(
                "intermediate_steps is text: smolagents before 1.12 wrote str() of each memory step, whose "
                "tool calls cannot be read; save agent.write_memory_to_messages() or agent.memory.get_full_steps()",
                path=sp,
                **ctx,
            )
    else:
        raw = expect_type(raw, list, what="intermediate_steps", path=sp, **ctx)
        for i, item in enumerate(raw):
            p = f"{sp}[{i}]"
            if not is_item(item):
                raise UserInputError(
                    "a smolagents memory item must be a message with role "
                    "system / user / assistant / tool-call / tool-response, or a memory step dict "
                    "(step_number, task, plan or system_prompt)",
                    path=p,
                    **ctx,
                )
            (message if "role" in item else memory_step)(b, item, p)
    answer_key = next((k for k in _ANSWER_KEYS if rec.get(k) is not None), None)
    if b.answer is None and answer_key is not None:
        text = expect_type(rec[answer_key], str, what=answer_key, path=f"{prefix}.{answer_key}", **ctx)
        b.new_turn()
        b.add({"kind": "answer", "text": text, "original_kind": answer_key}, f"{prefix}.{answer_key}")
        b.answer, b.answered = text, f"{prefix}.{answer_key}"
    trace["final_answer"] = b.answer
    if b.answered is not None:
        sources["final_answer"] = b.answered
    meta = _fill(trace, rec, prefix, ctx, b, sources)
    trace["steps"] = b.finish()
    trace["metadata"] = meta
    record_tool_kinds(trace, b.kinds)
    return ImportedRecord(line, trace=trace, sources=sources)


def _agent(rec: dict, prefix: str, fallback: str | None) -> tuple[str | None, str | None]:
    """The agent (``action type/model``) and where it came from."""
    model_key = next((k for k in ("model_id", "agent_name") if isinstance(rec.get(k), str) and rec[k]), None)
    action = rec.get("agent_action_type") if isinstance(rec.get("agent_action_type"), str) else None
    if model_key is None:
        return fallback, None
    if action:
        return f"{action}/{rec[model_key]}", f"joined: {prefix}.agent_action_type, {prefix}.{model_key}"
    return rec[model_key], f"{prefix}.{model_key}"


def _fill(trace: dict, rec: dict, prefix: str, ctx: RecordContext, b: RunSteps, sources: dict) -> dict:
    """Question, gold, dataset and question id into ``trace``; returns the metadata."""
    key = next((k for k in _QUESTION_KEYS if isinstance(rec.get(k), str) and rec[k].strip()), None)
    if key is not None:
        trace["question"], sources["question"] = rec[key], f"{prefix}.{key}"
    elif b.task is not None:
        trace["question"], sources["question"] = b.task[0], b.task[1]
    meta: dict = {}
    asked = rec.get("augmented_question", rec.get("question") if key == "original_question" else None)
    if isinstance(asked, str) and asked != trace["question"]:
        meta["prompt"] = asked
    if rec.get("true_answer") is not None:
        trace["gold_answers"] = gold_list(rec["true_answer"], ctx, f"{prefix}.true_answer")
        sources["gold_answers"] = f"{prefix}.true_answer"
    if isinstance(rec.get("source"), str) and rec["source"]:
        trace["dataset"], sources["dataset"] = rec["source"], f"{prefix}.source"
    if rec.get("task_id") not in (None, ""):
        trace["question_id"] = str(rec["task_id"])
    answer_key = next((k for k in _ANSWER_KEYS if isinstance(rec.get(k), str)), None)
    if answer_key is not None and rec[answer_key] != trace["final_answer"]:
        meta["reported_answer"] = rec[answer_key]  # run_gaia.py reformulates the answer after the run
    if b.system:
        meta["system"] = b.system
    for k in ("model_id", "agent_name", "agent_action_type", "start_time", "end_time", "token_counts", "task"):
        if rec.get(k) is not None:
            meta[k] = rec[k]
    return meta
