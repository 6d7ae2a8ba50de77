"""Prompt files and cache keys: one loader for every model call, placeholders given as data.

A prompt file in ``judges/prompts/`` has a ``=== SYSTEM ===`` line, the system
part, a ``=== USER ===`` line and the user part. Each caller names the
placeholders its user part must hold (each exactly once); the file's SHA-256
goes into the cache key and the provenance, so editing a prompt never replays
an answer to the old one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from .._errors import UserInputError

SYSTEM_MARKER, USER_MARKER = "=== SYSTEM ===", "=== USER ==="
_PARTS = re.compile(rf"(?m)^({re.escape(SYSTEM_MARKER)}|{re.escape(USER_MARKER)})[ \t]*$")


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt file: its system and user parts, its version and the SHA-256 of its bytes."""

    system: str
    user: str
    version: str
    sha256: str
    path: Path | None = None

    @classmethod
    def load(
        cls, path: str | Path, *, version: str, placeholders: Sequence[str] | None = None, what: str = "prompt template"
    ) -> Self:
        """Read and check a prompt file (both markers; every placeholder once in the user part).

        Parameters
        ----------
        path : path
        version : str
            Recorded in the cache key and the provenance.
        placeholders : sequence of str, optional
            What the user part must contain exactly once (default: the step judge's).
        what : str
            How error messages name the file ("the agent prompt", ...).
        """
        if placeholders is None:
            placeholders = STEP_JUDGE_PLACEHOLDERS
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise UserInputError(f"cannot read {what}: {e.strerror}", file=str(path)) from e
        try:
            text = data.decode("utf-8").replace("\r\n", "\n")
        except UnicodeDecodeError as e:
            raise UserInputError(f"{what} is not UTF-8 (byte {e.start}); re-encode it", file=str(path)) from e
        parts = _PARTS.split(text)
        if parts[1::2] != [SYSTEM_MARKER, USER_MARKER]:
            raise UserInputError(
                f"{what} needs one {SYSTEM_MARKER!r} line, then one {USER_MARKER!r} line", file=str(path)
            )
        system, user = parts[2].strip("\n"), parts[4].strip("\n")
        for ph in placeholders:
            if user.count(ph) != 1:
                raise UserInputError(f"the user part of {what} must contain {ph} exactly once", file=str(path))
        return cls(system, user, version, hashlib.sha256(data).hexdigest(), path)

    def messages(self, values: Mapping[str, str]) -> list[dict]:
        """The system and user messages, each placeholder of ``values`` replaced (see :func:`fill`)."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": fill(self.user, values)}]


#: The step judge's placeholders (the default of :meth:`PromptTemplate.load`).
STEP_JUDGE_PLACEHOLDERS = ("{{TRACE_ID}}", "{{QUESTION_BLOCK}}", "{{STEPS_BLOCK}}")


def fill(text: str, values: Mapping[str, str]) -> str:
    """Replace every placeholder of ``values`` in ``text`` in one pass.

    One pass: a placeholder spelled inside a substituted value is data and
    stays as it is.

    >>> fill("a {{X}} b {{Y}}", {"{{X}}": "{{Y}}", "{{Y}}": "y"})
    'a {{Y}} b y'
    """
    if not values:
        return text
    return _pattern(tuple(values)).sub(lambda m: values[m.group(0)], text)


@functools.cache
def _pattern(keys: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(re.escape(k) for k in keys))


def cache_key(config, template: PromptTemplate, body: dict) -> str:
    """SHA-256 of model, prompt version and hash, and the request body (rendered prompt + decoding).

    Nothing else (not retries, timeouts or concurrency): those do not change the answer.
    """
    payload = {
        "model": config.model,
        "prompt_version": template.version,
        "prompt_sha256": template.sha256,
        "body": body,
    }
    return hashlib.sha256(
        json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    ).hexdigest()
