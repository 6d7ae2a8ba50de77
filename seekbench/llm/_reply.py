"""Structured replies: strip a code fence, check the reply, and re-ask with a note until it is valid.

:func:`ask` is the repair loop every caller shares. The caller gives the
messages, a ``parse`` function (reply -> :class:`Parsed`) and a
``repair_note`` function (repair number, reason -> text appended to the last
user message); :func:`ask` sends, checks, records the check in the cache and
re-asks at most ``max_repairs`` times. Tokens, cost, cache use and the raw
reply are added to a tally (:class:`CallTally`, or any object with its
attributes) for the caller's provenance.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ._client import CallContext, LLMClient, NoReply, Reply, call
from ._prompt import PromptTemplate, cache_key

_CODE_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)
_CODE_FENCE_LENIENT = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def strip_code_fence(text: str, *, lenient: bool = False) -> str:
    """``text`` without a Markdown code fence around it (```` ```json ```` ... ```` ``` ````), if it has one.

    By default the fence lines must be lines of their own; ``lenient`` also
    takes a fence on the same line as the content (``text`` already stripped).

    >>> strip_code_fence('```json\\n{"a": 1}\\n```')
    '{"a": 1}'
    >>> strip_code_fence('```{"a": 1}```', lenient=True)
    '{"a": 1}'
    """
    m = _CODE_FENCE_LENIENT.fullmatch(text) if lenient else _CODE_FENCE.match(text)
    return m.group(1) if m else text


T = TypeVar("T")


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """A checked reply: ``ok`` with its ``value``, or the ``error`` sent back in the repair note.

    ``labels`` is what the cache records as the parsed reply (None: nothing).
    """

    ok: bool
    value: T
    error: str | None = None
    labels: dict | None = None


class CallTally:
    """Requests, tokens and cost of one item's calls (cache hits included), its last key and reply.

    A caller with its own provenance record (an answer judge's vote) passes that instead: :func:`ask`
    needs only these attributes.
    """

    def __init__(self) -> None:
        self.cache_key: str | None = None
        self.raw: str | None = None
        self.requests = self.repairs = self.paid_requests = self.input_tokens = self.output_tokens = 0
        self.from_cache = False
        self.cost_usd = self.paid_usd = 0.0


def count(tally, got: Reply | NoReply) -> None:
    """Add one call's outcome to ``tally`` (cache hits cost what they cost when paid)."""
    if isinstance(got, NoReply):
        tally.from_cache = False
        return
    comp = got.completion
    if got.cached:
        if tally.requests == 0:
            tally.from_cache = True
    else:
        tally.from_cache = False
        tally.paid_requests += 1
        tally.paid_usd += got.cost_usd
    tally.requests += 1
    tally.input_tokens += comp.prompt_tokens
    tally.output_tokens += comp.completion_tokens
    tally.cost_usd += got.cost_usd


@dataclass(frozen=True)
class Answer(Generic[T]):
    """The end of :func:`ask`: the last check and its reply, or (``parsed`` None) why no reply came."""

    parsed: Parsed[T] | None
    no_reply: NoReply | None = None
    reply: Reply | None = None

    @property
    def checked(self) -> Parsed[T]:
        """The last check (only when a reply came: ``no_reply`` is None)."""
        if self.parsed is None:
            raise ValueError(f"no reply: {self.no_reply}")
        return self.parsed


def with_note(messages: list[dict], note: str) -> list[dict]:
    """``messages`` with ``note`` appended to the last message's content (the others shared, not copied)."""
    return [*messages[:-1], {**messages[-1], "content": messages[-1]["content"] + note}]


async def ask(
    client: LLMClient,
    template: PromptTemplate,
    messages: list[dict],
    ctx: CallContext,
    *,
    trace_id: str | None,
    parse: Callable[[Reply], Parsed[T]],
    repair_note: Callable[[int, str], str],
    max_repairs: int,
    tally,
    extra: dict | None = None,
    record_parsed: bool = True,
    on_reply: Callable[[Reply], None] | None = None,
    body: Callable[[list[dict]], dict] | None = None,
) -> Answer[T]:
    """Ask until a reply parses, at most ``max_repairs`` repairs; the last check, or why no reply came.

    Parameters
    ----------
    parse : callable
        Reply -> :class:`Parsed`.
    repair_note : callable
        ``(repair number from 1, reason) -> text`` appended to the last user message.
    tally : CallTally or alike
        Gets the key, the raw reply, repairs, requests, tokens and cost.
    extra : dict, optional
        Further request-body keys (``response_format``).
    record_parsed : bool
        Record each check in the cache row (valid, labels, error).
    on_reply : callable, optional
        Called with each reply (usage accounting of the caller).
    body : callable, optional
        Messages -> request body, for a caller whose body changes per attempt
        (a seed drawn each time); default ``client.body(messages, **extra)``.
    """
    parsed: Parsed[T] | None = None
    got: Reply | NoReply | None = None
    for attempt in range(max_repairs + 1):
        req = body(messages) if body is not None else client.body(messages, **(extra or {}))
        key = cache_key(client.config, template, req)
        tally.cache_key = key
        got = await call(client, template, req, key, trace_id, ctx)
        count(tally, got)
        if isinstance(got, NoReply):
            return Answer(None, got)
        if on_reply is not None:
            on_reply(got)
        parsed = parse(got)
        tally.raw = got.content
        if record_parsed and ctx.cache is not None:
            await ctx.durable(ctx.cache.set_parsed, key, valid=parsed.ok, labels=parsed.labels, error=parsed.error)
        if parsed.ok or attempt == max_repairs:
            break
        tally.repairs += 1
        messages = with_note(messages, repair_note(tally.repairs, parsed.error or ""))
    return Answer(parsed, None, got if isinstance(got, Reply) else None)
