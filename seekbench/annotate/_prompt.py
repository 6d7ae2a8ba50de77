"""Rendering one judge prompt per trace from a template file in ``judges/prompts/``.

The trace is untrusted data. It goes into the user message as JSON between
two fence lines (``<<<STEPS_JSON`` / ``STEPS_JSON>>>``, and the question
between ``<<<QUESTION_JSON`` / ``QUESTION_JSON>>>``): every string is JSON
escaped, with line separators and invisible characters escaped too, so no
step text can end a line early; look-alikes of the fences and of the
``TRACE_ID:`` line (Unicode ones included) and chat-template control tokens
inside the data are neutralised (:mod:`._fence`); the trace id is shown only
when it is a plain identifier; placeholders are substituted in one pass, so
a placeholder written inside the data stays data. Rule-derived labels are
shown on their steps as ``rule_labels``. When the prompt would exceed the
judge's context, the longest step texts are cut to a common length with an
explicit marker, and the render records ``truncated``, the length cut to and
the steps cut; when even that does not fit it records ``over_context``.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field

from .._schemas import load_schema
from ..llm import PromptTemplate, estimate_tokens, fill, json_data, neutralise, safe_trace_id
from ._rules_derived import RuleLabel

STEPS_BEGIN, STEPS_END = "<<<STEPS_JSON", "STEPS_JSON>>>"
QUESTION_BEGIN, QUESTION_END = "<<<QUESTION_JSON", "QUESTION_JSON>>>"

#: Fields the judge must give, per step kind (rule-fixed fields are removed per trace).
REQUIRED_BY_KIND: dict[str, tuple[str, ...]] = {
    "reasoning": ("reasoning_type", "grounding"),
    "search": ("search_type",),
    "search_result": ("clarity", "sufficiency"),
}
#: Fields the judge may give, per step kind (search grounding is optional in the ontology).
OPTIONAL_BY_KIND: dict[str, tuple[str, ...]] = {"search": ("grounding",)}

TRUNCATION_MARKER = " [... {n} characters truncated by seekbench ...]"
#: Tokens kept free beyond ``max_tokens`` when fitting a prompt into the context.
CONTEXT_MARGIN_TOKENS = 256


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
    #: The length (characters) every longer step text was cut to, when ``truncated``.
    cap: int | None = None
    #: The steps whose text was cut.
    cut_steps: tuple[int, ...] = ()
    #: Even with every step text cut to nothing the prompt exceeds the context: it is not to be sent.
    over_context: bool = False


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
    by_step: dict[int, dict[str, str]] = {}
    for (i, f), r in rules.items():  # grouped once: a lookup per step keeps 10,000-step traces linear
        by_step.setdefault(i, {})[f] = r.value
    out = {}
    for step in trace["steps"]:
        idx, kind = int(step["index"]), step["kind"]
        fixed = by_step.get(idx, {})
        required = tuple(f for f in REQUIRED_BY_KIND.get(kind, ()) if f not in fixed)
        optional = tuple(f for f in OPTIONAL_BY_KIND.get(kind, ()) if f not in fixed)
        out[idx] = StepSpec(kind, required, optional, fixed)
    return out


def _step_rows(
    trace: dict, specs: dict[int, StepSpec], shown: set[int] | None = None, clip: dict[int, int] | None = None
) -> list[tuple[dict, str]]:
    """Each shown step's row head (step, kind, rule labels) and its neutralised text (cut to ``clip[step]``
    characters, with the marker, for the summary of what came before a window)."""
    rows = []
    for step in trace["steps"]:
        idx = int(step["index"])
        if shown is not None and idx not in shown:
            continue
        head: dict = {"step": idx, "kind": step["kind"]}
        if specs[idx].rule_fixed:
            head["rule_labels"] = dict(specs[idx].rule_fixed)
        text = neutralise(step_text(step))
        if clip is not None and idx in clip and len(text) > clip[idx]:
            text = text[: clip[idx]] + TRUNCATION_MARKER.format(n=len(text) - clip[idx])
        rows.append((head, text))
    return rows


#: The line that asks for some steps only (a window, one step, or a repair); the test server reads it too.
ONLY_STEPS = "Label only these steps: {steps}."
ONLY_STEPS_NOTE = " The other steps are shown as context (earlier ones may be cut short): give them no entry."


def only_steps_line(steps) -> str:
    """``Label only these steps: 3, 7.`` plus the note that the others are context."""
    return "\n\n" + ONLY_STEPS.format(steps=", ".join(str(s) for s in steps)) + ONLY_STEPS_NOTE


def _steps_block(rows: list[tuple[dict, str]], cap: int | None) -> tuple[str, tuple[int, ...]]:
    lines, cut = [], []
    for head, text in rows:
        if cap is not None and len(text) > cap:  # cutting neutralised text cannot form a fence look-alike
            text = text[:cap] + TRUNCATION_MARKER.format(n=len(text) - cap)
            cut.append(head["step"])
        lines.append(json_data({**head, "text": text}))
    return f"{STEPS_BEGIN}\n[" + ",\n".join(lines) + f"]\n{STEPS_END}", tuple(cut)


def _user_message(
    template: PromptTemplate, trace: dict, rows: list[tuple[dict, str]], cap: int | None, tail: str = ""
) -> tuple[str, tuple[int, ...]]:
    question = json_data(neutralise(trace.get("question") or ""))
    steps_block, cut = _steps_block(rows, cap)
    values = {
        "{{TRACE_ID}}": safe_trace_id(str(trace["trace_id"])),
        "{{QUESTION_BLOCK}}": f"{QUESTION_BEGIN}\n{question}\n{QUESTION_END}",
        "{{STEPS_BLOCK}}": steps_block,
    }
    # One pass over the template: a placeholder spelled inside the data is data, never substituted.
    return fill(template.user, values) + tail, cut


def render_prompt(
    trace: dict,
    rules: dict[tuple[int, str], RuleLabel],
    template: PromptTemplate,
    *,
    context_tokens: int = 128_000,
    max_tokens: int = 4096,
    label_steps: list[int] | None = None,
    shown_steps: set[int] | None = None,
    clip: dict[int, int] | None = None,
) -> RenderedPrompt:
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
    label_steps : list of int, optional
        Ask for these steps only (a window of a long trace, one step of the
        step-level design, a repair): the user message ends with
        :data:`ONLY_STEPS` naming them, and ``steps`` holds only their specs.
        Default: every step (the message is then exactly the template's).
    shown_steps : set of int, optional
        The steps shown in the block (default: all); the others are left out.
    clip : dict, optional
        ``step -> characters``: context steps cut to a summary length.

    Returns
    -------
    RenderedPrompt
        With ``truncated``, ``cap`` and ``cut_steps`` saying what was cut, and
        ``over_context`` True when even every step text cut to nothing does not
        fit (thousands of steps): such a prompt must not be sent.
    """
    specs = step_specs(trace, rules)
    rows = _step_rows(trace, specs, shown_steps, clip)
    tail = "" if label_steps is None else only_steps_line(label_steps)
    limit = context_tokens - max_tokens - CONTEXT_MARGIN_TOKENS
    sys_tokens = estimate_tokens(template.system)
    user, cut = _user_message(template, trace, rows, None, tail)
    cap, over = None, False
    if sys_tokens + estimate_tokens(user) > limit:
        user, cut = _user_message(template, trace, rows, 0, tail)
        cap, over = 0, sys_tokens + estimate_tokens(user) > limit  # too long even with every text cut
        lo, hi = 0, 0 if over else max((len(text) for _, text in rows), default=0)  # the largest cap that fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if sys_tokens + estimate_tokens(_user_message(template, trace, rows, mid, tail)[0]) <= limit:
                lo = mid
            else:
                hi = mid - 1
        if lo:
            cap = lo
            user, cut = _user_message(template, trace, rows, cap, tail)
    if label_steps is not None:
        specs = {s: specs[s] for s in label_steps}
    messages = [{"role": "system", "content": template.system}, {"role": "user", "content": user}]
    return RenderedPrompt(str(trace["trace_id"]), messages, specs, bool(cut), cap if cut else None, cut, over)


def repair_messages(
    rendered: RenderedPrompt, error: str, *, repair: int, max_repairs: int, steps: list[int] | None = None
) -> list[dict]:
    """The messages of repair ``repair`` (1-based): the request, plus a note naming what was wrong.

    With ``steps`` (the steps still missing or invalid) the note asks for those
    steps only (:data:`ONLY_STEPS`); the labels already accepted are kept. The
    note is outside the fences; the validation error is neutralised and cut to
    400 characters, since it may quote the judge's own (untrusted) output.
    """
    note = json_data(neutralise(error))[1:-1][:400]  # escaped to one line of visible text
    messages = copy.deepcopy(rendered.messages)
    if steps is None:
        messages[-1]["content"] += (
            f"\n\nREPAIR {repair} of {max_repairs}: an earlier answer to this request was rejected: {note}\n"
            "Answer again with one JSON object that follows the output format exactly."
        )
        return messages
    content = messages[-1]["content"]
    asked = content.rfind("\n\n" + ONLY_STEPS.split("{", 1)[0])
    base = content[:asked] if asked >= 0 else content  # the earlier ask for some steps is replaced
    messages[-1]["content"] = (
        base + f"\n\nREPAIR {repair} of {max_repairs}: the labels of the other steps were accepted; these were "
        f"missing or invalid: {note}"
        + only_steps_line(steps)
        + " Answer with one JSON object that follows the output format exactly."
    )
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


def response_format(mode: str) -> dict | None:
    """The ``response_format`` request parameter for ``json_schema`` or ``json_object`` mode (None for ``text``)."""
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "seekbench_step_labels", "strict": True, "schema": strict_output_schema()},
        }
    if mode == "json_object":
        return {"type": "json_object"}
    if mode == "text":
        return None
    raise ValueError(f"unknown response_format mode {mode!r}")


def request_body(
    config, messages: list[dict], *, mode: str | None = None, repair: int = 0, max_tokens: int | None = None
) -> dict:
    """The chat-completions request body for ``messages`` under a judge config (what is sent and hashed).

    ``mode`` is the response format in use (default the judge's; ``auto`` starts at
    ``json_schema``); ``repair`` and ``max_tokens`` go to :meth:`JudgeConfig.decoding`.
    """
    mode = mode or config.response_format
    fmt = response_format("json_schema" if mode == "auto" else mode)
    body = {"model": config.model, "messages": messages, **config.decoding(repair=repair, max_tokens=max_tokens)}
    if fmt is not None:
        body["response_format"] = fmt
    return body


#: Answer tokens allowed per step asked for (an entry is about 25 tokens, 40 with strict json_schema's nulls),
#: and for the frame around them.
TOKENS_PER_STEP, TOKENS_FRAME = 64, 256
#: What an answer typically takes per step: a trace is split into windows only when ``max_tokens`` could
#: not hold that much for its steps (the per-step allowance above only caps a runaway answer).
TOKENS_PER_STEP_TYPICAL = 32


def answer_tokens(config, n_steps: int) -> int | None:
    """``max_tokens`` sized to the steps being labeled, so a runaway answer is cut early.

    ``256 + 64 * n_steps``, never above the judge file's ``max_tokens``; None (the
    file's value) for a reasoning model, whose budget also covers its thinking.

    >>> from types import SimpleNamespace as Cfg
    >>> answer_tokens(Cfg(max_tokens=4096, reasoning_effort=None), 10)
    896
    """
    if config.reasoning_effort is not None:
        return None
    return min(config.max_tokens, TOKENS_FRAME + TOKENS_PER_STEP * n_steps)
