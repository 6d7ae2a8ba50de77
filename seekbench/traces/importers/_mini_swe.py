"""Importer for mini-swe-agent trajectories (``*.traj.json``), a coding agent that runs bash commands.

A trajectory is ``{"trajectory_format": "mini-swe-agent-1.1", "instance_id"?, "info": {"exit_status",
"submission", "model_stats", "config": {"agent": {"instance_template", ...}, "model": {"model_name",
...}}}, "messages": [...]}``: chat messages (``system``, ``user``, ``assistant``, ``tool``) whose
assistant turns carry their commands in ``extra.actions`` (``[{"command", "tool_call_id"?}]``),
in ``tool_calls`` (a ``bash`` function with a ``command`` argument), or, in text-based runs, in a
fenced block of the content; the run ends with a message of role ``exit`` whose ``extra`` holds
the exit status and the submission. One per file, a JSON list of them, or JSONL.

Mapping: the question is the task inside the first user message: the text where ``{{task}}`` sits
in ``info.config.agent.instance_template`` (the literal text around it located in the message),
else inside ``<pr_description>``, else after ``Please solve this issue:`` up to the first blank
line; never the instructions around it (with no way to find the task, the whole message, and a
warning naming ``--question-field``). Each assistant turn's text -> reasoning, each command -> an
``other`` step with tool ``bash`` (an action call; ``--search-tools bash`` makes them searches),
its output (the next ``tool`` message by ``tool_call_id``, else the next ``user`` message) -> an
``other`` step after it. The submission (``info.submission``, else the exit message's) is the
answer; none (a run stopped by its limits) leaves the trace without one. The agent is
``--agent``, else ``mini-swe-agent/`` + the model name, else the file's name (with a note).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator

from ..._errors import UserInputError
from ..._limits import ReadLimits
from ._action_steps import ActionSteps
from ._base import ImportedRecord, RecordContext, agent_note, default_agent, expect_type, new_trace
from ._fields import get_path, named_field, question_key
from ._json_documents import import_documents
from ._tools import resolve_search_tools

FORMAT = "mini_swe_agent"
_HEAD = re.compile(r'"trajectory_format"\s*:\s*"mini-swe-agent')
_FENCE = re.compile(r"```(?:bash|sh|mswea_bash_command)?[ \t]*\n(.*?)\n```", re.DOTALL)
_PR = re.compile(
    r"<pr_description>\s*(?:Consider the following PR description:\s*)?(.*?)\s*</pr_description>", re.DOTALL
)
_SOLVE = re.compile(r"Please solve this issue:\s*(.*?)(?:\n\s*\n|\Z)", re.DOTALL)
_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
_TASK_VAR = re.compile(r"\{\{-?\s*task\s*-?\}\}")


def sniff(path: str, head: str, first: object) -> bool:
    """True for a trajectory whose ``trajectory_format`` names mini-swe-agent, or a list of them."""
    obj = first[0] if isinstance(first, list) and first else first
    if isinstance(obj, dict):
        return str(obj.get("trajectory_format", "")).startswith("mini-swe-agent") and isinstance(
            obj.get("messages"), list
        )
    return first is None and bool(_HEAD.search(head))


def iter_records(
    path: str | os.PathLike,
    *,
    agent: str | None = None,
    question_field: str | None = None,
    search_tools: str | Iterable[str] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[ImportedRecord]:
    """Convert each mini-swe-agent trajectory in ``path`` to a canonical trace.

    Parameters
    ----------
    path : str or PathLike
        A ``.traj.json`` file, a JSON list of trajectories, or JSONL.
    agent : str, optional
        The agent; default ``mini-swe-agent/<model>``, else the file's name (with a note).
    question_field : str, optional
        Dotted path of the task in the trajectory (default: found in the first user message).
    search_tools : str or list, optional
        Tool names that are searches (the commands' tool is ``bash``; default: none of them).

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
        question_field=question_field,
        search_tools=resolve_search_tools(search_tools),
    )


def _between(template: str) -> tuple[str, str] | None:
    """The literal text just before and just after ``{{task}}`` in a Jinja template (up to the next tag)."""
    m = _TASK_VAR.search(template)
    if m is None:
        return None
    before = _TAG.split(template[: m.start()])[-1]
    after = _TAG.split(template[m.end() :])[0]
    return before, after


def find_task(message: str, template: object) -> str | None:
    """The task inside the first user message, or None when nothing says where it is.

    >>> find_task("Please solve this issue: Fix X.\\n\\nYou can run bash.", None)
    'Fix X.'
    """
    if isinstance(template, str):
        around = _between(template)
        if around is not None:
            before, after = around
            start = message.find(before) if before else 0
            if start >= 0:
                start += len(before)
                end = message.find(after, start) if after.strip() else len(message)
                if end >= start and message[start:end].strip():
                    return message[start:end].strip()
    for pattern in (_PR, _SOLVE):
        m = pattern.search(message)
        if m is not None and m.group(1).strip():
            return m.group(1).strip()
    return None


def _commands(m: dict, ctx: RecordContext, p: str) -> list[tuple[str, str | None, str]]:
    """``(command, tool call id, path)`` of each command of an assistant message."""
    extra: dict = m["extra"] if isinstance(m.get("extra"), dict) else {}
    actions = extra.get("actions")
    if isinstance(actions, list) and actions:
        out = []
        for k, a in enumerate(actions):
            a = expect_type(a, dict, what="action", path=f"{p}.extra.actions[{k}]", **ctx)
            cmd = expect_type(a.get("command"), str, what="command", path=f"{p}.extra.actions[{k}].command", **ctx)
            out.append((cmd, a.get("tool_call_id"), f"{p}.extra.actions[{k}]"))
        return out
    calls = m.get("tool_calls")
    if isinstance(calls, list) and calls:
        out = []
        for k, tc in enumerate(calls):
            args = get_path(tc, "function.arguments") if isinstance(tc, dict) else None
            if isinstance(args, str):
                try:  # arguments are JSON text, as the OpenAI API returns them
                    args = json.loads(args)
                except ValueError:
                    args = {"command": args}
            command = args.get("command") if isinstance(args, dict) else None
            if isinstance(command, str) and isinstance(tc, dict):
                out.append((command, tc.get("id"), f"{p}.tool_calls[{k}]"))
        return out
    content = m.get("content")
    return [(c.strip(), None, f"{p}.content") for c in _FENCE.findall(content)] if isinstance(content, str) else []


def _convert(
    doc: object,
    *,
    file: str,
    line: int,
    prefix: str,
    agent: str | None,
    question_field: str | None,
    search_tools: frozenset[str] | None,
) -> ImportedRecord:
    ctx: RecordContext = {"file": file, "line": line, "trace_id": None}
    doc = expect_type(doc, dict, what="trajectory", path=prefix, **ctx)
    rid = doc.get("instance_id") if isinstance(doc.get("instance_id"), str) and doc["instance_id"] else None
    stem = os.path.basename(file).removesuffix(".json").removesuffix(".traj")
    trace_id = rid or stem + ("" if prefix == "$" else prefix[1:])
    ctx["trace_id"] = trace_id
    messages = expect_type(doc.get("messages"), list, what="messages", path=f"{prefix}.messages", **ctx)
    info = doc.get("info") or {}
    info = expect_type(info, dict, what="info", path=f"{prefix}.info", **ctx)
    notes, warns, sources = [], [], {}
    name = agent
    model = get_path(info, "config.model.model_name")
    if name is None and isinstance(model, str) and model:
        # the name is a constant joined to the model's: said in words (the quote keeps it from reading as a path)
        name, sources["agent"] = f"mini-swe-agent/{model}", f"'mini-swe-agent/' + {prefix}.info.config.model.model_name"
    elif name is None:
        name = default_agent(file)
        notes.append(agent_note(file))
    trace = new_trace(
        trace_id=trace_id, agent=name, question="", fmt=FORMAT, file=file, line=line, record_id=rid, path=prefix
    )
    b = ActionSteps(FORMAT, ctx, search_tools)
    question: str | None = None
    if question_field is not None:
        question = named_field(doc, question_field, "--question-field", ctx, prefix, what="trajectory")
        sources["question"] = f"{prefix}.{question_field}"
    pending: list[tuple[str | None, dict]] = []  # calls waiting for their output, in order
    exit_submission = None
    meta: dict = {}
    for i, m in enumerate(messages):
        p = f"{prefix}.messages[{i}]"
        m = expect_type(m, dict, what="message", path=p, **ctx)
        role, content = m.get("role"), m.get("content")
        text = content if isinstance(content, str) else None
        if role == "system":
            meta.setdefault("system", []).append(text)
        elif role == "user" and "question" not in sources:
            found = find_task(text or "", get_path(info, "config.agent.instance_template"))
            if found is None:
                warns.append(
                    f"{file}: {trace_id}: the task is not marked in the first user message; the whole "
                    "message is the question (name the task's field with --question-field)"
                )
            question, sources["question"] = (found if found is not None else (text or "")), f"{p}.content"
        elif role == "assistant":
            cmds = _commands(m, ctx, p)
            if text and text.strip():
                b.add("reasoning", text, f"{p}.content", original_kind="assistant")
            for cmd, cid, cp in cmds:
                pending.append((cid, b.call("bash", cmd, cp, query=cmd)))
        elif role in ("tool", "user") and pending:
            cid = m.get("tool_call_id")
            at = next((k for k, (c, _) in enumerate(pending) if cid is not None and c == cid), 0)
            b.result(pending.pop(at)[1], text, p)
        elif role == "exit":
            exit_submission = get_path(m, "extra.submission")
            meta["exit_status"] = get_path(m, "extra.exit_status")
        elif text and text.strip():
            b.add("other", text, p, original_kind=str(role))
    submission = info.get("submission") if info.get("submission") else exit_submission
    if isinstance(submission, str) and submission.strip():
        where = f"{prefix}.info.submission" if info.get("submission") else f"{prefix}.messages[{len(messages) - 1}]"
        b.add("answer", submission, where, original_kind="submission")
        trace["final_answer"], sources["final_answer"] = submission, where
    if question is None:
        raise UserInputError(
            "mini-swe-agent trajectory without a user message: no task to read", path=f"{prefix}.messages", **ctx
        )
    trace["question"] = question
    b.finish(trace)
    trace["question_id"] = rid or question_key(question, None)
    for key in ("exit_status", "model_stats"):
        if info.get(key) is not None:
            meta[key] = info[key]
    trace["metadata"] = {**{k: v for k, v in meta.items() if v is not None}, **trace.get("metadata", {})}
    return ImportedRecord(line, trace=trace, notes=notes, warnings=warns, sources=sources)
