"""The OpenAI Batch API: files and batches through the official sync client, resumable after a crash.

Requests go up as JSONL input files (``files.create``, ``purpose="batch"``;
split within the API's limits of 50,000 requests and 200 MB a file), one
batch per file (``batches.create``), are polled (``batches.retrieve``) and
their output and error files downloaded. The caller keeps a small state file
(:func:`save_state`, written atomically) holding each input file id, then
each batch id, so a run killed at any point resumes the batch it already paid
for instead of submitting it again. Creating a batch is never retried
blindly: after an unclear failure the batches are listed to find one made
from our file.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Final

from .._errors import UserInputError
from ..traces import write_text
from ._provider import UNREACHABLE_ATTEMPTS, EndpointUnreachable, _cause, _refused, resolve_api_key
from ._secrets import redact, scrub_completion

TERMINAL = ("completed", "failed", "expired", "cancelled")
ENDPOINT: Final = "/v1/chat/completions"  # Final: the literal type batches.create wants


class BatchClient:
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
            except (
                self._openai.APIConnectionError,
                self._openai.RateLimitError,
                self._openai.InternalServerError,
            ) as e:
                err = e
                time.sleep(min(0.05 * 2**attempt, 2.0))
            except self._openai.APIStatusError as e:
                raise self.user_error(e) from None
        raise UserInputError(redact(f"the Batch API kept failing: {type(err).__name__}: {err}", self._key))

    def scrub(self, text: str) -> str:
        """``text`` without the API key."""
        return redact(text, self._key)

    def scrub_completion(self, comp):
        """A completion without the API key in its raw body or content."""
        return scrub_completion(comp, self._key)

    def user_error(self, e) -> UserInputError:
        return UserInputError(
            redact(
                f"the Batch API refused a request: HTTP {getattr(e, 'status_code', '?')}: {getattr(e, 'message', e)}",
                self._key,
            )
        )


def save_state(path: Path, state: dict) -> None:
    write_text(path, json.dumps(state, indent=1, sort_keys=True) + "\n")


MAX_LINES = 50_000
MAX_BYTES = 190 * 1024 * 1024


def batch_line(key: str, body: dict) -> bytes:
    return (
        json.dumps(
            {"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}, ensure_ascii=False, sort_keys=True
        )
        + "\n"
    ).encode("utf-8")


def split_parts(bodies: dict[str, dict]) -> list[list[str]]:
    """Request keys in parts that each fit one batch input file."""
    parts: list[list[str]] = [[]]
    size = 0
    for key, body in bodies.items():
        n = len(batch_line(key, body))
        if parts[-1] and (len(parts[-1]) >= MAX_LINES or size + n > MAX_BYTES):
            parts.append([])
            size = 0
        parts[-1].append(key)
        size += n
    return parts


def submit_part(cli: BatchClient, path: Path, state: dict, part: dict, bodies: dict[str, dict]) -> None:
    """Upload one part's input file and create its batch, persisting each id as soon as it exists."""
    if not part.get("input_file_id"):
        part["keys"] = [k for k in part["keys"] if k in bodies]  # nothing is paid before the batch exists
        if not part["keys"]:
            return
        data = b"".join(batch_line(k, bodies[k]) for k in part["keys"])
        digest = hashlib.sha256(data).hexdigest()
        f = _upload(cli, f"seekbench-{digest[:16]}.jsonl", data)
        part["input_file_id"] = f.id
        save_state(path, state)
    if not part.get("batch_id"):
        found = find_batch(cli, part["input_file_id"])
        if found is None:
            try:
                found = cli.client.batches.create(
                    input_file_id=part["input_file_id"],
                    endpoint=ENDPOINT,
                    completion_window="24h",
                    metadata={"seekbench_judge": state["judge"]},
                )
            except cli._openai.APIStatusError as e:
                raise cli.user_error(e) from None
            except cli._openai.APIConnectionError:
                found = find_batch(cli, part["input_file_id"])  # created or not? look before retrying
                if found is None:
                    raise UserInputError(
                        f"lost the connection while creating a batch; re-run to resume (state kept in {path})"
                    ) from None
        part["batch_id"] = found.id
        save_state(path, state)


def _upload(cli: BatchClient, name: str, data: bytes):
    """``files.create`` of one input file, retried on connection errors (an upload made twice costs
    nothing: only the batch created from it is paid). An endpoint that no connection reaches raises
    :class:`EndpointUnreachable` after :data:`UNREACHABLE_ATTEMPTS`, as an online run stops."""
    where = f"POST {str(cli.client.base_url).rstrip('/')}/files"
    last = "no attempt made"
    for attempt in range(1, cli.attempts + 1):
        try:
            return cli.client.files.create(file=(name, data), purpose="batch")
        except cli._openai.APIStatusError as e:
            raise cli.user_error(e) from None
        except cli._openai.APIConnectionError as e:
            last = cli.scrub(f"connection error: {_cause(e)} ({where})")
            if _refused(e) and attempt >= UNREACHABLE_ATTEMPTS:
                raise EndpointUnreachable(
                    f"cannot connect after {attempt} attempts; last error: {last}", attempts=attempt, endpoint=where
                ) from None
            time.sleep(min(0.05 * 2**attempt, 2.0))
    raise UserInputError(f"the Batch API kept failing: gave up after {cli.attempts} attempts; last error: {last}")


def find_batch(cli: BatchClient, input_file_id: str):
    page = cli.read(cli.client.batches.list, limit=100)
    for b in page.data:
        if b.input_file_id == input_file_id and b.status not in ("failed", "cancelled", "expired"):
            return b
    return None


def poll_batch(cli: BatchClient, cfg, batch_id: str):
    while True:
        batch = cli.read(cli.client.batches.retrieve, batch_id)
        if batch.status in TERMINAL:
            return batch
        time.sleep(cfg.poll_interval_s)


def download_lines(cli: BatchClient, file_id: str | None) -> list[dict]:
    if not file_id:
        return []
    content = cli.read(cli.client.files.content, file_id)
    return [json.loads(line) for line in content.text.splitlines() if line.strip()]
