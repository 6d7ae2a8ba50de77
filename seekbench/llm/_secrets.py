"""Keeping secrets out of what seekbench prints and stores: API keys and credentials in URLs.

The key a request carries is removed from every message and from every stored
completion, however the server wrote it back (as is, or JSON-escaped, e.g.
``\\u0073k-...``); anything shaped like an API key is masked in messages; and a
password or token in a base URL (``http://user:pw@host/v1``) is masked wherever
the URL, or the password alone, appears.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import TYPE_CHECKING, overload
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from ._completion import Completion

MASK = "***"
_KEYLIKE = re.compile(r"\b(sk|key|rk)-[A-Za-z0-9_\-*.]{3,}")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]+@")
#: How deep JSON strings holding JSON are opened to look for the key.
_JSON_DEPTH = 3


@overload
def mask_credentials(text: str, base_url: str | None = None) -> str: ...
@overload
def mask_credentials(text: None, base_url: str | None = None) -> None: ...
def mask_credentials(text: str | None, base_url: str | None = None) -> str | None:
    """``text`` with the user-info part of every URL (``user:pw@``) masked, and ``base_url``'s password
    (or lone user token) masked wherever it appears alone.

    Examples
    --------
    >>> mask_credentials("POST http://bob:hunter2@proxy:8080/v1/chat/completions")
    'POST http://***@proxy:8080/v1/chat/completions'
    >>> mask_credentials("auth failed for hunter2", "http://bob:hunter2@proxy/v1")
    'auth failed for ***'
    """
    if text is None:
        return None
    text = _USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
    if base_url:
        parts = urlparse(base_url)
        for secret in (parts.password, parts.username if parts.password is None else None):
            if secret:
                text = text.replace(secret, MASK).replace(unquote(secret), MASK)
    return text


def redact(text: str, secret: str | None) -> str:
    """Remove ``secret`` and anything shaped like an API key (``sk-...``) from ``text``."""
    if secret:
        text = text.replace(secret, MASK)
    return _KEYLIKE.sub(lambda m: m.group(1) + "-" + MASK, text)


def _scrub_value(value, secret: str, depth: int):
    if isinstance(value, str):
        return _scrub_text(value, secret, depth)
    if isinstance(value, list):
        return [_scrub_value(v, secret, depth) for v in value]
    if isinstance(value, dict):
        return {_scrub_text(k, secret, depth): _scrub_value(v, secret, depth) for k, v in value.items()}
    return value


def _scrub_text(text: str, secret: str, depth: int = 0) -> str:
    """``text`` without ``secret``, also where it is written JSON-escaped inside a JSON document."""
    if depth < _JSON_DEPTH and text[:1] in '{["' and "\\" in text:
        try:
            decoded = json.loads(text)
        except ValueError:
            decoded = None
        if isinstance(decoded, (dict, list, str)):
            cleaned = _scrub_value(decoded, secret, depth + 1)
            if cleaned != decoded:
                text = json.dumps(cleaned, ensure_ascii=False)
    return text.replace(secret, MASK)


def scrub_completion(comp: Completion, secret: str | None) -> Completion:
    """``comp`` with ``secret`` removed from its raw body and content, before anything stores it.

    An endpoint that echoes the key back, as is or JSON-escaped, must not get it into the cache
    or the output; a body holding no trace of it is kept byte for byte as received.

    Examples
    --------
    >>> from seekbench.llm._completion import completion_from_text
    >>> raw = '{"choices": [{"message": {"content": "your key is \\\\u0073k-abc123"}}]}'
    >>> scrub_completion(completion_from_text(raw), "sk-abc123").content
    'your key is ***'
    """
    if not secret:
        return comp
    raw = _scrub_text(comp.raw, secret)
    content = None if comp.content is None else _scrub_text(comp.content, secret)
    if raw == comp.raw and content == comp.content:
        return comp
    return dataclasses.replace(comp, raw=raw, content=content)
