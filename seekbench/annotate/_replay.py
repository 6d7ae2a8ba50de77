"""Bookkeeping shared by the online and the batch run: feeding completions to jobs, replaying the cache, tallying."""

from __future__ import annotations

from ..llm import Completion, JudgeCache, completion_of
from ._job import ABSTAINED, OVER_CONTEXT, TraceJob
from ._summary import AnnotateSummary


def tally(summary: AnnotateSummary, job: TraceJob, records: list[dict]) -> None:
    """Add a finished job to the summary."""
    status = job.status
    summary.labeled += status == "labeled"
    summary.unscored += status == "unscored"
    summary.failed += status == "failed"
    summary.truncated += job.truncated
    summary.windowed += job.windows > 1
    summary.partial += status == "unscored" and any(
        r["value"] is not None and r["provenance"]["kind"] == "judge" for r in records
    )
    summary.repaired_labels += sum(1 for r in records if r["provenance"].get("from_repair") and r["value"] is not None)
    if job.over_context:
        summary.count_error(OVER_CONTEXT)  # never sent: too long for the judge even with every text cut
    summary.rule_conflicts += len(job.rule_conflicts)
    if job.calls and all(c.from_cache for c in job.calls):
        summary.from_cache += 1
    count_labels(summary, records)


def count_labels(summary: AnnotateSummary, records: list[dict]) -> None:
    """Add a trace's records to the summary's label counts (rule, judge, unscored, abstained)."""
    for rec in records:
        kind = rec["provenance"]["kind"]
        if rec["value"] is None:
            summary.unscored_labels += 1
            summary.abstentions += str(rec.get("unscored_reason", "")).startswith(ABSTAINED)
        elif kind == "rule":
            summary.rule_labels += 1
        else:
            summary.judge_labels += 1


def feed(cache: JudgeCache, job: TraceJob, key: str, comp: Completion, cost: float, *, from_cache: bool) -> None:
    """Give a completion to its job and record the check's outcome in the cache."""
    res = job.feed(comp, key=key, cost_usd=cost, from_cache=from_cache)
    labels = {f"{s}:{f}": v for (s, f), v in res.labels.items()} or None  # what validated, even in part
    cache.set_parsed(key, valid=res.ok, labels=labels, error=res.error)


def replay_cached(cache: JudgeCache, job: TraceJob, *, fresh: set[str] | frozenset = frozenset()) -> None:
    """Advance a job through every request whose completion is already cached (``fresh``: paid this run)."""
    while not job.done:
        key, _ = job.next_request()
        hit = cache.get(key)
        if hit is None:
            return
        feed(cache, job, key, completion_of(hit), hit.cost_usd, from_cache=key not in fresh)
