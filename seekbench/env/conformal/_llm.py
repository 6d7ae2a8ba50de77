"""The LLM completeness estimator: a verbalised estimate c_hat from any OpenAI-compatible endpoint.

The belief (title, abstract, visible passages in document order; N and
passage ids hidden) goes into the user message as JSON between the fence
lines ``<<<BELIEF_JSON`` / ``BELIEF_JSON>>>`` of the prompt file
``judges/prompts/completeness_estimate_v1.md``. The answer must be one JSON
object ``{"completeness": number in [0, 1], "reasoning": string}`` and nothing
else; anything else (not JSON, a missing or extra field, 35 instead of 0.35,
a cut-off answer, a failed request) makes the state *unscored* with the
reason, never a default value.

The judge stack of :mod:`seekbench.annotate` is reused: the judge file
(model, endpoint, key variable, decoding, prices), its provider (retries with
backoff on the official ``openai`` client) and its SQLite cache, keyed by the
SHA-256 of model, prompt version and hash, and the request body.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..._errors import UserInputError
from ..._resources import prompt_path
from ._synthetic import BeliefView

#: The project-written prompt (repository ``judges/prompts/``).
DEFAULT_PROMPT = prompt_path("completeness_estimate_v1")
DEFAULT_PROMPT_VERSION = "completeness_estimate_v1"
SYSTEM_MARKER, USER_MARKER = "=== SYSTEM ===", "=== USER ==="
PLACEHOLDERS = ("{{STATE_ID}}", "{{BELIEF_BLOCK}}")
BELIEF_BEGIN, BELIEF_END = "<<<BELIEF_JSON", "BELIEF_JSON>>>"
OUTPUT_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["completeness", "reasoning"],
                 "properties": {"completeness": {"type": "number", "minimum": 0, "maximum": 1},
                                "reasoning": {"type": "string"}}}
_FENCE_LOOKALIKE = re.compile(r"(?i)(<{3,}|>{3,}|belief_json)")
_CODE_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)


@dataclass(frozen=True)
class EstimatePrompt:
    """The estimator prompt file: system and user parts, version, SHA-256 of its bytes."""

    system: str
    user: str
    version: str
    sha256: str

    @classmethod
    def load(cls, path: str | Path = DEFAULT_PROMPT, *, version: str = DEFAULT_PROMPT_VERSION) -> EstimatePrompt:
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise UserInputError(f"cannot read the estimator prompt: {e.strerror}", file=str(path)) from e
        text = data.decode("utf-8").replace("\r\n", "\n")
        parts = re.split(rf"(?m)^({re.escape(SYSTEM_MARKER)}|{re.escape(USER_MARKER)})[ \t]*$", text)
        if parts[1::2] != [SYSTEM_MARKER, USER_MARKER]:
            raise UserInputError(f"the prompt needs one {SYSTEM_MARKER!r} line, then one {USER_MARKER!r} line",
                                 file=str(path))
        user = parts[4].strip("\n")
        for ph in PLACEHOLDERS:
            if user.count(ph) != 1:
                raise UserInputError(f"the user part must contain {ph} exactly once", file=str(path))
        return cls(parts[2].strip("\n"), user, version, hashlib.sha256(data).hexdigest())


def _neutralise(text: str) -> str:
    """Defuse fence look-alikes in document text: ``<<<`` -> ``< < <``, ``BELIEF_JSON`` -> ``BELIEF-JSON``."""
    return _FENCE_LOOKALIKE.sub(lambda m: " ".join(m.group(0)) if m.group(0)[0] in "<>" else "BELIEF-JSON", text)


def render_messages(view: BeliefView, prompt: EstimatePrompt) -> list[dict]:
    """The chat messages for one belief state."""
    data = view.to_prompt_data()
    data = {"title": _neutralise(data["title"]), "abstract": _neutralise(data["abstract"]),
            "retrieved_passages": [{**p, "section": _neutralise(p["section"]), "text": _neutralise(p["text"])}
                                   for p in data["retrieved_passages"]]}
    block = f"{BELIEF_BEGIN}\n{json.dumps(data, ensure_ascii=False, indent=1)}\n{BELIEF_END}"
    user = prompt.user.replace("{{STATE_ID}}", _neutralise(view.state_id)).replace("{{BELIEF_BLOCK}}", block)
    return [{"role": "system", "content": prompt.system}, {"role": "user", "content": user}]


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
    text = content.strip()
    fenced = _CODE_FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except ValueError as e:
        return ParsedEstimate(False, error=f"not JSON: {str(e)[:120]}")
    if not isinstance(obj, dict):
        return ParsedEstimate(False, error=f"expected a JSON object, got {type(obj).__name__}")
    extra = sorted(set(obj) - {"completeness", "reasoning"})
    if extra:
        return ParsedEstimate(False, error=f"unexpected field(s) {', '.join(map(repr, extra))}")
    value = obj.get("completeness")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value <= 1:
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
        :class:`seekbench.annotate.JudgeConfig`; only ``kind = "openai"``.
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

    def __init__(self, judge, *, prompt: str | Path = DEFAULT_PROMPT, prompt_version: str = DEFAULT_PROMPT_VERSION,
                 base_url: str | None = None, api_key: str | None = None, cache=None, concurrency: int = 8) -> None:
        from ...annotate import JudgeConfig, load_judge_config

        config = judge if isinstance(judge, JudgeConfig) else load_judge_config(judge)
        if not isinstance(config, JudgeConfig):
            raise UserInputError(f"judge {config.get('name')!r} is offline ({config.get('kind')}); the LLM "
                                 "estimator needs an openai judge (see `seekbench judge list`)")
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
        self._unreachable: str | None = None

    def request_body(self, messages: list[dict]) -> dict:
        """What is sent (and hashed): model, messages, the judge's decoding, the response format."""
        if self.config.response_format == "json_schema":
            fmt = {"type": "json_schema",
                   "json_schema": {"name": "seekbench_completeness", "strict": True, "schema": OUTPUT_SCHEMA}}
        else:
            fmt = {"type": "json_object"}
        return {"model": self.config.model, "messages": messages, **self.config.decoding(), "response_format": fmt}

    def cache_key(self, body: dict) -> str:
        """SHA-256 of model, prompt version and hash, and the request body; nothing else."""
        payload = {"model": self.config.model, "prompt_version": self.prompt.version,
                   "prompt_sha256": self.prompt.sha256, "body": body}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False,
                                         separators=(",", ":")).encode("utf-8")).hexdigest()

    def estimate(self, views: Sequence[BeliefView]) -> list[LLMEstimate]:
        """Estimate every view (cached answers are reused); order follows ``views``.

        Raises
        ------
        UserInputError
            The endpoint refused the key or does not serve the model.
        """
        self.failed, self.first_error, self._unreachable = 0, None, None
        return asyncio.run(self._estimate_all(list(views)))

    async def _estimate_all(self, views: list[BeliefView]) -> list[LLMEstimate]:
        from ...annotate import JudgeCache
        from ...annotate._provider import OpenAIProvider

        cache = None if self.cache is False else JudgeCache(self.cache)
        provider = None
        try:
            provider = OpenAIProvider(self.config, api_key=self.api_key, role="estimator")
            sem = asyncio.Semaphore(self.concurrency)

            async def one(view: BeliefView) -> LLMEstimate:
                async with sem:
                    return await self._estimate_one(view, provider, cache)

            return list(await asyncio.gather(*(one(v) for v in views)))
        finally:
            if provider is not None:
                await provider.aclose()
            if cache is not None:
                cache.close()

    async def _estimate_one(self, view: BeliefView, provider, cache) -> LLMEstimate:
        from ...annotate import CachedCompletion, Prices, cost_usd
        from ...annotate._provider import EndpointUnreachable, RequestFailed, utc_now

        body = self.request_body(render_messages(view, self.prompt))
        key = self.cache_key(body)
        hit = cache.get(key) if cache is not None else None
        if hit is not None:
            content, finish, usage, cost = hit.content, hit.finish_reason, (hit.prompt_tokens,
                                                                            hit.completion_tokens), hit.cost_usd
        elif self._unreachable is not None:  # every request would fail the same way: none is sent
            self.failed += 1
            return LLMEstimate(view.state_id, None, None, f"request not sent: {self._unreachable}", None, False)
        else:
            try:
                comp = await provider.complete(body)
            except RequestFailed as e:
                reason = provider.scrub(e.reason)
                self.failed += 1
                self.first_error = self.first_error or reason
                if isinstance(e, EndpointUnreachable):
                    self._unreachable = reason
                return LLMEstimate(view.state_id, None, None, f"request failed: {reason}", None, False)
            content, finish, usage = comp.content, comp.finish_reason, (comp.prompt_tokens, comp.completion_tokens)
            cost = cost_usd(*usage, Prices.of(self.config))
            if cache is not None:
                cache.put(CachedCompletion(
                    key=key, judge=self.config.name, model=self.config.model, prompt_version=self.prompt.version,
                    trace_id=view.state_id, created=comp.created or utc_now(), via_batch=False, raw=comp.raw,
                    content=content, finish_reason=finish, prompt_tokens=usage[0], completion_tokens=usage[1],
                    cost_usd=cost, latency_s=comp.latency_s))
        parsed = parse_completeness_answer(content, finish)
        if cache is not None:
            cache.set_parsed(key, valid=parsed.ok, error=parsed.error,
                             labels=None if not parsed.ok else {"completeness": parsed.completeness})
        return LLMEstimate(view.state_id, parsed.completeness, parsed.reasoning, parsed.error, content,
                           hit is not None, usage[0], usage[1], 0.0 if hit is not None else cost)
