"""Steps from tagged model output: the tag sets of the Search-R1 family and JSON tool calls in tags.

Tag sets read by default (step kind <- tags): reasoning <- ``<think>``; search <- ``<search>``
(Search-R1, ReSearch), ``<|begin_of_query|>...<|end_of_query|>`` (R1-Searcher); search_result <-
``<information>`` (Search-R1), ``<result>`` (ReSearch), ``<|begin_of_documents|>...
<|end_of_documents|>`` (R1-Searcher), ``<tool_response>`` (Qwen tool calling); answer <-
``<answer>``; a tool call <- ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
(DeepResearcher, ReCall), a ``search`` or an ``other`` step as the tool's name decides
(:mod:`._tools`). The ``tags`` option replaces a kind's tags.

Text between blocks is reasoning; text after the last answer is ``other``. A result answers the
oldest call still waiting; the result of an ``other`` call is ``other`` too. An unclosed tag
(truncated generation) runs to the next opening tag or the end; its step's ``source_ref.path``
ends in ``(unclosed <tag>)`` and ``metadata["unclosed_tags"]`` lists it.
"""

from __future__ import annotations

import functools
import json
import re
from collections import namedtuple
from collections.abc import Mapping
from typing import cast

from ..._errors import UserInputError
from ._base import RecordContext
from ._documents import parse_tool_output
from ._tools import call_fields, is_search_tool

#: step kind -> tag names or ``(open, close)`` pairs, in the order they are tried.
DEFAULT_TAGS: dict[str, tuple] = {
    "reasoning": ("think",),
    "search": ("search", ("<|begin_of_query|>", "<|end_of_query|>")),
    "search_result": ("information", "result", ("<|begin_of_documents|>", "<|end_of_documents|>"), "tool_response"),
    "answer": ("answer",),
    "tool_call": ("tool_call",),
}
#: Tags whose presence in a text means it records tool use (checked when the import finds no tool call).
TOOL_TAG_HINT = re.compile(r"<search>|<tool_call>|<\|begin_of_query\|>|<information>|<tool_response>", re.IGNORECASE)
_SPECIAL = re.compile(
    r"<\|im_start\|>\s*(?:system|user|assistant|tool)?|<\|start_header_id\|>\w*<\|end_header_id\|>"
    r"|<\|[A-Za-z0-9_]+\|>"
)  # chat-template tokens and the role names they introduce
#: A prompt's ``Question: ...`` line (the question in group 1), shared by the importers that find the question in it.
QUESTION_LINE = re.compile(r"question\s*[:：]\s*([^\n<]+)", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\s*\{")
_TAG_NAME = re.compile(r"[A-Za-z_][\w\-.:]*")
#: A piece of a generation: ``kind`` None for text outside tags; ``start``/``end`` span the tags too.
Block = namedtuple("Block", "kind start end body tag closed", defaults=(None, True))


def resolve_tags(tags: Mapping[str, object] | None) -> list[tuple[str, str, str]]:
    """``[(kind, open, close), ...]`` from the ``tags`` option; a user error for a bad option."""
    merged: dict[str, tuple] = dict(DEFAULT_TAGS)
    if tags is not None:
        if not isinstance(tags, Mapping):
            raise UserInputError("option tags must map a step kind to a tag name, e.g. {'search_result': 'result'}")
        for kind, name in tags.items():
            if kind not in DEFAULT_TAGS:
                raise UserInputError(f"option tags: unknown step kind {kind!r}; use one of: {', '.join(DEFAULT_TAGS)}")
            merged[kind] = (name,)
    out = []
    for kind, names in merged.items():
        for name in names:
            if isinstance(name, str) and _TAG_NAME.fullmatch(name):
                out.append((kind, f"<{name}>", f"</{name}>"))
            elif isinstance(name, (list, tuple)) and len(name) == 2 and all(isinstance(x, str) and x for x in name):
                out.append((kind, name[0], name[1]))
            else:
                raise UserInputError(
                    f"option tags: {kind} must be a tag name like 'result' or an [open, close] pair, got {name!r}"
                )
    return out


@functools.lru_cache(maxsize=64)
def _patterns(spec: tuple) -> tuple[re.Pattern, list[re.Pattern], list[re.Pattern]]:
    """The opener (one alternation, a group per tag), the closers and the reopeners of a tag spec, compiled once."""
    opener = re.compile("|".join(f"(?P<t{i}>{re.escape(o)})" for i, (_, o, _) in enumerate(spec)), re.IGNORECASE)
    closers = [re.compile(re.escape(c), re.IGNORECASE) for _, _, c in spec]
    same = [re.compile(re.escape(o), re.IGNORECASE) for _, o, _ in spec]
    return opener, closers, same


@functools.lru_cache(maxsize=64)
def _any_tag(spec: tuple) -> tuple[re.Pattern, re.Pattern]:
    """Any closing tag, any opening tag of a spec (to drop stray or nested ones from a step's text)."""
    return (
        re.compile("|".join(re.escape(c) for _, _, c in spec), re.IGNORECASE),
        re.compile("|".join(re.escape(o) for _, o, _ in spec), re.IGNORECASE),
    )


def split_tagged(text: str, spec: list[tuple[str, str, str]]) -> list[Block]:
    """Split ``text`` into tagged blocks and the text between them. A block ends at its closing tag if that
    comes before the tag opens again; otherwise it is unclosed and ends at the next opening tag of any kind."""
    opener, closers, same = _patterns(tuple(spec))
    blocks: list[Block] = []
    # The next closing tag / reopening of each kind, searched again only once passed: positions only move
    # forward, so a cached match at or after the current position is still the first one (linear time even
    # for thousands of unclosed tags).
    ahead: dict[tuple[int, int], re.Match | None] = {}

    def next_match(pattern: re.Pattern, slot: tuple[int, int], at: int) -> re.Match | None:
        cached = ahead.get(slot)
        if slot not in ahead or (cached is not None and cached.start() < at):
            ahead[slot] = pattern.search(text, at)
        return ahead[slot]

    pos = 0
    while pos < len(text):
        m = opener.search(text, pos)
        if m is None:
            blocks.append(Block(None, pos, len(text), text[pos:]))
            break
        if m.start() > pos:
            blocks.append(Block(None, pos, m.start(), text[pos : m.start()]))
        i = int(cast(str, m.lastgroup)[1:])  # every alternative of opener is a named group t<i>
        kind, open_tag, _ = spec[i]
        close = next_match(closers[i], (i, 0), m.end())
        again = next_match(same[i], (i, 1), m.end())
        if close is not None and (again is None or close.start() < again.start()):
            blocks.append(Block(kind, m.start(), close.end(), text[m.end() : close.start()], open_tag))
            pos = close.end()
        else:
            nxt = opener.search(text, m.end())
            end = nxt.start() if nxt else len(text)
            blocks.append(Block(kind, m.start(), end, text[m.end() : end], open_tag, closed=False))
            pos = end
    return blocks


def clean(text: str) -> str:
    """Text with chat-template tokens (and the role names they introduce) removed."""
    return _SPECIAL.sub("", text)


def boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` in ``text`` (braces balanced), or None."""
    starts = list(_BOXED.finditer(text))
    if not starts:
        return None
    pos, depth = starts[-1].end(), 1
    for k in range(pos, len(text)):
        depth += (text[k] == "{") - (text[k] == "}")
        if depth == 0:
            return text[pos:k].strip()
    return None


class TaggedSteps:
    """Steps of one trace from tagged segments of one source field, in order.

    ``ctx`` names the file, line and trace; ``base`` is the JSON path of the field (``$.response``)
    and paths are ``base[start:end]`` character slices of it. ``text`` is the whole field.
    """

    def __init__(
        self,
        text: str,
        spec: list,
        ctx: RecordContext,
        base: str,
        *,
        fmt: str,
        search_tools: frozenset[str] | None = None,
        by_line: bool = False,
    ) -> None:
        self.text, self.spec, self.ctx, self.base, self.fmt = text, spec, ctx, base, fmt
        self.search_tools, self.by_line = search_tools, by_line
        self.closers, self.openers = _any_tag(tuple(spec))
        self.pieces: list[tuple[str, Block]] = []  # (segment role, block with absolute offsets)
        self.steps: list[dict] = []
        self.meta: dict = {}
        self.warnings: list[str] = []
        self.tool_kinds: dict[str, str] = {}
        self.final_answer: str | None = None

    def add_segment(self, role: str, start: int, end: int) -> None:
        """Queue the text ``[start, end)`` of the field, spoken by ``role`` (assistant, user, tool)."""
        for b in split_tagged(self.text[start:end], self.spec):
            self.pieces.append((role, b._replace(start=start + b.start, end=start + b.end)))

    def finish(self) -> list[dict]:
        """Turn the queued segments into steps (numbered, each depending on the one before)."""
        last_answer = max((i for i, (_, b) in enumerate(self.pieces) if b.kind == "answer"), default=-1)
        pending: list[dict] = []  # calls waiting for a result, oldest first
        line, counted = self.ctx["line"], 0
        for i, (role, b) in enumerate(self.pieces):
            body = clean(b.body)
            kind, original = b.kind, (b.tag or "").strip("<>") or None
            if kind is None:
                body = self.closers.sub("", body)
                if role != "assistant":
                    kind, original = ("search_result", role) if role == "tool" else ("other", role)
                else:
                    kind, original = ("other", "text_after_answer") if 0 <= last_answer < i else ("reasoning", "text")
            if not body.strip() and kind in ("reasoning", "other"):
                continue
            path = f"{self.base}[{b.start}:{b.end}]"
            if not b.closed:
                path += f" (unclosed {b.tag})"
                self.meta.setdefault("unclosed_tags", []).append({"step": len(self.steps), "tag": b.tag})
                self.warnings.append(
                    f"{self.ctx['file']}:{self.ctx['line']}: trace {self.ctx['trace_id']}: unclosed "
                    f"{b.tag} at {self.base}[{b.start}:{b.end}]; took the text up to the next tag "
                    "or the end (truncated generation?)"
                )
            if self.by_line and line is not None:  # by_line text files always give a line
                line += self.text.count("\n", counted, b.start)
                counted = b.start
            step: dict = {
                "index": len(self.steps),
                "kind": kind,
                "text": body.strip(),
                "original_kind": original,
                "depends_on": [len(self.steps) - 1] if self.steps else [],
                "source_ref": {
                    "format": self.fmt,
                    "file": self.ctx["file"],
                    "line": line,
                    "record_id": self.ctx["trace_id"],
                    "path": path,
                },
            }
            if kind == "search":
                step["tool"], step["query"] = "search", body.strip()
                pending.append(step)
            elif kind == "tool_call":
                self._call(step, body, path)
                pending.append(step)
            elif kind == "search_result":
                call = pending.pop(0) if pending else None
                inner = self.openers.sub("", self.closers.sub("", body)).strip()
                step["text"] = inner  # a result wrapped twice (<tool_response><information>) keeps the text only
                if call is not None and call["kind"] == "other":
                    step["kind"] = "other"
                else:
                    step["documents"] = parse_tool_output(inner)
            elif kind == "answer":
                self.final_answer = boxed(body) or body.strip()
            self.steps.append(step)
        return self.steps

    def _call(self, step: dict, body: str, path: str) -> None:
        """A ``<tool_call>`` JSON body: a search or an other step named by the tool."""
        try:
            call = json.loads(body)
        except (ValueError, RecursionError):
            call = None
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            step["kind"] = "other"
            self.warnings.append(
                f"{self.ctx['file']}:{self.ctx['line']}: trace {self.ctx['trace_id']}: tool call at "
                f"{path} is not JSON with a name; kept as an 'other' step"
            )
            return
        name, args = call["name"], call.get("arguments", call.get("parameters"))
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except (ValueError, RecursionError):
                args = {}
        search = is_search_tool(name, self.search_tools)
        self.tool_kinds[name] = "search" if search else "other"
        step["kind"], step["tool"] = ("search" if search else "other"), name
        step["text"] = json.dumps(args, ensure_ascii=False) if args is not None else ""
        query, url = call_fields(args if isinstance(args, dict) else {})
        if search:
            step["query"] = query
            if url is not None:
                step["url"] = url
