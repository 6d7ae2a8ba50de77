"""In-memory Files and Batch API state for the mock server.

A batch moves one state per ``GET /v1/batches/{id}``: ``validating`` (at
creation) -> ``in_progress`` (the input file is parsed and checked; a bad file
fails the batch) -> ``completed`` (every line is run through the chat
completion path, faults included). ``cancel`` moves a running batch to
``cancelling``, and the next retrieve to ``cancelled``. Polling therefore
needs no sleeping and is fully deterministic.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

BATCH_ENDPOINTS = ("/v1/chat/completions",)
COMPLETION_WINDOWS = ("24h",)
FILE_PURPOSES = ("batch", "batch_output", "assistants", "fine-tune", "vision", "user_data")

#: A batch line runner: (body, custom_id, batch_id, raw line) -> (status_code, response body or None, error or None).
LineRunner = Callable[[dict, str, str, bytes], tuple[int, dict | None, dict | None]]


class ApiError(Exception):
    """An error the server answers with ``{"error": {...}}`` and the given HTTP status."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers = headers or {}

    def payload(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


def parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """Parse a ``multipart/form-data`` body into ``name -> (filename or None, bytes)``."""
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    if not content_type.lower().startswith("multipart/form-data") or not match:
        raise ApiError(400, "POST /v1/files needs a multipart/form-data body with a boundary")
    delimiter = b"--" + match.group(1).encode("latin-1")
    fields: dict[str, tuple[str | None, bytes]] = {}
    for chunk in body.split(delimiter)[1:]:
        if chunk.startswith(b"--"):
            break
        head, sep, data = chunk.partition(b"\r\n\r\n")
        if not sep:
            raise ApiError(400, "malformed multipart part: no blank line after its headers")
        if data.endswith(b"\r\n"):
            data = data[:-2]
        disposition = next(
            (line for line in head.decode("latin-1").split("\r\n") if line.lower().startswith("content-disposition")),
            "",
        )
        name = re.search(r'\bname="([^"]*)"', disposition)
        filename = re.search(r'\bfilename="([^"]*)"', disposition)
        if name:
            fields[name.group(1)] = (filename.group(1) if filename else None, data)
    return fields


@dataclass
class _File:
    meta: dict[str, Any]
    data: bytes


@dataclass
class _Batch:
    meta: dict[str, Any]
    lines: list[tuple[str, dict, bytes]] = field(default_factory=list)


class Storage:
    """Files and batches, keyed by deterministic ids derived from the seed and a counter."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.files: dict[str, _File] = {}
        self.batches: dict[str, _Batch] = {}
        self._counter = 0

    def new_id(self, prefix: str) -> str:
        self._counter += 1
        digest = hashlib.sha256(f"{self.seed}|{prefix}|{self._counter}".encode()).hexdigest()
        return f"{prefix}{digest[:24]}"

    # -- files ---------------------------------------------------------------

    def add_file(self, filename: str, purpose: str, data: bytes) -> dict[str, Any]:
        file_id = self.new_id("file-")
        meta = {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
            "status_details": None,
            "expires_at": None,
        }
        self.files[file_id] = _File(meta, data)
        return dict(meta)

    def upload(self, content_type: str, body: bytes) -> dict[str, Any]:
        fields = parse_multipart(content_type, body)
        if "file" not in fields:
            raise ApiError(400, "missing required parameter: 'file'", param="file")
        purpose = fields.get("purpose", (None, b""))[1].decode("utf-8", "replace").strip()
        if purpose not in FILE_PURPOSES:
            raise ApiError(400, f"invalid purpose {purpose!r}; use one of {', '.join(FILE_PURPOSES)}", param="purpose")
        filename, data = fields["file"]
        return self.add_file(filename or "upload", purpose, data)

    def _file(self, file_id: str) -> _File:
        if file_id not in self.files:
            raise ApiError(404, f"No such File object: {file_id}", code="file_not_found", param="id")
        return self.files[file_id]

    def file_meta(self, file_id: str) -> dict[str, Any]:
        return dict(self._file(file_id).meta)

    def file_content(self, file_id: str) -> bytes:
        return self._file(file_id).data

    def delete_file(self, file_id: str) -> dict[str, Any]:
        self._file(file_id)
        del self.files[file_id]
        return {"id": file_id, "object": "file", "deleted": True}

    def list_files(self) -> dict[str, Any]:
        data = [dict(f.meta) for f in self.files.values()]
        return {"object": "list", "data": data, "has_more": False}

    # -- batches -------------------------------------------------------------

    def create_batch(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise ApiError(400, "the request body must be a JSON object")
        for name in ("input_file_id", "endpoint", "completion_window"):
            if not isinstance(body.get(name), str):
                raise ApiError(400, f"missing required parameter: {name!r}", param=name)
        self._file(body["input_file_id"])
        if body["endpoint"] not in BATCH_ENDPOINTS:
            raise ApiError(400, f"endpoint must be one of {', '.join(BATCH_ENDPOINTS)}", param="endpoint")
        if body["completion_window"] not in COMPLETION_WINDOWS:
            raise ApiError(400, "completion_window must be '24h'", param="completion_window")
        now = int(time.time())
        meta: dict[str, Any] = {
            "id": self.new_id("batch_"),
            "object": "batch",
            "endpoint": body["endpoint"],
            "errors": None,
            "input_file_id": body["input_file_id"],
            "completion_window": body["completion_window"],
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": now,
            "in_progress_at": None,
            "expires_at": now + 86400,
            "finalizing_at": None,
            "completed_at": None,
            "failed_at": None,
            "expired_at": None,
            "cancelling_at": None,
            "cancelled_at": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
            "model": None,
        }
        self.batches[meta["id"]] = _Batch(meta)
        return dict(meta)

    def _batch(self, batch_id: str) -> _Batch:
        if batch_id not in self.batches:
            raise ApiError(404, f"No such Batch object: {batch_id}", code="batch_not_found", param="id")
        return self.batches[batch_id]

    def get_batch(self, batch_id: str, run_line: LineRunner) -> dict[str, Any]:
        """Return the batch after advancing it one state."""
        batch = self._batch(batch_id)
        meta, now = batch.meta, int(time.time())
        if meta["status"] == "validating":
            errors = self._validate(batch)
            if errors:
                meta.update(status="failed", failed_at=now, errors={"object": "list", "data": errors})
            else:
                meta.update(status="in_progress", in_progress_at=now)
        elif meta["status"] == "in_progress":
            self._run(batch, run_line)
            meta.update(status="completed", finalizing_at=now, completed_at=now)
        elif meta["status"] == "cancelling":
            meta.update(status="cancelled", cancelled_at=now)
        return json.loads(json.dumps(meta))

    def cancel_batch(self, batch_id: str) -> dict[str, Any]:
        meta = self._batch(batch_id).meta
        if meta["status"] in ("validating", "in_progress"):
            meta.update(status="cancelling", cancelling_at=int(time.time()))
        elif meta["status"] not in ("cancelling", "cancelled"):
            raise ApiError(400, f"cannot cancel batch {batch_id}: its status is {meta['status']}")
        return json.loads(json.dumps(meta))

    def list_batches(self) -> dict[str, Any]:
        data = [json.loads(json.dumps(b.meta)) for b in self.batches.values()]
        return {
            "object": "list",
            "data": data,
            "has_more": False,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
        }

    def _validate(self, batch: _Batch) -> list[dict[str, Any]]:
        meta = batch.meta
        data = self._file(meta["input_file_id"]).data
        errors: list[dict[str, Any]] = []
        seen: set[str] = set()
        for n, raw in enumerate(data.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                errors.append({"code": "invalid_json_line", "line": n, "message": f"line {n} is not JSON: {e}"})
                continue
            problem = None
            if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
                problem = "needs a string custom_id"
            elif line["custom_id"] in seen:
                problem = f"repeats custom_id {line['custom_id']!r}"
            elif line.get("method") != "POST" or line.get("url") != meta["endpoint"]:
                problem = f"must have method POST and url {meta['endpoint']}"
            elif not isinstance(line.get("body"), dict):
                problem = "needs a JSON object body"
            if problem:
                errors.append({"code": "invalid_request", "line": n, "message": f"line {n} {problem}"})
                continue
            seen.add(line["custom_id"])
            batch.lines.append((line["custom_id"], line["body"], raw.strip()))
        if not batch.lines and not errors:
            errors.append({"code": "empty_file", "line": None, "message": "the input file has no requests"})
        meta["request_counts"]["total"] = len(batch.lines)
        if batch.lines:
            meta["model"] = batch.lines[0][1].get("model")
        return errors

    def _run(self, batch: _Batch, run_line: LineRunner) -> None:
        meta = batch.meta
        outputs: list[str] = []
        failures: list[str] = []
        for custom_id, body, raw in batch.lines:
            status, response_body, error = run_line(body, custom_id, meta["id"], raw)
            record = {
                "id": self.new_id("batch_req_"),
                "custom_id": custom_id,
                "response": None
                if response_body is None
                else {
                    "status_code": status,
                    "request_id": self.new_id("req_"),
                    "body": response_body,
                },
                "error": error,
            }
            (outputs if status == 200 and error is None else failures).append(json.dumps(record))
        meta["request_counts"].update(completed=len(outputs), failed=len(failures))
        if outputs:
            data = ("\n".join(outputs) + "\n").encode()
            meta["output_file_id"] = self.add_file(f"{meta['id']}_output.jsonl", "batch_output", data)["id"]
        if failures:
            data = ("\n".join(failures) + "\n").encode()
            meta["error_file_id"] = self.add_file(f"{meta['id']}_error.jsonl", "batch_output", data)["id"]
