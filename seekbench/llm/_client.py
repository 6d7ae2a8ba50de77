"""One model call, the same way for every caller: cache first, then the budget, then the endpoint.

:func:`call` is the path of every request a judge, agent or estimator makes:
the completion is looked up in the SQLite cache under its key; on a miss it
is sent only when the endpoint has not been found unreachable, the run has
not been stopped, and the request's worst-case cost still fits the budget
beside the requests in flight; at most ``concurrency`` requests are in flight
at once; a fresh completion is stored (committed) before it is used. The
first request failure of a run is kept uncut for the exit-code-3 report, and
an unreachable endpoint stops every later request (they would fail the same
way). What to make of the reply is the caller's business.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from .._errors import UserInputError
from ._cache import CachedCompletion, JudgeCache
from ._cost import Budget, Prices, cost_usd, request_cost_bound
from ._prompt import PromptTemplate
from ._provider import Completion, EndpointFailing, EndpointUnreachable, OpenAIProvider, RequestFailed

#: Requests failing the same way in a row that stop a run (the circuit breaker of :class:`CallContext`).
STOP_AFTER_FAILURES = 5


class CallContext:
    """What the calls of one run share: the cache, the budget, the request limit, the I/O thread.

    Attributes
    ----------
    stopped_by_budget : bool
        A request was not sent because the budget would have been exceeded.
    fatal : BaseException or None
        A user error from the endpoint (bad key, unknown model): the run stops and raises it.
    unreachable : EndpointUnreachable or None
        No connection could be opened: no further request is sent.
    first_error : str or None
        The run's first request failure, uncut (status, message, endpoint).
    retries : int
        Retries made by the provider.
    stop_after : int
        The circuit breaker: after this many requests in a row fail the same way (the same
        ``RequestFailed.kind``, each after its own retries), no further request is sent, as for
        an unreachable endpoint (:class:`EndpointFailing` in ``unreachable``).
    """

    def __init__(
        self,
        cache: JudgeCache | None,
        budget: Budget,
        concurrency: int,
        *,
        thread_name: str = "seekbench-answers-io",
        stop_after: int = STOP_AFTER_FAILURES,
    ) -> None:
        self.cache, self.budget = cache, budget
        self.requests = asyncio.Semaphore(concurrency)
        self.io = ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name)
        self.stopped_by_budget = False
        self.fatal: BaseException | None = None
        self.unreachable: EndpointUnreachable | None = None
        self.first_error: str | None = None
        self.retries = 0
        self.stop_after = stop_after
        self._streak: tuple[str, int] = ("", 0)

    def note_failure(self, reason: str) -> None:
        """Keep the run's first request failure, uncut (status, message, endpoint)."""
        if self.first_error is None:
            self.first_error = reason

    def note_outcome(self, failure: RequestFailed | None) -> EndpointUnreachable | None:
        """Count a request's outcome for the circuit breaker; the error that stops the run, if this one does."""
        if failure is None:
            self._streak = ("", 0)
            return None
        kind, n = self._streak
        self._streak = (failure.kind, n + 1 if failure.kind == kind else 1)
        if isinstance(failure, EndpointUnreachable):
            return failure
        if self._streak[1] >= self.stop_after:
            return EndpointFailing(
                f"stopped after {self._streak[1]} requests in a row failed the same way ({failure.kind}); "
                f"last error: {failure.reason}",
                status=failure.status,
                attempts=failure.attempts,
                endpoint=failure.endpoint,
                message=failure.message,
                kind=failure.kind,
            )
        return None

    async def durable(self, fn, *args, **kwargs):
        """Cache work on the single I/O thread (ordered writes; the event loop keeps serving)."""
        return await asyncio.get_running_loop().run_in_executor(self.io, lambda: fn(*args, **kwargs))

    def close(self) -> None:
        self.io.shutdown(wait=True)


@contextmanager
def call_context(
    cache: str | os.PathLike | JudgeCache | None,
    *,
    budget_usd: float | None = None,
    concurrency: int = 8,
    needs_cache: bool = True,
    thread_name: str = "seekbench-answers-io",
):
    """A :class:`CallContext` for one run, opening (and then closing) the cache unless one is given."""
    owned = needs_cache and not isinstance(cache, JudgeCache)
    jc: JudgeCache | None = None
    if needs_cache:
        jc = cache if isinstance(cache, JudgeCache) else JudgeCache(cache)
    ctx = CallContext(jc, Budget(budget_usd), concurrency, thread_name=thread_name)
    try:
        yield ctx
    finally:
        ctx.close()
        if owned and jc is not None:
            jc.close()


class LLMClient:
    """A judge file's connection: its config, prices and (lazily) its provider."""

    def __init__(self, config, *, base_url: str | None = None, api_key: str | None = None, role: str = "judge") -> None:
        self.config, self.prices = config, Prices.of(config)
        self._base_url, self._api_key, self.role = base_url, api_key, role
        self._provider: OpenAIProvider | None = None

    def provider(self) -> OpenAIProvider:
        if self._provider is None:  # made on the first cache miss: a fully cached run needs no key
            self._provider = OpenAIProvider(self.config, base_url=self._base_url, api_key=self._api_key, role=self.role)
        return self._provider

    async def aclose(self) -> None:
        if self._provider is not None:
            await self._provider.aclose()
            self._provider = None

    def body(self, messages: list[dict], *, repair: int = 0, **extra) -> dict:
        """The request body: ``model``, ``messages``, the decoding parameters of repair ``repair`` (and ``extra``)."""
        return {"model": self.config.model, "messages": messages, **self.config.decoding(repair=repair), **extra}


def completion_of(hit: CachedCompletion) -> Completion:
    """A cached completion as a :class:`Completion`."""
    return Completion(
        hit.raw, hit.content, hit.finish_reason, hit.prompt_tokens, hit.completion_tokens, hit.latency_s, hit.created
    )


#: What a cache row keeps of a completion as it came.
_STORED = ("created", "raw", "content", "finish_reason", "prompt_tokens", "completion_tokens", "latency_s")


def store(
    cache: JudgeCache,
    cfg,
    template: PromptTemplate,
    trace_id: str | None,
    key: str,
    comp: Completion,
    cost: float,
    via_batch: bool,
) -> None:
    """Write a fresh completion to the cache (committed before it is used)."""
    cache.put(
        CachedCompletion(
            key=key,
            judge=cfg.name,
            model=cfg.model,
            prompt_version=template.version,
            trace_id=trace_id,
            via_batch=via_batch,
            cost_usd=cost,
            **{f: getattr(comp, f) for f in _STORED},
        )
    )


@dataclass(frozen=True)
class Reply:
    """A completion for a request: its text, usage and cost, and whether it came from the cache."""

    completion: Completion
    cost_usd: float
    cached: bool

    @property
    def content(self) -> str | None:
        return self.completion.content

    @property
    def finish_reason(self) -> str | None:
        return self.completion.finish_reason


@dataclass(frozen=True)
class NoReply:
    """Why a request has no completion.

    ``kind``: ``unreachable`` (not sent: the endpoint cannot be reached), ``stopped`` (not sent: the
    budget or a fatal error stopped the run), ``budget`` (not sent: it would exceed the budget),
    ``failed`` (sent and failed for good; ``reason`` says how), ``fatal`` (a user error, in ``ctx.fatal``).
    """

    kind: Literal["unreachable", "stopped", "budget", "failed", "fatal"]
    reason: str
    #: ``failed`` because no connection could be opened: this failure stopped the run.
    unreachable: bool = False
    #: ``failed`` with an HTTP answer: its status and the server's message, uncut.
    status: int | None = None
    message: str | None = None


async def call(
    client: LLMClient,
    template: PromptTemplate,
    body: dict,
    key: str,
    trace_id: str | None,
    ctx: CallContext,
    *,
    on_retry=None,
) -> Reply | NoReply:
    """The completion of ``body``: from the cache, else paid within the budget (and cached at once)."""
    cache = ctx.cache
    hit = await ctx.durable(cache.get, key) if cache is not None else None
    if hit is not None:
        return Reply(completion_of(hit), hit.cost_usd, True)
    if ctx.unreachable is not None:
        return NoReply("unreachable", ctx.unreachable.reason)
    if ctx.stopped_by_budget or ctx.fatal is not None:
        return NoReply("stopped", "the run stopped (budget or fatal error)")
    bound = request_cost_bound(
        body["messages"],
        int(body.get(client.config.max_tokens_param) or client.config.max_tokens),
        client.prices,
        extra_text=json.dumps(body.get("response_format")) if "response_format" in body else "",
    )
    if not ctx.budget.reserve(bound):
        ctx.stopped_by_budget = True
        return NoReply("budget", "the budget would be exceeded")

    def retried(reason: str) -> None:
        ctx.retries += 1
        if on_retry is not None:
            on_retry(reason)

    async with ctx.requests:
        if ctx.unreachable is not None:  # it became unreachable while this request waited its turn
            ctx.budget.release(bound)
            return NoReply("unreachable", ctx.unreachable.reason)
        try:
            comp = await client.provider().complete(body, on_retry=retried)
        except RequestFailed as e:
            ctx.budget.release(bound)
            ctx.note_failure(e.reason)
            stop = ctx.note_outcome(e)
            stops = stop is not None and ctx.unreachable is None
            if stops:
                ctx.unreachable = stop  # the other requests are not sent: they would fail the same way
            return NoReply("failed", e.reason, stops or isinstance(e, EndpointUnreachable), e.status, e.message)
        except UserInputError as e:
            ctx.budget.release(bound)
            ctx.fatal = e
            return NoReply("fatal", e.one_line())
    ctx.note_outcome(None)
    cost = cost_usd(comp.prompt_tokens, comp.completion_tokens, client.prices)
    ctx.budget.settle(bound, cost)
    if cache is not None:
        await ctx.durable(store, cache, client.config, template, trace_id, key, comp, cost, False)
    return Reply(comp, cost, False)


def progress_bar(total: int, desc: str, enabled: bool | None, *, unit: str = "trace"):
    """A tqdm bar on stderr (``enabled`` None: only on a terminal)."""
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        disable=(None if enabled is None else not enabled),
        file=sys.stderr,
        dynamic_ncols=True,
        smoothing=0.1,
    )
