"""Answer judges: is a candidate answer correct, given the question and the gold answers?

Two kinds. ``em`` (built in, offline, free) votes with exact match under SQuAD
normalisation (spec section 6). An LLM answer judge is a judge file with
``kind = "answer"`` in ``judges/`` (model, endpoint, key variable, prices,
prompt): it runs on the step judges' stack (:mod:`seekbench.annotate`): the
official ``openai`` client with retries and backoff, the SQLite cache keyed
on model + rendered prompt + prompt version and hash + decoding parameters,
the budget, and cost from the reported usage. Its prompt is a project-written
file in ``judges/prompts/`` (``answer_v1.md``); questions flagged as resting on
a false premise use the judge's ``false_premise_prompt``
(``answer_false_premise_v1.md``). The question, the gold answers and the
candidate are untrusted text: each goes into the prompt as JSON between fence
lines, with fence look-alikes neutralised.

The reply is read by :func:`~seekbench.answers.parse_verdict`; a reply it
refuses is re-asked at most ``max_repairs`` times with a note, then recorded
as an unscored vote with the reason. Every vote keeps its provenance: judge,
model, prompt version and SHA-256, cache key, raw reply, tokens and cost.
"""

from __future__ import annotations

import asyncio
import json
import re
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from .._errors import UserInputError
from ..annotate._annotator import Budget, store
from ..annotate._cache import JudgeCache
from ..annotate._config import JudgeConfig, load_judge_config
from ..annotate._cost import Prices, cost_usd, estimate_tokens, request_cost_bound
from ..annotate._prompt import (
    SYSTEM_MARKER,
    USER_MARKER,
    PromptTemplate,
    cache_key,
    neutralise,
)
from ..annotate._provider import EndpointUnreachable, OpenAIProvider, RequestFailed, utc_now
from ..traces._answers import exact_match_score
from ._verdict import Verdict, parse_verdict

try:  # the fence module escapes invisible and line-breaking characters, keeping readable text
    from ..annotate._fence import json_data as fence_json
except ImportError:  # pragma: no cover - older annotate: escape every non-ASCII character instead
    def fence_json(value: object) -> str:
        return json.dumps(value, ensure_ascii=True)

#: The built-in offline judge's name.
EM_JUDGE = "em"
ANSWER_PLACEHOLDERS = ("{{QUESTION_BLOCK}}", "{{GOLD_BLOCK}}", "{{CANDIDATE_BLOCK}}")
FENCES = {"question": ("<<<QUESTION_JSON", "QUESTION_JSON>>>"),
          "gold": ("<<<GOLD_ANSWERS_JSON", "GOLD_ANSWERS_JSON>>>"),
          "candidate": ("<<<CANDIDATE_JSON", "CANDIDATE_JSON>>>")}
_TRUNCATED = " [... {n} characters truncated by seekbench ...]"
VoteStatus = Literal["scored", "unscored", "failed", "skipped"]


@dataclass(frozen=True)
class AnswerItem:
    """One answer to judge.

    ``slot`` is ``"final"`` for a trace's final answer, ``"k3"`` for the answer
    produced from the top-3 evidence, ``"no_retrieval"`` for the answer given
    without retrieval.
    """

    trace_id: str
    slot: str
    question: str
    gold_answers: tuple[str, ...]
    candidate: str | None
    false_premise: bool = False

    @property
    def key(self) -> str:
        return f"{self.trace_id}#{self.slot}"


@dataclass
class Vote:
    """One judge's vote on one answer, with its provenance.

    ``status``: ``scored`` (value True/False), ``unscored`` (the reply could not be
    read as a verdict after the repairs, or there was nothing to judge),
    ``failed`` (the request failed for good; a re-run retries it) or ``skipped``
    (not sent: the budget was reached).
    """

    judge: str
    value: bool | None
    status: VoteStatus
    reason: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    prompt_sha256: str | None = None
    cache_key: str | None = None
    raw: str | None = None
    requests: int = 0
    repairs: int = 0
    from_cache: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    paid_usd: float = 0.0
    paid_requests: int = 0
    truncated: bool = False
    time: str = field(default_factory=utc_now)

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


def load_answer_template(path: str | Path, *, version: str) -> PromptTemplate:
    """Read an answer prompt file: a ``=== SYSTEM ===`` and a ``=== USER ===`` part, the user part holding
    ``{{QUESTION_BLOCK}}``, ``{{GOLD_BLOCK}}`` and ``{{CANDIDATE_BLOCK}}`` once each."""
    import hashlib

    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UserInputError(f"cannot read prompt template: {e.strerror}", file=str(path)) from e
    text = data.decode("utf-8").replace("\r\n", "\n")
    parts = re.split(rf"(?m)^({re.escape(SYSTEM_MARKER)}|{re.escape(USER_MARKER)})[ \t]*$", text)
    if parts[1::2] != [SYSTEM_MARKER, USER_MARKER]:
        raise UserInputError(f"a prompt template needs one {SYSTEM_MARKER!r} line, then one {USER_MARKER!r} line",
                             file=str(path))
    system, user = parts[2].strip("\n"), parts[4].strip("\n")
    for ph in ANSWER_PLACEHOLDERS:
        if user.count(ph) != 1:
            raise UserInputError(f"the user part of an answer prompt must contain {ph} exactly once", file=str(path))
    return PromptTemplate(system, user, version, hashlib.sha256(data).hexdigest(), path)


def _block(name: str, value: object) -> str:
    begin, end = FENCES[name]
    return f"{begin}\n{fence_json(value)}\n{end}"


def render_answer_prompt(item: AnswerItem, template: PromptTemplate, *, context_tokens: int = 128_000,
                         max_tokens: int = 64) -> tuple[list[dict], bool]:
    """The messages asking whether ``item.candidate`` is correct, and whether the candidate was cut to fit."""
    question = neutralise(item.question or "")
    gold = [neutralise(g) for g in item.gold_answers]
    candidate = neutralise(item.candidate or "")

    def user(cand: str) -> str:
        return (template.user.replace("{{QUESTION_BLOCK}}", _block("question", question))
                .replace("{{GOLD_BLOCK}}", _block("gold", gold)).replace("{{CANDIDATE_BLOCK}}", _block("candidate", cand)))

    text, truncated = user(candidate), False
    room = context_tokens - max_tokens - 256 - estimate_tokens(template.system)
    if estimate_tokens(text) > room:
        over = (estimate_tokens(text) - room) * 3 + 64
        keep = max(0, len(candidate) - over)
        text, truncated = user(candidate[:keep] + _TRUNCATED.format(n=len(candidate) - keep)), True
    return [{"role": "system", "content": template.system}, {"role": "user", "content": text}], truncated


class AnswerJudge(ABC):
    """Base class: a named judge that votes on :class:`AnswerItem` objects."""

    name: str = ""
    is_llm: bool = False

    @abstractmethod
    async def vote(self, item: AnswerItem, ctx: JudgeContext) -> Vote:
        """This judge's vote on one answer."""

    async def aclose(self) -> None:
        """Release connections (LLM judges)."""


class ExactMatchJudge(AnswerJudge):
    """Offline judge: correct iff the normalised candidate equals a normalised gold answer (spec section 6).

    >>> import asyncio
    >>> item = AnswerItem("t", "final", "q", ("River Thames",), "the river thames")
    >>> asyncio.run(ExactMatchJudge().vote(item, None)).value
    True
    """

    name = EM_JUDGE

    async def vote(self, item: AnswerItem, ctx: JudgeContext | None) -> Vote:
        if not item.candidate:
            return Vote(self.name, None, "unscored", "no answer to judge")
        if not item.gold_answers:
            return Vote(self.name, None, "unscored", "no gold answers")
        return Vote(self.name, bool(exact_match_score(item.candidate, item.gold_answers)), "scored")


class JudgeContext:
    """What the judges of one run share: the cache, the budget, the request limit, the I/O thread."""

    def __init__(self, cache: JudgeCache, budget: Budget, concurrency: int) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.cache, self.budget = cache, budget
        self.requests = asyncio.Semaphore(concurrency)
        self.io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="seekbench-answers-io")
        self.stopped_by_budget = False
        self.fatal: BaseException | None = None
        self.unreachable: EndpointUnreachable | None = None
        self.first_error: str | None = None
        self.retries = 0

    def note_failure(self, reason: str) -> None:
        """Keep the run's first request failure, uncut (status, message, endpoint)."""
        if self.first_error is None:
            self.first_error = reason

    async def durable(self, fn, *args, **kwargs):
        """Cache work on the single I/O thread (ordered writes; the event loop keeps serving)."""
        return await asyncio.get_running_loop().run_in_executor(self.io, lambda: fn(*args, **kwargs))

    def close(self) -> None:
        self.io.shutdown(wait=True)


class LLMClient:
    """An LLM judge's connection: its config, prices and (lazily) its provider."""

    def __init__(self, config: JudgeConfig, *, base_url: str | None = None, api_key: str | None = None) -> None:
        self.config, self.prices = config, Prices.of(config)
        self._base_url, self._api_key = base_url, api_key
        self._provider: OpenAIProvider | None = None

    def provider(self) -> OpenAIProvider:
        if self._provider is None:  # made on the first cache miss: a fully cached run needs no key
            self._provider = OpenAIProvider(self.config, base_url=self._base_url, api_key=self._api_key)
        return self._provider

    async def aclose(self) -> None:
        if self._provider is not None:
            await self._provider.aclose()

    def body(self, messages: list[dict], **extra) -> dict:
        """The request body: ``model``, ``messages``, the decoding parameters (and ``extra``)."""
        return {"model": self.config.model, "messages": messages, **self.config.decoding(), **extra}


async def complete_cached(client: LLMClient, template: PromptTemplate, body: dict, key: str, trace_id: str,
                          ctx: JudgeContext, vote: Vote) -> tuple[str | None, str | None] | None:
    """The reply to ``body``: from the cache, else paid within the budget (and cached at once).

    Returns ``(content, finish_reason)``, or None with ``vote.status``/``vote.reason`` saying why not
    (``failed``: the request failed for good; ``skipped``: the budget or a fatal error stopped the run).
    Tokens, cost and request counts are added to ``vote``.
    """
    hit = await ctx.durable(ctx.cache.get, key)
    if hit is not None:
        if vote.requests == 0:
            vote.from_cache = True
        vote.requests += 1
        vote.input_tokens += hit.prompt_tokens
        vote.output_tokens += hit.completion_tokens
        vote.cost_usd += hit.cost_usd
        return hit.content, hit.finish_reason
    vote.from_cache = False
    if ctx.unreachable is not None:
        vote.status, vote.reason = "skipped", "not sent: the endpoint cannot be reached"
        return None
    if ctx.stopped_by_budget or ctx.fatal is not None:
        vote.status, vote.reason = "skipped", "not sent: the run stopped (budget or fatal error)"
        return None
    bound = request_cost_bound(body["messages"], client.config.max_tokens, client.prices,
                               extra_text=json.dumps(body.get("response_format")) if "response_format" in body else "")
    if not ctx.budget.reserve(bound):
        ctx.stopped_by_budget = True
        vote.status, vote.reason = "skipped", "not sent: the budget would be exceeded"
        return None
    async with ctx.requests:
        if ctx.unreachable is not None:  # it became unreachable while this request waited its turn
            ctx.budget.release(bound)
            vote.status, vote.reason = "skipped", "not sent: the endpoint cannot be reached"
            return None
        try:
            comp = await client.provider().complete(body, on_retry=lambda _r: setattr(ctx, "retries", ctx.retries + 1))
        except RequestFailed as e:
            ctx.budget.release(bound)
            ctx.note_failure(e.reason)
            if isinstance(e, EndpointUnreachable) and ctx.unreachable is None:
                ctx.unreachable = e  # the other answers are not sent: they would fail the same way
            vote.status, vote.reason = "failed", f"request_failed: {e.reason}"
            return None
        except UserInputError as e:
            ctx.budget.release(bound)
            ctx.fatal = e
            vote.status, vote.reason = "failed", f"request_failed: {e.one_line()}"
            return None
    cost = cost_usd(comp.prompt_tokens, comp.completion_tokens, client.prices)
    ctx.budget.settle(bound, cost)
    await ctx.durable(store, ctx.cache, client.config, template, trace_id, key, comp, cost, False)
    vote.requests += 1
    vote.paid_requests += 1
    vote.input_tokens += comp.prompt_tokens
    vote.output_tokens += comp.completion_tokens
    vote.cost_usd += cost
    vote.paid_usd += cost
    return comp.content, comp.finish_reason


class LLMAnswerJudge(AnswerJudge):
    """An LLM answer judge from a ``kind = "answer"`` judge file.

    Parameters
    ----------
    config : JudgeConfig
    base_url, api_key : str, optional
        Override the judge's endpoint and key (local servers, tests).
    """

    is_llm = True

    def __init__(self, config: JudgeConfig, *, base_url: str | None = None, api_key: str | None = None) -> None:
        if config.kind != "answer":
            raise UserInputError(f"judge {config.name!r} is a step-label judge (kind = {config.kind!r}); "
                                 "answer judging needs a judge file with kind = \"answer\" (e.g. answer-gpt-4.1-mini)"
                                 " or --judge em", file=str(config.path) if config.path else None)
        self.config, self.name = config, config.name
        self.template = load_answer_template(config.prompt_path, version=config.prompt_version)
        fp = config.false_premise_prompt_path
        self.fp_template = (load_answer_template(fp, version=config.false_premise_prompt_version
                                                 or f"{config.prompt_version}_false_premise") if fp else None)
        self.client = LLMClient(config, base_url=base_url, api_key=api_key)

    async def aclose(self) -> None:
        await self.client.aclose()

    def template_for(self, item: AnswerItem) -> PromptTemplate:
        """The false-premise prompt for flagged questions (when the judge has one), else the main prompt."""
        return self.fp_template if item.false_premise and self.fp_template is not None else self.template

    async def vote(self, item: AnswerItem, ctx: JudgeContext) -> Vote:
        cfg = self.config
        template = self.template_for(item)
        base = Vote(self.name, None, "unscored", model=cfg.model, prompt_version=template.version,
                    prompt_sha256=template.sha256)
        if not item.candidate:
            base.reason = "no answer to judge"
            return base
        messages, base.truncated = render_answer_prompt(item, template, context_tokens=cfg.context_tokens,
                                                        max_tokens=cfg.max_tokens)
        verdict: Verdict | None = None
        for attempt in range(cfg.max_repairs + 1):
            body = self.client.body(messages)  # plain text out (a verdict word): no response format
            key = cache_key(cfg, template, body)
            base.cache_key = key
            got = await complete_cached(self.client, template, body, key, item.trace_id, ctx, base)
            if got is None:
                return base
            content, finish = got
            verdict = (Verdict(None, "the reply was cut off at the token limit") if finish == "length"
                       else parse_verdict(content))
            base.raw = content
            await ctx.durable(ctx.cache.set_parsed, key, valid=verdict.scored,
                              labels=None if not verdict.scored else {"correct": verdict.value}, error=verdict.reason)
            if verdict.scored or attempt == cfg.max_repairs:
                break
            base.repairs += 1
            note = neutralise(verdict.reason or "")[:200]
            messages = [dict(m) for m in messages]
            messages[-1] = {**messages[-1], "content": messages[-1]["content"] + (
                f"\n\nREPAIR {base.repairs} of {cfg.max_repairs}: your earlier reply could not be read as a verdict "
                f"({note}). Reply with exactly one word: Yes or No.")}
        base.value = verdict.value
        base.status = "scored" if verdict.scored else "unscored"
        base.reason = None if verdict.scored else f"invalid_verdict: {verdict.reason} (after {base.repairs} repairs)"
        return base


def load_answer_judge(judge: str | Path | JudgeConfig | AnswerJudge, *, base_url: str | None = None,
                      api_key: str | None = None) -> AnswerJudge:
    """``"em"`` -> :class:`ExactMatchJudge`; a judge name, file or config of kind ``answer`` -> :class:`LLMAnswerJudge`.

    >>> load_answer_judge("em").name
    'em'
    """
    if isinstance(judge, AnswerJudge):
        return judge
    if isinstance(judge, str) and judge == EM_JUDGE:
        return ExactMatchJudge()
    cfg = judge if isinstance(judge, JudgeConfig) else load_judge_config(judge)
    if not isinstance(cfg, JudgeConfig):
        raise UserInputError(f"judge {cfg.get('name')!r} is an offline step-label judge (kind = {cfg.get('kind')!r});"
                             " answer judging needs --judge em or a judge file with kind = \"answer\"")
    return LLMAnswerJudge(cfg, base_url=base_url, api_key=api_key)
