"""Tool calls and tool results of a chat message, in every shape producers write them.

Calls of an assistant message, in message order:

- OpenAI ``tool_calls[i]`` = ``{id, function: {name, arguments}}``, ``arguments`` a JSON string
  (encoded once or twice) or an object; a call (or its ``function``) that is itself a JSON string;
- flat ``tool_calls[i]`` = ``{id, name, arguments | args | input | parameters}`` (LiteLLM, many
  agent loggers);
- the legacy ``function_call`` = ``{name, arguments}``;
- Anthropic ``content`` blocks ``{type: tool_use, id, name, input}``, beside ``text`` and
  ``thinking`` blocks (the thinking is the turn's reasoning).

Results of a user (or tool) message: Anthropic ``{type: tool_result, tool_use_id, content}``
blocks, ``content`` a string or a list of text blocks.
"""

from __future__ import annotations

from typing import NamedTuple

from ..._errors import UserInputError
from ..._io import loads
from ._base import RecordContext, expect_type

#: Keys of a flat call holding its arguments, in the order tried.
ARGUMENT_KEYS = ("arguments", "args", "input", "parameters")


class Call(NamedTuple):
    """One tool call: its name and raw arguments, where each is, its id, and the source's word for it."""

    name: object
    args: object
    path: str
    name_path: str
    args_path: str
    call_id: str | None
    original_kind: str


class Result(NamedTuple):
    """One tool result carried in a content block: its text, the call id it answers, and where it is."""

    text: str
    call_id: object
    path: str
    id_path: str


def _decoded(value: object, ctx: RecordContext, path: str, what: str) -> object:
    """A value that may be an object written as a JSON string, decoded; a user error when it is not JSON."""
    if not isinstance(value, str):
        return value
    try:
        return loads(value)
    except (ValueError, RecursionError) as e:
        raise UserInputError(
            f"{what} is a string that is not a JSON object; write the call as an object with a name and arguments",
            path=path,
            **ctx,
        ) from e


def message_calls(msg: dict, p: str, ctx: RecordContext) -> list[Call]:
    """The calls of assistant message ``msg`` at path ``p`` (see the module docstring), in order."""
    raw_calls = msg.get("tool_calls") or []
    raw_calls = expect_type(raw_calls, list, what="tool_calls", path=f"{p}.tool_calls", **ctx)
    calls: list[Call] = []
    for j, tc in enumerate(raw_calls):
        tp = p if msg.get("_item") else f"{p}.tool_calls[{j}]"  # a Responses item is the call itself
        tc = expect_type(_decoded(tc, ctx, tp, "tool call"), dict, what="tool call", path=tp, **ctx)
        expect_type(tc.get("id"), (str, type(None)), what="tool call id", path=f"{tp}.id", **ctx)
        if "function" not in tc and isinstance(tc.get("name"), str):  # flat {id, name, arguments}
            key = next((k for k in ARGUMENT_KEYS if k in tc), "arguments")
            calls.append(Call(tc["name"], tc.get(key), tp, f"{tp}.name", f"{tp}.{key}", tc.get("id"), "tool_call"))
            continue
        fp = p if msg.get("_item") else f"{tp}.function"
        fn = expect_type(_decoded(tc.get("function"), ctx, fp, "tool call function"), dict,
                         what="tool call function", path=fp, **ctx)  # fmt: skip
        calls.append(Call(fn.get("name"), fn.get("arguments"), tp, f"{fp}.name", f"{fp}.arguments",
                          tc.get("id"), "tool_call"))  # fmt: skip
    legacy = msg.get("function_call")
    if legacy is not None:
        lp = f"{p}.function_call"
        legacy = expect_type(legacy, dict, what="function_call", path=lp, **ctx)
        calls.append(Call(legacy.get("name"), legacy.get("arguments"), lp, f"{lp}.name", f"{lp}.arguments",
                          None, "function_call"))  # fmt: skip
    content = msg.get("content")
    if isinstance(content, list):
        for i, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                bp = f"{p}.content[{i}]"
                expect_type(block.get("id"), (str, type(None)), what="tool_use id", path=f"{bp}.id", **ctx)
                calls.append(Call(block.get("name"), block.get("input"), bp, f"{bp}.name", f"{bp}.input",
                                  block.get("id"), "tool_use"))  # fmt: skip
    return calls


def has_blocks(content: object, kind: str) -> bool:
    """True when a content list holds a block of type ``kind`` (``tool_use``, ``tool_result``, ``thinking``)."""
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == kind for b in content)


def block_text(content: list) -> tuple[str | None, str | None]:
    """``(text, thinking)`` of a content-block list: its ``text`` blocks and its ``thinking`` blocks joined
    (None when there is none); tool blocks are read by :func:`message_calls` / :func:`block_results`."""
    texts = [
        b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    texts += [b for b in content if isinstance(b, str)]
    thinking = [
        b["thinking"] for b in content
        if isinstance(b, dict) and b.get("type") == "thinking" and isinstance(b.get("thinking"), str)
    ]  # fmt: skip
    return ("\n".join(texts) if texts else None), ("\n".join(thinking) if thinking else None)


def block_results(content: list, p: str, ctx: RecordContext) -> list[Result]:
    """The ``tool_result`` blocks of a content list, in order."""
    out = []
    for i, block in enumerate(content):
        if not (isinstance(block, dict) and block.get("type") == "tool_result"):
            continue
        bp = f"{p}.content[{i}]"
        body = block.get("content")
        if isinstance(body, list):
            body = "\n".join(
                b if isinstance(b, str) else b["text"] if isinstance(b, dict) and isinstance(b.get("text"), str)
                else f"[{b.get('type', 'part')}]" if isinstance(b, dict) else str(b)
                for b in body
            )  # fmt: skip
        elif body is not None:
            body = expect_type(body, str, what="tool_result content", path=f"{bp}.content", **ctx)
        out.append(Result(body or "", block.get("tool_use_id"), bp, f"{bp}.tool_use_id"))
    return out
