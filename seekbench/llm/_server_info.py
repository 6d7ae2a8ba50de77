"""What an OpenAI-compatible server says about itself: its context window, parallel slots and model.

Read once per run, before the first request, where the server reports it:

- ``GET /v1/models``: the model ids; vLLM adds ``max_model_len``, llama.cpp's
  server ``meta.n_ctx_train`` (the training context, an upper bound);
- ``GET /props`` (llama.cpp's server): ``default_generation_settings.n_ctx``
  (the context each slot serves), ``total_slots`` and ``model_path`` (the
  weights file).

Nothing here is required: a server that reports nothing (OpenAI's API has no
``/props``) leaves every field None and the judge file's values stand. A
context-length refusal at run time is recognised by
:func:`context_refusal` and names the server's window when the message does.
"""

from __future__ import annotations

import http.client
import json
import re
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import PurePath
from urllib.parse import urlparse

#: Seconds each probe may take (a server that does not answer quickly is simply not probed).
PROBE_TIMEOUT_S = 5.0
#: Bytes read of a probe's answer at most: the documents are small, and a server that sends more is not probed.
PROBE_MAX_BYTES = 4 << 20
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


@dataclass(frozen=True)
class ServerInfo:
    """What a server reported (None: not reported)."""

    context_tokens: int | None = None
    slots: int | None = None
    model_ids: tuple[str, ...] = ()
    model_file: str | None = None
    sources: tuple[str, ...] = field(default=())

    def provenance(self) -> dict:
        """The fields label provenance records: the weights file and the ids ``/v1/models`` lists."""
        out: dict = {}
        if self.model_file:
            out["model_file"] = self.model_file
        if self.model_ids:
            out["server_models"] = list(self.model_ids)
        return out


def is_local(base_url: str | None) -> bool:
    """Whether the endpoint is on this machine (the judge then defaults to the server's slot count)."""
    return (urlparse(base_url or "").hostname or "") in _LOOPBACK


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def probe_server(base_url: str | None, api_key: str | None, model: str) -> ServerInfo:
    """Ask ``base_url`` for ``/v1/models`` and (at its root) ``/props``; what it does not report stays None."""
    if not base_url:
        return ServerInfo()  # OpenAI's API: its limits are in the judge file
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    base = base_url.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    ctx: int | None = None
    slots: int | None = None
    ids: list[str] = []
    model_file: str | None = None
    sources: list[str] = []
    # The standard library's client: two small GETs need no dependency of their own (the openai
    # client's transport is an implementation detail of that package, httpx or its successor).
    models = _get(f"{base}/models", headers)
    if isinstance(models, dict) and isinstance(models.get("data"), list):
        sources.append("/v1/models")
        for m in models["data"]:
            if not isinstance(m, dict):
                continue
            if isinstance(m.get("id"), str):
                ids.append(m["id"])
            if m.get("id") == model or len(models["data"]) == 1:
                meta = m["meta"] if isinstance(m.get("meta"), dict) else {}
                ctx = _int(m.get("max_model_len")) or _int(m.get("context_length")) or _int(meta.get("n_ctx"))
                ctx = ctx or _int(meta.get("n_ctx_train"))
    props = _get(f"{root}/props", headers)
    if isinstance(props, dict) and props:
        sources.append("/props")
        settings = props.get("default_generation_settings")
        n_ctx = _int(settings.get("n_ctx")) if isinstance(settings, dict) else None
        ctx = n_ctx or ctx  # the slot's context is what a request gets; n_ctx_train only bounds it
        slots = _int(props.get("total_slots"))
        path = props.get("model_path")
        model_file = PurePath(path).name if isinstance(path, str) and path else None
    return ServerInfo(ctx, slots, tuple(ids), model_file, tuple(sources))


def _get(url: str, headers: dict[str, str]):
    """The JSON document at ``url``, or None for anything else (no answer, an error status, not JSON)."""
    if urlparse(url).scheme not in ("http", "https"):
        return None
    request = urllib.request.Request(url, headers={"Accept": "application/json", **headers})
    # The socket timeout bounds each read; the deadline bounds the whole probe (a server sending a
    # byte a second would otherwise hold it for as long as it likes).
    deadline = time.monotonic() + PROBE_TIMEOUT_S
    chunks: list[bytes] = []
    size = 0
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S) as resp:  # noqa: S310 (scheme checked)
            if resp.status != 200:
                return None
            while chunk := resp.read1(64 << 10):
                chunks.append(chunk)
                size += len(chunk)
                if size > PROBE_MAX_BYTES or time.monotonic() > deadline:
                    return None
    except (OSError, ValueError, http.client.HTTPException):
        return None  # refused, timed out, reset, an HTTP error status or a malformed answer: not probed
    body = b"".join(chunks)
    try:
        return json.loads(body)
    except ValueError:
        return None


_CONTEXT_WORDS = re.compile(
    r"context[ _-]?(length|size|window)|maximum context|exceed_context_size|too many tokens|prompt is too long",
    re.I,
)
_CONTEXT_NUMBER = re.compile(
    r"(?:maximum context length is|context (?:length|size|window) (?:is|of)|n_ctx\D{0,4})\s*(\d+)", re.I
)


def context_refusal(status: int | None, message: str | None) -> tuple[bool, int | None]:
    """Whether an HTTP error refuses a prompt as too long for the model's context, and the window it names.

    >>> context_refusal(400, "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens")
    (True, 8192)
    >>> context_refusal(400, "the request exceeds the available context size, try increasing it")
    (True, None)
    """
    if status is None or status not in (400, 413, 422) or not message or not _CONTEXT_WORDS.search(message):
        return False, None
    m = _CONTEXT_NUMBER.search(message)
    return True, int(m.group(1)) if m else None
