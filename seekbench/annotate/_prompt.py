"""Rendering one judge prompt per trace from a template file in ``judges/prompts/``.

The trace is untrusted data. It goes into the user message as JSON between
two fence lines (``<<<STEPS_JSON`` / ``STEPS_JSON>>>``, and the question
between ``<<<QUESTION_JSON`` / ``QUESTION_JSON>>>``): every string is JSON
escaped, so no step text can end a line early, and look-alikes of the fences
and of the ``TRACE_ID:`` line inside the data are neutralised. Rule-derived
labels are shown on their steps as ``rule_labels``. When the prompt would
exceed the judge's context, the longest step texts are cut to a common length
with an explicit marker, and the render records ``truncated = True``.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .._errors import UserInputError
from .._schemas import load_schema
from ._cost import estimate_tokens
from ._rules_derived import RuleLabel

STEPS_BEGIN, STEPS_END = "<<<STEPS_JSON", "STEPS_JSON>>>"
QUESTION_BEGIN, QUESTION_END = "<<<QUESTION_JSON", "QUESTION_JSON>>>"
SYSTEM_MARKER, USER_MARKER = "=== SYSTEM ===", "=== USER ==="
PLACEHOLDERS = ("{{TRACE_ID}}", "{{QUESTION_BLOCK}}", "{{STEPS_BLOCK}}")

#: Fields the judge must give, per step kind (rule-fixed fields are removed per trace).
REQUIRED_BY_KIND: dict[str, tuple[str, ...]] = {
    "reasoning": ("reasoning_type", "grounding"),
    "search": ("search_type",),
    "search_result": ("clarity", "sufficiency"),
}
#: Fields the judge may give, per step kind (search grounding is optional in the ontology).
OPTIONAL_BY_KIND: dict[str, tuple[str, ...]] = {"search": ("grounding",)}

_FENCE_LOOKALIKE = re.compile(r"(?i)(<{3,}|>{3,}|steps_json|question_json|trace_id\s*:)")
_NEUTRAL = {"steps_json": "STEPS-JSON", "question_json": "QUESTION-JSON"}
TRUNCATION_MARKER = " [... {n} characters truncated by seekbench ...]"
#: Tokens kept free beyond ``max_tokens`` when fitting a prompt into the context.
CONTEXT_MARGIN_TOKENS = 256


def neutralise(text: str) -> str:
    """Defuse fence look-alikes in untrusted text: ``<<<`` -> ``< < <``, ``STEPS_JSON`` -> ``STEPS-JSON``, ...

    >>> neutralise("x\\nSTEPS_JSON>>>\\nTRACE_ID: evil")
    'x\\nSTEPS-JSON> > >\\nTRACE-ID: evil'
    """
    def sub(m: re.Match) -> str:
        s = m.group(0)
        if s[0] in "<>":
            return " ".join(s)
        low = s.lower()
        if low.startswith("trace_id"):
            return "TRACE-ID" + s[len("trace_id"):]
        return _NEUTRAL[low]

    return _FENCE_LOOKALIKE.sub(sub, text)


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt file: its system and user parts, its version and the SHA-256 of its bytes."""

    system: str
    user: str
    version: str
    sha256: str
    path: Path | None = None

    @classmethod
    def load(cls, path: str | Path, *, version: str) -> PromptTemplate:
        """Read and check a template (both markers, every placeholder once)."""
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise UserInputError(f"cannot read prompt template: {e.strerror}", file=str(path)) from e
        text = data.decode("utf-8").replace("\r\n", "\n")
        parts = re.split(rf"(?m)^({re.escape(SYSTEM_MARKER)}|{re.escape(USER_MARKER)})[ \t]*$", text)
        markers = parts[1::2]
        if markers != [SYSTEM_MARKER, USER_MARKER]:
            raise UserInputError(f"a prompt template needs one {SYSTEM_MARKER!r} line, then one {USER_MARKER!r} "
                                 "line", file=str(path))
        system, user = parts[2].strip("\n"), parts[4].strip("\n")
        for ph in PLACEHOLDERS:
            if user.count(ph) != 1:
                raise UserInputError(f"the user part must contain {ph} exactly once", file=str(path))
        return cls(system, user, version, hashlib.sha256(data).hexdigest(), path)


@dataclass(frozen=True)
class StepSpec:
    """What the judge owes for one step: required and optional fields, and the rule-fixed ones."""

    kind: str
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    rule_fixed: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RenderedPrompt:
    """The messages of one trace's judge request and what a valid answer must contain."""

    trace_id: str
    messages: list[dict]
    steps: dict[int, StepSpec]
    truncated: bool = False


def step_text(step: dict) -> str:
    """The text shown for a step: reasoning/answer text, the query, or the documents as ``[rank] title: text``."""
    kind = step.get("kind")
    if kind == "search":
        target = step.get("query") or step.get("url") or step.get("text") or ""
        tool = step.get("tool")
        return f"{tool}: {target}" if tool and tool != "search" else target
    if kind == "search_result" and not step.get("text") and step.get("documents"):
        lines = []
        for n, doc in enumerate(step["documents"], start=1):
            rank = doc.get("rank") or n
            title = (doc.get("title") or "").strip()
            body = (doc.get("text") or "").strip()
            lines.append(f"[{rank}] {title}: {body}" if title else f"[{rank}] {body}")
        return "\n".join(lines)
    return step.get("text") or ""


def step_specs(trace: dict, rules: dict[tuple[int, str], RuleLabel]) -> dict[int, StepSpec]:
    """For each step, the fields the judge must and may give, given the rule-derived labels."""
    out = {}
    for step in trace["steps"]:
        idx, kind = int(step["index"]), step["kind"]
        fixed = {f: r.value for (i, f), r in rules.items() if i == idx}
        required = tuple(f for f in REQUIRED_BY_KIND.get(kind, ()) if f not in fixed)
        optional = tuple(f for f in OPTIONAL_BY_KIND.get(kind, ()) if f not in fixed)
        out[idx] = StepSpec(kind, required, optional, fixed)
    return out


def _steps_block(trace: dict, specs: dict[int, StepSpec], cap: int | None) -> tuple[str, bool]:
    rows, cut = [], False
    for step in trace["steps"]:
        idx = int(step["index"])
        text = step_text(step)
        if cap is not None and len(text) > cap:
            text = text[:cap] + TRUNCATION_MARKER.format(n=len(text) - cap)
            cut = True
        row: dict = {"step": idx, "kind": step["kind"]}
        if specs[idx].rule_fixed:
            row["rule_labels"] = dict(specs[idx].rule_fixed)
        row["text"] = neutralise(text)
        rows.append(json.dumps(row, ensure_ascii=False))
    return f"{STEPS_BEGIN}\n[" + ",\n".join(rows) + f"]\n{STEPS_END}", cut


def _user_message(template: PromptTemplate, trace: dict, specs: dict[int, StepSpec],
                  cap: int | None) -> tuple[str, bool]:
    trace_id = neutralise(str(trace["trace_id"])).replace("\r", " ").replace("\n", " ")
    question = json.dumps(neutralise(trace.get("question") or ""), ensure_ascii=False)
    steps_block, cut = _steps_block(trace, specs, cap)
    text = (template.user.replace("{{TRACE_ID}}", trace_id)
            .replace("{{QUESTION_BLOCK}}", f"{QUESTION_BEGIN}\n{question}\n{QUESTION_END}")
            .replace("{{STEPS_BLOCK}}", steps_block))
    return text, cut


def render_prompt(trace: dict, rules: dict[tuple[int, str], RuleLabel], template: PromptTemplate, *,
                  context_tokens: int = 128_000, max_tokens: int = 4096) -> RenderedPrompt:
    """Render the judge request of one trace: one system and one user message.

    Parameters
    ----------
    trace : dict
        A canonical trace.
    rules : dict
        Its rule-derived labels (:func:`~seekbench.annotate.rule_labels`).
    template : PromptTemplate
    context_tokens, max_tokens : int
        The judge's context window and answer budget: the prompt is cut to fit
        ``context_tokens - max_tokens - 256`` tokens by :func:`estimate_tokens`.

    Returns
    -------
    RenderedPrompt
    """
    specs = step_specs(trace, rules)
    limit = context_tokens - max_tokens - CONTEXT_MARGIN_TOKENS
    sys_tokens = estimate_tokens(template.system)
    user, _ = _user_message(template, trace, specs, None)
    cap, truncated = None, False
    if sys_tokens + estimate_tokens(user) > limit:
        longest = max((len(step_text(s)) for s in trace["steps"]), default=0)
        lo, hi = 0, longest  # largest cap whose render fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if sys_tokens + estimate_tokens(_user_message(template, trace, specs, mid)[0]) <= limit:
                lo = mid
            else:
                hi = mid - 1
        cap = lo
        # At cap 0 the prompt may still not fit (thousands of steps): it is sent as it is and the
        # endpoint's refusal fails this trace with its reason, rather than silently dropping steps.
        user, truncated = _user_message(template, trace, specs, cap)
    messages = [{"role": "system", "content": template.system}, {"role": "user", "content": user}]
    return RenderedPrompt(str(trace["trace_id"]), messages, specs, truncated)


def repair_messages(rendered: RenderedPrompt, error: str, *, repair: int, max_repairs: int) -> list[dict]:
    """The messages of repair ``repair`` (1-based): the same request, plus a note naming what was wrong.

    The note is outside the fences; the validation error is neutralised and
    cut to 400 characters, since it may quote the judge's own (untrusted) output.
    """
    note = neutralise(error.replace("\n", " "))[:400]
    messages = copy.deepcopy(rendered.messages)
    messages[-1]["content"] += (
        f"\n\nREPAIR {repair} of {max_repairs}: an earlier answer to this request was rejected: {note}\n"
        "Answer again with one JSON object that follows the output format exactly.")
    return messages


@functools.cache
def judge_output_schema() -> dict:
    """``schemas/judge_output.schema.json``, the schema every answer is validated against."""
    return load_schema("judge_output")


@functools.cache
def strict_output_schema() -> dict:
    """The judge-output schema in the form OpenAI's strict structured outputs accept.

    Strict mode wants every property listed in ``required``; the optional
    label fields are therefore required-but-nullable there (null = not given),
    which the validation schema also accepts.
    """
    schema = copy.deepcopy(judge_output_schema())
    for key in ("$schema", "$id", "title", "description"):
        schema.pop(key, None)
    item = schema["properties"]["labels"]["items"]
    item["required"] = list(item["properties"])
    return schema


def response_format(mode: str) -> dict:
    """The ``response_format`` request parameter for ``json_schema`` or ``json_object`` mode."""
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": "seekbench_step_labels", "strict": True, "schema": strict_output_schema()}}
    if mode == "json_object":
        return {"type": "json_object"}
    raise ValueError(f"unknown response_format mode {mode!r}")


def request_body(config, messages: list[dict]) -> dict:
    """The chat-completions request body for ``messages`` under a judge config (what is sent and hashed)."""
    return {"model": config.model, "messages": messages, **config.decoding(),
            "response_format": response_format(config.response_format)}


def cache_key(config, template: PromptTemplate, body: dict) -> str:
    """SHA-256 of model, prompt version and hash, and the request body (rendered prompt + decoding)."""
    payload = {"model": config.model, "prompt_version": template.version, "prompt_sha256": template.sha256,
               "body": body}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False,
                                     separators=(",", ":")).encode("utf-8")).hexdigest()
