"""Answer judges: is a candidate answer correct, given the question and the gold answers?

Two kinds. ``em`` (built in, offline, free) votes with exact match under SQuAD
normalisation (spec section 6). An LLM answer judge is a judge file with
``kind = "answer"`` in ``judges/`` (model, endpoint, key variable, prices,
prompt): it runs on the client layer every model call shares (:mod:`seekbench.llm`): the
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

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from .._errors import UserInputError
from ..llm import (
    CallContext,
    JudgeConfig,
    LLMClient,
    NoReply,
    Parsed,
    PromptTemplate,
    ask,
    estimate_tokens,
    fenced,
    load_judge_config,
    neutralise,
    utc_now,
)
from ..traces import exact_match_score
from ._verdict import Verdict, parse_verdict

#: The built-in offline judge's name.
EM_JUDGE = "em"
ANSWER_PLACEHOLDERS = ("{{QUESTION_BLOCK}}", "{{GOLD_BLOCK}}", "{{CANDIDATE_BLOCK}}")
FENCES = {
    "question": ("<<<QUESTION_JSON", "QUESTION_JSON>>>"),
    "gold": ("<<<GOLD_ANSWERS_JSON", "GOLD_ANSWERS_JSON>>>"),
    "candidate": ("<<<CANDIDATE_JSON", "CANDIDATE_JSON>>>"),
}
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
    return PromptTemplate.load(path, version=version, placeholders=ANSWER_PLACEHOLDERS, what="an answer prompt")


def _block(name: str, value: object) -> str:
    return fenced(*FENCES[name], value)


def render_answer_prompt(
    item: AnswerItem, template: PromptTemplate, *, context_tokens: int = 128_000, max_tokens: int = 64
) -> tuple[list[dict], bool]:
    """The messages asking whether ``item.candidate`` is correct, and whether the candidate was cut to fit."""
    question = neutralise(item.question or "")
    gold = [neutralise(g) for g in item.gold_answers]
    candidate = neutralise(item.candidate or "")

    def messages(cand: str) -> list[dict]:
        return template.messages(
            {
                "{{QUESTION_BLOCK}}": _block("question", question),
                "{{GOLD_BLOCK}}": _block("gold", gold),
                "{{CANDIDATE_BLOCK}}": _block("candidate", cand),
            }
        )

    out, truncated = messages(candidate), False
    room = context_tokens - max_tokens - 256 - estimate_tokens(template.system)
    if estimate_tokens(out[1]["content"]) > room:
        over = (estimate_tokens(out[1]["content"]) - room) * 3 + 64
        keep = max(0, len(candidate) - over)
        out, truncated = messages(candidate[:keep] + _TRUNCATED.format(n=len(candidate) - keep)), True
    return out, truncated


class AnswerJudge(ABC):
    """Base class: a named judge that votes on :class:`AnswerItem` objects."""

    name: str = ""
    is_llm: bool = False

    @abstractmethod
    async def vote(self, item: AnswerItem, ctx: CallContext) -> Vote:
        """This judge's vote on one answer."""

    async def aclose(self) -> None:  # noqa: B027 - a no-op by default: only LLM judges hold connections
        """Release connections (LLM judges)."""


class ExactMatchJudge(AnswerJudge):
    """Offline judge: correct iff the normalised candidate equals a normalised gold answer (spec section 6).

    >>> import asyncio
    >>> item = AnswerItem("t", "final", "q", ("River Thames",), "the river thames")
    >>> asyncio.run(ExactMatchJudge().vote(item, None)).value
    True
    """

    name = EM_JUDGE

    async def vote(self, item: AnswerItem, ctx: CallContext | None) -> Vote:
        if not item.candidate:
            return Vote(self.name, None, "unscored", "no answer to judge")
        if not item.gold_answers:
            return Vote(self.name, None, "unscored", "no gold answers")
        return Vote(self.name, bool(exact_match_score(item.candidate, item.gold_answers)), "scored")


#: What a vote says when its request got no reply: (status, reason).
_NO_REPLY: dict[str, tuple[VoteStatus, str]] = {
    "unreachable": ("skipped", "not sent: the endpoint cannot be reached or keeps failing"),
    "stopped": ("skipped", "not sent: the run stopped (budget or fatal error)"),
    "budget": ("skipped", "not sent: the budget would be exceeded"),
}


def no_reply_vote(vote: Vote, why: NoReply) -> Vote:
    """``vote`` marked ``skipped`` (not sent) or ``failed`` (the request failed for good), with the reason."""
    failed: tuple[VoteStatus, str] = ("failed", f"request_failed: {why.reason}")
    vote.status, vote.reason = _NO_REPLY.get(why.kind, failed)
    return vote


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
            raise UserInputError(
                f"judge {config.name!r} is a step-label judge (kind = {config.kind!r}); "
                'answer judging needs a judge file with kind = "answer" (e.g. answer-gpt-4.1-mini)'
                " or --judge em",
                file=str(config.path) if config.path else None,
            )
        self.config, self.name = config, config.name
        self.template = load_answer_template(config.prompt_path, version=config.prompt_version)
        fp = config.false_premise_prompt_path
        self.fp_template = (
            load_answer_template(
                fp, version=config.false_premise_prompt_version or f"{config.prompt_version}_false_premise"
            )
            if fp
            else None
        )
        self.client = LLMClient(config, base_url=base_url, api_key=api_key)

    async def aclose(self) -> None:
        await self.client.aclose()

    def template_for(self, item: AnswerItem) -> PromptTemplate:
        """The false-premise prompt for flagged questions (when the judge has one), else the main prompt."""
        return self.fp_template if item.false_premise and self.fp_template is not None else self.template

    async def vote(self, item: AnswerItem, ctx: CallContext) -> Vote:
        cfg = self.config
        template = self.template_for(item)
        base = Vote(
            self.name, None, "unscored", model=cfg.model, prompt_version=template.version, prompt_sha256=template.sha256
        )
        if not item.candidate:
            base.reason = "no answer to judge"
            return base
        messages, base.truncated = render_answer_prompt(
            item, template, context_tokens=cfg.context_tokens, max_tokens=cfg.max_tokens
        )

        def parse(reply) -> Parsed[Verdict]:
            verdict = (
                Verdict(None, "the reply was cut off at the token limit")
                if reply.finish_reason == "length"
                else parse_verdict(reply.content)
            )
            return Parsed(
                verdict.scored, verdict, verdict.reason, None if not verdict.scored else {"correct": verdict.value}
            )

        def repair_note(n: int, reason: str) -> str:
            return (
                f"\n\nREPAIR {n} of {cfg.max_repairs}: your earlier reply could not be read as a verdict "
                f"({neutralise(reason)[:200]}). Reply with exactly one word: Yes or No."
            )

        # plain text out (a verdict word): no response format
        got = await ask(
            self.client,
            template,
            messages,
            ctx,
            trace_id=item.trace_id,
            parse=parse,
            repair_note=repair_note,
            max_repairs=cfg.max_repairs,
            tally=base,
        )
        if got.no_reply is not None:
            return no_reply_vote(base, got.no_reply)
        verdict = got.checked.value
        base.value = verdict.value
        base.status = "scored" if verdict.scored else "unscored"
        base.reason = None if verdict.scored else f"invalid_verdict: {verdict.reason} (after {base.repairs} repairs)"
        return base


#: What names an answer judge: ``"em"``, a judge name or file, a loaded config, or a judge object.
AnswerJudgeSpec = str | Path | JudgeConfig | AnswerJudge


def load_answer_judge(
    judge: AnswerJudgeSpec, *, base_url: str | None = None, api_key: str | None = None
) -> AnswerJudge:
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
        raise UserInputError(
            f"judge {cfg.get('name')!r} is an offline step-label judge (kind = {cfg.get('kind')!r});"
            ' answer judging needs --judge em or a judge file with kind = "answer"'
        )
    return LLMAnswerJudge(cfg, base_url=base_url, api_key=api_key)
