"""What an import found, counted as the traces stream past: the one summary line every command prints.

A mapping that silently misses the question or the tool calls gives numbers that look fine; the
counts of traces with an empty question, no answer or no tool call make such a miss visible, and
:meth:`ImportSummary.advice` turns the telling patterns into one warning line naming the option to set.
Each count is the one the metrics use: a trace is "without an answer" when it has no ``answer`` step
(the trace table's ``answered`` is False; the outcome metrics and the decision points count it so),
whatever its ``final_answer`` field holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from .._ontology import STEP_KINDS


@dataclass
class ImportSummary:
    """Counts over the imported traces (``action_calls``: tool calls of tools that do not retrieve;
    ``no_answer``: traces without an ``answer`` step, the unanswered traces of the metrics)."""

    traces: int = 0
    steps: Counter = field(default_factory=Counter)
    tool_calls: int = 0
    action_calls: int = 0
    documents: int = 0
    empty_question: int = 0
    no_answer: int = 0
    no_tool_call: int = 0
    formats: Counter = field(default_factory=Counter)

    def add(self, trace: dict) -> None:
        steps = trace["steps"]
        self.traces += 1
        self.formats[(trace.get("source") or {}).get("format") or "?"] += 1
        calls = 0
        answered = False
        for st in steps:
            kind = st["kind"]
            self.steps[kind] += 1
            if kind == "search":
                calls += 1
            elif kind == "answer":
                answered = True
            elif kind == "other" and st.get("tool") is not None:
                self.action_calls += 1
            self.documents += len(st.get("documents") or ())
        self.tool_calls += calls
        self.empty_question += not (trace.get("question") or "").strip()
        self.no_answer += not answered
        self.no_tool_call += calls == 0

    def add_columns(
        self,
        formats: Sequence[str],
        questions: Sequence[str | None],
        kinds: Sequence[str],
        tools: Sequence[str | None],
        n_documents: Sequence[int],
        steps_per_trace: Sequence[int] | np.ndarray,
    ) -> None:
        """:meth:`add` of traces given as columns: per trace its source format (``"?"`` where none)
        and question; per step (in trace order, ``steps_per_trace`` each) its kind, tool
        and number of documents. The same counts without walking the trace dicts again."""
        n = len(steps_per_trace)
        self.traces += n
        self.formats.update(formats)
        self.steps.update(kinds)  # keys in order of first appearance, as counting step by step
        kind = np.fromiter(kinds, dtype=object, count=len(kinds))
        is_call = kind == "search"
        owner = np.repeat(np.arange(n), steps_per_trace)
        calls = np.bincount(owner[is_call], minlength=n)
        self.tool_calls += int(is_call.sum())
        if "other" in kinds:
            self.action_calls += sum(k == "other" and t is not None for k, t in zip(kinds, tools, strict=True))
        self.documents += sum(n_documents)
        self.empty_question += sum(not (q or "").strip() for q in questions)
        self.no_answer += _unanswered(kind, owner, n)
        self.no_tool_call += int((calls == 0).sum())

    def add_arrays(
        self,
        kinds: np.ndarray,
        tools: np.ndarray,
        n_documents: np.ndarray,
        steps_per_trace: np.ndarray,
        questions: np.ndarray,
    ) -> None:
        """:meth:`add` of traces read as columns (Parquet), without trace dicts: the steps' kinds, tools
        (None: none) and document counts in trace order, ``steps_per_trace`` each, and per trace its
        question (None: absent). The same counts (the per-format count excepted: a
        columnar read does not read ``source``)."""
        self.traces += len(steps_per_trace)
        self.steps.update(pd.Series(kinds, dtype=object).value_counts(sort=False).to_dict())
        is_call = kinds == "search"
        owner = np.repeat(np.arange(len(steps_per_trace)), steps_per_trace)
        calls = np.bincount(owner[is_call], minlength=len(steps_per_trace))
        self.tool_calls += int(is_call.sum())
        self.action_calls += int(((kinds == "other") & pd.notna(tools)).sum())
        self.documents += int(np.sum(n_documents))
        self.empty_question += sum(not (q or "").strip() for q in questions)
        self.no_answer += _unanswered(kinds, owner, len(steps_per_trace))
        self.no_tool_call += int((calls == 0).sum())

    def merge(self, other: ImportSummary) -> None:
        """Add the counts of ``other`` (another part of the same import) to these."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def line(self) -> str:
        """One line: traces, steps by kind, tool calls, documents, and the traces missing a part.

        >>> s = ImportSummary(); s.add({"question": "q", "final_answer": "a", "steps": [
        ...     {"kind": "search"}, {"kind": "search_result", "documents": [{}, {}]}, {"kind": "answer"}]})
        >>> print(s.line())  # doctest: +NORMALIZE_WHITESPACE
        imported 1 trace: 3 steps (search 1, search_result 1, answer 1), 1 tool call, 0 action calls,
        2 documents; 0 with an empty question, 0 without an answer, 0 without a tool call
        """
        kinds = ", ".join(
            f"{k} {self.steps[k]}" for k in (*STEP_KINDS, *sorted(set(self.steps) - set(STEP_KINDS))) if self.steps[k]
        )
        n_steps = sum(self.steps.values())
        return (
            f"imported {_n(self.traces, 'trace')}: {_n(n_steps, 'step')}"
            + (f" ({kinds})" if kinds else "")
            + f", {_n(self.tool_calls, 'tool call')}, {_n(self.action_calls, 'action call')}, "
            f"{_n(self.documents, 'document')}; {self.empty_question} with an empty question, "
            f"{self.no_answer} without an answer, {self.no_tool_call} without a tool call"
        )

    def advice(self) -> list[str]:
        """Warning lines for imports that look mapped wrong, each naming the option that fixes it."""
        out = []
        if self.traces and self.empty_question == self.traces:
            out.append("every question is empty; name the field holding it with --question-field FIELD")
        return out


def _unanswered(kinds: np.ndarray, owner: np.ndarray, n: int) -> int:
    """The number of the ``n`` traces with no ``answer`` step (``owner``: each step's trace)."""
    return n - len(np.unique(owner[kinds == "answer"]))


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
