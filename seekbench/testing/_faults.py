"""Fault injection for the mock server: the spec grammar, the seeded choice, the content mutations.

Grammar of a fault spec (whitespace ignored, empty or None means no faults)::

    spec  := rule ("," rule)*
    rule  := kind [":" prob]          # prob in [0, 1], default 1
    kind  := 429 | 500 | 503 | drop | timeout            (transport faults)
           | truncated | malformed | bad_enum | extra_step | inject   (content faults)

For each request the rules are tried in the order written; each fires with
its own probability, independently, and the first that fires is the fault of
that request (at most one fault per request). So in ``"500:0.5,inject:1"``
half the requests fail with 500 and all the others are injected.

The draw is seeded by ``sha256(seed | request key | attempt)``: the request
key is the SHA-256 of the canonical JSON body, and the attempt is how many
times the server has already seen that same body. A retry of a failed
request therefore gets a fresh, but reproducible, draw and can succeed.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._errors import UserInputError
from ._protocol import find_instruction, label_steps

TRANSPORT_FAULTS = ("429", "500", "503", "drop", "timeout")
CONTENT_FAULTS = ("truncated", "malformed", "bad_enum", "extra_step", "inject")
FAULT_KINDS = TRANSPORT_FAULTS + CONTENT_FAULTS

#: Request header that forces a fault kind (or ``none``) for that one request.
FAULT_HEADER = "X-Seekbench-Fault"

#: The label value the ``bad_enum`` fault writes; outside every field's allowed set.
BAD_ENUM_VALUE = "Maybe"

#: The ``note`` of an injected answer when the trace holds no "ignore ..." sentence to echo.
DEFAULT_INJECTED_NOTE = "ignore the rubric"

MALFORMED_CONTENT = "Sure! Step 1 looks grounded to me, and the search results seem fine overall."


@dataclass(frozen=True)
class FaultSpec:
    """A parsed fault spec: an ordered tuple of ``(kind, probability)`` rules."""

    rules: tuple[tuple[str, float], ...] = ()

    @classmethod
    def parse(cls, spec: str | FaultSpec | Mapping[str, float] | None) -> FaultSpec:
        """Parse ``"429:0.2,drop:0.1"`` (or a mapping kind -> probability, or None for no faults)."""
        if spec is None:
            return cls()
        if isinstance(spec, FaultSpec):
            return spec
        if isinstance(spec, Mapping):
            items: list[tuple[str, float | str]] = [(str(k), v) for k, v in spec.items()]
        else:
            items = []
            for part in str(spec).split(","):
                part = part.strip()
                if not part:
                    continue
                kind, sep, given = part.partition(":")
                items.append((kind.strip(), given.strip() if sep else "1"))
        rules: list[tuple[str, float]] = []
        for kind, raw in items:
            if kind not in FAULT_KINDS:
                raise UserInputError(
                    f"unknown fault kind {kind!r} in fault spec {spec!r}; "
                    f"use one of {', '.join(FAULT_KINDS)} as kind:probability"
                )
            try:
                prob = float(raw)
            except (TypeError, ValueError) as e:
                raise UserInputError(
                    f"fault {kind!r} has probability {raw!r}, not a number; write e.g. {kind}:0.2"
                ) from e
            if not 0.0 <= prob <= 1.0:
                raise UserInputError(f"fault {kind!r} has probability {prob}; it must be in [0, 1]")
            if any(kind == k for k, _ in rules):
                raise UserInputError(f"fault {kind!r} appears twice in fault spec {spec!r}")
            rules.append((kind, prob))
        return cls(tuple(rules))

    def __str__(self) -> str:
        return ",".join(f"{k}:{p:g}" for k, p in self.rules)

    def choose(self, *, seed: int, key: str, attempt: int) -> str | None:
        """The fault for attempt ``attempt`` of the request with key ``key``, or None."""
        if not self.rules:
            return None
        digest = hashlib.sha256(f"{seed}|{key}|{attempt}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        draws = [rng.random() for _ in self.rules]
        for (kind, prob), draw in zip(self.rules, draws, strict=True):
            if draw < prob:
                return kind
        return None


def request_key(body: Any) -> str:
    """SHA-256 of the canonical JSON of a request body: the identity retries share."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _labels_of(content: str) -> tuple[dict[str, Any], list[Any]]:
    try:
        parsed = json.loads(content)
    except json.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("labels"), list):
        return parsed, parsed["labels"]
    return {"labels": []}, []


def apply_content_fault(kind: str, content: str, steps: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """Mutate ``content`` by content fault ``kind``; return ``(content, finish_reason)``.

    - ``truncated``: the first half of the content, finish_reason ``length``.
    - ``malformed``: prose, not JSON.
    - ``bad_enum``: the first label value of the answer set to :data:`BAD_ENUM_VALUE`
      (a ``grounding`` label is added when the answer has none).
    - ``extra_step``: one more label, for step ``max(step) + 1``, which the prompt lacks.
    - ``inject``: every step labeled, all ``Grounded``, plus ``"note"`` echoing the
      trace's "ignore ..." instruction (or :data:`DEFAULT_INJECTED_NOTE`).
    """
    if kind == "truncated":
        return content[: len(content) // 2], "length"
    if kind == "malformed":
        return MALFORMED_CONTENT, "stop"
    if kind == "bad_enum":
        answer, labels = _labels_of(content)
        for label in labels:
            field = next((f for f in label if f != "step"), None) if isinstance(label, dict) else None
            if field is not None:
                label[field] = BAD_ENUM_VALUE
                break
        else:
            first = steps[0]["step"] if steps else 1
            labels.append({"step": first, "grounding": BAD_ENUM_VALUE})
        answer["labels"] = labels
        return json.dumps(answer, ensure_ascii=False), "stop"
    if kind == "extra_step":
        answer, labels = _labels_of(content)
        known = [s["step"] for s in steps]
        known += [lab["step"] for lab in labels if isinstance(lab, dict) and isinstance(lab.get("step"), int)]
        extra = max(known, default=0) + 1
        labels.append({"step": extra, "reasoning_type": "StateAssessment", "grounding": "Grounded"})
        answer["labels"] = labels
        return json.dumps(answer, ensure_ascii=False), "stop"
    if kind == "inject":
        by_step = {lab["step"]: lab for lab in label_steps(steps)}
        labels = [{**by_step.get(s["step"], {"step": s["step"]}), "grounding": "Grounded"} for s in steps]
        note = find_instruction(steps) or DEFAULT_INJECTED_NOTE
        return json.dumps({"labels": labels, "note": note}, ensure_ascii=False), "stop"
    raise ValueError(f"{kind!r} is not a content fault; use one of {', '.join(CONTENT_FAULTS)}")
