"""Checking a judge's answer: JSON, the output schema, then the trace it is about.

An answer is accepted only whole. It is rejected, with a message that names
what is wrong (the message is sent back to the judge in a repair request),
when it was cut off, is not JSON, fails ``schemas/judge_output.schema.json``
(unknown fields, values outside the enums), labels a step that does not exist
or a field that does not apply to the step's kind, labels a step twice, gives
``InitialQuery`` to a step that is not the first search, or omits a field the
step needs; also when it names a field twice in one object (JSON readers
would keep either), or is nested or numbered past what can be read. A value
for a field that a rule already fixed is not the judge's to give: it is
ignored (the rule label stands) and counted as a rule conflict, not re-asked,
since the rule is right by definition. ``null`` for a field is an explicit
abstention: that label is recorded as unscored.

The answer is untrusted too: a judge can be steered by the trace into echoing
an instruction. Rejection messages are therefore worded from the schema's
names, never from the answer's free text (which could otherwise travel back
to the judge, outside the data fences, in the repair request).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field

from ..llm import strip_code_fence
from ._prompt import StepSpec, judge_output_schema


@dataclass
class ParseResult:
    """The outcome of checking one answer.

    Attributes
    ----------
    ok : bool
        The answer was accepted.
    labels : dict
        ``(step, field) -> value`` (None for an abstention) when ``ok``.
    error : str or None
        Why the answer was rejected.
    rule_conflicts : list
        ``(step, field, judge_value)`` where the judge contradicted a rule label (ignored).
    """

    ok: bool
    labels: dict[tuple[int, str], str | None] = field(default_factory=dict)
    error: str | None = None
    rule_conflicts: list[tuple[int, str, object]] = field(default_factory=list)


def _reject(message: str) -> ParseResult:
    return ParseResult(False, error=message)


@functools.cache
def _validator():
    import jsonschema

    schema = judge_output_schema()
    return jsonschema.validators.validator_for(schema)(schema)


def _json_path(path) -> str:
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def decode_answer(content: str | None, finish_reason: str | None) -> tuple[object | None, str | None]:
    """The JSON of an answer, or ``(None, reason)`` when it is cut off, empty or not JSON."""
    if finish_reason == "length":
        return None, "the answer was cut off at the token limit (finish_reason=length); answer more compactly"
    if finish_reason == "content_filter":
        return None, "the answer was withheld by the content filter (finish_reason=content_filter)"
    if content is None or not content.strip():
        return None, "the answer was empty; answer with the JSON object"
    text = strip_code_fence(content)
    try:
        return json.loads(text, object_pairs_hook=_unique_keys), None
    except json.JSONDecodeError as e:
        return None, f"the answer is not valid JSON ({e.msg} at line {e.lineno} column {e.colno})"
    except _DuplicateKey as e:
        return None, f"the answer gives the field {_shown(e.args[0])} twice in one object; give each field once"
    except RecursionError:
        return None, "the answer is nested too deeply to read; answer with the flat JSON object"
    except ValueError:  # a number Python refuses to convert (thousands of digits)
        return None, "the answer holds a number too long to read; answer with the JSON object"


class _DuplicateKey(ValueError):
    """A JSON object names the same key twice (json.loads would silently keep the last)."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


_SHOWABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")


def _shown(name: object) -> str:
    """A name or value from the answer, quoted only when it is a short identifier. Error messages go back
    to the judge outside the data fences and into the output: they never echo free text from the answer."""
    if isinstance(name, str) and _SHOWABLE.fullmatch(name):
        return repr(name)
    if isinstance(name, (bool, int, float)) or name is None:
        return json.dumps(name) if not isinstance(name, float) or name == name else "NaN"
    if isinstance(name, str):
        return f"(text of {len(name)} characters, not shown)"
    return f"(a JSON {'object' if isinstance(name, dict) else 'array'}, not shown)"


def _schema_problem(err) -> str:
    """The wording of one output-schema error, from the schema's own names, never the answer's text."""
    kind, value, inst = err.validator, err.validator_value, err.instance
    if kind == "additionalProperties" and isinstance(inst, dict):
        allowed = set(err.schema.get("properties", {}))
        extra = [k for k in inst if k not in allowed]
        return (
            f"unknown field(s) {', '.join(_shown(k) for k in extra[:3])}"
            + (f" and {len(extra) - 3} more" if len(extra) > 3 else "")
            + f"; the only fields are: {', '.join(sorted(allowed))}"
        )
    if kind == "enum":
        return f"{_shown(inst)} is not allowed; use one of: {', '.join('null' if v is None else v for v in value)}"
    if kind == "type":
        want = value if isinstance(value, str) else " or ".join(value)
        return f"must be {want}, got {type(inst).__name__}"
    if kind == "required":
        missing = [k for k in value if not isinstance(inst, dict) or k not in inst]
        return f"{', '.join(missing)} is required"
    if kind in ("minimum", "maximum"):
        return f"must be {'>=' if kind == 'minimum' else '<='} {value}"
    return f"fails the schema's {kind!r} rule"


def parse_judge_output(
    content: str | None, specs: dict[int, StepSpec], *, finish_reason: str | None = "stop"
) -> ParseResult:
    """Check one judge answer against the output schema and the trace's steps.

    Parameters
    ----------
    content : str or None
        The message content of the completion.
    specs : dict
        ``step -> StepSpec`` from :func:`~seekbench.annotate.render_prompt`.
    finish_reason : str, optional
        ``length`` means the answer was cut off: always rejected.

    Returns
    -------
    ParseResult
        ``ok`` with every required ``(step, field)`` in ``labels``, or not ``ok``
        with ``error``. Never a default label.

    Examples
    --------
    >>> from seekbench.annotate._prompt import StepSpec
    >>> specs = {0: StepSpec("search_result", ("clarity", "sufficiency"))}
    >>> parse_judge_output('{"labels": [{"step": 0, "clarity": "Clear"}]}', specs).error
    'step 0 (search_result) lacks sufficiency'
    """
    doc, problem = decode_answer(content, finish_reason)
    if problem is not None:
        return _reject(problem)
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        from jsonschema.exceptions import best_match

        err = best_match(errors)
        return _reject(
            f"the answer does not follow the output schema at {_json_path(err.absolute_path)}: {_schema_problem(err)}"
        )
    assert isinstance(doc, dict)  # the output schema passed, and its top level is an object
    labels: dict[tuple[int, str], str | None] = {}
    conflicts: list[tuple[int, str, object]] = []
    seen: set[int] = set()
    steps_range = f"{min(specs)}..{max(specs)}" if specs else "none"
    for n, entry in enumerate(doc["labels"]):
        step = int(entry["step"])  # the schema's "integer" admits 1.0; records carry 1
        if step not in specs:
            return _reject(
                f"labels[{n}] is for step {step}, which does not exist in this trace (its steps are {steps_range})"
            )
        if step in seen:
            return _reject(f"step {step} is labeled twice; give one entry per step")
        seen.add(step)
        spec = specs[step]
        for name, value in entry.items():
            if name == "step" or (value is None and name in spec.rule_fixed):
                continue
            if name in spec.rule_fixed:
                if value != spec.rule_fixed[name]:
                    conflicts.append((step, name, value))
                continue
            if name not in spec.required and name not in spec.optional:
                return _reject(f"step {step} is a {spec.kind} step; {name} does not apply to it")
            if name == "search_type" and value == "InitialQuery":
                return _reject(
                    f"step {step} is not the first search of the trace; InitialQuery is given by "
                    "rule to the first search only"
                )
            labels[(step, name)] = value
    missing = [
        f"step {s} ({spec.kind}) lacks {f}"
        for s, spec in sorted(specs.items())
        for f in spec.required
        if (s, f) not in labels
    ]
    if missing:
        more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
        return _reject("; ".join(missing[:5]) + more)
    return ParseResult(True, labels, None, conflicts)
