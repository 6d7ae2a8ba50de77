"""Answer-judge panels: judges A, B (...) vote; a tiebreaker C is asked only when they do not settle it.

Majority rule (spec section 9's panel, InfoDeepSeek's protocol): a panel of
m primary judges plus an optional tiebreaker has size s = m (+1); a value
wins when at least ``s // 2 + 1`` judges gave it. The primaries are asked
first, concurrently; the tiebreaker only when no value has reached that count
among them (with two primaries: when they disagree, or one could not vote).
A single judge decides alone. Every vote is kept.

Disagreement rate = (answers on which the primary judges gave different
scored values) / (answers on which every primary judge gave a scored value).

Where decisions go (:func:`judge_answers`): a trace's final answer ->
``trace["correct"] = {"value", "source", "detail"}`` with source ``em`` (the
built-in EM judge alone), ``judge`` (one LLM judge) or ``panel``, and
``detail`` holding the judges, every vote, the majority, whether the judges
disagreed, whether the tiebreaker was asked, and the previous decision it
replaced. With ``evidence_set=True`` the answers in ``metadata.evidence_set``
(per-k and no-retrieval) are judged too, into ``judgments`` /
``no_retrieval_correct``, with the votes in ``judgment_detail``.
"""

from __future__ import annotations

import asyncio
import copy
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from .._errors import UserInputError
from ..llm import JudgeCache, call_context, progress_bar, utc_now
from ..traces import EVIDENCE_SET_KEY, evidence_set_of, is_false_premise, read_traces
from ._answer_judge import (
    EM_JUDGE,
    AnswerItem,
    AnswerJudge,
    AnswerJudgeSpec,
    CallContext,
    Vote,
    load_answer_judge,
)
from ._result import AnswerJudgeResult, count_reasons, pending_reason

Overwrite = Literal["missing", "machine", "all"]
#: Decision sources a default run (``overwrite="machine"``) may replace.
MACHINE_SOURCES = ("em", "judge", "panel")


def majority_vote(values: Sequence[bool | None], *, panel_size: int) -> bool | None:
    """The value given by at least ``panel_size // 2 + 1`` of ``values`` (None = no vote), else None.

    Examples
    --------
    >>> majority_vote([True, False, True], panel_size=3), majority_vote([True, None], panel_size=3)
    (True, None)
    >>> majority_vote([True, False], panel_size=2), majority_vote([False], panel_size=1)
    (None, False)
    """
    need = panel_size // 2 + 1
    for v in (True, False):
        if sum(1 for x in values if x is v) >= need:
            return v
    return None


@dataclass
class PanelDecision:
    """The panel's decision on one answer."""

    item: AnswerItem
    votes: list[Vote]
    value: bool | None
    disagreement: bool | None
    tiebreak_asked: bool
    reason: str | None = None

    @property
    def pending(self) -> bool:
        """Undecided because a vote failed or was not sent: a re-run may decide it."""
        return self.value is None and any(v.status in ("failed", "skipped") for v in self.votes)


@dataclass
class Panel:
    """Primary judges and an optional tiebreaker.

    Parameters
    ----------
    judges : sequence of str, path, JudgeConfig or AnswerJudge
        ``"em"`` or answer judges (``kind = "answer"`` judge files).
    tiebreak : same, optional
        Asked only when the primaries do not reach a majority; needs at least two primaries.
    """

    judges: Sequence[AnswerJudgeSpec]
    tiebreak: AnswerJudgeSpec | None = None
    base_url: str | None = None
    api_key: str | None = None
    primaries: list[AnswerJudge] = field(init=False)
    tiebreaker: AnswerJudge | None = field(init=False)

    def __post_init__(self) -> None:
        if not self.judges:
            raise UserInputError("give at least one answer judge (--judge em, or a judge file of kind answer)")
        self.primaries = [load_answer_judge(j, base_url=self.base_url, api_key=self.api_key) for j in self.judges]
        self.tiebreaker = (
            None
            if self.tiebreak is None
            else load_answer_judge(self.tiebreak, base_url=self.base_url, api_key=self.api_key)
        )
        if self.tiebreaker is not None and len(self.primaries) < 2:
            raise UserInputError("--tiebreak needs at least two --judge (it breaks their ties)")
        names = [j.name for j in self.all]
        if len(set(names)) != len(names):
            raise UserInputError(f"a judge appears twice in the panel ({', '.join(names)}); name each judge once")

    @property
    def all(self) -> list[AnswerJudge]:
        return self.primaries + ([self.tiebreaker] if self.tiebreaker is not None else [])

    @property
    def size(self) -> int:
        return len(self.all)

    @property
    def source(self) -> str:
        """``em``, ``judge`` or ``panel``: the decision source written into traces."""
        if self.size > 1:
            return "panel"
        return "em" if self.primaries[0].name == EM_JUDGE else "judge"

    async def decide(self, item: AnswerItem, ctx: CallContext) -> PanelDecision:
        votes = list(await asyncio.gather(*(j.vote(item, ctx) for j in self.primaries)))
        values = [v.value for v in votes]
        scored = [v for v in values if v is not None]
        disagreement = None if len(self.primaries) < 2 or len(scored) < len(values) else len(set(scored)) > 1
        value = majority_vote(values, panel_size=self.size)
        asked = False
        if value is None and self.tiebreaker is not None:
            asked = True
            votes.append(await self.tiebreaker.vote(item, ctx))
            value = majority_vote([v.value for v in votes], panel_size=self.size)
        reason = None
        if value is None:
            reasons = [f"{v.judge}: {v.reason}" for v in votes if v.value is None and v.reason]
            reason = ("no majority: " + "; ".join(reasons)) if reasons else "no majority: the judges disagree"
        return PanelDecision(item, votes, value, disagreement, asked, reason)

    async def aclose(self) -> None:
        for j in self.all:
            await j.aclose()


def decision_detail(panel: Panel, d: PanelDecision) -> dict:
    """The ``detail`` object recorded with a decision."""
    out = {
        "judges": [j.name for j in panel.primaries],
        "votes": [v.to_dict() for v in d.votes],
        "majority": d.value,
        "decided": utc_now(),
    }
    if panel.tiebreaker is not None:
        out["tiebreaker"] = panel.tiebreaker.name
        out["tiebreak_asked"] = d.tiebreak_asked
    if d.disagreement is not None:
        out["disagreement"] = d.disagreement
    if d.value is None:
        out["unscored_reason"] = d.reason
    if d.pending:  # a vote failed or was not sent: a re-run asks again
        out["pending"] = True
    return out


def _items(trace: dict, *, evidence_set: bool) -> list[AnswerItem]:
    tid, fp = str(trace["trace_id"]), is_false_premise(trace)
    q, gold = trace.get("question") or "", tuple(trace.get("gold_answers") or ())
    items = [AnswerItem(tid, "final", q, gold, trace.get("final_answer"), fp)]
    es = evidence_set_of(trace) if evidence_set else None
    if es is not None:
        items += [AnswerItem(tid, f"k{k}", q, gold, a, fp) for k, a in sorted(es["answers"].items())]
        if es["no_retrieval_answer"] is not None:
            items.append(AnswerItem(tid, "no_retrieval", q, gold, es["no_retrieval_answer"], fp))
    return items


def _may_replace(existing: object, overwrite: Overwrite) -> bool:
    if overwrite == "all" or existing is None:
        return True
    if isinstance(existing, dict):
        if existing.get("value") is None:
            return True
        return overwrite == "machine" and existing.get("source") in MACHINE_SOURCES
    return overwrite != "missing"


def judge_answers(
    traces: str | os.PathLike | Iterable[dict],
    judges: Sequence[AnswerJudgeSpec] | str = (EM_JUDGE,),
    *,
    tiebreak: AnswerJudgeSpec | None = None,
    cache: str | os.PathLike | JudgeCache | None = None,
    concurrency: int = 8,
    budget_usd: float | None = None,
    overwrite: Overwrite = "machine",
    evidence_set: bool = True,
    progress: bool | None = False,
    base_url: str | None = None,
    api_key: str | None = None,
) -> AnswerJudgeResult:
    """Judge the final answers of traces (and their evidence-set answers) with one judge or a panel.

    Parameters
    ----------
    traces : path or iterable of dict
        Canonical traces (any supported trace file).
    judges : sequence
        Primary judges: ``"em"`` (offline exact match, the default) or answer judge names/files.
    tiebreak : optional
        Tiebreaker judge, asked only when the primaries reach no majority.
    cache : path or JudgeCache, optional
        The SQLite judge cache (default :func:`~seekbench.llm.default_cache_path`).
    concurrency : int, default 8
        Requests in flight at once.
    budget_usd : float, optional
        Send no request whose worst-case cost could take the run past this.
    overwrite : {"machine", "missing", "all"}, default "machine"
        Which existing decisions to replace: "missing" only fills undecided answers; "machine"
        also replaces em/judge/panel decisions; "all" replaces human and source-data ones too.
        A replaced decision is kept in ``detail["previous"]``. An answer left pending (its request
        failed or was not sent) keeps a decision it had; one it lacked is written unscored, with
        ``detail["pending"]`` and the reason, and a re-run asks for it again.
    evidence_set : bool, default True
        Also judge the per-k and no-retrieval answers in ``metadata.evidence_set``.
    progress : bool or None
        tqdm bar on stderr (None: only on a terminal).
    base_url, api_key : str, optional
        Override every LLM judge's endpoint and key (local servers, tests).

    Returns
    -------
    AnswerJudgeResult

    Examples
    --------
    >>> t = {"schema_version": "1.0", "trace_id": "t", "agent": "a", "question": "q", "steps": [],
    ...      "gold_answers": ["Paris"], "final_answer": "paris"}
    >>> res = judge_answers([t])
    >>> res.traces[0]["correct"]["value"], res.traces[0]["correct"]["source"]
    (True, 'em')
    """
    if concurrency < 1:
        raise UserInputError(f"--concurrency must be >= 1, got {concurrency}")
    if budget_usd is not None and not budget_usd >= 0:
        raise UserInputError(f"--budget-usd must be >= 0, got {budget_usd}")
    if overwrite not in ("missing", "machine", "all"):
        raise UserInputError(f"overwrite is {overwrite!r}; use missing, machine or all")
    if isinstance(traces, (str, os.PathLike)):
        traces = read_traces(traces).traces
    out = [copy.deepcopy(t) for t in traces]
    panel = Panel([judges] if isinstance(judges, str) else list(judges), tiebreak, base_url, api_key)
    todo: list[AnswerItem] = []
    kept: dict[str, int] = {}
    for tr in out:
        for it in _items(tr, evidence_set=evidence_set):
            existing = _existing(tr, it.slot)
            if _may_replace(existing, overwrite):
                todo.append(it)
            else:
                src = str(existing.get("source") or "unknown") if isinstance(existing, dict) else "source data"
                kept[src] = kept.get(src, 0) + 1
    start = time.monotonic()
    bar = progress_bar(len(todo), "judge answers", progress)

    async def one(it: AnswerItem) -> PanelDecision:
        d = await panel.decide(it, ctx)
        bar.update(1)
        return d

    async def main() -> list[PanelDecision]:
        try:
            return list(await asyncio.gather(*(one(it) for it in todo)))
        finally:
            await panel.aclose()

    try:
        with call_context(
            cache, budget_usd=budget_usd, concurrency=concurrency, needs_cache=any(j.is_llm for j in panel.all)
        ) as ctx:
            decisions = asyncio.run(main())
    finally:
        bar.close()
    if ctx.fatal is not None:
        raise ctx.fatal
    return _collect(out, panel, decisions, kept, ctx, round(time.monotonic() - start, 3), overwrite)


def _existing(trace: dict, slot: str) -> object:
    if slot == "final":
        return trace.get("correct")
    es = (trace.get("metadata") or {}).get(EVIDENCE_SET_KEY) or {}
    if slot == "no_retrieval":
        return es.get("no_retrieval_correct")
    j = es.get("judgments") or {}
    return j.get(slot[1:], j.get(slot))


def _collect(
    out: list[dict],
    panel: Panel,
    decisions: list[PanelDecision],
    kept_sources: dict,
    ctx: CallContext,
    elapsed: float,
    overwrite: Overwrite,
) -> AnswerJudgeResult:
    by_id = {str(t["trace_id"]): t for t in out}
    kept = sum(kept_sources.values())
    rows, written = [], 0
    for d in decisions:
        it = d.item
        # a pending answer keeps a decision it already had; one with none is written unscored, pending,
        # with the reason, so the output says why (a re-run asks again: an undecided slot is always replaced)
        write = not d.pending or _may_replace(_existing(by_id[it.trace_id], it.slot), "missing")
        if write:
            written += 1
            _write(by_id[it.trace_id], it.slot, panel, d)
        row = {
            "trace_id": it.trace_id,
            "slot": it.slot,
            "value": d.value,
            "pending": d.pending,
            "disagreement": d.disagreement,
            "tiebreak_asked": d.tiebreak_asked,
            "written": write,
        }
        row.update({f"vote_{v.judge}": v.value for v in d.votes})
        rows.append(row)
    cols = [
        "trace_id",
        "slot",
        "value",
        "pending",
        "disagreement",
        "tiebreak_asked",
        "written",
        *(f"vote_{j.name}" for j in panel.all),
    ]
    df = pd.DataFrame(rows, columns=cols)
    votes = [v for d in decisions for v in d.votes]
    compared = [d for d in decisions if d.disagreement is not None]
    counts = {
        "traces": len(out),
        "answers": len(decisions) + kept,
        "decided": sum(d.value is not None for d in decisions),
        "unscored": sum(d.value is None and not d.pending for d in decisions),
        "pending": sum(d.pending for d in decisions),
        "kept": kept,
        "written": written,
        "overwrite": overwrite,
        "kept_sources": kept_sources,
        "pending_reasons": count_reasons(pending_reason(d) for d in decisions if d.pending),
    }
    return AnswerJudgeResult(
        traces=out,
        decisions=df,
        counts=counts,
        judges=[j.name for j in panel.primaries],
        tiebreaker=panel.tiebreaker.name if panel.tiebreaker else None,
        n_compared=len(compared),
        n_disagree=sum(bool(d.disagreement) for d in compared),
        n_tiebreak=sum(d.tiebreak_asked for d in decisions),
        requests=sum(v.paid_requests for v in votes),
        from_cache=sum(v.from_cache for v in votes),
        paid_usd=sum(v.paid_usd for v in votes),
        retries=ctx.retries,
        stopped_by_budget=ctx.stopped_by_budget,
        elapsed_s=elapsed,
        first_error=ctx.first_error,
    )


def _write(trace: dict, slot: str, panel: Panel, d: PanelDecision) -> None:
    detail = decision_detail(panel, d)
    if slot == "final":
        prev = trace.get("correct")
        if isinstance(prev, dict) and prev.get("value") is not None:
            detail["previous"] = {"value": prev.get("value"), "source": prev.get("source")}
        trace["correct"] = {"value": d.value, "source": panel.source, "detail": detail}
        return
    es = trace.setdefault("metadata", {}).setdefault(EVIDENCE_SET_KEY, {})
    es.setdefault("judgment_detail", {})[slot] = {"source": panel.source, **detail}
    if slot == "no_retrieval":
        es["no_retrieval_correct"] = d.value
    else:
        judgments = es.setdefault("judgments", {})
        judgments.pop(slot, None)
        judgments[slot[1:]] = d.value
