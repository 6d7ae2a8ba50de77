"""An LLM coverage judge: which reference statements a trajectory's public history establishes.

On the answer judges' stack (:mod:`seekbench.answers._answer_judge`): the
official ``openai`` client with retries, the SQLite cache, the budget and cost
accounting. One request per trajectory; the prompt is
``judges/prompts/coverage_v1.md``; the reply must be JSON
``{"covered": {"<id>": true|false, ...}}``. A statement the judge leaves out or
answers with something other than a boolean is unscored (None); an unreadable
reply is re-asked ``max_repairs`` times, then all the trajectory's statements
are unscored. Any LLM judge file (``kind = "answer"`` or ``"openai"``) supplies
model, endpoint, key variable, prices and decoding; its own prompt is not used.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from .._errors import UserInputError
from .._resources import prompt_path
from ..annotate._annotator import Budget
from ..annotate._cache import JudgeCache
from ..annotate._config import JudgeConfig, load_judge_config
from ..annotate._prompt import (
    SYSTEM_MARKER,
    USER_MARKER,
    PromptTemplate,
    cache_key,
    neutralise,
)
from ..answers._answer_judge import (
    JudgeContext,
    LLMClient,
    Vote,
    complete_cached,
    fence_json,
)
from ._coverage import SkeletonStep, public_history

DEFAULT_COVERAGE_PROMPT = prompt_path("coverage_v1")
_PLACEHOLDERS = ("{{QUESTION_BLOCK}}", "{{STATEMENTS_BLOCK}}", "{{HISTORY_BLOCK}}")
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)


def load_coverage_template(path: str | Path = DEFAULT_COVERAGE_PROMPT, *, version: str = "coverage_v1") -> PromptTemplate:
    """Read a coverage prompt (system and user parts; the three placeholders once each)."""
    import hashlib

    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise UserInputError(f"cannot read prompt template: {e.strerror}", file=str(path)) from e
    parts = re.split(rf"(?m)^({re.escape(SYSTEM_MARKER)}|{re.escape(USER_MARKER)})[ \t]*$",
                     data.decode("utf-8").replace("\r\n", "\n"))
    if parts[1::2] != [SYSTEM_MARKER, USER_MARKER]:
        raise UserInputError("a prompt template needs one system and one user marker line", file=str(path))
    user = parts[4].strip("\n")
    for ph in _PLACEHOLDERS:
        if user.count(ph) != 1:
            raise UserInputError(f"the user part of a coverage prompt must contain {ph} exactly once", file=str(path))
    return PromptTemplate(parts[2].strip("\n"), user, version, hashlib.sha256(data).hexdigest(), path)


def parse_coverage_reply(content: str | None, ids: Sequence[str]) -> tuple[dict[str, bool | None] | None, str | None]:
    """``({id: True/False/None}, None)`` for a readable reply, else ``(None, reason)``.

    >>> parse_coverage_reply('{"covered": {"s1": true, "s2": "maybe"}}', ["s1", "s2", "s3"])
    ({'s1': True, 's2': None, 's3': None}, None)
    """
    if content is None or not content.strip():
        return None, "empty reply"
    text = content.strip()
    m = _FENCE.match(text)
    try:
        obj = json.loads(m.group(1) if m else text)
    except json.JSONDecodeError as e:
        return None, f"not JSON ({e.msg})"
    covered = obj.get("covered") if isinstance(obj, dict) else None
    if not isinstance(covered, dict):
        return None, 'expected {"covered": {"<id>": true|false, ...}}'
    return {i: covered[i] if isinstance(covered.get(i), bool) else None for i in ids}, None


class LLMCoverageMatcher:
    """Decide coverage with an LLM judge.

    Parameters
    ----------
    judge : str, path or JudgeConfig
        An LLM judge file (its model, endpoint, prices; not its prompt).
    prompt, prompt_version :
        The coverage prompt (default ``judges/prompts/coverage_v1.md``, ``coverage_v1``).
    cache, concurrency, budget_usd, base_url, api_key :
        As for :func:`~seekbench.answers.judge_answers`.
    """

    name = "llm"
    history = "queries_and_observations"

    def __init__(self, judge: str | os.PathLike | JudgeConfig, *, prompt: str | Path = DEFAULT_COVERAGE_PROMPT,
                 prompt_version: str = "coverage_v1", cache: str | os.PathLike | JudgeCache | None = None,
                 concurrency: int = 8, budget_usd: float | None = None, base_url: str | None = None,
                 api_key: str | None = None) -> None:
        cfg = judge if isinstance(judge, JudgeConfig) else load_judge_config(judge)
        if not isinstance(cfg, JudgeConfig):
            raise UserInputError(f"judge {cfg.get('name')!r} is offline; the coverage judge needs an LLM judge file")
        if concurrency < 1:
            raise UserInputError(f"--concurrency must be >= 1, got {concurrency}")
        self.config, self.name = cfg, f"llm:{cfg.name}"
        self.template = load_coverage_template(prompt, version=prompt_version)
        self.cache, self.concurrency, self.budget_usd = cache, concurrency, budget_usd
        self._base_url, self._api_key = base_url, api_key
        self.votes: dict[str, Vote] = {}
        #: Of the last :meth:`match`: trajectories whose request failed or was not sent, and the first failure.
        self.failed = 0
        self.first_error: str | None = None

    def messages(self, trace: Mapping, steps: Sequence[SkeletonStep]) -> list[dict]:
        seg = []
        for st in trace.get("steps") or ():
            if st.get("kind") == "search":
                seg += [{"kind": "query", "text": neutralise(x)} for x in (st.get("query"), st.get("url")) if x]
            elif st.get("kind") == "search_result":
                seg += [{"kind": "observation", "text": neutralise(x)} for x in public_history(
                    {"steps": [st]}, history="observations")]
        stmts = [{"id": neutralise(s.id), "statement": neutralise(s.statement)} for s in steps]
        q = fence_json(neutralise(trace.get("question") or ""))
        user = (self.template.user
                .replace("{{QUESTION_BLOCK}}", f"<<<QUESTION_JSON\n{q}\nQUESTION_JSON>>>")
                .replace("{{STATEMENTS_BLOCK}}",
                         f"<<<STATEMENTS_JSON\n{fence_json(stmts)}\nSTATEMENTS_JSON>>>")
                .replace("{{HISTORY_BLOCK}}", "<<<HISTORY_JSON\n[" + ",\n".join(
                    fence_json(x) for x in seg) + "]\nHISTORY_JSON>>>"))
        return [{"role": "system", "content": self.template.system}, {"role": "user", "content": user}]

    async def _one(self, client: LLMClient, trace: Mapping, steps: Sequence[SkeletonStep],
                   ctx: JudgeContext) -> dict[str, bool | None]:
        tid, ids = str(trace["trace_id"]), [s.id for s in steps]
        vote = Vote(self.name, None, "unscored", model=self.config.model, prompt_version=self.template.version,
                    prompt_sha256=self.template.sha256)
        self.votes[tid] = vote
        messages = self.messages(trace, steps)
        for attempt in range(self.config.max_repairs + 1):
            body = client.body(messages, response_format={"type": "json_object"})
            key = cache_key(self.config, self.template, body)
            vote.cache_key = key
            got = await complete_cached(client, self.template, body, key, tid, ctx, vote)
            if got is None:
                return dict.fromkeys(ids)
            parsed, reason = parse_coverage_reply(got[0], ids)
            vote.raw = got[0]
            await ctx.durable(ctx.cache.set_parsed, key, valid=parsed is not None, labels=parsed, error=reason)
            if parsed is not None:
                vote.status = "scored"
                return parsed
            vote.reason = reason
            if attempt < self.config.max_repairs:
                vote.repairs += 1
                messages = [*messages[:-1], {**messages[-1], "content": messages[-1]["content"] + (
                    f"\n\nREPAIR {vote.repairs}: the earlier reply was rejected ({neutralise(reason)[:200]}). "
                    'Reply with {"covered": {"<id>": true or false, ...}} only.')}]
        return dict.fromkeys(ids)

    def match(self, pairs: Sequence[tuple[Mapping, Sequence[SkeletonStep]]]) -> dict[str, dict[str, bool | None]]:
        """Coverage of every (trace, skeleton steps) pair; unscored statements are None."""
        if not pairs:
            return {}
        owned = not isinstance(self.cache, JudgeCache)
        jc = JudgeCache(self.cache) if owned else self.cache
        ctx = JudgeContext(jc, Budget(self.budget_usd), self.concurrency)
        client = LLMClient(self.config, base_url=self._base_url, api_key=self._api_key)

        async def main():
            try:
                return await asyncio.gather(*(self._one(client, t, s, ctx) for t, s in pairs))
            finally:
                await client.aclose()

        try:
            results = asyncio.run(main())
        finally:
            ctx.close()
            if owned:
                jc.close()
        if ctx.fatal is not None:
            raise ctx.fatal
        self.failed = sum(v.status in ("failed", "skipped") for v in self.votes.values())
        self.first_error = ctx.first_error
        return {str(t["trace_id"]): r for (t, _), r in zip(pairs, results)}
