"""Which requests label a trace: the whole trace at once, one step at a time, or windows of steps.

- ``trace`` granularity (the default): one request for every step, with the
  template's prompt unchanged, when the trace fits the judge's context and its
  answer fits the answer budget; otherwise **windows** of consecutive steps,
  each request showing the question, a clipped summary of the steps before
  the window (the most recent first, each cut to :data:`SUMMARY_CHARS`
  characters, within a quarter of the room) and the window's steps, and asking
  for the window's steps only.
- ``step`` granularity (the published SeekBench design): one request per step
  that needs a judge label, showing the trace so far and asking for that step.

Every plan covers each step that needs a label exactly once. The estimates
are :func:`~seekbench.llm.estimate_tokens` (a fixed function of the text), so
the plan, and hence every cache key, is the same on every machine.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..llm import estimate_tokens, json_data, neutralise
from ._prompt import (
    CONTEXT_MARGIN_TOKENS,
    TOKENS_FRAME,
    TOKENS_PER_STEP_TYPICAL,
    StepSpec,
    answer_tokens,
    only_steps_line,
    step_text,
)

#: Characters each earlier step keeps in the summary before a window.
SUMMARY_CHARS = 200
#: The share of a window's room the summary of earlier steps may take.
SUMMARY_SHARE = 0.25
#: Tokens the question, the template's words and the step list line may take beyond the rows (a margin).
FRAME_TOKENS = 64


@dataclass(frozen=True)
class Unit:
    """One request of a plan (and its repairs): the steps it asks for and what it shows.

    ``label`` None means every step, with the template's prompt as it is.
    """

    label: list[int] | None
    shown: frozenset[int] | None = None
    clip: dict[int, int] | None = None
    #: ``(first, last)`` step of a window, or None.
    window: tuple[int, int] | None = None


def _row_tokens(step: dict, spec: StepSpec, cap: int | None) -> int:
    head: dict = {"step": int(step["index"]), "kind": step["kind"]}
    if spec.rule_fixed:
        head["rule_labels"] = dict(spec.rule_fixed)
    text = neutralise(step_text(step))
    if cap is not None and len(text) > cap:
        text = text[:cap] + " [... 000000 characters truncated by seekbench ...]"
    return estimate_tokens(json_data({**head, "text": text})) + 1


def plan_windows(
    trace: dict, specs: dict[int, StepSpec], config, *, context_tokens: int, fixed_tokens: int
) -> list[Unit]:
    """Windows of consecutive steps that each fit ``context_tokens`` with their answer budget.

    ``fixed_tokens``: the system message and the template's user text without steps.
    A step too long to fit even alone is a window of its own (its text is then cut
    by the render, with the marker).
    """
    steps = trace["steps"]
    full = [_row_tokens(s, specs[int(s["index"])], None) for s in steps]
    clipped = [_row_tokens(s, specs[int(s["index"])], SUMMARY_CHARS) for s in steps]
    wanted = [bool(specs[int(s["index"])].required or specs[int(s["index"])].optional) for s in steps]
    question = estimate_tokens(json_data(neutralise(trace.get("question") or "")))
    # the answer budget bounds a window too: more steps than max_tokens can hold would be cut off
    max_steps = (
        None
        if answer_tokens(config, 1) is None
        else max(1, (config.max_tokens - TOKENS_FRAME) // TOKENS_PER_STEP_TYPICAL)
    )

    # the "Label only these steps: ..." line: each step number and its ", ", plus the note after them
    ask = [(len(str(int(s["index"]))) + 2 + 2) // 3 if w else 0 for s, w in zip(steps, wanted, strict=True)]
    note = estimate_tokens(only_steps_line([]))

    def room(n_label: int) -> int:
        answer = answer_tokens(config, n_label) or config.max_tokens
        return context_tokens - answer - CONTEXT_MARGIN_TOKENS - fixed_tokens - question - FRAME_TOKENS - note

    units: list[Unit] = []
    a = 0
    while a < len(steps):
        n_label, used, b = 0, 0, a
        while b < len(steps):
            n_next = n_label + wanted[b]
            if max_steps is not None and n_next > max_steps:
                break
            budget = room(max(1, n_next))
            if b > a and used + full[b] + ask[b] > budget * (1 - SUMMARY_SHARE):
                break
            used += full[b] + ask[b]
            n_label = n_next
            b += 1
        b = max(b, a + 1)  # a step too long alone is its own window
        summary_room = int(room(max(1, n_label)) * SUMMARY_SHARE)
        before: dict[int, int] = {}
        spent = 0
        for i in range(a - 1, -1, -1):  # the most recent earlier steps first
            if spent + clipped[i] > summary_room:
                break
            spent += clipped[i]
            before[int(steps[i]["index"])] = SUMMARY_CHARS
        label = [int(steps[i]["index"]) for i in range(a, b) if wanted[i]]
        if label:
            shown = frozenset(before) | {int(steps[i]["index"]) for i in range(a, b)}
            window = (int(steps[a]["index"]), int(steps[b - 1]["index"]))
            units.append(Unit(label, shown, before, window))
        a = b
    return units


def plan_steps(trace: dict, specs: dict[int, StepSpec]) -> list[Unit]:
    """One unit per step that owes a label: the trace up to that step shown, that step asked for."""
    units, seen = [], []
    for step in trace["steps"]:
        idx = int(step["index"])
        seen.append(idx)
        if specs[idx].required:
            units.append(Unit([idx], frozenset(seen), None, None))
    return units
