"""The steps of a chat log: tool-call arguments, search steps, and the builder that orders them.

Shared by the importers that read model turns and tool calls (OpenAI chat, ATIF, Inspect,
OpenTelemetry). :class:`StepBuilder` keeps steps in source order, with one exception that
keeps a call and its result together: a result whose call was made in the current model turn
(one message, or consecutive assistant items of the Responses API) is placed right after that
call, so parallel calls read ``call A, result A, call B, result B`` whatever API logged them.
"""

from __future__ import annotations

import json
import re

from ..._errors import UserInputError
from ..._io import NonFiniteNumber, loads, nonfinite_path
from ._answer_tools import answer_text, is_answer_tool
from ._base import RecordContext, expect_type
from ._documents import parse_tool_output
from ._tools import QUERY_KEYS, URL_KEYS, is_search_tool


def content_text(value: object, ctx: RecordContext, path: str) -> str | None:
    """Message content as text: a string, or a list of content parts (non-text parts become ``[type]``)."""
    if value is None or isinstance(value, str):
        return value
    value = expect_type(value, list, what="content", path=path, **ctx)
    for i, part in enumerate(value):
        expect_type(part, (str, dict), what="content part", path=f"{path}[{i}]", **ctx)
    return "\n".join(
        p if isinstance(p, str) else p["text"] if isinstance(p.get("text"), str) else f"[{p.get('type', 'part')}]"
        for p in value
    )


def parse_arguments(raw: object, ctx: RecordContext, path: str) -> dict:
    """Tool-call arguments as an object: a JSON-encoded string, an object, or empty."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, dict):
        return raw
    raw = expect_type(raw, str, what="tool-call arguments", path=path, **ctx)
    try:
        value = loads(raw)
    except NonFiniteNumber as e:
        raise UserInputError(
            f"{e} in tool-call arguments: seekbench cannot hold it; write a finite number",
            path=nonfinite_path(raw, path),
            **ctx,
        ) from e
    except (ValueError, RecursionError) as e:
        detail = (
            f" (column {e.colno}): {e.msg}"
            if isinstance(e, json.JSONDecodeError)
            else ": nested too deeply to read"
            if isinstance(e, RecursionError)
            else f": {e}"
        )
        raise UserInputError(
            f"invalid JSON in tool-call arguments{detail}; arguments must be a JSON object encoded as a string",
            path=path,
            **ctx,
        ) from e
    if isinstance(value, str) and value.strip()[:1] == "{":  # encoded twice (a JSON string of a JSON object)
        return parse_arguments(value, ctx, path)
    value = expect_type(value, dict, what="tool-call arguments (decoded)", path=path, **ctx)
    return value


def _text_arg(args: dict, keys: tuple[str, ...], ctx: RecordContext, path: str) -> str | None:
    for key in keys:
        value = args.get(key)
        if value is None:
            continue
        if isinstance(value, list):
            for i, v in enumerate(value):
                expect_type(v, str, what=key, path=f"{path}.{key}[{i}]", **ctx)
            return " | ".join(value)
        value = expect_type(value, str, what=key, path=f"{path}.{key}", **ctx)
        return value
    return None


def search_step(
    name: object,
    raw_args: object,
    ctx: RecordContext,
    path: str,
    args_path: str,
    *,
    classify: bool = False,
    search_tools: frozenset[str] | None = None,
    answer_tools: frozenset[str] | None = None,
) -> dict:
    """A search step from a tool name and its arguments (query, url and raw text filled). With ``classify``
    a tool that does not retrieve (:mod:`._tools`) gives an ``other`` step keeping its name and arguments;
    a tool of ``answer_tools`` (:mod:`._answer_tools`) gives the ``answer`` step, its text the answer."""
    name = expect_type(name, str, what="function name", path=path, **ctx)
    args = parse_arguments(raw_args, ctx, args_path)
    text = raw_args if isinstance(raw_args, str) or raw_args is None else json.dumps(raw_args, ensure_ascii=False)
    if text is not None and text.lstrip()[:1] == '"':  # arguments encoded twice: keep the JSON object's text
        text = json.dumps(args, ensure_ascii=False)
    if is_answer_tool(name, answer_tools):
        return {"kind": "answer", "tool": name, "text": answer_text(args, text)}
    if classify and not is_search_tool(name, search_tools):
        return {"kind": "other", "tool": name, "text": text}
    step = {"kind": "search", "tool": name, "text": text, "query": _text_arg(args, QUERY_KEYS, ctx, args_path)}
    url = _text_arg(args, URL_KEYS, ctx, args_path)
    if url is not None:
        step["url"] = url
    return step


def extract_answer(content: str, tag: str | None) -> str:
    """The last ``<tag>...</tag>`` block of ``content`` (an unclosed last tag runs to the end), else the content."""
    if tag:
        closed = re.findall(rf"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", content, re.DOTALL | re.IGNORECASE)
        opened = [m.end() for m in re.finditer(rf"<{re.escape(tag)}>", content, re.IGNORECASE)]
        if opened and f"</{tag.lower()}>" not in content[opened[-1] :].lower():
            return content[opened[-1] :].strip()
        if closed:
            return closed[-1].strip()
    return content.strip()


class StepBuilder:
    """Collects steps in order, places each result right after its call, and numbers them at the end."""

    def __init__(self, fmt: str, ctx: RecordContext) -> None:
        self.fmt, self.ctx = fmt, ctx
        self.steps: list[dict] = []
        self.pending: list[tuple[str | None, dict]] = []  # (call id, search step) awaiting a result
        self.batch = 0  # position where the current model turn's steps start

    def new_turn(self) -> None:
        self.batch = len(self.steps)

    def _ref(self, path: str) -> dict:
        return {
            "format": self.fmt,
            "file": self.ctx["file"],
            "line": self.ctx["line"],
            "record_id": self.ctx["trace_id"],
            "path": path,
        }

    def add(self, step: dict, path: str, call_id: str | None = None, *, is_call: bool = False) -> None:
        """Append ``step``; a call (``is_call``) then waits for its result under ``call_id``."""
        step["source_ref"] = self._ref(path)
        self.steps.append(step)
        if is_call:
            self.pending.append((call_id, step))

    def model_turn(
        self,
        reasoning: tuple[str, str, str] | None,
        message: str | None,
        message_ref: tuple[str, str],
        calls: list[tuple[dict, str, str | None]],
        *,
        final: bool,
        answer_tag: str | None,
        continues: bool = False,
    ) -> str | None:
        """One model turn: its reasoning, its message (reasoning beside calls; the answer when it is the
        final turn and makes no call), then its calls ``(step, path, call id)``. Returns the final answer or None.
        With ``continues`` the steps extend the previous turn (Responses items of one model turn)."""
        if not continues:
            self.new_turn()
        if reasoning is not None and reasoning[0].strip():
            self.add({"kind": "reasoning", "text": reasoning[0], "original_kind": reasoning[1]}, reasoning[2])
        answers = final and not calls and bool(message and message.strip())
        if message and message.strip():
            self.add(
                {"kind": "answer" if answers else "reasoning", "text": message, "original_kind": message_ref[0]},
                message_ref[1],
            )
        for step, path, call_id in calls:
            self.add(step, path, call_id, is_call=True)
        return extract_answer(message, answer_tag) if answers and message is not None else None

    def add_result(self, text: str | None, call_id: object, path: str, id_path: str) -> bool:
        """Add a search_result for ``call_id``; False when it is None and no single call of this turn waits."""
        match: int | None
        if call_id is None:  # only unambiguous: one call waiting, made in the current model turn
            if len(self.pending) != 1 or not any(s is self.pending[0][1] for s in reversed(self.steps[self.batch :])):
                return False
            match = 0
        else:
            call_id = expect_type(call_id, str, what="tool call id", path=id_path, **self.ctx)
            match = next((i for i, (cid, _) in enumerate(self.pending) if cid == call_id), None)
            if match is None:
                raise UserInputError(
                    f"tool call id {call_id!r} matches no earlier tool call without a result; "
                    "fix the id or remove this result",
                    path=id_path,
                    **self.ctx,
                )
        _, call = self.pending.pop(match)
        step = {
            "kind": "search_result",
            "text": text or "",
            "documents": parse_tool_output(text),
            "source_ref": self._ref(path),
        }
        self._place(step, call)
        return True

    def add_oldest_result(self, step: dict, path: str) -> bool:
        """Add a result step (``kind`` search_result) for the oldest call still waiting: the rule of calls
        written as text, which carry no id. False when no call waits."""
        if not self.pending:
            return False
        _, call = self.pending.pop(0)
        step["source_ref"] = self._ref(path)
        self._place(step, call)
        return True

    def _place(self, step: dict, call: dict) -> None:
        """Insert the result ``step`` of ``call``: right after the call when it was made in the current
        turn, else at the end (source order)."""
        if call["kind"] != "search":  # an action's (or an answer tool's) result is no search result
            step = {
                "kind": "other",
                "text": step["text"],
                "original_kind": "tool_result",
                "source_ref": step["source_ref"],
            }
        step["_call"] = call
        # Searched from the end: a call is almost always recent, so a 10,000-step trace stays linear.
        at = next(i for i in range(len(self.steps) - 1, -1, -1) if self.steps[i] is call)
        self.steps.insert(at + 1 if at >= self.batch else len(self.steps), step)

    def finish(self) -> list[dict]:
        """Number the steps and fill ``depends_on`` (a result on its call, any other step on the previous one)."""
        position = {id(s): i for i, s in enumerate(self.steps)}
        for i, s in enumerate(self.steps):
            s["index"] = i
            call = s.pop("_call", None)
            s["depends_on"] = [position[id(call)]] if call is not None else ([i - 1] if i else [])
        return self.steps
