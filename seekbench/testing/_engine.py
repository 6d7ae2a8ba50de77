"""The mock server's request handling, independent of sockets: routing, auth, faults, the log.

:meth:`Engine.handle` turns ``(method, path, headers, body)`` into a
:class:`Reply` and records one log entry; the HTTP layer only performs the
reply's action (respond, drop the connection, or hold then respond).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from ._batches import ApiError, Storage
from ._faults import (
    CONTENT_FAULTS,
    FAULT_HEADER,
    FAULT_KINDS,
    FaultSpec,
    apply_content_fault,
    request_key,
)
from ._profile import ServerProfile
from ._prompts import default_policy
from ._protocol import (
    Policy,
    PolicyError,
    count_tokens,
    extract_trace_id,
    prompt_tokens,
    request_steps,
)

DEFAULT_MODELS = ("seekbench-mock",)

#: transport faults answered at once, without running the policy.
_IMMEDIATE = ("drop", "429", "500", "503")
_TRANSPORT_ERRORS = {
    "429": (429, "Rate limit reached (injected fault)", "rate_limit_error", "rate_limit_exceeded"),
    "500": (500, "The server had an error processing your request (injected fault)", "server_error", None),
    "503": (503, "The server is overloaded (injected fault)", "server_error", "service_unavailable"),
}


@dataclass
class Reply:
    """What the HTTP layer must do: respond, drop the connection, or hold ``timeout_s`` then respond."""

    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    action: Literal["respond", "drop", "hold"] = "respond"


def _json_reply(status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(payload, ensure_ascii=False).encode(), headers=dict(headers or {}))


def _error_reply(error: ApiError) -> Reply:
    return _json_reply(error.status, error.payload(), error.headers)


class Engine:
    """Request handling and shared state for one mock server (thread-safe)."""

    def __init__(
        self,
        *,
        policy: Policy | None = None,
        faults: str | FaultSpec | Mapping[str, float] | None = None,
        seed: int = 0,
        api_key: str | None = None,
        request_log: str | Path | None = None,
        retry_after_s: int = 0,
        models: tuple[str, ...] = DEFAULT_MODELS,
        profile: ServerProfile | None = None,
    ) -> None:
        self.policy: Policy = policy if policy is not None else default_policy
        self.profile = profile if profile is not None else ServerProfile()
        self.faults = FaultSpec.parse(faults)
        self.seed = seed
        self.retry_after_s = retry_after_s
        self.models = tuple(models)
        self._api_key = api_key
        self._lock = threading.RLock()
        self._attempts: dict[str, int] = {}
        self._storage = Storage(seed)
        self.requests: list[dict[str, Any]] = []
        self._log_path = Path(request_log) if request_log is not None else None
        self._log_file: IO[str] | None = None
        if self._log_path is not None:
            self._log_file = self._log_path.open("a", encoding="utf-8")

    # -- bookkeeping ----------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None

    def reset(self) -> None:
        """Forget the in-memory log, the attempt counters, files and batches (the log file stays)."""
        with self._lock:
            self.requests.clear()
            self._attempts.clear()
            self._storage = Storage(self.seed)

    def log_snapshot(self) -> list[dict[str, Any]]:
        """A copy of the in-memory request log."""
        with self._lock:
            return [dict(entry) for entry in self.requests]

    def _log(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(entry)
            if self._log_file is not None:
                self._log_file.write(json.dumps(entry, ensure_ascii=False) + "\n")
                self._log_file.flush()

    @staticmethod
    def _entry(source: str, method: str, path: str, raw: bytes) -> dict[str, Any]:
        now = _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")
        return {
            "time": now,
            "source": source,
            "method": method,
            "path": path,
            "status": None,
            "fault": None,
            "body_sha256": hashlib.sha256(raw).hexdigest(),
            "model": None,
            "trace_id": None,
            "custom_id": None,
            "batch_id": None,
            "attempt": None,
        }

    # -- HTTP entry point -------------------------------------------------------

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Reply:
        """Answer one HTTP request (header names lower-case) and log it."""
        path = path.split("?", 1)[0].rstrip("/") or "/"
        entry = self._entry("http", method, path, body)
        try:
            reply = self._dispatch(method, path, headers, body, entry)
        except ApiError as error:
            reply = _error_reply(error)
        entry["status"] = None if reply.action == "drop" else reply.status
        self._log(entry)
        return reply

    def _dispatch(self, method: str, path: str, headers: Mapping[str, str], body: bytes, entry: dict) -> Reply:
        self._check_auth(headers)
        forced = self._forced_fault(headers)
        if method == "POST" and path == "/v1/chat/completions":
            return self._chat_http(body, forced, entry)
        if forced in CONTENT_FAULTS:
            raise ApiError(400, f"{FAULT_HEADER}: {forced} applies only to /v1/chat/completions")
        if forced is not None and forced != "none":
            entry["fault"] = forced
            if forced in _IMMEDIATE:
                return self._transport_reply(forced)
        reply = self._route(method, path, headers, body, entry)
        if forced == "timeout":
            reply.action = "hold"
        return reply

    def _check_auth(self, headers: Mapping[str, str]) -> None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(
                401, "You didn't provide an API key; send 'Authorization: Bearer <key>'.", code="missing_api_key"
            )
        if self._api_key is not None and not hmac.compare_digest(token.strip().encode(), self._api_key.encode()):
            raise ApiError(401, "Incorrect API key provided.", code="invalid_api_key")

    @staticmethod
    def _forced_fault(headers: Mapping[str, str]) -> str | None:
        value = headers.get(FAULT_HEADER.lower())
        if value is None:
            return None
        value = value.strip().lower()
        if value == "none":
            return "none"
        if value not in FAULT_KINDS:
            raise ApiError(400, f"{FAULT_HEADER}: unknown fault {value!r}; use none or one of {', '.join(FAULT_KINDS)}")
        return value

    def _transport_reply(self, fault: str) -> Reply:
        """The reply of an immediate transport fault: drop, 429, 500 or 503."""
        if fault == "drop":
            return Reply(0, action="drop")
        status, message, kind, code = _TRANSPORT_ERRORS[fault]
        headers = {"Retry-After": str(self.retry_after_s)} if fault == "429" else {}
        return _error_reply(ApiError(status, message, type=kind, code=code, headers=headers))

    def _route(self, method: str, path: str, headers: Mapping[str, str], body: bytes, entry: dict) -> Reply:
        if path == "/props" and method == "GET" and self.profile.props() is not None:
            return _json_reply(200, self.profile.props())
        parts = path.strip("/").split("/")
        if parts[:1] != ["v1"]:
            raise ApiError(404, f"unknown path {path}; the mock server serves /v1/...")
        parts = parts[1:]
        with self._lock:
            store = self._storage
            if parts == ["models"] and method == "GET":
                return _json_reply(200, {"object": "list", "data": [self._model(m) for m in self.models]})
            if len(parts) == 2 and parts[0] == "models" and method == "GET":
                if parts[1] not in self.models:
                    raise ApiError(404, f"The model {parts[1]!r} does not exist", code="model_not_found")
                return _json_reply(200, self._model(parts[1]))
            if parts == ["files"] and method == "POST":
                return _json_reply(200, store.upload(headers.get("content-type", ""), body))
            if parts == ["files"] and method == "GET":
                return _json_reply(200, store.list_files())
            if len(parts) == 2 and parts[0] == "files" and method == "GET":
                return _json_reply(200, store.file_meta(parts[1]))
            if len(parts) == 2 and parts[0] == "files" and method == "DELETE":
                return _json_reply(200, store.delete_file(parts[1]))
            if len(parts) == 3 and parts[0] == "files" and parts[2] == "content" and method == "GET":
                return Reply(200, store.file_content(parts[1]), content_type="application/octet-stream")
            if parts == ["batches"] and method == "POST":
                batch = store.create_batch(self._parse_json(body))
                entry["batch_id"] = batch["id"]
                return _json_reply(200, batch)
            if parts == ["batches"] and method == "GET":
                return _json_reply(200, store.list_batches())
            if len(parts) == 2 and parts[0] == "batches" and method == "GET":
                entry["batch_id"] = parts[1]
                return _json_reply(200, store.get_batch(parts[1], self._run_batch_line))
            if len(parts) == 3 and parts[0] == "batches" and parts[2] == "cancel" and method == "POST":
                entry["batch_id"] = parts[1]
                return _json_reply(200, store.cancel_batch(parts[1]))
        raise ApiError(404, f"the mock server has no {method} {path}")

    def _model(self, model_id: str) -> dict[str, Any]:
        return self.profile.model_entry({"id": model_id, "object": "model", "created": 0, "owned_by": "seekbench"})

    @staticmethod
    def _parse_json(body: bytes) -> Any:
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ApiError(400, f"the request body is not valid JSON: {e}") from e

    # -- chat completions ---------------------------------------------------------

    def _chat_http(self, body: bytes, forced: str | None, entry: dict[str, Any]) -> Reply:
        request = self._parse_json(body)
        status, payload, fault = self._chat(request, forced, entry)
        if fault in _IMMEDIATE:
            return self._transport_reply(fault)
        reply = _json_reply(status, payload)
        if fault == "timeout":
            reply.action = "hold"
        return reply

    def _chat(self, request: Any, forced: str | None, entry: dict[str, Any]) -> tuple[int, dict[str, Any], str | None]:
        """Run one chat completion; return (status, payload, fault); payload is {} for transport faults."""
        if not isinstance(request, dict):
            raise ApiError(400, "the request body must be a JSON object")
        if not isinstance(request.get("model"), str):
            raise ApiError(400, "missing required parameter: 'model'", param="model")
        if not isinstance(request.get("messages"), list) or not request["messages"]:
            raise ApiError(400, "'messages' must be a non-empty array", param="messages")
        if request.get("stream"):
            raise ApiError(400, "the seekbench mock server does not stream; send stream=false", param="stream")
        key = request_key(request)
        with self._lock:
            attempt = self._attempts.get(key, 0)
            self._attempts[key] = attempt + 1
        entry.update(model=request["model"], trace_id=extract_trace_id(request), attempt=attempt)
        fault = forced if forced is not None else self.faults.choose(seed=self.seed, key=key, attempt=attempt)
        fault = None if fault == "none" else fault
        entry["fault"] = fault
        if fault in _IMMEDIATE:
            return 0, {}, fault
        n_prompt = prompt_tokens(request)
        self.profile.check(request, n_prompt)
        try:
            content = self.policy(request)
        except PolicyError as e:
            raise ApiError(e.status, e.message) from e
        except Exception as e:  # the policy is user code: report it as a 500, keep serving
            raise ApiError(500, f"the labeling policy raised {type(e).__name__}: {e}", type="server_error") from e
        if not isinstance(content, str):
            raise ApiError(500, f"the labeling policy returned {type(content).__name__}, not str", type="server_error")
        finish_reason = "stop"
        if fault in CONTENT_FAULTS:
            content, finish_reason = apply_content_fault(fault, content, request_steps(request))
        completion_tokens = count_tokens(content)
        payload = {
            "id": "chatcmpl-" + hashlib.sha256(f"{key}|{attempt}".encode()).hexdigest()[:24],
            "object": "chat.completion",
            "created": int(_dt.datetime.now(_dt.UTC).timestamp()),
            "model": self.profile.served_model or request["model"],
            "system_fingerprint": "seekbench-mock",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": n_prompt,
                "completion_tokens": completion_tokens,
                "total_tokens": n_prompt + completion_tokens,
            },
        }
        return 200, payload, fault

    def _run_batch_line(
        self, body: dict, custom_id: str, batch_id: str, raw: bytes
    ) -> tuple[int, dict | None, dict | None]:
        entry = self._entry("batch", "POST", "/v1/chat/completions", raw)
        entry.update(custom_id=custom_id, batch_id=batch_id)
        try:
            status, payload, fault = self._chat(body, None, entry)
        except ApiError as error:
            entry["status"] = error.status
            self._log(entry)
            return error.status, error.payload(), None
        if fault in ("429", "500", "503"):
            reply = self._transport_reply(fault)
            entry["status"] = reply.status
            self._log(entry)
            return reply.status, json.loads(reply.body), None
        if fault in ("drop", "timeout"):
            self._log(entry)
            code = "request_timeout" if fault == "timeout" else "server_error"
            return 0, None, {"code": code, "message": f"the request failed ({fault}, injected fault)"}
        entry["status"] = status
        self._log(entry)
        return status, payload, None
