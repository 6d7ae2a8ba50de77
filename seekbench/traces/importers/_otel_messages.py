"""Chat messages carried by spans, in the three ways OpenTelemetry instrumentations write them.

- OpenInference: ``llm.input_messages.<i>.message.role`` / ``.content`` / ``.contents.<j>.
  message_content.text`` / ``.tool_calls.<j>.tool_call.{id, function.name, function.arguments}``
  / ``.tool_call_id`` (and ``llm.output_messages.<i>...``).
- OTel GenAI: ``gen_ai.input.messages`` / ``gen_ai.output.messages``, JSON lists of ``{role,
  parts: [{type: text, content} | {type: reasoning, content} | {type: tool_call, id, name,
  arguments} | {type: tool_call_response, id, response}]}``.
- The deprecated GenAI events: span events ``gen_ai.system.message`` / ``gen_ai.user.message`` /
  ``gen_ai.assistant.message`` / ``gen_ai.tool.message`` (input) and ``gen_ai.choice`` (output),
  their fields (``content``, ``tool_calls``, ``id``, ``message``) as attributes or as a JSON
  ``body``; and the older ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events whose
  ``gen_ai.prompt`` / ``gen_ai.completion`` hold OpenAI-style message lists.

Each message comes out as ``{role, text, reasoning, tool_calls: [{id, name, arguments}],
tool_call_id, path}``; ``path`` names where it was read (for ``source_ref``).
"""

from __future__ import annotations

import json
import re

from ._otel_spans import Span, json_value

_INDEX = re.compile(r"^(\d+)\.(.+)$")
_INPUT_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def indexed(attrs: dict, prefix: str) -> list[tuple[int, dict]]:
    """``prefix.<i>.<rest>`` keys grouped by ``i`` (in order) as ``{rest: value}``."""
    groups: dict[int, dict] = {}
    cut = len(prefix) + 1
    for key, value in attrs.items():
        if key.startswith(prefix + "."):
            m = _INDEX.match(key[cut:])
            if m:
                groups.setdefault(int(m.group(1)), {})[m.group(2)] = value
    return sorted(groups.items())


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _openinference(attrs: dict, prefix: str) -> list[dict]:
    out = []
    for i, m in indexed(attrs, prefix):
        texts = [
            v
            for _, c in indexed(m, "message.contents")
            if c.get("message_content.type", "text") == "text"
            for v in [c.get("message_content.text")]
            if isinstance(v, str)
        ]
        reasoning = [
            c.get("message_content.text")
            for _, c in indexed(m, "message.contents")
            if c.get("message_content.type") == "reasoning"
        ]
        calls = [
            {
                "id": c.get("tool_call.id"),
                "name": c.get("tool_call.function.name"),
                "arguments": json_value(c.get("tool_call.function.arguments")),
            }
            for _, c in indexed(m, "message.tool_calls")
        ]
        text = m.get("message.content")
        out.append(
            {
                "role": m.get("message.role"),
                "text": _text(text) if text is not None else ("\n".join(texts) if texts else None),
                "reasoning": "\n".join(r for r in reasoning if isinstance(r, str)) or None,
                "tool_calls": calls,
                "tool_call_id": m.get("message.tool_call_id"),
                "path": f"{prefix}.{i}",
            }
        )
    return out


def _genai(value: object, key: str) -> list[dict]:
    value = json_value(value)
    if not isinstance(value, list):
        return []
    out = []
    for i, m in enumerate(value):
        if not isinstance(m, dict):
            continue
        if "parts" not in m:  # an OpenAI-style message in a GenAI slot
            out.append(_openai(m, f"{key}[{i}]"))
            continue
        texts, reasoning, calls, result_id = [], [], [], None
        for p in m.get("parts") or []:
            if not isinstance(p, dict):
                continue
            kind = p.get("type")
            if kind == "text":
                texts.append(_text(p.get("content")))
            elif kind == "reasoning":
                reasoning.append(_text(p.get("content")))
            elif kind == "tool_call":
                calls.append({"id": p.get("id"), "name": p.get("name"), "arguments": json_value(p.get("arguments"))})
            elif kind == "tool_call_response":
                result_id = p.get("id")
                texts.append(_text(p.get("response", p.get("result"))))
        out.append(
            {
                "role": m.get("role"),
                "text": "\n".join(t for t in texts if t) or None,
                "reasoning": "\n".join(r for r in reasoning if r) or None,
                "tool_calls": calls,
                "tool_call_id": result_id,
                "path": f"{key}[{i}]",
            }
        )
    return out


def _openai(m: dict, path: str) -> dict:
    calls = []
    raw = json_value(m.get("tool_calls"))
    for tc in raw if isinstance(raw, list) else []:
        if isinstance(tc, dict):
            fn = tc.get("function")
            fn = fn if isinstance(fn, dict) else {}
            calls.append(
                {
                    "id": tc.get("id"),
                    "name": fn.get("name", tc.get("name")),
                    "arguments": json_value(fn.get("arguments", tc.get("arguments"))),
                }
            )
    content = m.get("content")
    if isinstance(content, list):
        content = "\n".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
    return {
        "role": m.get("role"),
        "text": _text(content),
        "reasoning": m.get("reasoning_content"),
        "tool_calls": calls,
        "tool_call_id": m.get("tool_call_id", m.get("id")),
        "path": path,
    }


def _event_fields(attrs: dict) -> dict:
    body = json_value(attrs.get("body", attrs.get("event.body")))
    fields = dict(body) if isinstance(body, dict) else {}
    for key, value in attrs.items():
        if key in ("body", "event.body"):
            continue
        head = key.split(".", 1)[0]
        if head in ("content", "tool_calls", "id", "role", "message", "index", "finish_reason"):
            if "." in key:  # flattened structure (tool_calls.0.function.name): rebuild it
                fields.setdefault(head, {})
                node = fields[head] if isinstance(fields[head], dict) else {}
                node[key.split(".", 1)[1]] = value
                fields[head] = node
            else:
                fields[key] = value
    for head in ("tool_calls", "message"):
        if isinstance(fields.get(head), dict) and all("." in k or k.isdigit() for k in fields[head]):
            fields[head] = _unflatten(fields[head])
    return fields


def _unflatten(flat: dict) -> object:
    root: dict = {}
    for key, value in flat.items():
        node = root
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return _lists(root)


def _lists(node: object) -> object:
    if isinstance(node, dict):
        node = {k: _lists(v) for k, v in node.items()}
        if node and all(k.isdigit() for k in node):
            return [node[k] for k in sorted(node, key=int)]
    return node


def _events(span: Span, *, output: bool) -> list[dict]:
    out = []
    for j, ev in enumerate(span.events):
        name = ev.get("name")
        attrs = ev.get("attrs") or {}
        path = f"events[{j}]"
        if not output and name in _INPUT_EVENTS:
            f = _event_fields(attrs)
            out.append(_openai({**f, "role": f.get("role", _INPUT_EVENTS[name])}, path))
        elif output and name == "gen_ai.choice":
            f = _event_fields(attrs)
            msg = json_value(f.get("message"))
            msg = msg if isinstance(msg, dict) else {k: v for k, v in f.items() if k in ("content", "tool_calls")}
            out.append(_openai({**msg, "role": msg.get("role", "assistant")}, path))
        elif name == ("gen_ai.content.completion" if output else "gen_ai.content.prompt"):
            key = "gen_ai.completion" if output else "gen_ai.prompt"
            value = json_value(attrs.get(key))
            if isinstance(value, list):
                out.extend(_openai(m, f"{path}.{key}[{i}]") for i, m in enumerate(value) if isinstance(m, dict))
    return out


def messages(span: Span, *, output: bool) -> list[dict]:
    """The span's input (``output=False``) or output messages, from whichever convention it uses."""
    a = span.attrs
    found = _openinference(a, "llm.output_messages" if output else "llm.input_messages")
    if not found:
        key = "gen_ai.output.messages" if output else "gen_ai.input.messages"
        found = _genai(a.get(key), key)
    if not found:
        found = _events(span, output=output)
    if not found and not output and a.get("gen_ai.system_instructions") is not None:
        found = [
            {
                "role": "system",
                "text": _text(json_value(a["gen_ai.system_instructions"])),
                "reasoning": None,
                "tool_calls": [],
                "tool_call_id": None,
                "path": "gen_ai.system_instructions",
            }
        ]
    return found
