"""The prompt contract between seekbench judge prompts and the mock server, and its default policy.

A judge prompt hands the server the steps to label in its **last user
message**, as a JSON array fenced by two marker lines::

    TRACE_ID: t-0001
    <<<STEPS_JSON
    [{"step": 1, "kind": "reasoning", "text": "I should search for ..."},
     {"step": 2, "kind": "search", "text": "capital of France"}]
    STEPS_JSON>>>

Each element is ``{"step": int, "kind": str, "text": str}`` with ``kind`` one
of :data:`STEP_KINDS`. The optional ``TRACE_ID: <id>`` line (on its own line,
anywhere in the messages, case-insensitive) is copied into the request log.

The default policy, :class:`StepLabeler`, answers
``{"labels": [{"step": i, <field>: <value>, ...}, ...]}`` with one entry per
step that has label fields (see :data:`MOCK_FIELDS_BY_KIND`; answer and other
steps get no entry). Each value is picked from the allowed set by a SHA-256
hash of ``salt``, the field name and the step text, so the same step text
always gets the same labels.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..traces import LABEL_VALUES, STEP_KINDS

STEPS_BEGIN = "<<<STEPS_JSON"
STEPS_END = "STEPS_JSON>>>"
TRACE_ID_PREFIX = "TRACE_ID:"

#: step kind -> fields the default policy labels (the ontology's, minus the optional search grounding).
MOCK_FIELDS_BY_KIND: dict[str, tuple[str, ...]] = {
    "reasoning": ("reasoning_type", "grounding"),
    "search": ("search_type",),
    "search_result": ("clarity", "sufficiency"),
    "answer": (),
    "other": (),
}

#: values the judge never emits because rules derive them (first query, repeated query).
RULE_DERIVED_VALUES: dict[str, tuple[str, ...]] = {"search_type": ("InitialQuery", "RepeatQuery")}

#: A labeling policy: the parsed request body of a chat completion -> the message content.
Policy = Callable[[Mapping[str, Any]], str]

_TRACE_ID_RE = re.compile(r"^[ \t]*" + re.escape(TRACE_ID_PREFIX) + r"[ \t]*(\S.*?)[ \t]*$", re.I | re.M)
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
_INSTRUCTION_RE = re.compile(r"[^.!?\n]*\bignore\b[^.!?\n]*", re.I)


class PolicyError(Exception):
    """A policy cannot answer this request; the server replies with ``status`` and ``message``."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def count_tokens(text: str) -> int:
    """Count tokens the mock way: each run of word characters and each punctuation mark is one.

    ``prompt_tokens`` is the sum over the request's messages of the count of
    their text content; ``completion_tokens`` is the count of the answer.

    >>> count_tokens('{"step": 1}')
    7
    """
    return len(_TOKEN_RE.findall(text))


def message_text(message: Mapping[str, Any]) -> str:
    """The text of one chat message (string content, or the text parts of a content list)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "") for part in content if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


def _messages(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    messages = request.get("messages")
    if not isinstance(messages, list):
        return []
    return [m for m in messages if isinstance(m, Mapping)]


def last_user_text(request: Mapping[str, Any]) -> str | None:
    """The text of the last message whose role is ``user``, or None if there is none."""
    for message in reversed(_messages(request)):
        if message.get("role") == "user":
            return message_text(message)
    return None


def required_user_text(request: Mapping[str, Any]) -> str:
    """The last user message's text; a :class:`PolicyError` (HTTP 400) when the request has none."""
    text = last_user_text(request)
    if text is None:
        raise PolicyError("seekbench mock server: the request has no user message")
    return text


def prompt_tokens(request: Mapping[str, Any]) -> int:
    """``prompt_tokens`` of a request: :func:`count_tokens` summed over its messages' text."""
    return sum(count_tokens(message_text(m)) for m in _messages(request))


def extract_trace_id(request: Mapping[str, Any]) -> str | None:
    """The id on a ``TRACE_ID: <id>`` line, searching the last message first; None if absent."""
    for message in reversed(_messages(request)):
        match = _TRACE_ID_RE.search(message_text(message))
        if match:
            return match.group(1)
    return None


def render_steps_block(steps: Sequence[Mapping[str, Any]]) -> str:
    """Render steps as the fenced block the default policy reads (one JSON array, one step per line)."""
    rows = ",\n".join(
        json.dumps({"step": s["step"], "kind": s["kind"], "text": s["text"]}, ensure_ascii=False) for s in steps
    )
    return f"{STEPS_BEGIN}\n[{rows}]\n{STEPS_END}"


def extract_steps(text: str) -> list[dict[str, Any]]:
    """Parse the steps block out of ``text``; raise :class:`PolicyError` if it is absent or invalid."""
    lines = text.split("\n")  # not splitlines(): U+2028 or U+0085 inside a JSON string is not a line break
    try:
        begin = next(i for i, line in enumerate(lines) if line.strip() == STEPS_BEGIN)
        end = next(i for i in range(begin + 1, len(lines)) if lines[i].strip() == STEPS_END)
    except StopIteration:
        raise PolicyError(
            f"seekbench mock server: the last user message has no {STEPS_BEGIN} ... {STEPS_END} "
            "block; put the steps between those two marker lines (see seekbench.testing)"
        ) from None
    try:
        steps = json.loads("\n".join(lines[begin + 1 : end]))
    except json.JSONDecodeError as e:
        raise PolicyError(f"seekbench mock server: the steps block is not valid JSON: {e}") from e
    if not isinstance(steps, list):
        raise PolicyError("seekbench mock server: the steps block must be a JSON array")
    for n, step in enumerate(steps):
        ok = (
            isinstance(step, dict)
            and isinstance(step.get("step"), int)
            and not isinstance(step.get("step"), bool)
            and step.get("kind") in STEP_KINDS
            and isinstance(step.get("text"), str)
        )
        if not ok:
            raise PolicyError(
                f"seekbench mock server: steps block element {n} must be "
                f'{{"step": int, "kind": one of {"|".join(STEP_KINDS)}, "text": str}}'
            )
    return steps


def _pick(field: str, text: str, choices: Sequence[str], salt: str) -> str:
    digest = hashlib.sha256(f"{salt}\x1f{field}\x1f{text}".encode()).digest()
    return choices[int.from_bytes(digest[:8], "big") % len(choices)]


def allowed_values(field: str) -> tuple[str, ...]:
    """The values the default policy may emit for ``field`` (the ontology minus rule-derived ones)."""
    excluded = RULE_DERIVED_VALUES.get(field, ())
    return tuple(v for v in LABEL_VALUES[field] if v not in excluded)


def label_steps(steps: Sequence[Mapping[str, Any]], *, salt: str = "") -> list[dict[str, Any]]:
    """The default policy's labels for ``steps`` (hash of salt, field and step text picks each value)."""
    labels = []
    for step in steps:
        fields = MOCK_FIELDS_BY_KIND.get(step["kind"], ())
        if not fields:
            continue
        label: dict[str, Any] = {"step": step["step"]}
        for field in fields:
            label[field] = _pick(field, step["text"], allowed_values(field), salt)
        labels.append(label)
    return labels


def find_instruction(steps: Sequence[Mapping[str, Any]]) -> str | None:
    """The first sentence in the step texts that tells the reader to ignore something, if any."""
    for step in steps:
        match = _INSTRUCTION_RE.search(str(step.get("text", "")))
        if match:
            return match.group(0).strip()
    return None


def request_steps(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The steps of a request's last user message, or ``[]`` if it carries no valid block."""
    text = last_user_text(request)
    if text is None:
        return []
    try:
        return extract_steps(text)
    except PolicyError:
        return []


#: The line of a prompt that asks for some steps only (outside the fences, after the steps block).
ONLY_STEPS_PREFIX = "Label only these steps:"
_ONLY_STEPS_RE = re.compile(r"^" + re.escape(ONLY_STEPS_PREFIX) + r"\s*([\d,\s]+)", re.M)


def only_steps(text: str) -> set[int] | None:
    """The steps a ``Label only these steps: 3, 7.`` line after the steps block asks for (None: all)."""
    tail = text.rsplit(STEPS_END, 1)[-1] if STEPS_END in text else ""
    found = _ONLY_STEPS_RE.findall(tail)
    if not found:
        return None
    return {int(n) for n in re.findall(r"\d+", found[-1])}


class StepLabeler:
    """The default labeling policy: scripted step labels for prompts that follow the contract.

    Honours a ``Label only these steps: ...`` line after the steps block (a window,
    one step, or a repair asking for the steps still missing): only those steps get labels.

    Parameters
    ----------
    salt : str, default ""
        Mixed into the hash, so two labelers with different salts disagree
        like two independent judges.
    omit_every : int, default 0
        Like a small model that loses track: a first ask (no ``REPAIR`` note)
        leaves out every ``omit_every``-th step it would label (the 2nd, 4th, ...
        for 2). A repair asking for them gets them. 0: nothing left out.
    never : iterable of int
        Steps never labeled, however often asked (they stay unscored).

    Raises
    ------
    PolicyError
        When the last user message has no valid steps block (the server answers 400).
    """

    def __init__(self, salt: str = "", *, omit_every: int = 0, never=()) -> None:
        self.salt = salt
        self.omit_every = omit_every
        self.never = frozenset(never)

    def __repr__(self) -> str:
        return f"StepLabeler(salt={self.salt!r}, omit_every={self.omit_every}, never={sorted(self.never)})"

    def __call__(self, request: Mapping[str, Any]) -> str:
        text = required_user_text(request)
        labels = label_steps(extract_steps(text), salt=self.salt)
        wanted = only_steps(text)
        if wanted is not None:
            labels = [lab for lab in labels if lab["step"] in wanted]
        if self.omit_every and "\nREPAIR " not in text:
            labels = [lab for n, lab in enumerate(labels, start=1) if n % self.omit_every]
        labels = [lab for lab in labels if lab["step"] not in self.never]
        return json.dumps({"labels": labels}, ensure_ascii=False)
