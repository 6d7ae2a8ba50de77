"""A thin provider on the official ``openai`` client: one chat completion, retried with backoff.

``openai.AsyncOpenAI(base_url=..., api_key=..., max_retries=0)``: the client's
own retries are off so that every attempt is ours to count, delay and
report. Rate limits (429), server errors (5xx, 408, 409), timeouts and
connection errors are retried with exponential backoff and full jitter,
waiting at least what ``Retry-After`` (or ``retry-after-ms``) asks. A
rejected request (400, 422) fails the trace at once; a bad key or an unknown
model (401, 403, 404) stops the run. The API key is read from the
environment variable the judge names, is never stored elsewhere, and is
scrubbed from every message this module produces.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
import email.utils
import os
import random
import time
from dataclasses import KW_ONLY, dataclass
from urllib.parse import urlparse

from .._errors import SeekbenchError, UserInputError
from ._completion import Completion, NotACompletion, completion_from_text
from ._formats import rejects_format
from ._secrets import mask_credentials, redact, scrub_completion

#: Sent as the key to a server on this machine when the judge's key variable is unset.
LOCAL_PLACEHOLDER_KEY = "sk-no-key-local"
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


@dataclass(eq=False)
class RequestFailed(SeekbenchError):
    """A request for one trace failed for good (attempts exhausted, or rejected by the server).

    ``reason`` is the whole story in one line: attempts, status, endpoint and the server's
    message, uncut (the run summary shows the first one in full). ``message`` is the
    server's own error message, uncut (None: no HTTP answer).
    """

    reason: str
    _: KW_ONLY
    status: int | None = None
    attempts: int = 1
    endpoint: str | None = None
    message: str | None = None
    #: How it failed, for the run's circuit breaker: ``HTTP <status>``, ``timeout``, ``connection``,
    #: ``not a chat completion``, ``empty answer`` (or ``none``).
    kind: str = "none"

    def __post_init__(self) -> None:
        super().__init__(self.reason)

    def __str__(self) -> str:
        return self.reason


class EndpointUnreachable(RequestFailed):
    """No connection could be opened to an endpoint that never answered this run: retrying every
    item would only repeat the error, so the caller stops the run and says so."""


class EndpointFailing(EndpointUnreachable):
    """Requests in a row failed the same way (the circuit breaker of a run): every other item would
    most likely fail alike, so the caller stops the run as for an unreachable endpoint and says why."""


#: The longest ``Retry-After`` honoured, in seconds (longer requests wait this long, within the item's
#: ``retry_budget_s``).
MAX_RETRY_AFTER_S = 120.0

#: Connection attempts to an endpoint that has not answered yet before the run is stopped.
UNREACHABLE_ATTEMPTS = 2


#: What asks the model, as messages name it: (noun, what to do instead of an LLM).
ROLES = {
    "judge": ("judge", "or use an offline judge: --judge rules"),
    "agent": ("agent", "or use a scripted agent: --agent keyphrase"),
    "estimator": ("estimator", "or use an offline estimator: --estimator mean"),
}


def resolve_api_key(config, base_url: str | None, *, role: str = "judge") -> str:
    """The key from ``$<api_key_env>``; a placeholder for a loopback endpoint; else a user error."""
    key = os.environ.get(config.api_key_env)
    if key:
        return key
    host = urlparse(base_url or "").hostname or ""
    if host in _LOOPBACK:
        return LOCAL_PLACEHOLDER_KEY
    noun, instead = ROLES[role]
    raise UserInputError(
        f"{noun} {config.name!r} needs an API key: set the environment variable {config.api_key_env} ({instead})"
    )


def retry_after_s(headers) -> float | None:
    """Seconds a response asks to wait (``retry-after-ms``, ``retry-after`` seconds or HTTP date)."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, (when - _dt.datetime.now(_dt.UTC)).total_seconds())


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with full jitter: attempt ``n`` waits ``U(0, min(max_s, base_s * 2**(n-1)))``.

    A ``Retry-After`` from the server is a floor on the wait (capped at ``max_retry_after_s``).
    """

    base_s: float = 1.0
    max_s: float = 60.0
    #: A server asking for longer gets this (the item's retry budget then decides whether to wait).
    max_retry_after_s: float = MAX_RETRY_AFTER_S

    def delay(self, attempt: int, server_asks: float | None, rng: random.Random) -> float:
        wait = rng.uniform(0, min(self.max_s, self.base_s * 2 ** (attempt - 1)))
        if server_asks is not None:
            wait = max(wait, min(server_asks, self.max_retry_after_s))
        return wait


class OpenAIProvider:
    """Chat completions for one judge over ``openai.AsyncOpenAI``.

    Parameters
    ----------
    config : JudgeConfig
    base_url : str, optional
        Overrides the judge's endpoint.
    api_key : str, optional
        Overrides ``$<config.api_key_env>`` (tests).
    role : {"judge", "agent", "estimator"}, default "judge"
        What the model is to the user: error messages name it so and suggest its offline option.
    """

    def __init__(self, config, *, base_url: str | None = None, api_key: str | None = None, role: str = "judge") -> None:
        import openai

        self.config = config
        self.role = role
        self.base_url = base_url or config.resolved_base_url()
        self._key = api_key or resolve_api_key(config, self.base_url, role=role)
        self.backoff = Backoff(config.backoff_base_s, config.backoff_max_s)
        self._rng = random.Random()
        self.reached = False  # set at the first HTTP response: from then on a refused connection is retried
        self.client = openai.AsyncOpenAI(
            base_url=self.base_url, api_key=self._key, max_retries=0, timeout=config.timeout_s
        )

    def __repr__(self) -> str:
        return f"OpenAIProvider(judge={self.config.name!r}, base_url={self.base_url!r})"

    def scrub(self, text: str) -> str:
        return mask_credentials(redact(text, self._key), self.base_url)

    @property
    def endpoint(self) -> str:
        """The chat-completions URL requests go to (for error messages; credentials masked)."""
        return mask_credentials(str(self.client.base_url).rstrip("/") + "/chat/completions")

    async def aclose(self) -> None:
        await self.client.close()

    async def complete(self, body: dict, *, on_retry=None) -> Completion:
        """Send one chat-completion request, retrying transient failures.

        Parameters
        ----------
        body : dict
            The request body (model, messages, decoding parameters).
        on_retry : callable(reason: str), optional
            Called before each retry (progress reporting).

        Raises
        ------
        RequestFailed
            Attempts exhausted, or the request was rejected (400/422).
        UserInputError
            Authentication failed, or the model or endpoint does not exist.
        """
        import openai

        cfg = self.config
        last, status, message, kind = "no attempt made", None, None, "none"
        where = f"POST {self.endpoint}"
        began = time.monotonic()
        for attempt in range(1, cfg.max_attempts + 1):
            start = time.monotonic()
            wait_hint = None
            try:
                # The client's timeout bounds each read; this bounds the whole request (connect and
                # every read): a server sending a byte every few seconds cannot hold it longer.
                async with asyncio.timeout(cfg.timeout_s):
                    resp = await self.client.chat.completions.with_raw_response.create(**body, timeout=cfg.timeout_s)
                    raw = resp.text
                self.reached = True
                comp = completion_from_text(
                    raw, content_type=resp.headers.get("content-type"), latency_s=round(time.monotonic() - start, 4)
                )
            except TimeoutError:
                kind, last = "timeout", f"timed out: no complete answer within {cfg.timeout_s:g} s ({where})"
            except openai.APIStatusError as e:
                self.reached = True
                status = e.status_code
                kind = f"HTTP {status}"
                message = self.scrub(_error_message(e))
                last = f"HTTP {status}: {message} ({where})"
                if status in (401, 403):
                    raise UserInputError(
                        f"the {self.role} endpoint refused the API key from ${cfg.api_key_env} ({last}); check the key"
                    ) from None
                if status == 404:
                    raise UserInputError(
                        f"the {self.role} endpoint has no model {cfg.model!r} or no chat completions "
                        f"at {mask_credentials(self.base_url) or 'the default OpenAI URL'} ({last})"
                    ) from None
                if (status not in (408, 409, 429) and status < 500) or rejects_format(status, message, body):
                    # a refused parameter is not transient: retrying the same body gets the same answer
                    raise RequestFailed(
                        last, status=status, attempts=attempt, endpoint=self.endpoint, message=message, kind=kind
                    ) from None
                wait_hint = retry_after_s(e.response.headers)
            except openai.APITimeoutError:
                kind, last = "timeout", f"timed out after {cfg.timeout_s:g} s ({where})"
            except openai.APIConnectionError as e:
                kind, last = "connection", self.scrub(f"connection error: {_cause(e)} ({where})")
                if not self.reached and _refused(e) and attempt >= UNREACHABLE_ATTEMPTS:
                    raise EndpointUnreachable(
                        f"cannot connect after {attempt} attempts; last error: {last}",
                        attempts=attempt,
                        endpoint=self.endpoint,
                        kind=kind,
                    ) from None
                if not self.reached and _refused(e):
                    await asyncio.sleep(min(0.5, self.backoff.delay(attempt, None, self._rng)))
                    continue
            except NotACompletion as e:
                # a 200 that holds no usable completion: retried like a 5xx (a proxy's error page, a
                # body cut short, an empty choice list), never handed on half-parsed
                kind, last = e.kind, self.scrub(f"HTTP {resp.status_code} with {e} ({where})")
            else:
                return scrub_completion(dataclasses.replace(comp, attempts=attempt), self._key)
            if attempt < cfg.max_attempts:
                delay = self.backoff.delay(attempt, wait_hint, self._rng)
                spent = time.monotonic() - began
                if spent + delay > cfg.retry_budget_s:
                    raise RequestFailed(
                        f"gave up after {attempt} attempts in {spent:.0f} s: waiting {delay:.0f} s more would pass "
                        f"retry_budget_s = {cfg.retry_budget_s:g} s; last error: {last}",
                        status=status,
                        attempts=attempt,
                        endpoint=self.endpoint,
                        message=message,
                        kind=kind,
                    )
                if on_retry is not None:
                    on_retry(last)
                await asyncio.sleep(delay)
        raise RequestFailed(
            f"gave up after {cfg.max_attempts} attempts; last error: {last}",
            status=status,
            attempts=cfg.max_attempts,
            endpoint=self.endpoint,
            message=message,
            kind=kind,
        )


def _refused(e: BaseException) -> bool:
    """True when no connection could be opened at all (refused, no route, unknown host), as opposed
    to one that opened and then broke (a server that answers, badly)."""
    cause = e.__cause__ or e.__context__
    # by name: the openai client's transport may be httpx or a fork of it under another module name
    return cause is not None and any(c.__name__ in ("ConnectError", "ConnectTimeout") for c in type(cause).__mro__)


def _error_message(e) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        msg = body.get("message") or (body.get("error") or {}).get("message")
        if isinstance(msg, str):
            return msg  # uncut: the server's whole message is what the user needs to act on
    return str(getattr(e, "message", "") or type(e).__name__)


def _cause(e: BaseException) -> str:
    cause = e.__cause__ or e.__context__
    if cause is None:
        return str(e) or type(e).__name__
    text = str(cause).strip()
    return f"{type(cause).__name__} ({text})" if text else type(cause).__name__
