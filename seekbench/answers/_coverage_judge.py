"""An LLM coverage judge: which reference statements a trajectory's public history establishes.

On the client layer of :mod:`seekbench.llm`, like the answer judges: the
official ``openai`` client with retries, the SQLite cache, the budget and cost
accounting. One request per trajectory; the prompt is
``judges/prompts/coverage_v1.md``; the reply must be JSON
``{"covered": {"<id>": true|false, ...}}``. A statement the judge leaves out or
answers with something other than a boolean is unscored (None); an unreadable
reply is re-asked ``max_repairs`` times, then all the trajectory's statements
are unscored. Any LLM judge file (``kind = "answer"`` or ``"openai"``) supplies
model, endpoint, key variable, prices and decoding; its own prompt is not used.
The offline matcher and the coverage metric are in :mod:`seekbench.metrics`
(``RuleMatcher``, ``reference_step_coverage``), which takes this matcher as
``matcher=``.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import UserInputError
from .._resources import prompt_path
from ..llm import (
    CallContext,
    JudgeConfig,
    LLMClient,
    Parsed,
    PromptTemplate,
    ask,
    call_context,
    fenced,
    json_data,
    load_judge_config,
    neutralise,
    strip_code_fence,
)
from ._answer_judge import Vote, no_reply_vote

if TYPE_CHECKING:
    from ..llm import JudgeCache

DEFAULT_COVERAGE_PROMPT = prompt_path("coverage_v1")
_PLACEHOLDERS = ("{{QUESTION_BLOCK}}", "{{STATEMENTS_BLOCK}}", "{{HISTORY_BLOCK}}")


def load_coverage_template(
    path: str | Path = DEFAULT_COVERAGE_PROMPT, *, version: str = "coverage_v1"
) -> PromptTemplate:
    """Read a coverage prompt (system and user parts; the three placeholders once each)."""
    return PromptTemplate.load(path, version=version, placeholders=_PLACEHOLDERS, what="a coverage prompt")


def _observations(step: Mapping) -> list[str]:
    """A search result's text, and each document as ``title text`` (the observations of the history)."""
    out = [step["text"]] if step.get("text") else []
    return out + [" ".join(x for x in (d.get("title"), d.get("text")) if x) for d in step.get("documents") or ()]


def parse_coverage_reply(content: str | None, ids: Sequence[str]) -> tuple[dict[str, bool | None] | None, str | None]:
    """``({id: True/False/None}, None)`` for a readable reply, else ``(None, reason)``.

    >>> parse_coverage_reply('{"covered": {"s1": true, "s2": "maybe"}}', ["s1", "s2", "s3"])
    ({'s1': True, 's2': None, 's3': None}, None)
    """
    if content is None or not content.strip():
        return None, "empty reply"
    try:
        obj = json.loads(strip_code_fence(content.strip()))
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

    def __init__(
        self,
        judge: str | os.PathLike | JudgeConfig,
        *,
        prompt: str | Path = DEFAULT_COVERAGE_PROMPT,
        prompt_version: str = "coverage_v1",
        cache: str | os.PathLike | JudgeCache | None = None,
        concurrency: int = 8,
        budget_usd: float | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
    ) -> None:
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

    def messages(self, trace: Mapping, steps: Sequence) -> list[dict]:
        """The request for one trajectory: its question, the statements (``id``, ``statement``) and its
        public history (queries and observations), each as JSON between fence lines."""
        seg = []
        for st in trace.get("steps") or ():
            if st.get("kind") == "search":
                seg += [{"kind": "query", "text": neutralise(x)} for x in (st.get("query"), st.get("url")) if x]
            elif st.get("kind") == "search_result":
                seg += [{"kind": "observation", "text": neutralise(x)} for x in _observations(st)]
        stmts = [{"id": neutralise(s.id), "statement": neutralise(s.statement)} for s in steps]
        history = "<<<HISTORY_JSON\n[" + ",\n".join(json_data(x) for x in seg) + "]\nHISTORY_JSON>>>"
        question = neutralise(trace.get("question") or "")
        return self.template.messages(
            {
                "{{QUESTION_BLOCK}}": fenced("<<<QUESTION_JSON", "QUESTION_JSON>>>", question),
                "{{STATEMENTS_BLOCK}}": fenced("<<<STATEMENTS_JSON", "STATEMENTS_JSON>>>", stmts),
                "{{HISTORY_BLOCK}}": history,
            }
        )

    async def _one(
        self, client: LLMClient, trace: Mapping, steps: Sequence, ctx: CallContext
    ) -> dict[str, bool | None]:
        tid, ids = str(trace["trace_id"]), [s.id for s in steps]
        vote = Vote(
            self.name,
            None,
            "unscored",
            model=self.config.model,
            prompt_version=self.template.version,
            prompt_sha256=self.template.sha256,
        )
        self.votes[tid] = vote

        def parse(reply) -> Parsed[dict[str, bool | None] | None]:
            covered, reason = parse_coverage_reply(reply.content, ids)
            return Parsed(covered is not None, covered, reason, covered)

        def repair_note(n: int, reason: str) -> str:
            return (
                f"\n\nREPAIR {n}: the earlier reply was rejected ({neutralise(reason)[:200]}). "
                'Reply with {"covered": {"<id>": true or false, ...}} only.'
            )

        got = await ask(
            client,
            self.template,
            self.messages(trace, steps),
            ctx,
            trace_id=tid,
            parse=parse,
            repair_note=repair_note,
            max_repairs=self.config.max_repairs,
            tally=vote,
            extra={"response_format": {"type": "json_object"}},
        )
        if got.no_reply is not None:
            no_reply_vote(vote, got.no_reply)
            return dict.fromkeys(ids)
        if not got.checked.ok or got.checked.value is None:
            vote.reason = got.checked.error
            return dict.fromkeys(ids)
        vote.status = "scored"
        return got.checked.value

    def match(self, pairs: Sequence[tuple[Mapping, Sequence]]) -> dict[str, dict[str, bool | None]]:
        """Coverage of every (trace, skeleton steps) pair; unscored statements are None."""
        if not pairs:
            return {}
        client = LLMClient(self.config, base_url=self._base_url, api_key=self._api_key)

        async def main(ctx: CallContext):
            try:
                return await asyncio.gather(*(self._one(client, t, s, ctx) for t, s in pairs))
            finally:
                await client.aclose()

        with call_context(self.cache, budget_usd=self.budget_usd, concurrency=self.concurrency) as ctx:
            results = asyncio.run(main(ctx))
        if ctx.fatal is not None:
            raise ctx.fatal
        self.failed = sum(v.status in ("failed", "skipped") for v in self.votes.values())
        self.first_error = ctx.first_error
        return {str(t["trace_id"]): r for (t, _), r in zip(pairs, results, strict=True)}  # gather: one per pair
