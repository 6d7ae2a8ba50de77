"""Where a chat log keeps its messages: under a known key, under any key, as ``prompt`` + ``completion``.

Producers keep the message list under different keys: ``messages`` (OpenAI), ``traj``
(tau-bench), ``message_history`` (MiroFlow, one level down under ``main_agent_message_history``),
``conversation``, ``history``; any other top-level key holding a list of ``{role, content}``
messages is read too (``dialog``, ``chat``, ``trajectory`` ...). A ``prompt`` with its
``completion`` (TRL's prompt-completion records, rollouts) is one conversation: the completion
continues the prompt, each a message list or a string (a string prompt is the user's message, a
string completion the assistant's). Responses-API logs (item lists, Agents SDK run states,
stored request + response objects) are read by :mod:`._responses_items`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ._jsonpath import key_part
from ._responses_items import RESPONSE_TYPES, item_type, run_state_items, stored_response

#: Keys holding a message list, in the order tried.
MESSAGE_KEYS = ("messages", "traj", "message_history", "conversation", "history")
#: A prompt and the keys that may hold its continuation, in the order tried.
PROMPT_KEY, COMPLETION_KEYS = "prompt", ("completion", "response")
#: Roles of a chat message list found under any key.
CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
#: Keys never read as a message list of "any key": prompts apart from their response (:mod:`._search_r1`),
#: Responses inputs, and the parts of other formats' records.
_NOT_ANY = frozenset({"prompt", "prompts", "input", "output", "observations", "spans", "samples", "events"})
#: Tags of the Search-R1 family in a string completion: such a record is read by :mod:`._search_r1`.
_R1_TAG = re.compile(r"<(think|search|information|result|answer|tool_call)>|<\|begin_of_query\|>", re.IGNORECASE)


class Found(NamedTuple):
    """Where a record's conversation is: ``messages`` (a list, or ``(item, path)`` pairs whose paths start at
    the record, ``$``), ``path`` (of the list; ``$`` for pairs), the record ``keys`` it used, and the path of
    a model name the shape keeps apart (a stored response's ``model``), or None."""

    messages: list
    path: str
    keys: frozenset[str]
    model_path: str | None = None


def is_messages(obj: object) -> bool:
    """True for a list whose first item is a chat message (``role``) or a Responses item (``type``)."""
    return (
        isinstance(obj, list)
        and bool(obj)
        and isinstance(obj[0], dict)
        and ("role" in obj[0] or item_type(obj[0]) in RESPONSE_TYPES)
    )


def _is_chat(obj: object) -> bool:
    """A list of chat messages for the any-key rule: dicts whose ``role`` is a chat role, the first also with
    ``content`` (or tool calls), so that no list of other records with a ``role`` field is taken (smolagents'
    ``intermediate_steps``, with ``tool-call`` and ``tool-response`` roles written as Python text, stay unread)."""
    return (
        isinstance(obj, list)
        and bool(obj)
        and all(isinstance(m, dict) and m.get("role") in CHAT_ROLES for m in obj)
        and any(k in obj[0] for k in ("content", "tool_calls"))
    )


def find_messages(rec: dict) -> Found | None:
    """The conversation of a record (see the module docstring), or None."""
    for key in MESSAGE_KEYS:
        if isinstance(rec.get(key), list):
            return Found(rec[key], f"$.{key}", frozenset({key}))
    if isinstance(rec.get("generated_items"), list) and "original_input" in rec:
        return Found(run_state_items(rec), "$", frozenset({"original_input", "generated_items"}))
    for outer, value in rec.items():
        if isinstance(value, dict):
            for key in MESSAGE_KEYS:
                if isinstance(value.get(key), list) and (not value[key] or is_messages(value[key])):
                    return Found(value[key], f"${key_part(outer)}.{key}", frozenset({outer}))
    stored = stored_response(rec)
    if stored is not None:
        return Found(stored[0], "$", frozenset(stored[1]), stored[2])
    joined = prompt_completion(rec)
    if joined is not None:
        return joined
    for key, value in rec.items():
        if key not in _NOT_ANY and _is_chat(value):
            return Found(value, f"${key_part(key)}", frozenset({key}))  # any key: "0", "a b" need ['...']
    return None


def prompt_completion(rec: dict) -> Found | None:
    """A ``prompt`` and its continuation as one conversation, or None (also when a string continuation
    holds Search-R1 tags: :mod:`._search_r1` reads that record)."""
    prompt = rec.get(PROMPT_KEY)
    key = next((k for k in COMPLETION_KEYS if rec.get(k) is not None), None)
    if key is None or not (isinstance(prompt, str) or _is_chat(prompt)):
        return None
    rest = rec[key]
    if isinstance(rest, str):
        if _R1_TAG.search(rest) or (key == "response" and not _is_chat(prompt)):
            return None  # a string response after a string prompt is a rollout of another shape
    elif not _is_chat(rest):
        return None
    pairs: list[tuple[object, str]] = []
    for part, role in ((PROMPT_KEY, "user"), (key, "assistant")):
        value = rec[part]
        if isinstance(value, str):
            pairs.append(({"role": role, "content": value}, f"$.{part}"))
        else:
            pairs += [(m, f"$.{part}[{i}]") for i, m in enumerate(value)]
    return Found(pairs, "$", frozenset({PROMPT_KEY, key}))


def has_messages(rec: object) -> bool:
    """True for a record that :func:`find_messages` reads (and that is no trace of another format)."""
    if not isinstance(rec, dict) or "steps" in rec or "observations" in rec or isinstance(rec.get("trace"), list):
        return False
    found = find_messages(rec)
    return found is not None and (not found.messages or found.path == "$" or is_messages(found.messages))


def run_state_agent(rec: dict) -> str | None:
    """The agent of an Agents SDK run state (``current_agent.name``), or None."""
    current = rec.get("current_agent")
    return current["name"] if isinstance(current, dict) and isinstance(current.get("name"), str) else None


def record_key(rec: dict) -> str | None:
    """An id for a record without ``id``: ``task_id`` (tau-bench, MiroFlow), with ``-trialN`` when repeated."""
    for key in ("task_id", "idx", "sample_id"):
        value = rec.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            trial = rec.get("trial")
            return f"{value}" + (f"-trial{trial}" if isinstance(trial, int) and not isinstance(trial, bool) else "")
    return None
