"""Importer for SWE-agent trajectories (``.traj`` files), a coding agent's run on one task.

A trajectory is ``{"trajectory": [{"action", "observation", "response", "thought", "state"?,
"execution_time"?}], "history": [{"role", "content", "agent"?, "message_type"?, "is_demo"?,
"thought"?, "action"?, "tool_calls"?}], "info": {"submission", "exit_status", "model_stats",
...}, "environment"?, "replay_config"?}`` (``replay_config`` is the run's configuration, a JSON
string or an object, with ``problem_statement.{id, text}`` and ``agent.model.name``); one per
file, as SWE-agent writes them, a JSON list of them, or one per JSONL line. A ``history`` alone
(SWE-agent's demonstration files) is read too: each assistant message after the task gives its
``thought`` and ``action``, the message after it the output.

Mapping: the question is the task, never the demonstration before it: ``--question-field``,
else ``replay_config.problem_statement.text``, else the issue inside the first user message of
``history`` that is no demonstration (``is_demo``, ``message_type: demonstration``, or a
``--- DEMONSTRATION ---`` block): the text between ``ISSUE:`` and ``INSTRUCTIONS:``, or inside
``<pr_description>``, else that whole message. Each ``trajectory`` entry gives its ``thought``
(else its ``response``) -> reasoning, its ``action`` -> a tool call named by the action's first
word (``create``, ``edit``, ``python``, ``search_dir``, ``submit`` ...), classified once for every
importer (:mod:`._tools`): a retrieving command (``search_dir``, ``search_file``, ``open``) is a
``search`` step with the command's first argument as its query and its ``observation`` a
``search_result``; every other command an ``other`` step naming its tool, its observation an
``other`` step. ``info.submission`` (the patch) is the answer step and ``final_answer``; without
a submission (a run that ran out of budget) the trace has no answer. The agent is ``--agent``,
else ``SWE-agent/`` + ``replay_config.agent.model.name``, else the file's name (with a note);
``info.exit_status``, ``info.model_stats`` and ``environment`` go to ``metadata``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..._errors import UserInputError
from ..._limits import ReadLimits
from ._action_steps import ActionSteps
from ._base import ImportedRecord, RecordContext, agent_note, default_agent, expect_type, new_trace
from ._fields import get_path, named_field, question_key
from ._json_documents import import_documents
from ._tools import resolve_search_tools

FORMAT = "swe_agent"
_HEAD = re.compile(r'"trajectory"\s*:\s*\[')
_ISSUE = re.compile(r"ISSUE:\s*\n(.*?)\n\s*INSTRUCTIONS:", re.DOTALL)
_PR = re.compile(r"<pr_description>\s*(.*?)\s*</pr_description>", re.DOTALL)
_PR_LEAD = re.compile(r"^Consider the following PR description:\s*", re.IGNORECASE)
_DEMO_MARK = "--- DEMONSTRATION ---"
_MESSAGE_TYPES = frozenset({"system_prompt", "observation", "action", "demonstration"})


def sniff(path: str, head: str, first: object) -> bool:
    """True for a SWE-agent trajectory (a ``trajectory`` list beside ``history`` or ``info``), or a list of them."""
    obj = first[0] if isinstance(first, list) and first else first
    if isinstance(obj, dict):
        return is_trajectory(obj)
    return first is None and bool(_HEAD.search(head)) and '"history"' in head


def is_trajectory(obj: object) -> bool:
    """True for ``{"trajectory": [...], "history": [...]}`` or ``{"trajectory": [...], "info": {...}}`` whose
    entries are SWE-agent steps (``action`` / ``observation`` / ``thought``), not chat messages; or for a
    SWE-agent ``history`` alone (a demonstration file), told by its messages' ``message_type`` /
    ``is_demo`` or an assistant message with ``thought`` and ``action``."""
    if not isinstance(obj, dict):
        return False
    if not isinstance(obj.get("trajectory"), list):
        history = obj.get("history")
        return "messages" not in obj and isinstance(history, list) and any(_swe_message(m) for m in history[:20])
    if not (isinstance(obj.get("history"), list) or isinstance(obj.get("info"), dict)):
        return False
    first = obj["trajectory"][0] if obj["trajectory"] else None
    return first is None or (isinstance(first, dict) and any(k in first for k in ("action", "observation", "thought")))


def _swe_message(m: object) -> bool:
    return isinstance(m, dict) and (
        m.get("message_type") in _MESSAGE_TYPES or "is_demo" in m or ("thought" in m and "action" in m)
    )


def iter_records(
    path: str | os.PathLike,
    *,
    agent: str | None = None,
    question_field: str | None = None,
    search_tools: str | Iterable[str] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[ImportedRecord]:
    """Convert each SWE-agent trajectory in ``path`` to a canonical trace.

    Parameters
    ----------
    path : str or PathLike
        A ``.traj`` file (one trajectory), a JSON list of them, or JSONL.
    agent : str, optional
        The agent; default ``SWE-agent/<model>`` from ``replay_config``, else the file's name (with a note).
    question_field : str, optional
        Dotted path of the task in the trajectory (default: the problem statement, see the module notes).
    search_tools : str or list, optional
        The commands that are searches; others are ``other`` steps (default: by name, :mod:`._tools`).

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


def _replay_config(doc: dict, ctx: RecordContext, prefix: str) -> dict:
    """The run's configuration as an object (SWE-agent writes it as a JSON string); {} when absent."""
    value = doc.get("replay_config")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as e:
            raise UserInputError(f"replay_config is not JSON: {e}", path=f"{prefix}.replay_config", **ctx) from e
    if value is None:
        return {}
    return expect_type(value, dict, what="replay_config", path=f"{prefix}.replay_config", **ctx)


def _task(doc: dict, config: dict, ctx: RecordContext, prefix: str, field: str | None) -> tuple[str, str]:
    """``(question, where it came from)``: the task, never a demonstration."""
    if field is not None:
        return named_field(doc, field, "--question-field", ctx, prefix, what="trajectory"), f"{prefix}.{field}"
    text = get_path(config, "problem_statement.text")
    if isinstance(text, str) and text.strip():
        return text.strip(), f"{prefix}.replay_config.problem_statement.text"
    history = doc.get("history") or []
    history = expect_type(history, list, what="history", path=f"{prefix}.history", **ctx)
    for i, m in enumerate(history):
        if not isinstance(m, dict) or m.get("role") != "user" or m.get("is_demo"):
            continue
        content = m.get("content")
        if m.get("message_type") == "demonstration" or not isinstance(content, str) or _DEMO_MARK in content:
            continue
        where = f"{prefix}.history[{i}].content"
        for pattern in (_ISSUE, _PR):
            found = pattern.search(content)
            if found is not None and found.group(1).strip():
                return _PR_LEAD.sub("", found.group(1).strip()), where
        return content.strip(), where
    raise UserInputError(
        "SWE-agent trajectory without its task: no replay_config.problem_statement.text and no user message "
        "in history outside the demonstration; name the field holding it with --question-field",
        path=f"{prefix}.history",
        **ctx,
    )


def _agent(config: dict, file: str, given: str | None) -> tuple[str, str | None, str | None]:
    """``(agent, its source path, a note)``."""
    if given is not None:
        return given, None, None
    model = get_path(config, "agent.model.name")
    if isinstance(model, str) and model:
        return f"SWE-agent/{model}", "'SWE-agent/' + $.replay_config.agent.model.name", None
    return default_agent(file), None, agent_note(file)


def _in_config_text(src: str, prefix: str) -> str:
    """A stated source inside ``replay_config`` said in words when the config is JSON text (a path cannot
    go into a string): ``$.replay_config.agent.model.name`` -> ``agent.model.name of the JSON text at
    $.replay_config``."""
    at = f"{prefix}.replay_config."
    if at not in src:
        return src
    head, inner = src.split(at, 1)
    return f"{head}{inner} of the JSON text at {prefix}.replay_config"


def _command(action: str) -> tuple[str | None, str | None]:
    """``(tool, first argument)`` of an action: its first word, and the word after it unquoted as the
    shell would (``search_dir "def measure" src`` -> ``search_dir``, ``def measure``)."""
    words = action.strip().split(None, 1)
    if not words:
        return None, None
    rest = words[1].split("\n", 1)[0].strip() if len(words) > 1 else ""
    try:
        args = shlex.split(rest)
    except ValueError:  # an unbalanced quote: the words as written
        args = rest.split()
    return words[0], (args[0] if args else None)


_Text = tuple[str, str]  # (text, its JSON path)


def _entries(
    doc: dict, ctx: RecordContext, prefix: str, task_path: str
) -> list[tuple[_Text | None, _Text | None, _Text | None]]:
    """``(thought, action, observation)`` of each step: the ``trajectory`` entries, else (a ``history``
    alone) each assistant message after the task with its ``action`` and the next tool or user message."""

    def text(value: object, what: str, path: str) -> _Text | None:
        value = expect_type(value, (str, type(None)), what=what, path=path, **ctx)
        return None if value is None else (value, path)

    out: list[tuple[_Text | None, _Text | None, _Text | None]] = []
    if "trajectory" in doc:
        steps = expect_type(doc.get("trajectory"), list, what="trajectory", path=f"{prefix}.trajectory", **ctx)
        for j, entry in enumerate(steps):
            p = f"{prefix}.trajectory[{j}]"
            entry = expect_type(entry, dict, what="trajectory entry", path=p, **ctx)
            thought = text(entry.get("thought"), "thought", f"{p}.thought")
            if thought is None or not thought[0].strip():
                thought = text(entry.get("response"), "response", f"{p}.response")
            out.append(
                (
                    thought,
                    text(entry.get("action"), "action", f"{p}.action"),
                    text(entry.get("observation"), "observation", f"{p}.observation"),
                )
            )
        return out
    history = expect_type(doc.get("history"), list, what="history", path=f"{prefix}.history", **ctx)
    start = int(task_path.split("history[", 1)[1].split("]", 1)[0]) + 1 if "history[" in task_path else 0
    for i in range(start, len(history)):
        m, p = history[i], f"{prefix}.history[{i}]"
        if not isinstance(m, dict) or m.get("is_demo") or m.get("role") != "assistant":
            continue
        thought = text(
            m.get("thought", m.get("content")), "thought", f"{p}.thought" if "thought" in m else f"{p}.content"
        )
        nxt = history[i + 1] if i + 1 < len(history) else None
        observation = None
        if isinstance(nxt, dict) and nxt.get("role") in ("tool", "user") and isinstance(nxt.get("content"), str):
            observation = (nxt["content"], f"{prefix}.history[{i + 1}].content")
        out.append((thought, text(m.get("action"), "action", f"{p}.action"), observation))
    return out


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
    config = _replay_config(doc, ctx, prefix)
    rid = get_path(config, "problem_statement.id")
    rid = rid if isinstance(rid, str) and rid else None
    trace_id = rid or Path(file).stem + ("" if prefix == "$" else prefix[1:])
    ctx["trace_id"] = trace_id
    question, q_source = _task(doc, config, ctx, prefix, question_field)
    name, a_source, note = _agent(config, file, agent)
    trace = new_trace(
        trace_id=trace_id, agent=name, question=question, fmt=FORMAT, file=file, line=line, record_id=rid, path=prefix
    )
    b = ActionSteps(FORMAT, ctx, search_tools)
    for thought, action, observation in _entries(doc, ctx, prefix, q_source):
        if thought is not None and thought[0].strip():
            b.add("reasoning", thought[0], thought[1], original_kind=thought[1].rsplit(".", 1)[-1])
        tool, args = _command(action[0] if action is not None else "")
        if tool is None or action is None:
            continue
        call = b.call(tool, action[0], action[1], query=args)
        if observation is not None:
            b.result(call, observation[0], observation[1])
    info = doc.get("info") or {}
    info = expect_type(info, dict, what="info", path=f"{prefix}.info", **ctx)
    submission = info.get("submission")
    submission = expect_type(submission, (str, type(None)), what="submission", path=f"{prefix}.info.submission", **ctx)
    sources = {"question": q_source}
    if submission and submission.strip():
        b.add("answer", submission, f"{prefix}.info.submission", original_kind="submission")
        trace["final_answer"] = submission
        sources["final_answer"] = f"{prefix}.info.submission"
    b.finish(trace)
    trace["question_id"] = rid or question_key(question, None)
    meta = {k: info[k] for k in ("exit_status", "model_stats") if info.get(k) is not None}
    if doc.get("environment") is not None:
        meta["environment"] = doc["environment"]
    trace["metadata"] = {**meta, **trace.get("metadata", {})}
    if a_source is not None:
        sources["agent"] = a_source if prefix == "$" else a_source.replace("$", prefix, 1)
    if isinstance(doc.get("replay_config"), str):  # SWE-agent's replay_config is JSON text: no path goes inside it
        for key, src in list(sources.items()):
            sources[key] = _in_config_text(src, prefix)
    return ImportedRecord(line, trace=trace, notes=[note] if note else [], sources=sources)
