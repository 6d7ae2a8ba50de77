"""Answers given through a tool: a call of ``submit`` / ``final_answer`` / ... is the trace's answer.

Agents built on tool calling often end by calling a tool whose argument is the answer (Inspect's
``submit``, smolagents' ``final_answer``, PydanticAI's ``final_result``, ``submit_final_result``
of the OpenHands-style harnesses) and never write the answer as a message. Read as an ordinary
tool call, the answer is lost (``final_answer`` null); read as a search, it inflates the search
counts. A call of a tool named here is the ``answer`` step instead, its text the answer argument;
the ``answer_tool`` option (``--answer-tool NAMES``) adds names. Every importer that reads tool
calls can ask :func:`is_answer_tool` and :func:`answer_text`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from ..._errors import UserInputError

#: Tool names whose call gives the answer (compared lowercased).
ANSWER_TOOLS = frozenset({"submit", "final_answer", "submit_final_result", "answer", "final_result"})
#: Argument names holding the answer, in the order tried.
ANSWER_KEYS = ("answer", "final_answer", "result", "response", "output", "text", "content", "value")


def resolve_answer_tools(value: str | Iterable[str] | None) -> frozenset[str]:
    """The answer tools: :data:`ANSWER_TOOLS` plus the ``answer_tool`` option (comma-separated or a list).

    Examples
    --------
    >>> sorted(resolve_answer_tools("respond_to_user") - ANSWER_TOOLS)
    ['respond_to_user']
    """
    if value is None:
        return ANSWER_TOOLS
    names = value.split(",") if isinstance(value, str) else list(value)
    if not all(isinstance(n, str) for n in names):
        raise UserInputError("option answer_tool must be tool names, e.g. 'submit_answer'")
    extra = frozenset(n.strip().lower() for n in names if n.strip())
    if not extra:
        raise UserInputError("option answer_tool names no tool; give a name like 'submit_answer'")
    return ANSWER_TOOLS | extra


def is_answer_tool(name: object, answer_tools: frozenset[str] | None) -> bool:
    """Whether a call of tool ``name`` gives the answer (``answer_tools`` None: no tool does).

    Examples
    --------
    >>> is_answer_tool("Submit", ANSWER_TOOLS), is_answer_tool("web_search", ANSWER_TOOLS)
    (True, False)
    """
    return answer_tools is not None and isinstance(name, str) and name.strip().lower() in answer_tools


def answer_text(args: dict, raw: str | None) -> str:
    """The answer a call gives: its :data:`ANSWER_KEYS` argument, else its only argument, else the raw arguments.

    Examples
    --------
    >>> answer_text({"answer": "Paris", "confidence": 0.9}, None), answer_text({"x": ["a", "b"]}, None)
    ('Paris', 'a | b')
    """
    value = next((args[k] for k in ANSWER_KEYS if args.get(k) is not None), None)
    if value is None and len(args) == 1:
        value = next(iter(args.values()))
    if value is None:
        return (raw or "").strip()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " | ".join(value)
    return value.strip() if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def answer_call(step: dict, answer_tools: frozenset[str] | None) -> str | None:
    """Make a call step read from text (``tool`` and its arguments as JSON ``text``) the ``answer`` step when
    its tool gives the answer, in place; returns the answer, or None for any other step."""
    if step.get("tool") is None or not is_answer_tool(step["tool"], answer_tools):
        return None
    try:
        args = json.loads(step["text"]) if step["text"] else {}
    except ValueError:
        args = {}
    step["kind"], step["text"] = "answer", answer_text(args if isinstance(args, dict) else {}, step["text"])
    step.pop("query", None)
    step.pop("url", None)
    return step["text"]


def answer_source(steps: list[dict], answered: str | None) -> str | None:
    """Where the final answer was read (``convert --explain``): ``answered``, the arguments' path of an answer
    tool's call, when the last answer step is a tool's; else that step's path; None without an answer step."""
    answers = [s for s in steps if s["kind"] == "answer"]
    if not answers:
        return None
    last = answers[-1]
    return answered if answered and last.get("tool") else last["source_ref"]["path"]
