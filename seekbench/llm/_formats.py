"""``response_format = "auto"``: the strictest output format an endpoint accepts, found once and remembered.

Servers differ in what they accept: OpenAI takes ``json_schema``; llama.cpp's
server answers ``json_schema`` with HTTP 500 ("response_format type must be
one of "text" or "json_object""), some servers refuse the parameter outright
with a 400 that names it. In ``auto`` mode a judge tries ``json_schema``, then
``json_object``, then plain text (the JSON object extracted from the reply),
moving down when a server refuses the parameter (:func:`rejects_format`). What
each endpoint accepted or refused is kept in the cache database, so the next
run starts at the format that works (and finds its cached completions, whose
keys include the format). The choice is printed once per run and recorded in
each label's provenance.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

#: The formats ``auto`` tries, strictest first.
FORMAT_ORDER = ("json_schema", "json_object", "text")


def rejects_format(status: int | None, message: str | None, body: dict | None) -> bool:
    """Whether an HTTP error refuses the request's ``response_format`` (not a transient failure).

    True for a 4xx or 5xx whose message names ``response_format`` or the type
    sent (``json_schema``, ``json_object``), and for a 5xx to a ``json_schema``
    request that speaks of a schema or grammar (llama.cpp's conversion errors).

    >>> rejects_format(500, 'response_format type must be one of "text" or "json_object", but got: json_schema',
    ...                {"response_format": {"type": "json_schema"}})
    True
    >>> rejects_format(500, "The server had an error", {"response_format": {"type": "json_schema"}})
    False
    """
    fmt = body.get("response_format") if isinstance(body, dict) else None
    if not isinstance(fmt, dict) or status is None or status < 400:
        return False
    text = (message or "").lower()
    sent = str(fmt.get("type") or "").lower()
    if "response_format" in text or (sent and sent in text):
        return True
    return sent == "json_schema" and status >= 500 and ("schema" in text or "grammar" in text)


class ResponseFormats:
    """The output format of one run's requests to one endpoint and model, with the fallback of ``auto``.

    Parameters
    ----------
    configured : {"json_schema", "json_object", "text", "auto"}
    endpoint, model : str
        What the memory is keyed on.
    cache : JudgeCache, optional
        Where verdicts are remembered (``endpoint_formats`` table); None: this run only.
    say : callable, optional
        Prints the choice (default: a line on stderr).
    judge : str
        The judge's name, for the printed line.
    """

    def __init__(
        self,
        configured: str,
        *,
        endpoint: str,
        model: str,
        cache=None,
        say: Callable[[str], None] | None = None,
        judge: str = "judge",
    ) -> None:
        self.auto = configured == "auto"
        self.endpoint, self.model, self.cache, self.judge = endpoint, model, cache, judge
        self._say = say if say is not None else (lambda line: print(line, file=sys.stderr, flush=True))
        self._told = False
        self.refused: dict[str, str] = {}
        if not self.auto:
            self.mode = configured
            return
        if cache is not None:
            self.refused = {m: why for m, (ok, why) in cache.format_verdicts(endpoint, model).items() if not ok}
        self.mode = next((m for m in FORMAT_ORDER if m not in self.refused), FORMAT_ORDER[-1])

    def fallback(self, status: int | None, message: str | None, body: dict) -> bool:
        """After a refused request: move to the next format and return True, or False (not a refusal, or no
        format left, or the format is fixed by the judge file)."""
        if not self.auto or not rejects_format(status, message, body):
            return False
        sent = str((body.get("response_format") or {}).get("type") or "")
        if sent != self.mode:  # another request already moved on
            return sent in FORMAT_ORDER
        why = f"HTTP {status}: {message}"
        self.refused[sent] = why
        if self.cache is not None:
            self.cache.record_format(self.endpoint, self.model, sent, accepted=False, reason=why)
        following = FORMAT_ORDER[FORMAT_ORDER.index(sent) + 1 :]
        if not following:
            return False
        self.mode = following[0]
        self._say(
            f"judge {self.judge}: {self.endpoint} refused response_format {sent} ({why}); falling back to {self.mode}"
        )
        return True

    def accepted(self) -> None:
        """A reply came in the current format: remember it and say the choice (once per run)."""
        if self._told or not self.auto:
            return
        self._told = True
        if self.cache is not None:
            self.cache.record_format(self.endpoint, self.model, self.mode, accepted=True, reason=None)
        before = "; refused: " + ", ".join(self.refused) if self.refused else ""
        self._say(f"judge {self.judge}: response_format auto -> {self.mode} at {self.endpoint}{before}")
