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

import hashlib
import json
import time
from pathlib import Path

from .._errors import UserInputError
from ..traces._io import write_text
from ._annotator import Budget, replay_cached, store, tally
from ._cost import Prices, cost_usd, request_cost_bound
from ._job import TraceJob
from ._provider import completion_from_body, redact, resolve_api_key, scrub_completion

TERMINAL = ("completed", "failed", "expired", "cancelled")
ENDPOINT = "/v1/chat/completions"


def state_path_for(output) -> Path:
    """``OUT.batch.json``: the state file of a batch run writing ``OUT``."""
    return Path(f"{output}.batch.json")


class _Client:
    """The official sync client for the files and batches endpoints, with safe retries for reads."""

    def __init__(self, cfg, base_url: str | None, api_key: str | None) -> None:
        import openai

        self._openai = openai
        url = base_url or cfg.resolved_base_url()
        self._key = api_key or resolve_api_key(cfg, url)
        self.client = openai.OpenAI(base_url=url, api_key=self._key, max_retries=0, timeout=cfg.timeout_s)
        self.attempts = cfg.max_attempts

    def read(self, fn, *args, **kwargs):
        """Call an idempotent endpoint (retrieve, list, download), retrying transient failures."""
        err = None
        for attempt in range(self.attempts):
            try:
                return fn(*args, **kwargs)
            except (self._openai.APIConnectionError, self._openai.RateLimitError,
                    self._openai.InternalServerError) as e:
                err = e
                time.sleep(min(0.05 * 2 ** attempt, 2.0))
            except self._openai.APIStatusError as e:
                raise self.user_error(e) from None
        raise UserInputError(redact(f"the Batch API kept failing: {type(err).__name__}: {err}", self._key))

    def user_error(self, e) -> UserInputError:
        return UserInputError(redact(f"the Batch API refused a request: HTTP {getattr(e, 'status_code', '?')}: "
                                     f"{getattr(e, 'message', e)}", self._key))


def _save(path: Path, state: dict) -> None:
    write_text(path, json.dumps(state, indent=1, sort_keys=True) + "\n")


MAX_LINES = 50_000
MAX_BYTES = 190 * 1024 * 1024


def _line(key: str, body: dict) -> bytes:
    return (json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}, ensure_ascii=False,
                       sort_keys=True) + "\n").encode("utf-8")


def _split(bodies: dict[str, dict]) -> list[list[str]]:
    """Request keys in parts that each fit one batch input file."""
    parts: list[list[str]] = [[]]
    size = 0
    for key, body in bodies.items():
        n = len(_line(key, body))
        if parts[-1] and (len(parts[-1]) >= MAX_LINES or size + n > MAX_BYTES):
            parts.append([])
            size = 0
        parts[-1].append(key)
        size += n
    return parts


def _submit(cli: _Client, path: Path, state: dict, part: dict, bodies: dict[str, dict]) -> None:
    """Upload one part's input file and create its batch, persisting each id as soon as it exists."""
    if not part.get("input_file_id"):
        part["keys"] = [k for k in part["keys"] if k in bodies]  # nothing is paid before the batch exists
        if not part["keys"]:
            return
        data = b"".join(_line(k, bodies[k]) for k in part["keys"])
        digest = hashlib.sha256(data).hexdigest()
        try:
            f = cli.client.files.create(file=(f"seekbench-{digest[:16]}.jsonl", data), purpose="batch")
        except cli._openai.APIStatusError as e:
            raise cli.user_error(e) from None
        part["input_file_id"] = f.id
        _save(path, state)
    if not part.get("batch_id"):
        found = _find_batch(cli, part["input_file_id"])
        if found is None:
            try:
                found = cli.client.batches.create(input_file_id=part["input_file_id"], endpoint=ENDPOINT,
                                                  completion_window="24h", metadata={"seekbench_judge": state["judge"]})
            except cli._openai.APIStatusError as e:
                raise cli.user_error(e) from None
            except cli._openai.APIConnectionError:
                found = _find_batch(cli, part["input_file_id"])  # created or not? look before retrying
                if found is None:
                    raise UserInputError("lost the connection while creating a batch; re-run to resume "
                                         f"(state kept in {path})") from None
        part["batch_id"] = found.id
        _save(path, state)


def _find_batch(cli: _Client, input_file_id: str):
    page = cli.read(cli.client.batches.list, limit=100)
    for b in page.data:
        if b.input_file_id == input_file_id and b.status not in ("failed", "cancelled", "expired"):
            return b
    return None


def _poll(cli: _Client, cfg, batch_id: str):
    while True:
        batch = cli.read(cli.client.batches.retrieve, batch_id)
        if batch.status in TERMINAL:
            return batch
        time.sleep(cfg.poll_interval_s)


def _download(cli: _Client, file_id: str | None) -> list[dict]:
    if not file_id:
        return []
    content = cli.read(cli.client.files.content, file_id)
    return [json.loads(line) for line in content.text.splitlines() if line.strip()]


def _new_round(jobs: list[TraceJob], cfg, prices: Prices, budget: Budget, summary) -> dict | None:
    """The state of a new round: the pending requests that fit the budget, split into parts; None if none."""
    reserved = 0.0
    keys: dict[str, dict] = {}
    trace_of: dict[str, str] = {}
    for job in jobs:
        if job.done:
            continue
        body = job.next_body()
        bound = request_cost_bound(body["messages"], cfg.max_tokens, prices, batch=True,
                                   extra_text=json.dumps(body.get("response_format")))
        if not budget.reserve(bound):
            summary.stopped_by_budget = True
            break
        reserved += bound
        keys[job.next_key()] = body
        trace_of[job.next_key()] = job.trace_id
    if not keys:
        return None
    return {"judge": cfg.name, "model": cfg.model, "reserved_usd": reserved, "trace_of": trace_of,
            "parts": [{"keys": part} for part in _split(keys)]}


def run_batch(todo: list[dict], cfg, template, cache, out, summary, budget: Budget, bar, *, rater: str,
              base_url: str | None, api_key: str | None) -> None:
    """Label ``todo`` through the Batch API, round after round, resuming the batches left by a crash."""
    path = state_path_for(out.path)
    prices = Prices.of(cfg)
    jobs = [TraceJob(t, cfg, template) for t in todo]
    line_failures: dict[str, int] = {}
    fresh: set[str] = set()
    written: set[str] = set()
    cli: _Client | None = None

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
                raise UserInputError(f"{path} belongs to a batch run of judge {state.get('judge')!r}, not "
                                     f"{cfg.name!r}; finish that run first or choose another -o", file=str(path))
            if budget.limit is not None:
                budget.reserved += state.get("reserved_usd", 0.0)  # already submitted: it will be paid
        elif summary.stopped_by_budget:
            break
        else:
            state = _new_round(jobs, cfg, prices, budget, summary)
            if state is None:
                break
            _save(path, state)
        cli = cli or _Client(cfg, base_url, api_key)
        bodies = {j.next_key(): j.next_body() for j in jobs if not j.done}
        for part in state["parts"]:
            if not part.get("merged"):
                _submit(cli, path, state, part, bodies)
        spent = 0.0
        for part in state["parts"]:
            if part.get("merged") or not part["keys"]:
                continue
            batch = _poll(cli, cfg, part["batch_id"])
            if batch.status == "failed":
                path.unlink(missing_ok=True)
                errors = getattr(batch.errors, "data", None) or []
                detail = "; ".join(str(getattr(e, "message", e)) for e in errors[:3])
                raise UserInputError(f"batch {batch.id} failed validation: {detail or 'no detail'}")
            spent += _merge(cli, batch, state, part, jobs, cache, cfg, template, prices, summary, line_failures)
            fresh.update(k for k in part["keys"] if k in cache)
            part["merged"] = True
            _save(path, state)
        budget.settle(state.get("reserved_usd", 0.0), spent)
        path.unlink(missing_ok=True)
    finish_ready()
    summary.not_started += sum(not j.done for j in jobs)


def _merge(cli: _Client, batch, state: dict, part: dict, jobs: list[TraceJob], cache, cfg, template,
           prices: Prices, summary, line_failures: dict[str, int]) -> float:
    """Store a finished batch's completions in the cache; count its failed or unrun lines. Returns USD spent."""
    by_key = {j.next_key(): j for j in jobs if not j.done}
    wanted = set(part["keys"])
    reasons: dict[str, str] = {}
    spent = 0.0
    for line in _download(cli, batch.output_file_id) + _download(cli, batch.error_file_id):
        key = line.get("custom_id")
        resp = line.get("response") or {}
        if key not in wanted or key in cache:
            continue
        if resp.get("status_code") == 200 and not line.get("error"):
            comp = scrub_completion(completion_from_body(resp["body"], latency_s=None), cli._key)
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
            err = line.get("error") or (resp.get("body") or {}).get("error") or {}
            reasons[key] = redact(f"batch line failed: {err.get('code') or resp.get('status_code')}: "
                                  f"{err.get('message', '')}", cli._key)
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
