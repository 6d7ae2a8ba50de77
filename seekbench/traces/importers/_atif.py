"""Importer for ATIF, the Agent Trajectory Interchange Format (Harbor, Terminal-Bench).

A trajectory is ``{"schema_version": "ATIF-v1.x", "session_id", "agent": {name,
version, model_name?, extra?}, "steps": [...], "notes"?, "final_metrics"?,
"extra"?}``; each step has ``step_id``, ``source`` (``system`` / ``user`` /
``agent``), ``message`` (a string or a list of content parts), and for agent
steps ``reasoning_content``, ``tool_calls`` ``[{tool_call_id, function_name,
arguments}]`` and ``observation`` ``{results: [{source_call_id, content}]}``.
One trajectory per JSONL line, one per file (pretty-printed), or a JSON list of them.

Mapping: system messages -> ``metadata["system"]``; the first user message is the
question (unless ``extra.question`` or ``question=`` gives it; then it is
``metadata["prompt"]``), later user messages -> ``other``; an agent step gives
its ``reasoning_content`` -> reasoning, its ``message`` -> reasoning when it makes
tool calls, each tool call -> search (as in the OpenAI importer: ``query`` from
``query`` / ``q`` / ``queries`` / ``search_query``, ``url`` from ``url`` ...), or
``other`` for a tool that does not retrieve (:mod:`._tools`, ``search_tools``),
each observation result -> search_result matched by ``source_call_id`` and
placed after its call. A result without ``source_call_id`` matches the single
pending call, else it becomes an ``other`` step. A call of an answer tool
(``submit``, ``final_answer`` ..., ``answer_tool``; :mod:`._answer_tools`) is the
answer step, its argument the answer; else the last agent step, when it makes no
tool calls, is the answer (a message after an answer tool's call is reasoning). The agent is ``agent.name`` and, when
given, ``/`` + ``agent.model_name``. The root ``extra`` may carry ``question``,
``gold_answers`` (or ``golden_answers`` / ``ground_truth``), ``dataset``,
``question_id`` and ``is_correct``; ``agent``, ``notes``, ``final_metrics`` and
the rest of ``extra`` go to ``metadata``.

Trajectories that claim ATIF without conforming are read where the deviation has one reading, with
a note (``ImportedRecord.notes``) naming each: a bare ``schema_version`` (``"1.4"``, only 1.x, and
only when the steps are ATIF steps: canonical traces say ``"1.0"`` too), ``agent.model`` for
``agent.model_name``, flat ``{id, name, arguments}`` calls, and an ``observation`` that is one
result (``{content, source_call_id?}``) instead of ``{results: [...]}``. A result written before
its call is not matched to it (source order): it stays an ``other`` step.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import cast

from ..._errors import UserInputError
from ..._limits import ReadLimits
from ._answer_tools import answer_source, resolve_answer_tools
from ._base import ImportedRecord, RecordContext, expect_type, new_trace
from ._fields import HEADER_FIELDS, apply_fields, record_fields
from ._openai_chat import StepBuilder, content_text, import_documents, search_step
from ._tools import record_tool_kinds, resolve_search_tools

FORMAT = "atif"
_HEAD = re.compile(r'"schema_version"\s*:\s*"ATIF', re.IGNORECASE)
#: Keys of the root ``extra`` read as trace fields; the rest of ``extra`` is kept in metadata.
EXTRA_FIELDS = HEADER_FIELDS - {"id", "agent", "model"}
#: A schema version without its ``ATIF-v`` prefix (non-conforming, but it names one ATIF version).
_BARE_VERSION = re.compile(r"^v?1\.\d+$")


def sniff(path: str, head: str, first: object) -> bool:
    """True for an ATIF trajectory (``schema_version`` "ATIF-..." and a ``steps`` list), or a list of them."""
    obj = first[0] if isinstance(first, list) and first else first
    if isinstance(obj, dict):
        return is_atif(obj)
    return first is None and bool(_HEAD.search(head))


def is_atif(obj: object) -> bool:
    """True when ``obj`` declares an ATIF schema version and has a steps list; a bare version number
    (``"1.4"``, as some writers put it) counts when the first step is an ATIF step (``step_id``, ``source``)."""
    if not (
        isinstance(obj, dict) and isinstance(obj.get("schema_version"), str) and isinstance(obj.get("steps"), list)
    ):
        return False
    version, steps = obj["schema_version"], obj["steps"]
    if version.upper().startswith("ATIF"):
        return True
    first = steps[0] if steps else None
    return (
        _BARE_VERSION.match(version) is not None
        and isinstance(first, dict)
        and "step_id" in first
        and first.get("source") in ("system", "user", "agent")
    )


def iter_records(
    path: str | os.PathLike,
    *,
    agent: str | None = None,
    question: str | None = None,
    answer_tag: str | None = "answer",
    search_tools: str | Iterable[str] | None = None,
    answer_tool: str | Iterable[str] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[ImportedRecord]:
    """Convert each ATIF trajectory in ``path`` to a canonical trace.

    Parameters
    ----------
    path : str or PathLike
        JSONL of trajectories, one trajectory, or a JSON list of trajectories.
    agent : str, optional
        The agent when a trajectory has no ``agent.name``.
    question : str, optional
        The question when ``extra.question`` is absent (else the first user message).
    answer_tag : str or None, default "answer"
        Take ``final_answer`` from the last ``<answer_tag>`` block of the answer; None keeps the message.
    search_tools : str or list, optional
        The tool names that are searches; other tools are ``other`` steps (default: by name, :mod:`._tools`).
    answer_tool : str or list, optional
        More tool names whose call gives the answer, beside ``submit``, ``final_answer``, ... (:mod:`._answer_tools`).

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
        question=question,
        answer_tag=answer_tag,
        search_tools=resolve_search_tools(search_tools),
        answer_tools=resolve_answer_tools(answer_tool),
    )


def _agent_name(doc: dict, ctx: RecordContext, prefix: str, fallback: str | None) -> str:
    info = doc.get("agent")
    if info is None and fallback is not None:
        return fallback
    info = expect_type(info, dict, what="agent", path=f"{prefix}.agent", **ctx)
    name, model = info.get("name"), info.get("model_name")
    if name is None and fallback is None:
        raise UserInputError(
            "missing agent.name: add it to the file, or name the agent with --agent", path=f"{prefix}.agent.name", **ctx
        )
    if name is not None:
        name = expect_type(name, str, what="agent.name", path=f"{prefix}.agent.name", **ctx)
    if model is not None:
        model = expect_type(model, str, what="agent.model_name", path=f"{prefix}.agent.model_name", **ctx)
    # A missing name with no fallback raised above, so one of the two is a string (an empty name with no
    # fallback is the one exception: it gives None, and the trace then fails schema validation).
    base = cast(str, name or fallback)
    return f"{base}/{model}" if model and name else base


def _record_id(doc: dict, ctx: RecordContext, prefix: str) -> str | None:
    """The trajectory's ``session_id``, else its ``trajectory_id`` (None when neither is a non-empty string)."""
    rid = None
    for key in ("session_id", "trajectory_id"):
        if doc.get(key) is not None:
            expect_type(doc[key], str, what=key, path=f"{prefix}.{key}", **ctx)
            rid = rid or doc[key] or None
    return rid


def _agent_model(doc: dict, info: object, prefix: str, origin: dict, deviations: list[str]) -> dict:
    """``doc`` with ``agent.model`` read as ``agent.model_name`` (a deviation, noted) when only the former is
    given; ``origin`` gets where the agent name was read (``agent.name``, joined with the model's)."""
    model_key = "model_name"
    if isinstance(info, dict) and info.get("model_name") is None and isinstance(info.get("model"), str):
        deviations.append("agent.model in place of agent.model_name")
        doc = {**doc, "agent": {**info, "model_name": info["model"]}}
        model_key = "model"
    if isinstance(info, dict) and info.get("name"):  # "name/model" is joined from both
        joined = bool(info.get(model_key))
        origin["agent"] = (
            f"joined: {prefix}.agent.name, {prefix}.agent.{model_key}" if joined else f"{prefix}.agent.name"
        )
    return doc


def _schema_version(doc: dict, ctx: RecordContext, prefix: str, deviations: list[str]) -> str:
    """The trajectory's ``schema_version``; a bare ``1.x`` of a trajectory with ATIF steps is a deviation
    (noted), any other version that is not ATIF's a user error."""
    version = doc.get("schema_version")
    version = expect_type(version, str, what="schema_version", path=f"{prefix}.schema_version", **ctx)
    if _BARE_VERSION.match(version) and is_atif(doc):  # canonical traces say "1.0" too: ATIF steps decide
        deviations.append(f"schema_version {version!r} has no 'ATIF-v' prefix")
    elif not version.upper().startswith("ATIF"):
        raise UserInputError(
            f"schema_version {version!r} is not an ATIF version (ATIF-v1.x); pick the importer that fits this file",
            path=f"{prefix}.schema_version",
            **ctx,
        )
    return version


def _metadata(doc: dict, info: object, version: str, extra: dict | None) -> dict:
    """The trace's metadata: the schema version, the agent object as written (``info``), notes, final
    metrics, and the ``extra`` fields the trace has no field for."""
    meta: dict = {"schema_version": version}
    for key in ("agent", "notes", "final_metrics"):
        if doc.get(key) is not None:
            meta[key] = info if key == "agent" else doc[key]
    rest = {k: v for k, v in (extra or {}).items() if k not in EXTRA_FIELDS}
    if rest:
        meta["extra"] = rest
    return meta


def _convert(
    doc: object,
    *,
    file: str,
    line: int,
    prefix: str,
    agent: str | None,
    question: str | None,
    answer_tag: str | None,
    search_tools: frozenset[str] | None = None,
    answer_tools: frozenset[str] | None = None,
) -> ImportedRecord:
    ctx: RecordContext = {"file": file, "line": line, "trace_id": None}
    doc = expect_type(doc, dict, what="trajectory", path=prefix, **ctx)
    rid = _record_id(doc, ctx, prefix)
    trace_id = rid or f"{os.path.basename(file)}:{line}" + ("" if prefix == "$" else prefix[1:])
    ctx["trace_id"] = trace_id
    deviations: list[str] = []  # what in this trajectory is not ATIF as specified but reads one way only
    version = _schema_version(doc, ctx, prefix, deviations)
    steps = doc.get("steps")
    steps = expect_type(steps, list, what="steps", path=f"{prefix}.steps", **ctx)
    extra = doc.get("extra")
    if extra is not None:
        extra = expect_type(extra, dict, what="extra", path=f"{prefix}.extra", **ctx)
    fields = record_fields({k: v for k, v in (extra or {}).items() if k in EXTRA_FIELDS}, ctx, f"{prefix}.extra")
    origin = dict(fields["sources"])  # where each field came from (convert --explain)
    if rid is not None:
        origin["trace_id"] = next(f"{prefix}.{k}" for k in ("session_id", "trajectory_id") if doc.get(k) == rid)
    info = doc.get("agent")
    doc = _agent_model(doc, info, prefix, origin, deviations)
    trace = new_trace(
        trace_id=trace_id,
        agent=_agent_name(doc, ctx, prefix, agent),
        question="",
        fmt=FORMAT,
        file=file,
        line=line,
        record_id=rid,
        path=prefix,
    )
    meta = _metadata(doc, info, version, extra)
    given = fields["question"] if fields["question"] is not None else question
    sources = [s.get("source") if isinstance(s, dict) else None for s in steps]
    last_agent = max((i for i, s in enumerate(sources) if s == "agent"), default=-1)
    b = StepBuilder(FORMAT, ctx)
    kinds: dict[str, str] = {}
    user_seen = False
    answered: str | None = None  # the arguments' path of an answer tool's call: a later message is no second answer
    for k, st in enumerate(steps):
        p = f"{prefix}.steps[{k}]"
        st = expect_type(st, dict, what="step", path=p, **ctx)
        source = st.get("source")
        source = expect_type(source, str, what="source", path=f"{p}.source", **ctx)
        message = content_text(st.get("message"), ctx, f"{p}.message")
        b.new_turn()
        if source == "system":
            meta.setdefault("system", []).append(message)
        elif source == "user" and not user_seen:
            user_seen = True
            if given is None:
                given = message or ""
                origin["question"] = f"{p}.message"
            else:
                meta["prompt"] = message
        elif source == "agent":
            answered = (
                _agent_step(
                    b,
                    st,
                    message,
                    p,
                    ctx,
                    final=k == last_agent and not answered,
                    answer_tag=answer_tag,
                    trace=trace,
                    kinds=kinds,
                    search_tools=search_tools,
                    answer_tools=answer_tools,
                    deviations=deviations,
                )
                or answered
            )
        else:
            b.add({"kind": "other", "text": message, "original_kind": source}, f"{p}.message")
        _observation(b, st.get("observation"), p, ctx, deviations)
    trace["question"] = given or ""
    apply_fields(trace, fields)
    trace["steps"] = b.finish()
    trace["metadata"] = meta
    record_tool_kinds(trace, kinds)
    at = answer_source(trace["steps"], answered)
    if at is not None and trace["final_answer"] is not None:
        origin["final_answer"] = at
    notes = [
        f"note: {file}: trajectory {trace_id} does not conform to ATIF: {'; '.join(dict.fromkeys(deviations))}; "
        "read as the ATIF fields they stand for"
    ]
    return ImportedRecord(line, trace=trace, sources=origin, notes=notes if deviations else [])


def _agent_step(
    b: StepBuilder,
    st: dict,
    message: str | None,
    p: str,
    ctx: RecordContext,
    *,
    final: bool,
    answer_tag: str | None,
    trace: dict,
    kinds: dict[str, str],
    search_tools: frozenset[str] | None,
    answer_tools: frozenset[str] | None,
    deviations: list[str],
) -> str | None:
    """One agent step's steps; returns the arguments' path of its answer tool's call, or None."""
    reasoning = st.get("reasoning_content")
    if reasoning is not None:
        reasoning = expect_type(reasoning, str, what="reasoning_content", path=f"{p}.reasoning_content", **ctx)
        reasoning = (reasoning, "reasoning_content", f"{p}.reasoning_content")
    raw_calls = st.get("tool_calls") or []
    raw_calls = expect_type(raw_calls, list, what="tool_calls", path=f"{p}.tool_calls", **ctx)
    calls = []
    answered = None
    for j, tc in enumerate(raw_calls):
        tp = f"{p}.tool_calls[{j}]"
        tc = expect_type(tc, dict, what="tool call", path=tp, **ctx)
        id_key, name_key = "tool_call_id", "function_name"
        if "tool_call_id" not in tc and "function_name" not in tc and "name" in tc:  # the flat {id, name, arguments}
            deviations.append(
                "tool calls as {id, name, arguments} in place of {tool_call_id, function_name, arguments}"
            )
            id_key, name_key = "id", "name"
        cid = tc.get(id_key)
        expect_type(cid, (str, type(None)), what=id_key, path=f"{tp}.{id_key}", **ctx)
        step = search_step(
            tc.get(name_key),
            tc.get("arguments"),
            ctx,
            f"{tp}.{name_key}",
            f"{tp}.arguments",
            classify=True,
            search_tools=search_tools,
            answer_tools=answer_tools,
        )
        kinds[step["tool"]] = step["kind"]
        if step["kind"] == "answer":
            trace["final_answer"], answered = step["text"], f"{tp}.arguments"
        calls.append(({**step, "original_kind": "tool_call"}, tp, cid))
    answer = b.model_turn(reasoning, message, ("message", f"{p}.message"), calls, final=final, answer_tag=answer_tag)
    if answer is not None:
        trace["final_answer"] = answer
    return answered


def _observation(b: StepBuilder, obs: object, p: str, ctx: RecordContext, deviations: list[str]) -> None:
    if obs is None:
        return
    obs = expect_type(obs, dict, what="observation", path=f"{p}.observation", **ctx)
    if "results" not in obs and "content" in obs:  # one result written as the observation itself
        deviations.append("an observation holding one result's content in place of observation.results")
        located = [(obs, f"{p}.observation")]
    else:
        results = obs.get("results")
        results = expect_type(results, list, what="observation.results", path=f"{p}.observation.results", **ctx)
        located = [(res, f"{p}.observation.results[{i}]") for i, res in enumerate(results)]
    for res, rp in located:
        res = expect_type(res, dict, what="observation result", path=rp, **ctx)
        text = content_text(res.get("content"), ctx, f"{rp}.content")
        if text is None and res.get("subagent_trajectory_ref") is not None:
            text = f"[subagent trajectory: {res['subagent_trajectory_ref']!r}]"
        if not b.add_result(text, res.get("source_call_id"), rp, f"{rp}.source_call_id"):
            b.add({"kind": "other", "text": text, "original_kind": "observation"}, rp)
