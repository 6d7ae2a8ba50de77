"""A chat completion as received, and the check that a server's answer is one.

Servers answer 200 with things that are not chat completions: a proxy's HTML
page, a body cut short, ``{"choices": "nope"}``, ``{"choices": []}``, a message
whose content is null. :func:`completion_from_text` and :func:`completion_from_body`
turn every such answer into a :class:`NotACompletion` naming what was wrong, so
that the caller retries it like any transient failure and, in the end, records
the item as failed with that reason; nothing downstream sees a half-parsed body.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass

from .._errors import SeekbenchError

#: Characters of an unusable answer quoted in the failure reason.
QUOTED_CHARS = 200


@dataclass(frozen=True)
class Completion:
    """One successful chat completion, as received."""

    raw: str
    content: str | None
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_s: float | None
    created: str
    attempts: int = 1


class NotACompletion(SeekbenchError):
    """A server's answer that holds no usable chat completion (``kind``: ``not a chat completion`` or
    ``empty answer``); the message says what was received."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind


def utc_now() -> str:
    """ISO 8601 UTC, seconds precision, ``Z`` suffix."""
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return repr(text[:QUOTED_CHARS] + ("..." if len(text) > QUOTED_CHARS else ""))


def _count(usage: object, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def completion_from_body(body: object, *, latency_s: float | None = None, raw: str | None = None) -> Completion:
    """A :class:`Completion` from a decoded chat-completion response body.

    Raises
    ------
    NotACompletion
        ``body`` is not an object with a non-empty ``choices`` list whose first
        choice has a ``message`` object, or that message's content is null or empty.

    Examples
    --------
    >>> completion_from_body({"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]}).content
    'ok'
    >>> completion_from_body({"choices": []})
    Traceback (most recent call last):
    ...
    seekbench.llm._completion.NotACompletion: empty answer: the answer has no choices
    """
    raw = json.dumps(body, ensure_ascii=False) if raw is None else raw
    if not isinstance(body, dict):
        raise NotACompletion("not a chat completion", f"a JSON {type(body).__name__}, not an object: {_quote(raw)}")
    choices = body.get("choices")
    if not isinstance(choices, list):
        raise NotACompletion("not a chat completion", f"no choices list: {_quote(raw)}")
    if not choices:
        raise NotACompletion("empty answer", "the answer has no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise NotACompletion("not a chat completion", f"choices[0] has no message object: {_quote(raw)}")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise NotACompletion("not a chat completion", f"the message content is a {type(content).__name__}")
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    # Empty because the model ran out of tokens or was filtered is an answer (the same request gets
    # the same again; the caller's repair decides); empty for no reason is a transient failure.
    if (not content or not content.strip()) and finish not in ("length", "content_filter"):
        refusal = message.get("refusal")
        said = f" (refusal: {_quote(refusal)})" if isinstance(refusal, str) and refusal else ""
        raise NotACompletion("empty answer", f"the message content is {'null' if content is None else 'empty'}{said}")
    usage = body.get("usage")
    return Completion(
        raw=raw,
        content=content,
        finish_reason=finish,
        prompt_tokens=_count(usage, "prompt_tokens"),
        completion_tokens=_count(usage, "completion_tokens"),
        latency_s=latency_s,
        created=utc_now(),
    )


def completion_from_text(text: str, *, content_type: str | None = None, latency_s: float | None = None) -> Completion:
    """A :class:`Completion` from a response body as text (see :func:`completion_from_body`).

    Raises
    ------
    NotACompletion
        The text is not JSON (an HTML page, a body cut short), or not a usable completion.

    Examples
    --------
    >>> completion_from_text("<html>Bad gateway</html>", content_type="text/html")
    Traceback (most recent call last):
    ...
    seekbench.llm._completion.NotACompletion: not a chat completion: a text/html body: '<html>Bad gateway</html>'
    """
    try:
        body = json.loads(text)
    except ValueError:
        what = f"a {content_type.split(';')[0].strip()} body" if content_type else "a body that is not JSON"
        if content_type and "json" in content_type:
            what = "a JSON body cut short or malformed"
        raise NotACompletion("not a chat completion", f"{what}: {_quote(text)}") from None
    return completion_from_body(body, latency_s=latency_s, raw=text)
