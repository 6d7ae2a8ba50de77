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
import os
import time
from collections.abc import Iterable
from typing import Any

from .._errors import UserInputError
from ..llm import (
    Budget,
    CallContext,
    JudgeCache,
    JudgeConfig,
    LLMClient,
    NoReply,
    PromptTemplate,
    ResponseFormats,
    ServerInfo,
    call,
    context_refusal,
    is_local,
    load_judge_config,
    probe_server,
    progress_bar,
    resolve_api_key,
)
from ..traces import read_traces
from ._batch import run_batch
from ._job import TraceJob
from ._offline_run import annotate_offline
from ._output import AnnotationOutput, start_run
from ._replay import count_labels, feed, tally
from ._summary import AnnotateSummary

#: ``--granularity``: one request per trace (the default), or one per step (the published design).
GRANULARITIES = ("trace", "step")


class _OnlineRun:
    """The state shared by the workers of one online run."""

    def __init__(
        self,
        cfg: JudgeConfig,
        template: PromptTemplate,
        cache: JudgeCache,
        out: AnnotationOutput,
        summary: AnnotateSummary,
        budget: Budget,
        bar,
        *,
        rater: str,
        base_url: str | None,
        api_key: str | None,
        concurrency: int,
        granularity: str = "trace",
        server: ServerInfo | None = None,
    ) -> None:
        self.cfg, self.template, self.cache, self.out = cfg, template, cache, out
        self.summary, self.bar, self.rater = summary, bar, rater
        self.granularity, self.server = granularity, server or ServerInfo()
        self.client = LLMClient(cfg, base_url=base_url, api_key=api_key)
        self.ctx = CallContext(cache, budget, concurrency, thread_name="seekbench-annotate-io")
        endpoint = (base_url or cfg.resolved_base_url() or "https://api.openai.com/v1").rstrip("/")
        self.formats = ResponseFormats(
            cfg.response_format, endpoint=endpoint, model=cfg.model, cache=cache, judge=cfg.name
        )
        # the server's window when it reports a smaller one than the judge file assumes
        self.context_tokens = min(cfg.context_tokens, self.server.context_tokens or cfg.context_tokens)

    def job(self, trace: dict) -> TraceJob:
        return TraceJob(
            trace,
            self.cfg,
            self.template,
            granularity=self.granularity,
            mode=lambda: self.formats.mode,
            context_tokens=self.context_tokens,
        )

    @property
    def fatal(self) -> BaseException | None:
        return self.ctx.fatal

    async def _durable(self, fn, *args):
        """Run cache and output work (writes end in fsync) on the single I/O thread: they stay ordered,
        and the event loop keeps serving the other requests meanwhile."""
        return await self.ctx.durable(fn, *args)

    def _on_retry(self, reason: str) -> None:
        self.summary.retries += 1
        self.summary.count_error(reason)
        self._refresh()

    def _refresh(self) -> None:
        s = self.summary
        errs = sum(s.errors.values())
        self.bar.set_postfix_str(
            f"tok {s.prompt_tokens}+{s.completion_tokens} ${s.cost_usd:.4f} err {errs}", refresh=False
        )

    async def run_job(self, job: TraceJob) -> bool:
        """Finish one job; False if it had to stop (budget, unreachable endpoint or fatal error) before finishing."""
        s = self.summary
        while not job.done:
            key, body = job.next_request()
            got = await call(self.client, self.template, body, key, job.trace_id, self.ctx, on_retry=self._on_retry)
            if isinstance(got, NoReply):
                if got.kind == "budget":
                    s.stopped_by_budget = True
                if got.kind != "failed":
                    return False
                s.count_error(got.reason)
                if self.formats.fallback(got.status, got.message, body):
                    job.rebuild()  # the same request in the next format (the refusal cost nothing)
                    continue
                refused, window = context_refusal(got.status, got.message)
                if refused and job.refused_context(window):
                    s.context_refusals += 1
                    continue
                s.note_failure(got.reason)
                if got.unreachable:  # every other trace would fail the same way
                    s.stopped_unreachable = True
                    s.stop_reason = self.ctx.unreachable.reason if self.ctx.unreachable is not None else got.reason
                    return False
                job.fail(got.reason)
                break
            self.formats.accepted()
            if not got.cached:
                comp = got.completion
                s.requests += 1
                s.repairs += job.repairs > 0
                s.prompt_tokens += comp.prompt_tokens
                s.completion_tokens += comp.completion_tokens
                s.cost_usd += got.cost_usd
            await self._durable(
                functools.partial(feed, self.cache, job, key, got.completion, got.cost_usd, from_cache=got.cached)
            )
            if not got.cached and job.result is not None and not job.result.ok:  # feed set the result
                s.count_error("invalid_output")
        records = job.records(rater=self.rater, served=self.server.provenance())
        await self._durable(self.out.append, records)
        tally(s, job, records)
        self.bar.update(1)
        self._refresh()
        return True

    async def leave(self, job: TraceJob) -> None:
        """Record a trace the run stopped before finishing (not started, or stopped between requests):
        its labels so far and, for each label it still owes, an unscored ``not_sent`` record with the
        reason, so the output holds every trace asked for; a re-run asks for those again."""
        self.summary.not_started += 1
        if self.ctx.fatal is not None:
            return
        if self.ctx.unreachable is not None:
            # cannot connect at all, or the circuit breaker (requests in a row failed alike): its reason says which
            reason = f"the run stopped: {self.ctx.unreachable.reason}"
        else:
            limit = self.summary.budget_usd
            reason = "the budget" + (f" of ${limit:.4f}" if limit is not None else "") + " would be exceeded"
        job.stop(reason)
        records = job.records(rater=self.rater, served=self.server.provenance())
        await self._durable(self.out.append, records)
        count_labels(self.summary, records)
        self.bar.update(1)

    async def main(self, todo: list[dict], concurrency: int) -> None:
        pending = iter(todo)

        async def worker() -> None:
            for trace in pending:
                if self.ctx.fatal is not None:  # the run raises it (exit 2): nothing more is written
                    self.summary.not_started += 1
                    continue
                # once the run has stopped, a job still gets what the cache holds, then stops at its first request
                job = self.job(trace)
                if not await self.run_job(job):
                    await self.leave(job)

        try:
            await asyncio.gather(*(worker() for _ in range(min(concurrency, max(1, len(todo))))))
        finally:
            self.ctx.close()
            await self.client.aclose()


def annotate(
    traces: str | os.PathLike | Iterable[dict],
    judge: str | os.PathLike | JudgeConfig | dict,
    output: str | os.PathLike,
    *,
    cache: str | os.PathLike | JudgeCache | None = None,
    concurrency: int | None = None,
    budget_usd: float | None = None,
    batch: bool = False,
    limit: int | None = None,
    rater: str | None = None,
    progress: bool | None = False,
    base_url: str | None = None,
    api_key: str | None = None,
    granularity: str = "trace",
) -> AnnotateSummary:
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
    concurrency : int, optional
        Traces worked on at once. Default: for a judge on this machine, the
        server's parallel slots where it reports them (llama.cpp ``/props``
        ``total_slots``), else 1 (a server that serves one request at a time
        only slows down when asked more); for a remote API, 8.
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
    granularity : {"trace", "step"}, default "trace"
        ``trace``: one request per trace (windows of steps when it is longer than
        the judge's context); ``step``: the published SeekBench design, one request
        per step with the trace so far. Same labels and records; the granularity is
        in the provenance, and ``step`` names its rater ``<judge>@step`` by default
        so the two designs can be compared with ``seekbench agree``.

    Notes
    -----
    Before the first request the server is asked for its context window,
    slots and model (:func:`~seekbench.llm.probe_server`); a smaller window than
    the judge file's is used, and labels record the model the server reports.

    Returns
    -------
    AnnotateSummary

    Examples
    --------
    >>> from seekbench.testing import OpenAIServer
    >>> with OpenAIServer() as srv:  # doctest: +SKIP
    ...     s = annotate("traces.jsonl", "local", "labels.jsonl", base_url=srv.base_url)
    """
    if concurrency is not None and concurrency < 1:
        raise UserInputError(f"--concurrency must be >= 1, got {concurrency}")
    if granularity not in GRANULARITIES:
        raise UserInputError(f"--granularity is {granularity!r}; use one of {', '.join(GRANULARITIES)}")
    if budget_usd is not None and not budget_usd >= 0:
        raise UserInputError(f"--budget-usd must be >= 0, got {budget_usd}")
    if limit is not None and limit < 0:
        raise UserInputError(f"--limit must be >= 0, got {limit}")
    cfg = judge if isinstance(judge, (JudgeConfig, dict)) else load_judge_config(judge)
    if isinstance(cfg, JudgeConfig) and cfg.kind == "answer":
        raise UserInputError(
            f'judge {cfg.name!r} is an answer judge (kind = "answer"): it grades final answers, '
            f"not steps; use `seekbench judge-answers --judge {cfg.name}`, or give annotate a "
            "step-label judge (seekbench judge list)"
        )
    if isinstance(traces, (str, os.PathLike)):
        traces = read_traces(traces).traces
    traces = list(traces)[:limit] if limit is not None else list(traces)
    start = time.monotonic()
    if isinstance(cfg, dict):
        return annotate_offline(traces, cfg, output, rater=rater, start=start)
    rater = rater or (cfg.name if granularity == "trace" else f"{cfg.name}@{granularity}")
    template = PromptTemplate.load(cfg.prompt_path, version=cfg.prompt_version)
    mode = "batch" if batch else "online"
    out, todo, summary = start_run(output, traces, rater=rater, judge=cfg.name, mode=mode, budget_usd=budget_usd)
    owned = not isinstance(cache, JudgeCache)
    jc = cache if isinstance(cache, JudgeCache) else JudgeCache(cache)
    bar = progress_bar(len(todo), f"annotate {cfg.name}", progress)
    # what both paths share: the judge, the cache, the output, the tally, the budget, the bar
    shared = (cfg, template, jc, out, summary, Budget(budget_usd), bar)
    where: dict[str, Any] = {"rater": rater, "base_url": base_url, "api_key": api_key, "granularity": granularity}
    try:
        if batch:
            run_batch(todo, *shared, **where)
        elif todo:
            asks = any(TraceJob.needs_judge(t) for t in todo)  # else not even the server is asked anything
            server, concurrency = _server_limits(cfg, base_url, api_key, concurrency, probe=asks)
            summary.concurrency = concurrency
            run = _OnlineRun(*shared, **where, concurrency=concurrency, server=server)
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


def _server_limits(
    cfg: JudgeConfig, base_url: str | None, api_key: str | None, concurrency: int | None, *, probe: bool = True
) -> tuple[ServerInfo, int]:
    """What the server reports about itself, and the concurrency to use (see :func:`annotate`)."""
    url = base_url or cfg.resolved_base_url()
    local = is_local(url)
    info = ServerInfo()
    if url and probe:
        try:
            key = api_key or resolve_api_key(cfg, url)
        except UserInputError:
            key = None  # a cached run needs no key; the first paid request says so
        info = probe_server(url, key, cfg.model)
    if concurrency is None:
        concurrency = (info.slots or 1) if local else 8
    return info, concurrency
