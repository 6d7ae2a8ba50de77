"""Running an offline judge (``kind = "rules"`` or ``"learned"``) into the same kind of output.

Offline judges live in :mod:`seekbench.annotate.offline` behind
``load_offline_judge(config) -> OfflineJudge`` with
``label_traces(traces, *, rater) -> list[dict]``. They cost nothing and need
no key; their records are written per trace, with the same resume rules as
the LLM judges.
"""

from __future__ import annotations

import time

from ._output import start_run
from ._summary import AnnotateSummary
from .offline import load_offline_judge


def annotate_offline(traces: list[dict], table: dict, output, *, rater: str | None, start: float) -> AnnotateSummary:
    """Label ``traces`` with the offline judge described by ``table`` (a judge file's contents)."""
    judge = load_offline_judge(table)
    rater = rater or judge.name
    out, todo, summary = start_run(output, traces, rater=rater, judge=judge.name, mode=str(table["kind"]))
    try:
        records = judge.label_traces(todo, rater=rater) if todo else []
        by_trace: dict[str, list[dict]] = {}
        for rec in records:
            by_trace.setdefault(str(rec["trace_id"]), []).append(rec)
        for trace in todo:
            block = by_trace.get(str(trace["trace_id"]), [])
            block = [
                {**r, "rater": rater, "provenance": {**(r.get("provenance") or {}), "trace_records": len(block)}}
                for r in block
            ]
            out.append(block)
            ok = bool(block) and all(r.get("value") is not None for r in block)
            summary.labeled += ok
            summary.unscored += bool(block) and not ok
            for r in block:
                if r.get("value") is None:
                    summary.unscored_labels += 1
                elif r["provenance"].get("kind") == "rule":
                    summary.rule_labels += 1
                else:
                    summary.judge_labels += 1
    finally:
        out.finalize([str(t["trace_id"]) for t in traces])
    summary.elapsed_s = round(time.monotonic() - start, 3)
    return summary
