"""Responses-API items read as chat messages, and where stored Responses logs keep them.

Responses logs are lists of items typed ``message``, ``reasoning``, ``function_call``,
``function_call_output`` (also the ``custom_tool_call`` pair and the hosted ``web_search_call``),
stored three ways: a bare item list; the OpenAI Agents SDK run state (``original_input`` and
``generated_items``, each item's ``raw_item``); or a stored request and its ``response`` object,
``{"request": {"input": ..., "instructions"?: ...}, "response": {"output": [...], "model": ...}}``,
also flattened as ``{"input": ..., "response": {...}}`` or ``{"input": ..., "output": [...]}``
(``input`` is a string or a list of items; a string is the user's message). Items become the
chat messages the OpenAI importer reads, each with the JSON path it came from.
"""

from __future__ import annotations

import json

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


def item_type(item: dict) -> str | None:
    """An item's ``type`` when it is a string, else None."""
    return item["type"] if isinstance(item.get("type"), str) else None


def is_items(obj: object) -> bool:
    """True for a non-empty list whose first item is a Responses item."""
    return isinstance(obj, list) and bool(obj) and isinstance(obj[0], dict) and item_type(obj[0]) in RESPONSE_TYPES


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


def stored_response(rec: dict) -> tuple[list[tuple[object, str]], set[str], str | None] | None:
    """``(pairs, keys, model path)`` of a stored request and response: the request's instructions (a system
    message) and input, then the response's output items; None for a record of another shape."""
    request: dict = rec["request"] if isinstance(rec.get("request"), dict) else rec
    response = rec.get("response")
    if isinstance(response, dict) and isinstance(response.get("output"), list):
        out, out_path, model = response["output"], "$.response.output", "$.response.model"
    elif request is rec and isinstance(rec.get("output"), list) and (not rec["output"] or is_items(rec["output"])):
        out, out_path, model = rec["output"], "$.output", None
    else:
        return None
    base = "$.request" if request is not rec else "$"
    given = request.get("input")
    if not isinstance(given, (str, list)) and not (request is rec and rec.get("object") == "response"):
        return None
    pairs: list[tuple[object, str]] = []
    if isinstance(request.get("instructions"), str):
        pairs.append(({"role": "system", "content": request["instructions"]}, f"{base}.instructions"))
    if isinstance(given, str):
        pairs.append(({"role": "user", "content": given}, f"{base}.input"))
    elif isinstance(given, list):
        pairs += [(it, f"{base}.input[{i}]") for i, it in enumerate(given)]
    pairs += [(it, f"{out_path}[{i}]") for i, it in enumerate(out)]
    keys = {"request", "response"} if request is not rec else {"input", "instructions", "response", "output"}
    if model is not None and not (isinstance(response, dict) and isinstance(response.get("model"), str)):
        model = None
    return pairs, keys, model


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
        kind = item_type(item) if isinstance(item, dict) else None
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
            # the action's query (search), or the page it opened (open_page) and the text it looked for (find)
            args = {k: action[v] for k, v in (("query", "query"), ("query", "pattern"), ("url", "url"))
                    if isinstance(action.get(v), str)}  # fmt: skip
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
