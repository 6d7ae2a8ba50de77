"""An LLM seeking agent on any OpenAI-compatible endpoint, through the judges' provider, retries and cache.

The request is rendered from ``judges/prompts/seeker_agent_v1.md`` (a
``=== SYSTEM ===`` part and a ``=== USER ===`` part with the placeholders
``{{STEP}}``, ``{{MAX_STEPS}}``, ``{{QUERIES_PER_STEP}}``, ``{{BELIEF_KIND}}``
and ``{{BELIEF_BLOCK}}``). The belief is untrusted document text: it is sent
as one JSON string between ``<<<BELIEF_JSON`` / ``BELIEF_JSON>>>`` fences,
with fence look-alikes neutralised. The answer must be one JSON object
``{"reasoning": str, "queries": [str, ...], "self_estimate": number in [0, 1]}``;
an answer that is not is re-asked at most ``max_repairs`` times with the
reason, then the step is recorded without queries and with the reason.

Requests go through the client layer :mod:`seekbench.llm` (the official
``openai`` client, exponential backoff with jitter, ``Retry-After``) and
completions are kept in the judges' SQLite cache
(:class:`seekbench.llm.JudgeCache`) under a key over the model, the prompt
version and hash, and the request body, so a rerun with the same seed
replays the same episode without a request.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Literal

import numpy as np

from .._errors import UserInputError
from .._resources import prompt_path
from ..llm import (
    Budget,
    CallContext,
    CallTally,
    JudgeCache,
    JudgeConfig,
    LLMClient,
    Parsed,
    PromptTemplate,
    ask,
    fenced,
    neutralise,
    strip_code_fence,
)
from ._agents import Action, EpisodeStep
from ._beliefs import Belief

PROMPT_VERSION = "seeker_agent_v1"
BELIEF_BEGIN, BELIEF_END = "<<<BELIEF_JSON", "BELIEF_JSON>>>"
PLACEHOLDERS = ("{{STEP}}", "{{MAX_STEPS}}", "{{QUERIES_PER_STEP}}", "{{BELIEF_KIND}}", "{{BELIEF_BLOCK}}")
OUTPUT_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["reasoning", "queries", "self_estimate"],
    "properties": {
        "reasoning": {"type": "string"},
        "queries": {"type": "array", "items": {"type": "string"}},
        "self_estimate": {"type": "number"},
    },
}


def default_prompt_path() -> Path:
    """The shipped ``judges/prompts/seeker_agent_v1.md`` (package data)."""
    return prompt_path(PROMPT_VERSION)


def load_seeker_prompt(path: str | os.PathLike | None = None, *, version: str = PROMPT_VERSION) -> PromptTemplate:
    """Read and check the agent prompt (both markers, each placeholder exactly once in the user part).

    Returns
    -------
    seekbench.llm.PromptTemplate
        With the SHA-256 of the file's bytes (hashed into the cache key).
    """
    path = Path(path) if path is not None else default_prompt_path()
    return PromptTemplate.load(path, version=version, placeholders=PLACEHOLDERS, what="the agent prompt")


def render_messages(
    template: PromptTemplate, belief: Belief, *, step: int, max_steps: int, queries_per_step: int
) -> list[dict]:
    """The system and user messages of one agent request."""
    text = neutralise(belief.text, fences=("BELIEF_JSON",))
    return template.messages(
        {
            "{{STEP}}": str(step),
            "{{MAX_STEPS}}": str(max_steps),
            "{{QUERIES_PER_STEP}}": str(queries_per_step),
            "{{BELIEF_KIND}}": belief.kind,
            "{{BELIEF_BLOCK}}": fenced(BELIEF_BEGIN, BELIEF_END, text),
        }
    )


def parse_agent_output(content: str | None, *, queries_per_step: int) -> tuple[Action | None, str | None]:
    """Parse one answer; return ``(Action, None)`` or ``(None, reason)``.

    Queries beyond ``queries_per_step`` are dropped (the first ones are kept);
    blank and repeated queries are removed.

    >>> a, err = parse_agent_output('{"reasoning": "r", "queries": ["a", "b", "a"], "self_estimate": 0.5}',
    ...                             queries_per_step=3)
    >>> a.queries, a.self_estimate, err
    (['a', 'b'], 0.5, None)
    >>> parse_agent_output('{"queries": [], "self_estimate": 2}', queries_per_step=2)[1]
    'self_estimate must be a number between 0 and 1, got 2'
    """
    if not content or not content.strip():
        return None, "empty answer"
    try:
        obj = json.loads(strip_code_fence(content.strip(), lenient=True))
    except json.JSONDecodeError as e:
        return None, f"not valid JSON ({e.msg} at column {e.colno})"
    if not isinstance(obj, dict):
        return None, f"expected a JSON object, got {type(obj).__name__}"
    est = obj.get("self_estimate")
    if isinstance(est, bool) or not isinstance(est, (int, float)) or not 0 <= est <= 1:
        return None, f"self_estimate must be a number between 0 and 1, got {json.dumps(est)}"
    queries = obj.get("queries")
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        return None, "queries must be a list of strings"
    queries = list(dict.fromkeys(q.strip() for q in queries if q.strip()))
    if not queries:
        return None, "queries is empty; send at least one query"
    reasoning = obj.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, str):
        return None, "reasoning must be a string"
    return Action(queries[:queries_per_step], (reasoning or "").strip() or None, float(est)), None


class LLMAgent:
    """A seeking agent backed by a chat model on an OpenAI-compatible endpoint.

    Parameters
    ----------
    model : str, default "gpt-4.1-mini"
    base_url : str, optional
        Default ``$OPENAI_BASE_URL``, else OpenAI.
    api_key_env : str, default "OPENAI_API_KEY"
        Variable holding the key (a loopback endpoint needs none).
    prompt : path, optional
        Default ``judges/prompts/seeker_agent_v1.md``.
    temperature : float or None, default 0.0
        None: not sent (some reasoning models refuse it).
    seed : int or None
        Sent as the decoding ``seed``; None: drawn from the episode's generator.
    max_tokens : int, default 2048
    max_tokens_param : {"max_completion_tokens", "max_tokens"}
    response_format : {"json_object", "json_schema"}, default "json_object"
    max_repairs : int, default 2
    max_attempts, timeout_s
        Retry budget and per-request timeout of the provider.
    cache : JudgeCache, path, or None
        The completion cache (default: the judges' default cache file); ``False`` disables it.
    name : str, optional
        The trace's ``agent`` (default ``llm:<model>``).
    """

    def __init__(
        self,
        model: str = "gpt-4.1-mini",
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        prompt: str | os.PathLike | None = None,
        temperature: float | None = 0.0,
        seed: int | None = None,
        max_tokens: int = 2048,
        max_tokens_param: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens",
        response_format: Literal["json_object", "json_schema"] = "json_object",
        max_repairs: int = 2,
        max_attempts: int = 6,
        timeout_s: float = 120.0,
        cache=None,
        name: str | None = None,
    ) -> None:
        if response_format not in ("json_object", "json_schema"):
            raise UserInputError(f"unknown response format {response_format!r}; use json_object or json_schema")
        self.template = load_seeker_prompt(prompt)
        self.name = name or f"llm:{model}"
        assert self.template.path is not None  # PromptTemplate.load records the file it read
        self.config = JudgeConfig(
            name=self.name,
            model=model,
            prompt_path=self.template.path,
            prompt_version=PROMPT_VERSION,
            price_input_per_mtok=0.0,
            price_output_per_mtok=0.0,
            base_url=base_url,
            api_key_env=api_key_env,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            max_tokens_param=max_tokens_param,
            response_format=response_format,
            max_repairs=max_repairs,
            max_attempts=max_attempts,
            timeout_s=timeout_s,
        )
        self._own_cache = cache is None or isinstance(cache, (str, os.PathLike))
        self.cache = None if cache is False else (JudgeCache(cache) if self._own_cache else cache)
        self._client = LLMClient(self.config, role="agent")
        self._ctx: CallContext | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.stats = {"requests": 0, "cache_hits": 0, "rejected": 0, "prompt_tokens": 0, "completion_tokens": 0}
        #: episode id -> the first request failure in it (such an episode ran without its model)
        self.failed_episodes: dict[str, str] = {}
        self.unreachable: str | None = None

    def __repr__(self) -> str:
        return f"LLMAgent(model={self.config.model!r}, base_url={self.config.resolved_base_url()!r})"

    def _body(self, messages: list[dict], rng: np.random.Generator) -> dict:
        decoding = self.config.decoding()
        if self.config.seed is None:
            decoding["seed"] = int(rng.integers(0, 2**31 - 1))
        fmt = (
            {"type": "json_object"}
            if self.config.response_format == "json_object"
            else {
                "type": "json_schema",
                "json_schema": {"name": "seeker_action", "strict": True, "schema": OUTPUT_SCHEMA},
            }
        )
        return {"model": self.config.model, "messages": messages, **decoding, "response_format": fmt}

    def act(self, belief: Belief, *, step: EpisodeStep) -> Action:
        """One request (plus repairs): the step's queries, reasoning and self-estimate."""
        queries_per_step, rng, episode_id = step.queries_per_step, step.rng, step.episode_id
        if self.unreachable is not None:  # every request would fail the same way: none is sent
            self.failed_episodes.setdefault(episode_id, self.unreachable)
            return Action([], error=f"request not sent: {self.unreachable}")
        messages = render_messages(
            self.template, belief, step=step.number, max_steps=step.max_steps, queries_per_step=queries_per_step
        )
        usage: dict = {}

        def parse(reply) -> Parsed[Action | None]:
            action, reason = parse_agent_output(reply.content, queries_per_step=queries_per_step)
            self.stats["rejected"] += action is None
            return Parsed(action is not None, action, reason)

        def on_reply(reply) -> None:
            usage.clear()
            if reply.cached:
                self.stats["cache_hits"] += 1
                usage["cache_hit"] = True
                return
            comp = reply.completion
            self.stats["requests"] += 1
            self.stats["prompt_tokens"] += comp.prompt_tokens
            self.stats["completion_tokens"] += comp.completion_tokens
            usage.update(prompt_tokens=comp.prompt_tokens, completion_tokens=comp.completion_tokens)

        def repair_note(n: int, reason: str) -> str:
            note = neutralise(reason.replace("\n", " "))[:400]
            return (
                f"\n\nREPAIR {n} of {self.config.max_repairs}: your earlier answer was rejected: {note}\n"
                "Answer again with one JSON object that follows the format exactly."
            )

        if self._ctx is None or self._loop is None:  # both made on the first request, both cleared by close
            self._loop = asyncio.new_event_loop()
            self._ctx = CallContext(self.cache, Budget(None), 1, thread_name="seekbench-agent-io")
        got = self._loop.run_until_complete(
            ask(
                self._client,
                self.template,
                messages,
                self._ctx,
                trace_id=episode_id,
                parse=parse,
                repair_note=repair_note,
                max_repairs=self.config.max_repairs,
                tally=CallTally(),
                record_parsed=False,
                on_reply=on_reply,
                body=lambda m: self._body(m, rng),
            )
        )
        if got.no_reply is not None:
            if self._ctx.fatal is not None:  # a bad key or an unknown model: the run cannot go on
                raise self._ctx.fatal
            reason = got.no_reply.reason
            self.failed_episodes.setdefault(episode_id, reason)
            if self._ctx.unreachable is not None:
                self.unreachable = self._ctx.unreachable.reason
            return Action([], error=f"request failed: {reason}")
        action = got.checked.value
        if action is not None:
            action.usage = dict(usage)
            return action
        return Action([], error=f"answer rejected after {self.config.max_repairs} repairs: {got.checked.error}")

    @property
    def first_error(self) -> str | None:
        """The first request failure of this agent's run, uncut (status, message, endpoint)."""
        return next(iter(self.failed_episodes.values()), None)

    def close(self) -> None:
        """Close the HTTP client, the event loop and a cache this agent opened."""
        if self._loop is not None:
            self._loop.run_until_complete(self._client.aclose())
            self._loop.close()
            self._loop = None
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None
        if self.cache is not None and self._own_cache:
            self.cache.close()
            self.cache = None
