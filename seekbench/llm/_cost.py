"""Money and tokens: the cost of a call from its usage, and token bounds used before a call.

Cost is always computed from the usage the server reports, times the judge's
prices: ``cost = prompt_tokens * price_in / 1e6 + completion_tokens * price_out / 1e6``
(times ``batch_discount`` for the Batch API). Before a request is sent, the
budget check needs a bound that cannot be exceeded; :func:`prompt_token_bound`
gives one without a tokenizer (see its notes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: Tokens a chat request adds around each message and once per request (role markers, priming).
#: OpenAI documents 3-4 per message and 3 per reply for its chat models; we bound with 8 and 8.
MESSAGE_OVERHEAD_TOKENS = 8
REQUEST_OVERHEAD_TOKENS = 8


@dataclass(frozen=True)
class Prices:
    """USD per million input (prompt) and output (completion) tokens, and the Batch API factor."""

    input_per_mtok: float
    output_per_mtok: float
    batch_discount: float = 0.5

    @classmethod
    def of(cls, config) -> Prices:
        """The prices of a :class:`~seekbench.llm.JudgeConfig`."""
        return cls(config.price_input_per_mtok, config.price_output_per_mtok, config.batch_discount)


def cost_usd(prompt_tokens: int, completion_tokens: int, prices: Prices, *, batch: bool = False) -> float:
    """Cost in USD of one call from its reported usage.

    ``cost = (prompt_tokens * input_per_mtok + completion_tokens * output_per_mtok) / 1e6``,
    times ``batch_discount`` when ``batch`` is true.

    Parameters
    ----------
    prompt_tokens, completion_tokens : int
        The ``usage`` the server reported (>= 0).
    prices : Prices
    batch : bool, default False
        The call went through the Batch API.

    Returns
    -------
    float
        USD, >= 0.

    Examples
    --------
    >>> cost_usd(1_000_000, 500_000, Prices(0.40, 1.60))
    1.2
    """
    value = (prompt_tokens * prices.input_per_mtok + completion_tokens * prices.output_per_mtok) / 1e6
    return value * prices.batch_discount if batch else value


def message_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def prompt_token_bound(messages: Sequence[dict]) -> int:
    """An upper bound on the prompt tokens of a chat request, without a tokenizer.

    Byte-level BPE tokenizers (OpenAI's ``o200k_base``, ``cl100k_base``, and
    those of the open models vLLM and Ollama serve) emit at least one byte per
    token, so a text of ``b`` UTF-8 bytes is at most ``b`` tokens; each
    message adds at most :data:`MESSAGE_OVERHEAD_TOKENS`. The bound is about
    four times the true count for English: the budget check reserves it only
    while a request is in flight, so it stops at most a few requests early.

    Notes
    -----
    The response-format schema sent with ``json_schema`` mode is also billed as
    prompt tokens by some providers; callers add its bytes via ``extra_text``
    of :func:`request_cost_bound`.
    """
    return REQUEST_OVERHEAD_TOKENS + sum(
        len(message_text(m).encode("utf-8")) + MESSAGE_OVERHEAD_TOKENS for m in messages
    )


def estimate_tokens(text: str) -> int:
    """A rough token count, ``ceil(utf8_bytes / 3)``, used to decide prompt truncation.

    English prose averages about four bytes per token with OpenAI's tokenizers;
    three errs on the safe side, so a prompt judged to fit does fit. It is a
    fixed function of the text (no optional tokenizer changes it), so the
    rendered prompt, and hence the cache key, is the same on every machine.

    >>> estimate_tokens("abcdef")
    2
    """
    return math.ceil(len(text.encode("utf-8")) / 3)


def request_cost_bound(
    messages: Sequence[dict], max_tokens: int, prices: Prices, *, batch: bool = False, extra_text: str = ""
) -> float:
    """The most a request can cost: :func:`prompt_token_bound` inputs and ``max_tokens`` outputs."""
    n_in = prompt_token_bound(messages) + len(extra_text.encode("utf-8"))
    return cost_usd(n_in, max_tokens, prices, batch=batch)


class Budget:
    """Money allowed for the run: a request is sent only if ``spent + in flight + its bound <= limit``."""

    def __init__(self, limit_usd: float | None) -> None:
        self.limit = limit_usd
        self.spent = 0.0
        self.reserved = 0.0

    def reserve(self, amount: float) -> bool:
        if self.limit is None:
            return True
        if self.spent + self.reserved + amount > self.limit:
            return False
        self.reserved += amount
        return True

    def release(self, amount: float) -> None:
        if self.limit is not None:
            self.reserved -= amount

    def settle(self, amount: float, actual: float) -> None:
        self.release(amount)
        self.spent += actual
