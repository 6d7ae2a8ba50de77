"""Importer for tau2-bench results: customer-service simulations, an agent serving a simulated user.

A results file is ``{"timestamp", "info": {"agent_info": {"llm"}, "environment_info":
{"domain_name"}, ...}, "tasks": [{"id", "user_scenario": {"instructions": {"reason_for_call",
...}}, ...}], "simulations": [{"id", "task_id", "trial", "termination_reason", "reward_info":
{"reward", ...}, "messages": [...]}]}``; a message is ``{"role": "assistant" | "user" | "tool",
"content", "tool_calls": [{"id", "name", "arguments": {...}, "requestor"}], "turn_idx"}``, a
tool message carrying the ``id`` of the call it answers. One simulation run alone (``{"id",
"task_id", "messages", ...}``), a list of runs, or JSONL of runs are read too.

Mapping, one trace per simulation, in message order: the first user message is the question
(the customer's request as the agent received it; the task's ``reason_for_call`` goes to
``metadata``); the agent's tool calls are classified once for every importer (:mod:`._tools`):
a retrieving tool (``search_direct_flight``) is a ``search`` step and its output a
``search_result``, every other tool (``get_user_details``, ``cancel_reservation``,
``transfer_to_human_agents``) an ``other`` step naming its tool, its output an ``other`` step;
the agent's messages to the user are reasoning, except the last one, which is the answer when
the conversation ended normally (``termination_reason`` ``user_stop`` / ``agent_stop``); later
user messages and the user's own tool calls (``requestor: "user"``) are ``other`` steps without a
tool. ``reward_info.reward`` 1 is correct, below 1 incorrect. The agent is ``--agent``, else
``info.agent_info.llm``, else the file's name (with a note); the dataset is the domain.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator

from ..._errors import UserInputError
from ..._limits import ReadLimits
from ._action_steps import ActionSteps
from ._base import ImportedRecord, RecordContext, agent_note, default_agent, expect_type, new_trace
from ._fields import get_path, question_key
from ._json_documents import iter_documents
from ._tools import call_fields, resolve_search_tools

FORMAT = "tau2"
_ENDED = frozenset({"user_stop", "agent_stop"})


def sniff(path: str, head: str, first: object) -> bool:
    """True for a tau2-bench results file, one simulation run, or a list of runs."""
    obj = first[0] if isinstance(first, list) and first else first
    if isinstance(obj, dict) and isinstance(obj.get("simulations"), list):
        return isinstance(obj.get("tasks"), list) or isinstance(obj.get("info"), dict)
    return is_run(obj)


def is_run(obj: object) -> bool:
    """True for a simulation run: ``task_id``, ``messages`` and ``termination_reason`` or ``reward_info``."""
    return (
        isinstance(obj, dict)
        and "task_id" in obj
        and isinstance(obj.get("messages"), list)
        and ("termination_reason" in obj or "reward_info" in obj)
    )


def iter_records(
    path: str | os.PathLike,
    *,
    agent: str | None = None,
    search_tools: str | Iterable[str] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[ImportedRecord]:
    """Convert each simulation run in ``path`` to a canonical trace.

    Parameters
    ----------
    path : str or PathLike
        A tau2-bench results JSON (``simulations``), one run, a list of runs, or JSONL of runs.
    agent : str, optional
        The agent; default ``info.agent_info.llm``, else the file's name (with a note).
    search_tools : str or list, optional
        The tool names that are searches; others are ``other`` steps (default: by name, :mod:`._tools`).

    Yields
    ------
    ImportedRecord
    """
    tools = resolve_search_tools(search_tools)
    for line, doc, prefix in iter_documents(path, single=lambda _: False, limits=limits):
        if isinstance(doc, UserInputError):
            yield ImportedRecord(line, error=doc)
            continue
        ctx: RecordContext = {"file": str(path), "line": line, "trace_id": None}
        if not isinstance(doc, dict) or "simulations" not in doc:  # one run (the error names a wrong type)
            yield _record(doc, {}, {}, file=str(path), line=line, prefix=prefix, agent=agent, search_tools=tools)
            continue
        try:
            sims = expect_type(doc["simulations"], list, what="simulations", path=f"{prefix}.simulations", **ctx)
        except UserInputError as e:
            yield ImportedRecord(line, error=e)
            continue
        info: dict = doc["info"] if isinstance(doc.get("info"), dict) else {}
        tasks = {str(t["id"]): t for t in doc.get("tasks") or [] if isinstance(t, dict) and "id" in t}
        for i, run in enumerate(sims):
            p = f"{prefix}.simulations[{i}]"
            yield _record(run, info, tasks, file=str(path), line=line, prefix=p, agent=agent, search_tools=tools)


def _record(run: object, info: dict, tasks: dict, *, line: int | None, **kw) -> ImportedRecord:
    """:func:`_convert`, its user error as an errored record (the file's other simulations still read)."""
    try:
        return _convert(run, info, tasks, line=line, **kw)
    except UserInputError as e:
        return ImportedRecord(line, error=e)


def _convert(
    run: object,
    info: dict,
    tasks: dict,
    *,
    file: str,
    line: int | None,
    prefix: str,
    agent: str | None,
    search_tools: frozenset[str] | None,
) -> ImportedRecord:
    ctx: RecordContext = {"file": file, "line": line, "trace_id": None}
    run = expect_type(run, dict, what="simulation run", path=prefix, **ctx)
    rid = run.get("id")
    rid = str(expect_type(rid, (str, int), what="id", path=f"{prefix}.id", **ctx)) if rid is not None else None
    trace_id = rid or f"{os.path.basename(file)}:{line}" + ("" if prefix == "$" else prefix[1:])
    ctx["trace_id"] = trace_id
    messages = expect_type(run.get("messages"), list, what="messages", path=f"{prefix}.messages", **ctx)
    notes, sources = [], {}
    name = agent
    if name is None:
        llm = get_path(info, "agent_info.llm")
        if isinstance(llm, str) and llm:
            # The results object holding this run: the run's path up to ``.simulations[i]``.
            name, sources["agent"] = llm, prefix.rsplit(".simulations[", 1)[0] + ".info.agent_info.llm"
        else:
            name = default_agent(file)
            notes.append(agent_note(file))
    trace = new_trace(
        trace_id=trace_id, agent=name, question="", fmt=FORMAT, file=file, line=line, record_id=rid, path=prefix
    )
    ended = run.get("termination_reason") in _ENDED or run.get("termination_reason") is None
    last_said = _last_said(messages)
    b = ActionSteps(FORMAT, ctx, search_tools)
    pending: dict[str, dict] = {}
    question = None
    for i, m in enumerate(messages):
        p = f"{prefix}.messages[{i}]"
        m = expect_type(m, dict, what="message", path=p, **ctx)
        role = m.get("role")
        content = m.get("content")
        content = expect_type(content, (str, type(None)), what="content", path=f"{p}.content", **ctx)
        if role == "tool":
            cid = m.get("id")
            call = pending.pop(str(cid), None) if cid is not None else None
            if call is not None:
                b.result(call, content, p)
            else:
                b.add("other", content or "", p, original_kind="tool")
            continue
        if role == "user" and question is None and content and content.strip():
            question, sources["question"] = content, f"{p}.content"
        elif content and content.strip():
            if role == "assistant":
                final = ended and i == last_said
                b.add("answer" if final else "reasoning", content, f"{p}.content", original_kind="assistant")
                if final:
                    trace["final_answer"], sources["final_answer"] = content, f"{p}.content"
            else:
                b.add("other", content, f"{p}.content", original_kind=str(role))
        _tool_calls(b, m, role, p, pending)
    if question is None:
        raise UserInputError("simulation without a user message: no question to read", path=f"{prefix}.messages", **ctx)
    trace["question"] = question
    b.finish(trace)
    _task_fields(trace, sources, run, info, tasks, prefix)
    return ImportedRecord(line, trace=trace, notes=notes, sources=sources)


def _last_said(messages: list) -> int:
    """The position of the last assistant message with text and no tool call (-1 without one)."""
    return max(
        (
            i
            for i, m in enumerate(messages)
            if isinstance(m, dict)
            and m.get("role") == "assistant"
            and not m.get("tool_calls")
            and isinstance(m.get("content"), str)
            and m["content"].strip()
        ),
        default=-1,
    )


def _tool_calls(b: ActionSteps, m: dict, role: object, p: str, pending: dict[str, dict]) -> None:
    """The tool calls of the message ``m`` at ``p``: the agent's are calls awaiting their result (kept in
    ``pending`` by id), the user's (tau2's user acts on the environment too) ``other`` steps."""
    ctx = b.ctx
    calls = m.get("tool_calls") or []
    calls = expect_type(calls, list, what="tool_calls", path=f"{p}.tool_calls", **ctx)
    for j, tc in enumerate(calls):
        tp = f"{p}.tool_calls[{j}]"
        tc = expect_type(tc, dict, what="tool call", path=tp, **ctx)
        tool = expect_type(tc.get("name"), str, what="tool name", path=f"{tp}.name", **ctx)
        args: dict = tc["arguments"] if isinstance(tc.get("arguments"), dict) else {}
        text = json.dumps(tc.get("arguments"), ensure_ascii=False)
        if role != "assistant" or tc.get("requestor", "assistant") != "assistant":  # the user acts, not the agent
            step = b.add("other", f"{tool} {text}", tp, original_kind="user_tool_call")
        else:
            query, url = call_fields(args)
            step = b.call(tool, text, tp, query=query, url=url)
        if tc.get("id") is not None:
            pending[str(tc["id"])] = step


def _task_fields(trace: dict, sources: dict, run: dict, info: dict, tasks: dict, prefix: str) -> None:
    """The dataset (the run's domain), question id, correctness (the reward) and metadata (the task's
    reason for the call) of the trace of ``run`` at ``prefix``."""
    domain = get_path(info, "environment_info.domain_name")
    trace["dataset"] = domain if isinstance(domain, str) else None
    if trace["dataset"] is not None:  # read beside agent_info, in the results object holding this run
        sources["dataset"] = prefix.rsplit(".simulations[", 1)[0] + ".info.environment_info.domain_name"
    trace["question_id"] = (
        f"{trace['dataset'] or ''}::{run['task_id']}"
        if "task_id" in run
        else question_key(trace["question"], trace["dataset"])
    )
    reward = get_path(run, "reward_info.reward")
    if isinstance(reward, (int, float)) and not isinstance(reward, bool):
        trace["correct"] = {"value": reward >= 1, "source": "source_data", "detail": {"field": "reward_info.reward"}}
        sources["correct"] = f"{prefix}.reward_info.reward"
    meta = {k: run[k] for k in ("task_id", "trial", "termination_reason") if run.get(k) is not None}
    reason = get_path(tasks.get(str(run.get("task_id")), {}), "user_scenario.instructions.reason_for_call")
    if isinstance(reason, str):
        meta["reason_for_call"] = reason
    trace["metadata"] = {**meta, **trace.get("metadata", {})}
