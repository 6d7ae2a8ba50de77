"""What kind of server the mock plays: which response formats it accepts, its context, slots and model.

Real OpenAI-compatible servers differ where the judge pipeline must adapt, and
a :class:`ServerProfile` reproduces each difference over real HTTP:

- **response formats**: llama.cpp's server answers ``json_schema`` with HTTP 500
  (``response_format type must be one of "text" or "json_object", but got:
  json_schema``); others refuse an unsupported ``response_format`` with a 400
  naming the parameter;
- **context**: a prompt (counted as :func:`~seekbench.testing.count_tokens`
  counts) plus the requested answer tokens longer than ``context_tokens`` is
  refused with a 400 naming the context length (vLLM's wording, or llama.cpp's
  ``exceed_context_size_error``);
- **metadata**: ``GET /props`` (llama.cpp: ``default_generation_settings.n_ctx``,
  ``total_slots``, ``model_path``) and extra fields in ``GET /v1/models``
  (vLLM ``max_model_len``, llama.cpp ``meta.n_ctx_train``);
- **served model**: the ``model`` a response reports (llama.cpp reports its own
  alias whatever the request asked for).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ._batches import ApiError

FORMATS = ("json_schema", "json_object", "text")


@dataclass(frozen=True)
class ServerProfile:
    """The server the mock plays (default: an OpenAI-like server that accepts everything, reports nothing).

    Parameters
    ----------
    flavour : {"openai", "llama.cpp", "vllm"}
        How refusals are worded and what metadata is served.
    response_formats : tuple of str
        The ``response_format`` types accepted (``text`` = none sent).
    context_tokens : int, optional
        Refuse a request whose prompt and ``max_tokens`` exceed this; reported as metadata.
    slots : int, optional
        Parallel slots reported by ``/props`` (llama.cpp).
    model_path : str, optional
        The weights file reported by ``/props`` (llama.cpp).
    served_model : str, optional
        The ``model`` responses report (default: the one requested).

    Examples
    --------
    >>> p = ServerProfile.llama_cpp(context_tokens=8192)
    >>> p.response_formats, p.slots
    (('json_object', 'text'), 1)
    """

    flavour: Literal["openai", "llama.cpp", "vllm"] = "openai"
    response_formats: tuple[str, ...] = FORMATS
    context_tokens: int | None = None
    slots: int | None = None
    model_path: str | None = None
    served_model: str | None = None

    @classmethod
    def llama_cpp(
        cls,
        *,
        context_tokens: int = 8192,
        slots: int = 1,
        model_path: str = "/models/SmolLM2-135M-Instruct-Q8_0.gguf",
        served_model: str = "SmolLM2-135M-Instruct-Q8_0.gguf",
    ) -> ServerProfile:
        """llama.cpp's server: json_object and text only (500 on json_schema), ``/props`` with its limits."""
        return cls("llama.cpp", ("json_object", "text"), context_tokens, slots, model_path, served_model)

    @classmethod
    def vllm(cls, *, context_tokens: int = 8192, served_model: str | None = None) -> ServerProfile:
        """vLLM: every format, ``max_model_len`` in ``/v1/models``."""
        return cls("vllm", FORMATS, context_tokens, None, None, served_model)

    def check(self, request: dict[str, Any], prompt_tokens: int) -> None:
        """Refuse a request this server would refuse (its response format, its length)."""
        fmt = request.get("response_format")
        kind = fmt.get("type") if isinstance(fmt, dict) else ("text" if fmt is None else str(fmt))
        if kind not in self.response_formats:
            if self.flavour == "llama.cpp":
                allowed = " or ".join(f'"{f}"' for f in self.response_formats)
                raise ApiError(
                    500, f"response_format type must be one of {allowed}, but got: {kind}", type="server_error"
                )
            raise ApiError(
                400,
                f"response_format of type {kind!r} is not supported by this server; "
                f"use one of {', '.join(self.response_formats)}",
                param="response_format",
            )
        if self.context_tokens is None:
            return
        answer = request.get("max_tokens") or request.get("max_completion_tokens") or 0
        if self.flavour == "llama.cpp" and prompt_tokens > self.context_tokens:
            raise ApiError(
                400,
                "the request exceeds the available context size, try increasing it",
                type="exceed_context_size_error",
            )
        if self.flavour != "llama.cpp" and prompt_tokens + int(answer) > self.context_tokens:
            raise ApiError(
                400,
                f"This model's maximum context length is {self.context_tokens} tokens. However, you requested "
                f"{prompt_tokens + int(answer)} tokens ({prompt_tokens} in the messages, {answer} in the "
                "completion). Please reduce the length of the messages or completion.",
                param="messages",
                code="context_length_exceeded",
            )

    def model_entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        """A ``/v1/models`` entry with this server's extra fields."""
        if self.context_tokens is None:
            return entry
        if self.flavour == "vllm":
            return {**entry, "max_model_len": self.context_tokens}
        if self.flavour == "llama.cpp":
            return {**entry, "meta": {"n_ctx_train": max(self.context_tokens, 131072)}}
        return entry

    def props(self) -> dict[str, Any] | None:
        """The body of ``GET /props`` (llama.cpp only; None: the path does not exist)."""
        if self.flavour != "llama.cpp":
            return None
        return {
            "default_generation_settings": {"n_ctx": self.context_tokens},
            "total_slots": self.slots,
            "model_path": self.model_path,
        }
