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
from typing import Any, Generic, TypeVar

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


class RepairLoop(Generic[T]):
    """One question to a model and its repairs: the repair loop every caller shares.

    A small state machine, free of I/O, so the online caller (:func:`ask`, the
    step judge's annotator) and the Batch API path drive the same loop:
    :meth:`request` is the body to send (or look up in the cache) while not
    :attr:`done`, :meth:`feed` takes the reply and moves to done or to the next
    repair. A repair always changes the request: its messages come from
    ``repair`` and its body from ``body(messages, repair_number)`` (callers vary
    the seed per repair, see :meth:`~seekbench.llm.JudgeConfig.decoding`). The
    loop stops on a valid reply, after ``max_repairs`` repairs, or as soon as a
    reply repeats the previous one word for word (``stalled``): asking again
    would pay for the same answer.

    Parameters
    ----------
    messages : list of dict
        The first request's messages.
    body : callable
        ``(messages, repair number from 0) -> request body``.
    parse : callable
        Reply (anything with ``content``) -> :class:`Parsed`.
    repair : callable
        ``(messages, repair number from 1, last check) -> messages`` of the repair request.
    max_repairs : int

    Examples
    --------
    >>> loop = RepairLoop(
    ...     [{"role": "user", "content": "Say 1"}],
    ...     body=lambda m, n: {"messages": m, "seed": n},
    ...     parse=lambda r: Parsed(r.content == "1", r.content, None if r.content == "1" else "not 1"),
    ...     repair=lambda m, n, p: with_note(m, f" (repair {n}: {p.error})"),
    ...     max_repairs=2,
    ... )
    >>> from types import SimpleNamespace as Reply
    >>> loop.feed(Reply(content="2")).ok, loop.request()["seed"]
    (False, 1)
    >>> loop.feed(Reply(content="2")).ok, loop.done, loop.stalled
    (False, True, True)
    """

    def __init__(
        self,
        messages: list[dict],
        *,
        body: Callable[[list[dict], int], dict],
        parse: Callable[[Any], Parsed[T]],
        repair: Callable[[list[dict], int, Parsed[T]], list[dict]],
        max_repairs: int,
    ) -> None:
        self.messages = messages
        self._body, self._parse, self._repair = body, parse, repair
        self.max_repairs = max_repairs
        self.repairs = 0
        self.parsed: Parsed[T] | None = None
        self.errors: list[str] = []
        self.done = False
        #: The last reply repeated the one before it: no further repair was asked for.
        self.stalled = False
        self._last: str | None = None
        self._pending = body(messages, 0)

    def request(self) -> dict:
        """The body of the request to send next; only while not :attr:`done`."""
        if self.done:
            raise RuntimeError("the repair loop is done; it has no request to send")
        return self._pending

    def rebuild(self) -> None:
        """Make the pending body again (the caller changed what ``body`` gives, e.g. a response format)."""
        if not self.done:
            self._pending = self._body(self.messages, self.repairs)

    def feed(self, reply) -> Parsed[T]:
        """Check the reply to the pending request; move to done or to the next repair."""
        parsed = self._parse(reply)
        self.parsed = parsed
        if parsed.ok:
            self.done = True
            return parsed
        self.errors.append(parsed.error or "")
        content = getattr(reply, "content", None)
        self.stalled = self.repairs > 0 and content == self._last
        if self.stalled or self.repairs >= self.max_repairs:
            self.done = True
            return parsed
        self._last = content
        self.repairs += 1
        self.messages = self._repair(self.messages, self.repairs, parsed)
        self._pending = self._body(self.messages, self.repairs)
        return parsed


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

    Drives a :class:`RepairLoop` online: each request goes through :func:`call`
    (cache, budget, endpoint).

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
        (a seed drawn each time); default ``client.body(messages, repair=n, **extra)``,
        whose seed changes with each repair.
    """
    loop: RepairLoop[T] = RepairLoop(
        messages,
        body=(lambda m, n: body(m)) if body is not None else (lambda m, n: client.body(m, repair=n, **(extra or {}))),
        parse=parse,
        repair=lambda m, n, p: with_note(m, repair_note(n, p.error or "")),
        max_repairs=max_repairs,
    )
    got: Reply | NoReply | None = None
    while not loop.done:
        req = loop.request()
        key = cache_key(client.config, template, req)
        tally.cache_key = key
        got = await call(client, template, req, key, trace_id, ctx)
        count(tally, got)
        if isinstance(got, NoReply):
            return Answer(None, got)
        if on_reply is not None:
            on_reply(got)
        parsed = loop.feed(got)
        tally.raw = got.content
        tally.repairs = loop.repairs
        if record_parsed and ctx.cache is not None:
            await ctx.durable(ctx.cache.set_parsed, key, valid=parsed.ok, labels=parsed.labels, error=parsed.error)
    return Answer(loop.parsed, None, got if isinstance(got, Reply) else None)
