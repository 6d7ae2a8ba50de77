"""Importer for Inspect AI eval logs (``.eval`` zip archives and ``.json`` logs).

Each sample and epoch becomes one trace. Mapping: ``eval.model`` -> agent, ``eval.task``
-> dataset, the sample ``id`` -> ``question_id`` (so the epochs of a sample are repeated
runs and Pass@k works), ``input`` (a string, or the first user message of a message list)
-> question, ``target`` (a string or a list) -> gold answers. Messages in order: system
messages -> ``metadata["system"]``; an assistant message gives its ``reasoning`` content
parts -> reasoning, its text beside tool calls -> reasoning, each tool call (``function``
a string, ``arguments`` an object) -> search as in the OpenAI importer, or ``other`` for a
tool that does not retrieve (:mod:`._tools`, ``search_tools``); a ``tool`` message
-> search_result after its call (matched by ``tool_call_id``); a call of an answer tool
(Inspect's ``submit``, ``final_answer`` ..., ``answer_tool``; :mod:`._answer_tools`) -> answer,
its argument the final answer, and a message after it is reasoning; else the last assistant
message without tool calls -> answer, ``final_answer`` = its last ``<answer>`` block, else its
text. The first scorer of the eval (``eval.scorers`` order) decides ``correct``: ``C`` /
``I``, booleans, and the numbers 1 / 0 are correct / incorrect; any other value (``P``,
``N``, 0.5) is recorded with ``value`` null. Every scorer's value, answer and explanation
is kept in ``metadata["inspect"]["scores"]`` and named in ``correct.detail``.

The trace id is ``<eval_id>:<sample id>:<epoch>`` (unique across logs of the same task).
Logs are read with ``inspect_ai.log`` when the ``inspect`` extra is installed, else by a
small reader of the documented layout (:mod:`._inspect_log`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from ..._errors import UserInputError
from ..._limits import ReadLimits
from ._answer_tools import answer_source, resolve_answer_tools
from ._base import ImportedRecord, RecordContext, expect_type, new_trace
from ._inspect_log import Reader, is_eval_zip, is_log_document, read_log
from ._jsonpath import key_part
from ._openai_chat import StepBuilder, search_step
from ._search_r1 import gold_list
from ._tools import record_tool_kinds, resolve_search_tools

FORMAT = "inspect"
_CORRECT = {"C": True, "I": False}


def sniff(path: str, head: str, first: object) -> bool:
    """True for an Inspect ``.eval`` zip or a ``.json`` log document."""
    if head.startswith("PK\x03\x04"):
        return is_eval_zip(path)
    return is_log_document(first)


def iter_records(
    path: str | os.PathLike,
    *,
    reader: Reader = "auto",
    answer_tag: str | None = "answer",
    search_tools: str | Iterable[str] | None = None,
    answer_tool: str | Iterable[str] | None = None,
    limits: ReadLimits | None = None,
) -> Iterator[ImportedRecord]:
    """Convert each sample and epoch of an Inspect log to a canonical trace.

    Parameters
    ----------
    path : str or PathLike
        A ``.eval`` or ``.json`` Inspect AI log.
    reader : {"auto", "inspect", "builtin"}, default "auto"
        ``inspect`` reads with ``inspect_ai.log.read_eval_log_samples``; ``builtin`` reads
        the documented zip / JSON layout; ``auto`` takes ``inspect`` when it is installed.
    answer_tag : str or None, default "answer"
        Take ``final_answer`` from the last ``<answer_tag>`` block of the answer; None keeps the text.
    search_tools : str or list, optional
        The tool names that are searches; other tools are ``other`` steps (default: by name, :mod:`._tools`).
    answer_tool : str or list, optional
        More tool names whose call gives the answer, beside ``submit``, ``final_answer``, ... (:mod:`._answer_tools`).
    limits : ReadLimits, optional
        The byte limits of the read: each decompressed zip member, or a ``.json`` log as a whole.

    Yields
    ------
    ImportedRecord
        ``line`` is the sample's 1-based position in the log.
    """
    file = str(path)
    chosen, answer_tools = resolve_search_tools(search_tools), resolve_answer_tools(answer_tool)
    header, samples = read_log(path, reader=reader, limits=limits)
    spec = header["eval"]
    for n, (where, sample) in enumerate(samples, start=1):
        try:
            sources: dict[str, str] = {}
            trace = convert_sample(
                sample,
                spec,
                file=file,
                line=n,
                where=where,
                answer_tag=answer_tag,
                search_tools=chosen,
                answer_tools=answer_tools,
                sources=sources,
            )
            yield ImportedRecord(n, trace=trace, sources=sources)
        except UserInputError as e:
            yield ImportedRecord(n, error=e)
        except (TypeError, ValueError, AttributeError, KeyError) as e:  # a field of an unexpected JSON type
            detail = str(e).splitlines()[0][:160] if str(e).strip() else type(e).__name__
            yield ImportedRecord(
                n,
                error=UserInputError(
                    f"malformed sample: a field has the wrong type ({detail})", file=file, line=n, path=where
                ),
            )


def _text(content: object, ctx: RecordContext, path: str) -> tuple[str | None, str | None]:
    """``(text, reasoning)`` of a message content: a string, or a list of content parts."""
    if content is None or isinstance(content, str):
        return content, None
    content = expect_type(content, list, what="content", path=path, **ctx)
    texts, reasoning = [], []
    for i, part in enumerate(content):
        part = expect_type(part, dict, what="content part", path=f"{path}[{i}]", **ctx)
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "reasoning" and isinstance(part.get("reasoning"), str) and not part.get("redacted"):
            reasoning.append(part["reasoning"])
        elif kind != "reasoning":
            texts.append(f"[{kind or 'part'}]")
    return ("\n".join(texts) if texts else None), ("\n".join(reasoning) if reasoning else None)


def _correct(scores: object, spec: dict, ctx: RecordContext) -> tuple[dict | None, dict]:
    """The trace's ``correct`` (from the first scorer) and every scorer's result for the metadata."""
    if scores is None:
        return None, {}
    scores = expect_type(scores, dict, what="scores", path="scores", **ctx)
    kept = {
        name: {k: s.get(k) for k in ("value", "answer", "explanation") if k in s} if isinstance(s, dict) else s
        for name, s in scores.items()
    }
    order = [s.get("name") for s in spec.get("scorers") or [] if isinstance(s, dict)]
    names = [n for n in order if n in scores] + [n for n in scores if n not in order]
    if not names:
        return None, kept
    name = names[0]
    raw = scores[name].get("value") if isinstance(scores[name], dict) else None
    value: bool | None
    if isinstance(raw, bool):
        value = raw
    elif isinstance(raw, str):
        value = _CORRECT.get(raw.upper())
    elif isinstance(raw, (int, float)) and raw in (0, 1):
        value = bool(raw)
    else:
        value = None
    return {"value": value, "source": "source_data", "detail": {"scorer": name, "value": raw, "scorers": names}}, kept


def convert_sample(
    sample: object,
    spec: dict,
    *,
    file: str,
    line: int,
    where: str,
    answer_tag: str | None = "answer",
    search_tools: frozenset[str] | None = None,
    answer_tools: frozenset[str] | None = None,
    sources: dict[str, str] | None = None,
) -> dict:
    """One Inspect sample (plain JSON, as in the log file) to a canonical trace; ``sources`` (when given)
    gets the path each field was read at."""
    sources = {} if sources is None else sources
    ctx: RecordContext = {"file": file, "line": line, "trace_id": None}
    sample = expect_type(sample, dict, what="sample", path=where, **ctx)
    sid, epoch = sample.get("id"), sample.get("epoch", 1)
    expect_type(sid, (str, int), what="sample id", path=f"{where}.id", **ctx)
    epoch = expect_type(epoch, int, what="epoch", path=f"{where}.epoch", **ctx)
    run = spec.get("eval_id") or spec.get("run_id") or spec.get("task_id") or spec.get("task")
    trace_id = f"{run}:{sid}:{epoch}"
    ctx["trace_id"] = trace_id
    model, task = spec.get("model"), spec.get("task")
    model = expect_type(model, str, what="eval.model", path="eval.model", **ctx)
    trace = new_trace(
        trace_id=trace_id,
        agent=model,
        question="",
        fmt=FORMAT,
        file=file,
        line=line,
        record_id=sample.get("uuid") if isinstance(sample.get("uuid"), str) else None,
        path=where,
    )
    trace["dataset"] = task if isinstance(task, str) else None
    trace["question_id"] = str(sid)
    target = sample.get("target")
    trace["gold_answers"] = [] if target in (None, "") else gold_list(target, ctx, f"{where}.target")
    trace["correct"], scores = _correct(sample.get("scores"), spec, ctx)
    # the eval spec is the log's header: in a .json log at $.eval, in an .eval zip in header.json
    head = "$.eval" if where.startswith("$") else "header.json: $.eval"
    sources["agent"] = f"{head}.model"
    if trace["dataset"] is not None:
        sources["dataset"] = f"{head}.task"
    if trace["gold_answers"]:
        sources["gold_answers"] = f"{where}.target"
    if trace["correct"] is not None and trace["correct"]["value"] is not None:
        sources["correct"] = f"{where}.scores{key_part(trace['correct']['detail']['scorer'])}.value"
    meta: dict = {
        "inspect": {
            "task": task,
            "eval_id": spec.get("eval_id"),
            "run_id": spec.get("run_id"),
            "epoch": epoch,
            "scores": scores,
        }
    }
    if isinstance(sample.get("metadata"), dict) and sample["metadata"]:
        meta["sample_metadata"] = sample["metadata"]
    if isinstance(sample.get("error"), dict):
        meta["inspect"]["error"] = sample["error"].get("message")
    question = sample.get("input")
    asked = f"{where}.input"
    if not isinstance(question, str):
        question = expect_type(question, list, what="input", path=f"{where}.input", **ctx)
        first = next((i for i, m in enumerate(question) if isinstance(m, dict) and m.get("role") == "user"), None)
        asked = f"{where}.input[{first}].content"
        question = "" if first is None else _text(question[first].get("content"), ctx, f"{where}.input")[0]
    trace["question"] = question or ""
    if trace["question"]:
        sources["question"] = asked
    messages = sample.get("messages") or []
    messages = expect_type(messages, list, what="messages", path=f"{where}.messages", **ctx)
    kinds: dict[str, str] = {}
    tools = (search_tools, answer_tools)
    trace["steps"], answered = _steps(messages, trace, meta, ctx, f"{where}.messages", answer_tag, tools, kinds)
    trace["metadata"] = meta
    record_tool_kinds(trace, kinds)
    at = answer_source(trace["steps"], answered)
    if at is not None and trace["final_answer"] is not None:
        sources["final_answer"] = at
    return trace


def _steps(
    messages: list,
    trace: dict,
    meta: dict,
    ctx: RecordContext,
    mpath: str,
    answer_tag: str | None,
    tools: tuple[frozenset[str] | None, frozenset[str] | None],
    kinds: dict[str, str],
) -> tuple[list[dict], str | None]:
    """The steps of the messages, and the arguments' path of the answer tool's call (None without one)."""
    search_tools, answer_tools = tools
    answered: str | None = None  # after an answer tool's call, a closing message is no second answer
    b = StepBuilder(FORMAT, ctx)
    roles = [m.get("role") if isinstance(m, dict) else None for m in messages]
    last = max((i for i, r in enumerate(roles) if r == "assistant"), default=-1)
    user_seen = False
    for k, msg in enumerate(messages):
        p = f"{mpath}[{k}]"
        msg = expect_type(msg, dict, what="message", path=p, **ctx)
        role = msg.get("role")
        text, reasoning = _text(msg.get("content"), ctx, f"{p}.content")
        if role == "system":
            meta.setdefault("system", []).append(text)
        elif role == "user" and not user_seen:
            user_seen = True
            if text and text != trace["question"]:
                meta["prompt"] = text
        elif role == "assistant":
            calls = []
            for j, tc in enumerate(msg.get("tool_calls") or []):
                tp = f"{p}.tool_calls[{j}]"
                tc = expect_type(tc, dict, what="tool call", path=tp, **ctx)
                step = search_step(
                    tc.get("function"),
                    tc.get("arguments"),
                    ctx,
                    f"{tp}.function",
                    f"{tp}.arguments",
                    classify=True,
                    search_tools=search_tools,
                    answer_tools=answer_tools,
                )
                kinds[step["tool"]] = step["kind"]
                if step["kind"] == "answer":
                    trace["final_answer"], answered = step["text"], f"{tp}.arguments"
                calls.append(({**step, "original_kind": "tool_call"}, tp, tc.get("id")))
            r = None if reasoning is None else (reasoning, "reasoning", f"{p}.content")
            final = k == last and not answered
            answer = b.model_turn(r, text, ("content", f"{p}.content"), calls, final=final, answer_tag=answer_tag)
            if answer is not None:
                trace["final_answer"] = answer
        elif role == "tool":
            result = text
            if isinstance(msg.get("error"), dict) and msg["error"].get("message"):
                result = f"{text or ''}\n[tool error: {msg['error']['message']}]".strip()
            if not b.add_result(result, msg.get("tool_call_id"), p, f"{p}.tool_call_id"):
                b.add({"kind": "other", "text": result, "original_kind": "tool"}, p)
        else:
            b.add({"kind": "other", "text": text, "original_kind": role}, p)
    return b.finish(), answered
