"""The LLM completeness estimator: a verbalised estimate c_hat from any OpenAI-compatible endpoint.

The belief (title, abstract, visible passages in document order; N and
passage ids hidden) goes into the user message as JSON between the fence
lines ``<<<BELIEF_JSON`` / ``BELIEF_JSON>>>`` of the prompt file
``judges/prompts/completeness_estimate_v1.md``. The answer must be one JSON
object ``{"completeness": number in [0, 1], "reasoning": string}`` and nothing
else; anything else (not JSON, a missing or extra field, 35 instead of 0.35,
a cut-off answer, a failed request) makes the state *unscored* with the
reason, never a default value.

The client layer :mod:`seekbench.llm` does the rest: the judge file (model,
endpoint, key variable, decoding, prices), the provider (retries with backoff
on the official ``openai`` client), the fencing of the untrusted belief text
(the judges' :func:`~seekbench.llm.neutralise`) and the SQLite cache, keyed by
the SHA-256 of model, prompt version and hash, and the request body.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from ..._errors import UserInputError
from ..._resources import prompt_path
from ...llm import (
    CallContext,
    CallTally,
    JudgeConfig,
    LLMClient,
    Parsed,
    PromptTemplate,
    ask,
    cache_key,
    call_context,
    json_data,
    load_judge_config,
    neutralise,
    strip_code_fence,
)
from ._synthetic import BeliefView

#: The project-written prompt (repository ``judges/prompts/``).
DEFAULT_PROMPT = prompt_path("completeness_estimate_v1")
DEFAULT_PROMPT_VERSION = "completeness_estimate_v1"
PLACEHOLDERS = ("{{STATE_ID}}", "{{BELIEF_BLOCK}}")
BELIEF_BEGIN, BELIEF_END = "<<<BELIEF_JSON", "BELIEF_JSON>>>"
OUTPUT_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["completeness", "reasoning"],
    "properties": {"completeness": {"type": "number", "minimum": 0, "maximum": 1}, "reasoning": {"type": "string"}},
}


class EstimatePrompt(PromptTemplate):
    """The estimator prompt file: system and user parts, version, SHA-256 of its bytes."""

    @classmethod
    def load(
        cls,
        path: str | Path = DEFAULT_PROMPT,
        *,
        version: str = DEFAULT_PROMPT_VERSION,
        placeholders: Sequence[str] | None = PLACEHOLDERS,
        what: str = "the estimator prompt",
    ) -> Self:
        return super().load(path, version=version, placeholders=placeholders, what=what)


def _neutralise(text: str) -> str:
    return neutralise(text, fences=("BELIEF_JSON",))


def render_messages(view: BeliefView, prompt: PromptTemplate) -> list[dict]:
    """The chat messages for one belief state (the belief between the ``BELIEF_JSON`` fence lines)."""
    data = view.to_prompt_data()
    data = {
        "title": _neutralise(data["title"]),
        "abstract": _neutralise(data["abstract"]),
        "retrieved_passages": [
            {**p, "section": _neutralise(p["section"]), "text": _neutralise(p["text"])}
            for p in data["retrieved_passages"]
        ],
    }
    block = f"{BELIEF_BEGIN}\n{json_data(data, indent=1)}\n{BELIEF_END}"
    return prompt.messages({"{{STATE_ID}}": _neutralise(view.state_id), "{{BELIEF_BLOCK}}": block})


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


@dataclass(frozen=True)
class ParsedEstimate:
    """A checked answer: ``completeness`` and ``reasoning`` when ``ok``, else the ``error``."""

    ok: bool
    completeness: float | None = None
    reasoning: str | None = None
    error: str | None = None


def parse_completeness_answer(content: str | None, finish_reason: str | None = "stop") -> ParsedEstimate:
    """Check an answer against ``{"completeness": number in [0, 1], "reasoning": string}``.

    A Markdown code fence around the object is tolerated; nothing else is.

    >>> parse_completeness_answer('{"completeness": 0.4, "reasoning": "two gaps"}').completeness
    0.4
    >>> parse_completeness_answer('{"completeness": 40, "reasoning": "x"}').error
    'completeness must be a number in [0, 1], got 40'
    """
    if finish_reason == "length":
        return ParsedEstimate(False, error="the answer was cut off (finish_reason=length)")
    if content is None or not content.strip():
        return ParsedEstimate(False, error="empty answer")
    try:
        obj = json.loads(strip_code_fence(content.strip()), parse_constant=_reject_constant)
    except ValueError as e:
        return ParsedEstimate(False, error=f"not JSON: {str(e)[:120]}")
    if not isinstance(obj, dict):
        return ParsedEstimate(False, error=f"expected a JSON object, got {type(obj).__name__}")
    extra = sorted(set(obj) - {"completeness", "reasoning"})
    if extra:
        return ParsedEstimate(False, error=f"unexpected field(s) {', '.join(map(repr, extra))}")
    value = obj.get("completeness")
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        return ParsedEstimate(False, error=f"completeness must be a number in [0, 1], got {value!r}"[:160])
    reasoning = obj.get("reasoning")
    if not isinstance(reasoning, str):
        return ParsedEstimate(False, error="reasoning must be a string")
    return ParsedEstimate(True, float(value), reasoning)


@dataclass(frozen=True)
class LLMEstimate:
    """One state's estimate: ``c_hat`` (None = unscored, with ``error``), the raw answer and the usage."""

    state_id: str
    c_hat: float | None
    reasoning: str | None
    error: str | None
    content: str | None
    cached: bool
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class LLMCompletenessEstimator:
    """Verbalised completeness estimates from an LLM judge endpoint.

    Parameters
    ----------
    judge : str, path or JudgeConfig
        A judge name (``seekbench judge list``), a judge ``.toml`` file, or a
        :class:`seekbench.llm.JudgeConfig`; only ``kind = "openai"``.
        Its model, endpoint, key variable, decoding and prices are used; its
        step-label prompt is not.
    prompt : path, default ``judges/prompts/completeness_estimate_v1.md``
    prompt_version : str, default ``"completeness_estimate_v1"``
    base_url : str, optional
        Overrides the judge's endpoint (tests: a local server).
    cache : path, False or None
        SQLite judge cache; None = the default path, False = no cache.
    concurrency : int, default 8
        Requests in flight at once.

    Examples
    --------
    >>> est = LLMCompletenessEstimator("local")          # doctest: +SKIP
    >>> [e.c_hat for e in est.estimate(views)]            # doctest: +SKIP
    [0.4, None, 0.9]
    """

    def __init__(
        self,
        judge,
        *,
        prompt: str | Path = DEFAULT_PROMPT,
        prompt_version: str = DEFAULT_PROMPT_VERSION,
        base_url: str | None = None,
        api_key: str | None = None,
        cache=None,
        concurrency: int = 8,
    ) -> None:
        config = judge if isinstance(judge, JudgeConfig) else load_judge_config(judge)
        if not isinstance(config, JudgeConfig):
            raise UserInputError(
                f"judge {config.get('name')!r} is offline ({config.get('kind')}); the LLM "
                "estimator needs an openai judge (see `seekbench judge list`)"
            )
        if base_url is not None:
            config = config.with_overrides(base_url=base_url)
        if concurrency < 1:
            raise UserInputError("concurrency must be >= 1")
        self.config = config
        self.prompt = EstimatePrompt.load(prompt, version=prompt_version)
        self.api_key = api_key
        self.cache = cache
        self.concurrency = concurrency
        self.name = f"llm:{config.name}"
        #: Of the last :meth:`estimate`: states whose request failed, and the first failure, uncut.
        self.failed = 0
        self.first_error: str | None = None

    def request_body(self, messages: list[dict]) -> dict:
        """What is sent (and hashed): model, messages, the judge's decoding, the response format."""
        if self.config.response_format == "json_schema":
            fmt = {
                "type": "json_schema",
                "json_schema": {"name": "seekbench_completeness", "strict": True, "schema": OUTPUT_SCHEMA},
            }
        else:
            fmt = {"type": "json_object"}
        return {"model": self.config.model, "messages": messages, **self.config.decoding(), "response_format": fmt}

    def cache_key(self, body: dict) -> str:
        """SHA-256 of model, prompt version and hash, and the request body; nothing else."""
        return cache_key(self.config, self.prompt, body)

    def estimate(self, views: Sequence[BeliefView]) -> list[LLMEstimate]:
        """Estimate every view (cached answers are reused); order follows ``views``.

        Raises
        ------
        UserInputError
            The endpoint refused the key or does not serve the model.
        """
        self.failed, self.first_error = 0, None
        client = LLMClient(self.config, api_key=self.api_key, role="estimator")

        async def main(ctx: CallContext) -> list[LLMEstimate]:
            try:
                return list(await asyncio.gather(*(self._estimate_one(v, client, ctx) for v in views)))
            finally:
                await client.aclose()

        with call_context(
            None if self.cache is False else self.cache,
            concurrency=self.concurrency,
            needs_cache=self.cache is not False,
            thread_name="seekbench-estimator-io",
        ) as ctx:
            out = asyncio.run(main(ctx))
        if ctx.fatal is not None:  # the endpoint refused the key or does not serve the model
            raise ctx.fatal
        self.first_error = ctx.first_error
        return out

    async def _estimate_one(self, view: BeliefView, client: LLMClient, ctx: CallContext) -> LLMEstimate:
        tally = CallTally()

        def parse(reply) -> Parsed[ParsedEstimate]:
            p = parse_completeness_answer(reply.content, reply.finish_reason)
            return Parsed(p.ok, p, p.error, None if not p.ok else {"completeness": p.completeness})

        got = await ask(
            client,
            self.prompt,
            render_messages(view, self.prompt),
            ctx,
            trace_id=view.state_id,
            parse=parse,
            repair_note=lambda n, reason: "",
            max_repairs=0,
            tally=tally,
            body=self.request_body,
        )
        if got.no_reply is not None:
            self.failed += 1
            verb = "not sent" if got.no_reply.kind == "unreachable" else "failed"
            return LLMEstimate(view.state_id, None, None, f"request {verb}: {got.no_reply.reason}", None, False)
        parsed = got.checked.value
        return LLMEstimate(
            view.state_id,
            parsed.completeness,
            parsed.reasoning,
            parsed.error,
            tally.raw,
            tally.from_cache,
            tally.input_tokens,
            tally.output_tokens,
            tally.paid_usd,
        )
