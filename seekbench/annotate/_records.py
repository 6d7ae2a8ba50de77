"""The annotation records of a finished trace job: rule labels, judge labels, explicit unscored ones.

Every ``(step, field)`` the ontology asks of a step gets one record: the rule's
label, the judge's label (with the repair that gave it and the window it was
asked in), or None with an ``unscored_reason`` that starts with one of the
prefixes below and says why in full.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._version import SCHEMA_VERSION
from ..llm import utc_now
from ..traces import LABEL_FIELDS

if TYPE_CHECKING:
    from ._job import TraceJob

#: Prefixes of ``unscored_reason``: a request that failed (nothing paid; retried by a re-run),
#: an answer still invalid after the repairs, and an explicit null from the judge.
REQUEST_FAILED = "request_failed"
#: A request the run stopped before sending (endpoint unreachable, budget reached): retried by a re-run.
NOT_SENT = "not_sent"
#: The prefixes of a label a re-run asks for again; the others are final (a re-run finds them in the output).
RETRIED = (REQUEST_FAILED, NOT_SENT)
INVALID_OUTPUT = "invalid_output"
ABSTAINED = "judge_abstained"
#: The prompt does not fit the judge's context even with every step text cut: nothing was sent.
OVER_CONTEXT = "over_context"


def job_records(job: TraceJob, *, rater: str, served: dict | None = None) -> list[dict]:
    """The annotation records of this trace: rule labels, then judge labels or explicit unscored ones.

    ``served``: what the server reported about its model (``model_file``, ``server_models``), for provenance.
    """
    cfg, tid = job.config, job.trace_id
    when = job.calls[-1].created if job.calls else utc_now()
    rows: list[tuple[int, str, str | None, str | None, dict]] = []
    for (step, name), rule in job.rules.items():
        prov = {"kind": "rule", "judge": cfg.name, "rule": rule.rule, "time": when, "cost_usd": 0.0}
        if rule.repeat_of is not None:
            prov["repeat_of"] = rule.repeat_of
        rows.append((step, name, rule.value, None, prov))
    judge_prov = {
        "kind": "judge",
        "judge": cfg.name,
        "model": cfg.model,
        "prompt_sha256": job.template.sha256,
        "prompt_version": job.template.version,
        "time": when,
        "input_tokens": sum(c.prompt_tokens for c in job.calls),
        "output_tokens": sum(c.completion_tokens for c in job.calls),
        "cost_usd": round(sum(c.cost_usd for c in job.calls), 10),
        "latency_s": (
            round(sum(c.latency_s for c in job.calls if c.latency_s is not None), 4)
            if any(c.latency_s is not None for c in job.calls)
            else None
        ),
        "truncated": job.truncated,
        "requests": len(job.calls),
        "repairs": job.repairs,
        "cache_key": job.calls[-1].key if job.calls else None,
        # The usage above is the whole job's (every window, step request and repair); a label's own
        # cache_key names the answer it came from, so cost accounting counts the job once by this key.
        "usage_key": f"{tid}:{job.calls[0].key}" if job.calls else None,
        "granularity": job.granularity,
    }
    models = sorted({c.model for c in job.calls if c.model})
    if models:  # what the server says served the requests, beside the configured name
        judge_prov["served_model"] = models[0] if len(models) == 1 else models
    for k, v in (served or {}).items():
        if v:
            judge_prov[k] = v
    if job.formats_used:
        judge_prov["response_format"] = job.formats_used[-1]
    if job.windows > 1:
        judge_prov["windows"] = job.windows
    if job.truncated:  # how far: the length step texts were cut to; each record says if its step was
        judge_prov["truncated_to_chars"] = job.cap
    status = job.status
    for step, spec in sorted(job.specs.items()):
        for name in spec.required + spec.optional:
            extra: dict = {}
            if (step, name) in job.labels:
                value = job.labels[(step, name)]
                reason = None if value is not None else f"{ABSTAINED}: the judge answered null"
                repair, key = job.origin[(step, name)]
                extra = {"from_repair": repair, "cache_key": key}
            elif name in spec.optional:
                continue
            elif status == "failed":
                value, reason = None, f"{NOT_SENT if job.unsent else REQUEST_FAILED}: {job.failure}"
            elif step in job.over:
                value, reason = None, f"{OVER_CONTEXT}: {job.errors[-1] if job.errors else 'too long'}"
            else:
                value = None
                why = job.problems.get(step) or (job.errors[-1] if job.errors else "no valid answer")
                reason = f"{INVALID_OUTPUT}: {why} (after {job.repairs} repairs)"
            if step in job._window_of:
                extra["window"] = list(job._window_of[step])
            if job.truncated:
                extra["step_truncated"] = step in job.cut
            rows.append((step, name, value, reason, {**judge_prov, **extra} if extra else judge_prov))
    order = {f: i for i, f in enumerate(LABEL_FIELDS)}
    rows.sort(key=lambda r: (r[0], order.get(r[1], 99)))
    out = []
    for step, name, value, reason, prov in rows:
        rec = {
            "schema_version": SCHEMA_VERSION,
            "trace_id": tid,
            "step": step,
            "field": name,
            "value": value,
            "rater": rater,
            "provenance": {**prov, "trace_records": len(rows)},
        }
        if value is None:
            rec["unscored_reason"] = reason
        out.append(rec)
    return out
