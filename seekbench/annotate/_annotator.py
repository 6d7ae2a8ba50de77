"""``annotate``: label traces with a judge, concurrently, within a budget, resumable after any crash.

For each trace still to do (not in the output yet), in input order, up to
``concurrency`` traces are worked on at once. A request is first looked up in
the cache; only a miss is sent, and only if its worst-case cost still fits
the budget beside the requests in flight. A completion is stored in the cache
the moment it arrives; a finished trace is appended to the output at once.
Killed at any moment, a re-run therefore finds every paid completion in the
cache or the output and pays for none of them again. (A request in flight at
the moment of the kill was never received; it is sent again.)
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from concurrent.futures import ThreadPoolExecutor
import sys
import time
from collections.abc import Iterable

from .._errors import UserInputError
from ..traces._read import read_traces
from ._cache import CachedCompletion, JudgeCache
from ._config import JudgeConfig, load_judge_config
from ._cost import Prices, cost_usd, request_cost_bound
from ._job import ABSTAINED, OVER_CONTEXT, TraceJob
from ._output import AnnotationOutput
from ._prompt import PromptTemplate
from ._provider import Completion, EndpointUnreachable, OpenAIProvider, RequestFailed
from ._summary import AnnotateSummary


class Budget:
    """Money allowed for the run: a request is sent only if ``spent + in flight + its bound <= limit``."""

    def __init__(self, limit_usd: float | None) -> None:
        self.limit = limit_usd
        self.spent = 0.0
        self.reserved = 0.0

    def reserve(self, amount: float) -> bool:
        if self.limit is None:
            return True
        if self.spent + self.reserved + amount > self.limit:
            return False
        self.reserved += amount
        return True

    def release(self, amount: float) -> None:
        if self.limit is not None:
            self.reserved -= amount

    def settle(self, amount: float, actual: float) -> None:
        self.release(amount)
        self.spent += actual


def _progress_bar(total: int, desc: str, enabled: bool | None):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="trace", disable=(None if enabled is None else not enabled),
                file=sys.stderr, dynamic_ncols=True, smoothing=0.1)


def tally(summary: AnnotateSummary, job: TraceJob, records: list[dict]) -> None:
    """Add a finished job to the summary."""
    status = job.status
    summary.labeled += status == "labeled"
    summary.unscored += status == "unscored"
    summary.failed += status == "failed"
    summary.truncated += job.rendered.truncated
    if status == "unscored" and not job.calls and job.rendered.over_context:
        summary.count_error(OVER_CONTEXT)  # never sent: too long for the judge even with every text cut
    if job.result is not None:
        summary.rule_conflicts += len(job.result.rule_conflicts)
    if job.calls and all(c.from_cache for c in job.calls):
        summary.from_cache += 1
    for rec in records:
        kind = rec["provenance"]["kind"]
        if rec["value"] is None:
            summary.unscored_labels += 1
            summary.abstentions += str(rec.get("unscored_reason", "")).startswith(ABSTAINED)
        elif kind == "rule":
            summary.rule_labels += 1
        else:
            summary.judge_labels += 1


def completion_of(hit: CachedCompletion) -> Completion:
    return Completion(hit.raw, hit.content, hit.finish_reason, hit.prompt_tokens, hit.completion_tokens,
                      hit.latency_s, hit.created)


def store(cache: JudgeCache, cfg: JudgeConfig, template: PromptTemplate, trace_id: str | None, key: str,
          comp: Completion, cost: float, via_batch: bool) -> None:
    """Write a fresh completion to the cache (committed before it is used)."""
    cache.put(CachedCompletion(key=key, judge=cfg.name, model=cfg.model, prompt_version=template.version,
                               trace_id=trace_id, created=comp.created, via_batch=via_batch, raw=comp.raw,
                               content=comp.content, finish_reason=comp.finish_reason,
                               prompt_tokens=comp.prompt_tokens, completion_tokens=comp.completion_tokens,
                               cost_usd=cost, latency_s=comp.latency_s))


def feed(cache: JudgeCache, job: TraceJob, key: str, comp: Completion, cost: float, *, from_cache: bool) -> None:
    """Give a completion to its job and record the check's outcome in the cache."""
    res = job.feed(comp, key=key, cost_usd=cost, from_cache=from_cache)
    labels = {f"{s}:{f}": v for (s, f), v in res.labels.items()} if res.ok else None
    cache.set_parsed(key, valid=res.ok, labels=labels, error=res.error)


def replay_cached(cache: JudgeCache, job: TraceJob, *, fresh: set[str] | frozenset = frozenset()) -> None:
    """Advance a job through every request whose completion is already cached (``fresh``: paid this run)."""
    while not job.done:
        key = job.next_key()
        hit = cache.get(key)
        if hit is None:
            return
        feed(cache, job, key, completion_of(hit), hit.cost_usd, from_cache=key not in fresh)


class _OnlineRun:
    """The state shared by the workers of one online run."""

    def __init__(self, cfg: JudgeConfig, template: PromptTemplate, cache: JudgeCache, out: AnnotationOutput,
                 summary: AnnotateSummary, budget: Budget, bar, *, rater: str, base_url: str | None,
                 api_key: str | None) -> None:
        self.cfg, self.template, self.cache, self.out = cfg, template, cache, out
        self.summary, self.budget, self.bar, self.rater = summary, budget, bar, rater
        self.prices = Prices.of(cfg)
        self._base_url, self._api_key = base_url, api_key
        self.provider: OpenAIProvider | None = None
        self._io: ThreadPoolExecutor | None = None
        self.stop = False
        self.fatal: BaseException | None = None

    def _provider(self) -> OpenAIProvider:
        if self.provider is None:  # made on the first cache miss: a finished job needs no key
            self.provider = OpenAIProvider(self.cfg, base_url=self._base_url, api_key=self._api_key)
        return self.provider

    async def _durable(self, fn, *args):
        """Run cache and output work (writes end in fsync) on the single I/O thread: they stay ordered,
        and the event loop keeps serving the other requests meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(self._io, fn, *args)

    def _on_retry(self, reason: str) -> None:
        self.summary.retries += 1
        self.summary.count_error(reason)
        self._refresh()

    def _refresh(self) -> None:
        s = self.summary
        errs = sum(s.errors.values())
        self.bar.set_postfix_str(f"tok {s.prompt_tokens}+{s.completion_tokens} ${s.cost_usd:.4f} err {errs}",
                                 refresh=False)

    async def run_job(self, job: TraceJob) -> bool:
        """Finish one job; False if it had to stop (budget or fatal error) before finishing."""
        s = self.summary
        while not job.done:
            key = job.next_key()
            hit = await self._durable(self.cache.get, key)
            if hit is not None:
                await self._durable(functools.partial(feed, self.cache, job, key, completion_of(hit), hit.cost_usd,
                                                      from_cache=True))
                continue
            if self.stop:
                return False
            body = job.next_body()
            bound = request_cost_bound(body["messages"], self.cfg.max_tokens, self.prices,
                                       extra_text=json.dumps(body.get("response_format")))
            if not self.budget.reserve(bound):
                self.stop = s.stopped_by_budget = True
                return False
            try:
                comp = await self._provider().complete(body, on_retry=self._on_retry)
            except RequestFailed as e:
                self.budget.release(bound)
                s.count_error(e.reason)
                s.note_failure(e.reason)
                if isinstance(e, EndpointUnreachable):  # every other trace would fail the same way
                    s.stopped_unreachable = self.stop = True
                    return False
                job.fail(e.reason)
                break
            except BaseException as e:
                self.budget.release(bound)
                if isinstance(e, UserInputError):
                    self.fatal, self.stop = e, True
                    return False
                raise
            cost = cost_usd(comp.prompt_tokens, comp.completion_tokens, self.prices)
            await self._durable(store, self.cache, self.cfg, self.template, job.trace_id, key, comp, cost, False)
            self.budget.settle(bound, cost)
            s.requests += 1
            s.repairs += job.repairs > 0
            s.prompt_tokens += comp.prompt_tokens
            s.completion_tokens += comp.completion_tokens
            s.cost_usd += cost
            await self._durable(functools.partial(feed, self.cache, job, key, comp, cost, from_cache=False))
            if not job.result.ok:
                s.count_error("invalid_output")
        records = job.records(rater=self.rater)
        await self._durable(self.out.append, records)
        tally(s, job, records)
        self.bar.update(1)
        self._refresh()
        return True

    async def main(self, todo: list[dict], concurrency: int) -> None:
        pending = iter(todo)

        async def worker() -> None:
            for trace in pending:
                if self.stop:
                    self.summary.not_started += 1
                    continue
                job = TraceJob(trace, self.cfg, self.template)
                if not await self.run_job(job):
                    self.summary.not_started += 1

        self._io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="seekbench-annotate-io")
        try:
            await asyncio.gather(*(worker() for _ in range(min(concurrency, max(1, len(todo))))))
        finally:
            self._io.shutdown(wait=True)
            if self.provider is not None:
                await self.provider.aclose()


def annotate(traces: str | os.PathLike | Iterable[dict], judge: str | os.PathLike | JudgeConfig | dict,
             output: str | os.PathLike, *, cache: str | os.PathLike | JudgeCache | None = None,
             concurrency: int = 8, budget_usd: float | None = None, batch: bool = False,
             limit: int | None = None, rater: str | None = None, progress: bool | None = False,
             base_url: str | None = None, api_key: str | None = None) -> AnnotateSummary:
    """Label every step of some traces with a judge; append the labels to an annotation set.

    Parameters
    ----------
    traces : path or list of dict
        A trace file (any supported format) or canonical traces.
    judge : str, path, JudgeConfig or dict
        A judge name from ``judges/`` (``gpt-4.1-mini``, ``local``, ``rules``, ...), a judge file,
        or a loaded config.
    output : path
        The annotation set (JSONL) to append to; traces already in it are skipped.
    cache : path or JudgeCache, optional
        The SQLite cache (default :func:`~seekbench.annotate.default_cache_path`).
    concurrency : int, default 8
        Traces worked on at once.
    budget_usd : float, optional
        Stop, before sending any request whose worst-case cost would take the
        run's spending past this amount.
    batch : bool, default False
        Use the OpenAI Batch API (half price, hours of latency).
    limit : int, optional
        Only the first ``limit`` traces.
    rater : str, optional
        Rater name in the records (default: the judge's name).
    progress : bool or None, default False
        Show a tqdm bar on stderr (None: only on a terminal).
    base_url, api_key : str, optional
        Override the judge's endpoint and key (tests, local servers).

    Returns
    -------
    AnnotateSummary

    Examples
    --------
    >>> from seekbench.testing import OpenAIServer
    >>> with OpenAIServer() as srv:  # doctest: +SKIP
    ...     s = annotate("traces.jsonl", "local", "labels.jsonl", base_url=srv.base_url)
    """
    if concurrency < 1:
        raise UserInputError(f"--concurrency must be >= 1, got {concurrency}")
    if budget_usd is not None and not budget_usd >= 0:
        raise UserInputError(f"--budget-usd must be >= 0, got {budget_usd}")
    if limit is not None and limit < 0:
        raise UserInputError(f"--limit must be >= 0, got {limit}")
    cfg = judge if isinstance(judge, (JudgeConfig, dict)) else load_judge_config(judge)
    if isinstance(cfg, JudgeConfig) and cfg.kind == "answer":
        raise UserInputError(f"judge {cfg.name!r} is an answer judge (kind = \"answer\"): it grades final answers, "
                             f"not steps; use `seekbench judge-answers --judge {cfg.name}`, or give annotate a "
                             "step-label judge (seekbench judge list)")
    if isinstance(traces, (str, os.PathLike)):
        traces = read_traces(traces).traces
    traces = list(traces)[:limit] if limit is not None else list(traces)
    start = time.monotonic()
    if isinstance(cfg, dict):
        from ._offline_run import annotate_offline

        return annotate_offline(traces, cfg, output, rater=rater, start=start)
    rater = rater or cfg.name
    template = PromptTemplate.load(cfg.prompt_path, version=cfg.prompt_version)
    out = AnnotationOutput(output, rater=rater)
    state = out.recover()
    todo = [t for t in traces if state.get(str(t["trace_id"])) != "done"]
    summary = AnnotateSummary(judge=cfg.name, output=str(output), mode="batch" if batch else "online",
                              n_traces=len(traces), already_done=len(traces) - len(todo), budget_usd=budget_usd)
    owned = not isinstance(cache, JudgeCache)
    jc = JudgeCache(cache) if owned else cache
    bar = _progress_bar(len(todo), f"annotate {cfg.name}", progress)
    try:
        if batch:
            from ._batch import run_batch

            run_batch(todo, cfg, template, jc, out, summary, Budget(budget_usd), bar, rater=rater,
                      base_url=base_url, api_key=api_key)
        elif todo:
            run = _OnlineRun(cfg, template, jc, out, summary, Budget(budget_usd), bar, rater=rater,
                             base_url=base_url, api_key=api_key)
            asyncio.run(run.main(todo, concurrency))
            if run.fatal is not None:
                raise run.fatal
    finally:
        bar.close()
        out.finalize([str(t["trace_id"]) for t in traces])
        if owned:
            jc.close()
    summary.elapsed_s = round(time.monotonic() - start, 3)
    return summary
