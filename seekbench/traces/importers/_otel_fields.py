"""The fields of an OpenTelemetry trace read from its spans: metadata, question, agent, and where each came from.

The agent span's ``metadata`` gives gold answers, dataset, question id and correctness; its ``input.value``
(or the first user message) the question; ``agent.name`` / ``gen_ai.agent.name`` and the first LLM call's
model the agent. :func:`trace_sources` says, in words, where each was read (``convert --explain``): spans are no one
JSON record a path could name.
"""

from __future__ import annotations

from ..._errors import UserInputError
from ._base import RecordContext
from ._fields import GOLD_FIELDS
from ._otel_messages import messages
from ._otel_spans import Span, json_value

#: Keys of an ``input.value`` object that hold the question, in the order tried.
_QUESTION_KEYS = ("question", "query", "input")


def first_of(attrs: dict, *keys: str) -> object:
    """The value of the first of ``keys`` set in ``attrs``, or None."""
    return next((attrs[k] for k in keys if attrs.get(k) is not None), None)


def root_metadata(root: Span | None) -> dict:
    """The agent span's ``metadata``: one JSON attribute, or ``metadata.*`` attributes."""
    if root is None:
        return {}
    raw = json_value(root.attrs.get("metadata"))
    if isinstance(raw, dict):
        return raw
    return {k[len("metadata.") :]: v for k, v in root.attrs.items() if k.startswith("metadata.")}


def question_of(root: Span | None, llms: list[Span]) -> str | None:
    """The agent span's ``input.value`` (text, or its question key), else the first user message."""
    if root is not None:
        value = json_value(root.attrs.get("input.value"))
        if isinstance(value, dict):
            value = next((value[k] for k in _QUESTION_KEYS if isinstance(value.get(k), str)), None)
        if isinstance(value, str):
            return value
    for s in ([root] if root is not None else []) + llms[:1]:
        user = next((m["text"] for m in messages(s, output=False) if m["role"] == "user"), None)
        if user:
            return user
    return None


def agent_name(
    root: Span | None, llms: list[Span], fields: dict, fallback: str | None, first: Span, ctx: RecordContext
) -> str:
    """``agent.name`` / ``gen_ai.agent.name`` and, when known, ``/`` + the first LLM call's model; else
    ``fallback`` (``--agent``), else ``service.name``; a user error when none is there."""
    name = fields["agent"] or (None if root is None else first_of(root.attrs, "agent.name", "gen_ai.agent.name"))
    model = next(
        (
            m
            for s in llms
            for m in [first_of(s.attrs, "llm.model_name", "gen_ai.response.model", "gen_ai.request.model")]
            if m
        ),
        None,
    )
    if name and model:
        return f"{name}/{model}"
    who = name or model or fallback or first.resource.get("service.name")
    if not who:
        raise UserInputError(
            "no agent name: the spans carry no agent.name, gen_ai.agent.name, model name or "
            "service.name; add agent.name to the agent span",
            **ctx,
        )
    return str(who)


def trace_sources(trace: dict, root: Span | None, agent: str | None) -> dict[str, str]:
    """Where the trace's fields came from, in words: spans are no one JSON record a path could name."""
    out: dict[str, str] = {}
    meta = root_metadata(root)
    on_root = "" if root is None else f"span {root.span_id} "
    named = (("question", ("question",)), ("gold_answers", GOLD_FIELDS), ("dataset", ("dataset",)))
    for key, names in (*named, ("correct", ("is_correct",))):
        hit = next((k for k in names if meta.get(k) is not None), None)
        if hit is not None:
            out[key] = f"{on_root}metadata.{hit}"
    if "question" not in out and trace["question"]:
        given = root is not None and json_value(root.attrs.get("input.value")) is not None
        out["question"] = f"{on_root}input.value" if given else "the first user message of the first LLM span"
    if agent is None or trace["agent"] != agent:  # else the agent is --agent
        out["agent"] = "span attributes (agent.name, the model name, service.name)"
    answers = [s for s in trace["steps"] if s["kind"] == "answer"]
    if answers and trace["final_answer"] is not None:
        ref = answers[-1]["source_ref"]
        out["final_answer"] = f"span {ref['record_id']} {ref['path']}"
    return out
