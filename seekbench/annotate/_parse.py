"""Checking a judge's answer: JSON, the output schema, then the trace it is about, step by step.

An answer is checked per label: every ``(step, field)`` that validates is
kept, and the steps whose labels are missing or invalid are listed, each with
its reason (the reasons go back to the judge in a repair request that asks
for those steps only). A step's labels are invalid when its entry fails
``schemas/judge_output.schema.json`` (unknown fields, values outside the
enums: only the bad fields are dropped), names a field that does not apply
to the step's kind, labels the step twice, or gives ``InitialQuery`` to a
step that is not the first search; missing when the entry or a field the
step needs is absent. The whole answer is rejected, nothing kept, when it was
cut off, is not JSON, is not ``{"labels": [...]}`` with nothing else, has an
entry without a step number, or labels a step that does not exist (a sign of
steps numbered off by one: every label would be misplaced); also when it
names a field twice in one object (JSON readers would keep either), or is
nested or numbered past what can be read. A value
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
        Every label asked for is there and valid.
    labels : dict
        ``(step, field) -> value`` (None for an abstention): every label that validated, even when not ``ok``.
    error : str or None
        Why the answer is not ``ok`` (the problems of the first steps, or why it was rejected whole).
    rule_conflicts : list
        ``(step, field, judge_value)`` where the judge contradicted a rule label (ignored).
    problems : dict
        ``step -> reason`` for each step whose labels are missing or invalid (empty when the
        answer was rejected whole: then every step asked for is still owed).
    """

    ok: bool
    labels: dict[tuple[int, str], str | None] = field(default_factory=dict)
    error: str | None = None
    rule_conflicts: list[tuple[int, str, object]] = field(default_factory=list)
    problems: dict[int, str] = field(default_factory=dict)


def _reject(message: str) -> ParseResult:
    return ParseResult(False, error=message)


@functools.cache
def _validators():
    """Validators of the answer's outer shape (labels as an array of anything) and of one entry."""
    import copy

    import jsonschema

    schema = judge_output_schema()
    outer = copy.deepcopy(schema)
    item = outer["properties"]["labels"].pop("items")
    item = {"$schema": schema.get("$schema"), **item}
    cls = jsonschema.validators.validator_for(schema)
    return cls(outer), cls(item)


def _json_path(path) -> str:
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def extract_json(text: str) -> str:
    """The first JSON object in ``text`` (a plain-text reply around it: prose, a code fence), or ``text``.

    >>> extract_json('Here you go: {"labels": []} Hope this helps.')
    '{"labels": []}'
    """
    text = strip_code_fence(text.strip(), lenient=True)
    start = text.find("{")
    if start < 0:
        return text
    try:
        _, end = json.JSONDecoder().raw_decode(text, start)
    except (json.JSONDecodeError, RecursionError, ValueError):
        return text
    return text[start:end]


def decode_answer(
    content: str | None, finish_reason: str | None, *, extract: bool = False
) -> tuple[object | None, str | None]:
    """The JSON of an answer, or ``(None, reason)`` when it is cut off, empty or not JSON.

    ``extract``: the reply is plain text (no response format was sent): the JSON object is taken from it.
    """
    if finish_reason == "length":
        return None, "the answer was cut off at the token limit (finish_reason=length); answer more compactly"
    if finish_reason == "content_filter":
        return None, "the answer was withheld by the content filter (finish_reason=content_filter)"
    if content is None or not content.strip():
        return None, "the answer was empty; answer with the JSON object"
    text = extract_json(content) if extract else strip_code_fence(content)
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


def _entry_problem(err) -> str:
    return _schema_problem(err) if not err.absolute_path else f"{err.absolute_path[0]} {_schema_problem(err)}"


def parse_judge_output(
    content: str | None,
    specs: dict[int, StepSpec],
    *,
    finish_reason: str | None = "stop",
    known_steps: set[int] | frozenset[int] | None = None,
    extract: bool = False,
) -> ParseResult:
    """Check one judge answer against the output schema and the trace's steps, label by label.

    Parameters
    ----------
    content : str or None
        The message content of the completion.
    specs : dict
        ``step -> StepSpec`` of the steps asked for (:func:`~seekbench.annotate.render_prompt`).
    finish_reason : str, optional
        ``length`` means the answer was cut off: always rejected whole.
    known_steps : set of int, optional
        Every step of the trace (default: the steps of ``specs``). Entries for a known
        step that was not asked for (context shown to the judge) are ignored; an entry
        for a step the trace does not have rejects the answer.
    extract : bool, default False
        The reply is plain text: take the JSON object out of it.

    Returns
    -------
    ParseResult
        ``labels`` holds every label that validated; ``ok`` when nothing asked for is
        missing or invalid, else ``problems`` names each step still owed and ``error``
        sums them up. Never a default label.

    Examples
    --------
    >>> from seekbench.annotate._prompt import StepSpec
    >>> specs = {0: StepSpec("search_result", ("clarity", "sufficiency")), 1: StepSpec("search", ("search_type",))}
    >>> res = parse_judge_output('{"labels": [{"step": 0, "clarity": "Clear", "sufficiency": "Sufficient"}]}', specs)
    >>> res.ok, res.labels[(0, "clarity")], res.error
    (False, 'Clear', 'step 1 (search) lacks search_type')
    """
    doc, problem = decode_answer(content, finish_reason, extract=extract)
    if problem is not None:
        return _reject(problem)
    outer, item = _validators()
    errors = sorted(outer.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        from jsonschema.exceptions import best_match

        err = best_match(errors)
        return _reject(
            f"the answer does not follow the output schema at {_json_path(err.absolute_path)}: {_schema_problem(err)}"
        )
    assert isinstance(doc, dict)  # the outer schema passed: an object with a labels array
    known = set(specs) if known_steps is None else set(known_steps)
    steps_range = f"{min(known)}..{max(known)}" if known else "none"
    entries: list[tuple[int, dict]] = []
    for n, entry in enumerate(doc["labels"]):
        step = entry.get("step") if isinstance(entry, dict) else None
        if isinstance(step, float) and step.is_integer():
            step = int(step)  # the schema's "integer" admits 1.0; records carry 1
        if not isinstance(step, int) or isinstance(step, bool):
            return _reject(f'labels[{n}] has no step number; every entry needs "step" (an integer)')
        if step not in known:
            return _reject(
                f"labels[{n}] is for step {step}, which does not exist in this trace (its steps are {steps_range})"
            )
        if step in specs:
            entries.append((step, entry))
    labels: dict[tuple[int, str], str | None] = {}
    conflicts: list[tuple[int, str, object]] = []
    problems: dict[int, list[str]] = {}
    seen: set[int] = set()
    for step, entry in entries:
        spec = specs[step]
        if step in seen:
            problems.setdefault(step, []).append("is labeled twice; give one entry per step")
            for name in spec.required + spec.optional:
                labels.pop((step, name), None)  # which of the two is meant cannot be told
            continue
        seen.add(step)
        bad_fields: set[str] = set()
        for err in item.iter_errors(entry):
            if err.absolute_path:
                bad_fields.add(str(err.absolute_path[0]))
            problems.setdefault(step, []).append(_entry_problem(err))
        if any(not e.absolute_path for e in item.iter_errors(entry)):
            continue  # the entry as a whole is off the schema (an unknown field): none of it is trusted
        for name, value in entry.items():
            if name == "step" or name in bad_fields or (value is None and name in spec.rule_fixed):
                continue
            if name in spec.rule_fixed:
                if value != spec.rule_fixed[name]:
                    conflicts.append((step, name, value))
                continue
            if name not in spec.required and name not in spec.optional:
                problems.setdefault(step, []).append(f"is a {spec.kind} step; {name} does not apply to it")
                continue
            if name == "search_type" and value == "InitialQuery":
                problems.setdefault(step, []).append(
                    "is not the first search of the trace; InitialQuery is given by rule to the first search only"
                )
                continue
            labels[(step, name)] = value
    for s, spec in sorted(specs.items()):
        lacking = [f for f in spec.required if (s, f) not in labels]
        if lacking and not problems.get(s):
            problems.setdefault(s, []).append(f"({spec.kind}) lacks {', '.join(lacking)}")
    if not problems:
        return ParseResult(True, labels, None, conflicts)
    said = {s: "; ".join(reasons) for s, reasons in sorted(problems.items())}
    lines = [f"step {s} {why}" for s, why in said.items()]
    more = f" (and {len(lines) - 5} more)" if len(lines) > 5 else ""
    return ParseResult(False, labels, "; ".join(lines[:5]) + more, conflicts, said)
