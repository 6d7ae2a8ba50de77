"""Validation of canonical traces: the JSON Schema, then the checks a schema cannot express."""

from __future__ import annotations

from typing import Any, cast

from .._errors import UserInputError
from .._schema_version import check_schema_version
from .._schemas import validator
from ._fastschema import fast_validator
from ._trace_check import quick_trace_check


def json_path(parts) -> str:
    """``$.steps[3].kind`` from a jsonschema error path."""
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _describe(err) -> str:
    if err.validator == "enum":
        allowed = ", ".join("null" if v is None else str(v) for v in err.validator_value)
        return f"{err.instance!r} is not allowed; expected one of: {allowed}"
    if err.validator == "required":
        return err.message.replace("is a required property", "is required")
    if err.validator == "additionalProperties":
        return err.message
    if err.validator == "type":
        want = err.validator_value if isinstance(err.validator_value, str) else " or ".join(err.validator_value)
        return f"must be {want}, got {type(err.instance).__name__}"
    return err.message[:200]


def validate_trace(trace: object, *, file: str | None = None, line: int | None = None) -> None:
    """Raise :class:`UserInputError` naming the first problem in ``trace``, or return None.

    Checks the schema (types, enums, required fields), then: step indices strictly
    increasing, ``depends_on`` naming earlier steps of the same trace. A check written by hand
    for this schema (:mod:`._trace_check`) clears a valid trace in one pass; what it is not sure
    of goes to the exact check compiled from the schema (:mod:`._fastschema`), and jsonschema
    finds and words the error of an invalid trace. (``fastjsonschema`` was measured too and was
    slower than the compiled check on the 1x corpus: ``scripts/bench/validate_speed.py``,
    results in ``scripts/bench/results/validate_speed.md``.)
    """
    if quick_trace_check(trace):
        return  # the schema and the order rules below hold: the usual case
    tid = trace.get("trace_id") if isinstance(trace, dict) else None
    tid = tid if isinstance(tid, str) else None
    fast = fast_validator("trace")
    if fast is None or not fast(trace):
        if isinstance(trace, dict):
            check_schema_version(trace.get("schema_version"), what="trace", file=file, line=line, trace_id=tid)
        from jsonschema.exceptions import best_match  # only when there is an error to word

        err = best_match(validator("trace").iter_errors(trace))
        if err is not None:
            raise UserInputError(_describe(err), file=file, line=line, trace_id=tid, path=json_path(err.absolute_path))
    # The schema check above passed, and the schema requires an object with a steps array.
    trace = cast(dict[str, Any], trace)
    seen: set[int] = set()
    previous = -1
    for pos, step in enumerate(trace["steps"]):
        idx = step["index"]
        if idx <= previous:
            raise UserInputError(
                f"step index {idx} is not greater than the previous one ({previous}); steps must be in order",
                file=file,
                line=line,
                trace_id=tid,
                path=f"$.steps[{pos}].index",
            )
        for j, dep in enumerate(step.get("depends_on") or ()):
            if dep not in seen:
                raise UserInputError(
                    f"depends_on names step {dep}, which is not an earlier step of this trace",
                    file=file,
                    line=line,
                    trace_id=tid,
                    path=f"$.steps[{pos}].depends_on[{j}]",
                )
        seen.add(idx)
        previous = idx
