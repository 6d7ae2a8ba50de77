"""Batch mode: the same requests through the OpenAI Batch API (files + batches), at the batch price.

One round uploads every pending request as JSONL files (``files.create``,
``purpose="batch"``; split into parts within the API's limits of 50,000
requests and 200 MB a file), creates a batch per part (``batches.create``),
polls them (``batches.retrieve``) and downloads their output and error files. Every
completion goes into the same cache as online calls (``via_batch = 1``), then
the trace jobs replay from the cache exactly as a resumed online run does;
repairs and failed lines make the next round. A small state file beside the
output (``OUT.batch.json``) records the round's request keys, then each input
file id, then each batch id, each written atomically before the next step,
so a run killed at any point resumes the batch it already paid for instead
of submitting it again. Creating a batch is never retried blindly: after an
unclear failure the batches are listed to find one made from our file.
"""

from __future__ import annotations

import json
from pathlib import Path

from .._errors import UserInputError
from ..llm import (
    BatchClient,
    Budget,
    EndpointUnreachable,
    NotACompletion,
    Prices,
    completion_from_body,
    cost_usd,
    download_lines,
    poll_batch,
    request_cost_bound,
    save_state,
    split_parts,
    store,
    submit_part,
)
from ._job import TraceJob
from ._replay import count_labels, replay_cached, tally


def state_path_for(output) -> Path:
    """``OUT.batch.json``: the state file of a batch run writing ``OUT``."""
    return Path(f"{output}.batch.json")


def _new_round(jobs: list[TraceJob], cfg, prices: Prices, budget: Budget, summary) -> dict | None:
    """The state of a new round: the pending requests that fit the budget, split into parts; None if none."""
    reserved = 0.0
    keys: dict[str, dict] = {}
    trace_of: dict[str, str] = {}
    for job in jobs:
        if job.done:
            continue
        key, body = job.next_request()
        bound = request_cost_bound(
            body["messages"],
            int(body.get(cfg.max_tokens_param) or cfg.max_tokens),
            prices,
            batch=True,
            extra_text=json.dumps(body.get("response_format")),
        )
        if not budget.reserve(bound):
            summary.stopped_by_budget = True
            break
        reserved += bound
        keys[key] = body
        trace_of[key] = job.trace_id
    if not keys:
        return None
    return {
        "judge": cfg.name,
        "model": cfg.model,
        "reserved_usd": reserved,
        "trace_of": trace_of,
        "parts": [{"keys": part} for part in split_parts(keys)],
    }


def run_batch(
    todo: list[dict],
    cfg,
    template,
    cache,
    out,
    summary,
    budget: Budget,
    bar,
    *,
    rater: str,
    base_url: str | None,
    api_key: str | None,
    granularity: str = "trace",
) -> None:
    """Label ``todo`` through the Batch API, round after round, resuming the batches left by a crash."""
    path = state_path_for(out.path)
    prices = Prices.of(cfg)
    jobs = [TraceJob(t, cfg, template, granularity=granularity) for t in todo]
    line_failures: dict[str, int] = {}
    fresh: set[str] = set()
    written: set[str] = set()
    cli: BatchClient | None = None

    def finish_ready() -> None:
        for job in jobs:
            if job.done and job.trace_id not in written:
                records = job.records(rater=rater)
                out.append(records)
                tally(summary, job, records)
                written.add(job.trace_id)
                bar.update(1)

    while True:
        for job in jobs:
            replay_cached(cache, job, fresh=fresh)
        finish_ready()
        state = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
        if state is not None:
            if state.get("judge") != cfg.name:
                raise UserInputError(
                    f"{path} belongs to a batch run of judge {state.get('judge')!r}, not "
                    f"{cfg.name!r}; finish that run first or choose another -o",
                    file=str(path),
                )
            if budget.limit is not None:
                budget.reserved += state.get("reserved_usd", 0.0)  # already submitted: it will be paid
        elif summary.stopped_by_budget:
            break
        else:
            state = _new_round(jobs, cfg, prices, budget, summary)
            if state is None:
                break
            save_state(path, state)
        cli = cli or BatchClient(cfg, base_url, api_key)
        bodies = dict(j.next_request() for j in jobs if not j.done)
        try:
            for part in state["parts"]:
                if not part.get("merged"):
                    submit_part(cli, path, state, part, bodies)
        except EndpointUnreachable as e:  # stop; the state file keeps what was submitted, a re-run resumes it
            summary.stopped_unreachable = True
            summary.count_error(str(e))
            summary.note_failure(str(e))
            break
        spent = 0.0
        for part in state["parts"]:
            if part.get("merged") or not part["keys"]:
                continue
            batch = poll_batch(cli, cfg, part["batch_id"])
            if batch.status == "failed":
                path.unlink(missing_ok=True)
                errors = getattr(batch.errors, "data", None) or []
                detail = "; ".join(str(getattr(e, "message", e)) for e in errors[:3])
                raise UserInputError(f"batch {batch.id} failed validation: {detail or 'no detail'}")
            spent += _merge(cli, batch, state, part, jobs, cache, cfg, template, prices, summary, line_failures)
            fresh.update(k for k in part["keys"] if k in cache)
            part["merged"] = True
            save_state(path, state)
        budget.settle(state.get("reserved_usd", 0.0), spent)
        path.unlink(missing_ok=True)
    finish_ready()
    # stopped by the budget: what these traces still owe is recorded as not sent, for a re-run to ask
    limit = "" if budget.limit is None else f" of ${budget.limit:.4f}"
    for job in jobs:
        if not job.done:
            job.stop(f"the budget{limit} would be exceeded")
            records = job.records(rater=rater)
            out.append(records)
            count_labels(summary, records)
            summary.not_started += 1


def _merge(
    cli: BatchClient,
    batch,
    state: dict,
    part: dict,
    jobs: list[TraceJob],
    cache,
    cfg,
    template,
    prices: Prices,
    summary,
    line_failures: dict[str, int],
) -> float:
    """Store a finished batch's completions in the cache; count its failed or unrun lines. Returns USD spent."""
    by_key = {j.next_request()[0]: j for j in jobs if not j.done}
    wanted = set(part["keys"])
    reasons: dict[str, str] = {}
    spent = 0.0
    for line in download_lines(cli, batch.output_file_id) + download_lines(cli, batch.error_file_id):
        key = line.get("custom_id")
        resp = line.get("response") or {}
        if not isinstance(key, str) or key not in wanted or key in cache:  # wanted holds only str keys
            continue
        if not isinstance(resp, dict):
            resp = {}
        comp = None
        if resp.get("status_code") == 200 and not line.get("error"):
            try:  # a 200 line may still hold no usable completion: that line failed, with the reason
                comp = cli.scrub_completion(completion_from_body(resp.get("body"), latency_s=None))
            except NotACompletion as e:
                reasons[key] = cli.scrub(f"batch line failed: {e}")
                continue
        if comp is not None:
            cost = cost_usd(comp.prompt_tokens, comp.completion_tokens, prices, batch=True)
            store(cache, cfg, template, state.get("trace_of", {}).get(key), key, comp, cost, via_batch=True)
            job = by_key.get(key)
            summary.requests += 1
            summary.repairs += job is not None and job.repairs > 0
            summary.prompt_tokens += comp.prompt_tokens
            summary.completion_tokens += comp.completion_tokens
            summary.cost_usd += cost
            spent += cost
        else:
            body = resp.get("body")
            err = line.get("error") or (body.get("error") if isinstance(body, dict) else None) or {}
            err = err if isinstance(err, dict) else {"message": str(err)}
            reasons[key] = cli.scrub(
                f"batch line failed: {err.get('code') or resp.get('status_code')}: {err.get('message', '')}"
            )
    for key in part["keys"]:
        if key in cache:
            continue
        reason = reasons.get(key, f"batch {batch.status}: the line was not run")
        summary.count_error(reason)
        summary.note_failure(reason)
        line_failures[key] = line_failures.get(key, 0) + 1
        job = by_key.get(key)
        if job is not None and line_failures[key] >= cfg.max_attempts:
            job.fail(f"{reason} ({line_failures[key]} rounds)")
        else:
            summary.retries += 1
    return spent
