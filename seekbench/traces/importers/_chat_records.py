"""Where a chat log keeps its messages, and Responses-API items read as chat messages.

Producers keep the message list under different keys: ``messages`` (OpenAI), ``traj``
(tau-bench), ``message_history`` (MiroFlow, one level down under ``main_agent_message_history``),
``conversation``, ``history``. The OpenAI Agents SDK run state keeps ``original_input`` and
``generated_items`` (each item's ``raw_item`` a Responses item); Responses logs are lists of
items typed ``message``, ``reasoning``, ``function_call``, ``function_call_output`` (also the
``custom_tool_call`` pair and hosted ``web_search_call``). Items become the chat messages the
OpenAI importer reads, each with the JSON path it came from.
"""

from __future__ import annotations

import json

#: Keys holding a message list, in the order tried.
MESSAGE_KEYS = ("messages", "traj", "message_history", "conversation", "history")
#: Responses item types read as steps.
RESPONSE_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
    }
)


def is_messages(obj: object) -> bool:
    """True for a list whose first item is a chat message (``role``) or a Responses item (``type``)."""
    return (
        isinstance(obj, list)
        and bool(obj)
        and isinstance(obj[0], dict)
        and ("role" in obj[0] or _type(obj[0]) in RESPONSE_TYPES)
    )


def _type(item: dict) -> str | None:
    return item["type"] if isinstance(item.get("type"), str) else None


def find_messages(rec: dict) -> tuple[object, str] | None:
    """``(messages, path)`` of a record: under a :data:`MESSAGE_KEYS` key, one level down, or a run state."""
    for key in MESSAGE_KEYS:
        if isinstance(rec.get(key), list):
            return rec[key], f"$.{key}"
    if isinstance(rec.get("generated_items"), list) and "original_input" in rec:
        return run_state_items(rec), "$"
    for outer, value in rec.items():
        if isinstance(value, dict):
            for key in MESSAGE_KEYS:
                if isinstance(value.get(key), list) and (not value[key] or is_messages(value[key])):
                    return value[key], f"$.{outer}.{key}"
    return None


def has_messages(rec: object) -> bool:
    """True for a record that :func:`find_messages` reads (and that is no trace of another format)."""
    if not isinstance(rec, dict) or "steps" in rec or isinstance(rec.get("trace"), list):
        return False
    found = find_messages(rec)
    return found is not None and (not found[0] or found[1] == "$" or is_messages(found[0]))


def run_state_items(rec: dict) -> list[tuple[dict, str]]:
    """An Agents SDK run state's input and generated items as ``(item, path)`` pairs."""
    first = rec["original_input"]
    items: list[tuple[dict, str]] = []
    if isinstance(first, str):
        items.append(({"role": "user", "content": first}, "$.original_input"))
    elif isinstance(first, list):
        items += [(it, f"$.original_input[{i}]") for i, it in enumerate(first)]
    for i, it in enumerate(rec["generated_items"]):
        raw = it.get("raw_item") if isinstance(it, dict) else None
        items.append((raw if isinstance(raw, dict) else it, f"$.generated_items[{i}].raw_item"))
    return items


def _text(value: object) -> str | None:
    """Item content as text: a string, or the ``text`` of its parts (``input_text``, ``output_text``, ...)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [p if isinstance(p, str) else p.get("text") if isinstance(p, dict) else None for p in value]
        return "\n".join(p for p in parts if isinstance(p, str))
    return json.dumps(value, ensure_ascii=False)


def as_messages(items: list, base: str) -> list[tuple[object, str]]:
    """Chat messages (with paths) from chat messages and Responses items mixed in one list."""
    pairs = items if items and isinstance(items[0], tuple) else [(it, f"{base}[{i}]") for i, it in enumerate(items)]
    out: list[tuple[object, str]] = []
    for item, path in pairs:
        kind = _type(item) if isinstance(item, dict) else None
        if isinstance(item, dict) and kind is not None and kind not in RESPONSE_TYPES and "role" not in item:
            out.append(({"role": kind, "content": json.dumps(item, ensure_ascii=False)}, path))  # an other step
        elif not isinstance(item, dict) or kind not in RESPONSE_TYPES or (kind == "message" and "role" not in item):
            out.append((item, path))
        elif kind == "message":
            out.append(({"role": item["role"], "content": _text(item.get("content"))}, path))
        elif kind == "reasoning":
            text = _text(item.get("summary")) or _text(item.get("content")) or ""
            out.append(({"role": "assistant", "content": None, "reasoning": text}, path))
        elif kind in ("function_call", "custom_tool_call"):
            args = item.get("arguments", item.get("input"))
            if kind == "custom_tool_call" and isinstance(args, str):
                args = {"input": args}
            out.append(
                (
                    {
                        "role": "assistant",
                        "content": None,
                        "_item": True,
                        "tool_calls": [
                            {
                                "id": item.get("call_id"),
                                "type": "function",
                                "function": {"name": item.get("name"), "arguments": args},
                            }
                        ],
                    },
                    path,
                )
            )
        elif kind == "web_search_call":
            action = item.get("action")
            action = action if isinstance(action, dict) else {}
            args = {"query": action["query"]} if isinstance(action.get("query"), str) else {}
            out.append(
                (
                    {
                        "role": "assistant",
                        "content": None,
                        "_item": True,
                        "tool_calls": [
                            {
                                "id": item.get("id"),
                                "type": "function",
                                "function": {"name": "web_search", "arguments": args},
                            }
                        ],
                    },
                    path,
                )
            )
        else:  # function_call_output, custom_tool_call_output
            output = item.get("output")
            out.append(
                (
                    {
                        "role": "tool",
                        "tool_call_id": item.get("call_id"),
                        "content": output if isinstance(output, str) else _text(output),
                    },
                    path,
                )
            )
    return out


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
