"""The offline judge interface: label every applicable field of every step, or say why not.

A judge turns canonical traces into annotation records (the format of
``seekbench.labels``): one record per (step, field) for every field the
ontology applies to the step's kind (spec section 1). A record carries a value,
or ``value=None`` with an ``unscored_reason``; there is no silent default.

Two labels are never left to a judge (issue 3, item 3): the first search of a
trace is ``InitialQuery`` and a search whose query equals an earlier one after
:func:`~seekbench.traces.normalize_query` is ``RepeatQuery``. They come from
``seekbench.annotate.rule_labels``, the rule the LLM judges use too, and their
records carry ``provenance.kind == "rule"``; everything else the judge decides
carries ``provenance.kind == "judge"``.
"""

from __future__ import annotations

import abc
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..._version import SCHEMA_VERSION
from ...llm import utc_now
from ...traces import FIELDS_BY_KIND
from ._context import StepView, trace_views

#: Step kinds the offline judges label.
JUDGED_KINDS = ("reasoning", "search", "search_result")


@dataclass(frozen=True)
class Decision:
    """A judge's answer for one (step, field): a value, or None with the reason it is unscored.

    ``basis`` names the heuristic or model that produced it (kept in the provenance).
    """

    value: str | None
    reason: str | None = None
    basis: str | None = None

    def __post_init__(self) -> None:
        if self.value is None and not self.reason:
            raise ValueError("an unscored decision needs a reason")


def rule_search_type(view: StepView) -> Decision | None:
    """The rule-derived search type of a search step, or None when the rules do not decide it.

    Parameters
    ----------
    view : StepView
        A search step.

    Returns
    -------
    Decision or None
        ``InitialQuery`` for the first search of the trace; ``RepeatQuery`` for a query
        equal after normalisation to an earlier query of the same trace; None otherwise.
        ``basis`` is the rule's name (``first_search``, ``repeat_normalized_query``).
    """
    if view.kind != "search" or view.rule_label is None:
        return None
    return Decision(view.rule_label.value, basis=view.rule_label.rule)


def applicable_fields(kind: str) -> tuple[str, ...]:
    """Label fields an offline judge must answer for a step of ``kind`` (empty for answer and other)."""
    return FIELDS_BY_KIND.get(kind, ()) if kind in JUDGED_KINDS else ()


class OfflineJudge(abc.ABC):
    """Base class of the judges that run without a model provider.

    Subclasses implement :meth:`_decide`; :meth:`label_traces` does the rest
    (walking the traces, rule-derived labels, records and provenance).

    Parameters
    ----------
    name : str
        The judge's name (from its ``judges/*.toml`` file).
    version : str
        The judge's version, recorded in every label's provenance.
    """

    kind: str = "offline"

    def __init__(self, name: str, *, version: str = "1") -> None:
        self.name = name
        self.version = str(version)

    @property
    def model_id(self) -> str:
        """What produced the labels, for ``provenance.model``."""
        return f"{self.kind}@{self.version}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model={self.model_id!r})"

    @abc.abstractmethod
    def _decide(self, kind: str, field: str, views: Sequence[StepView]) -> list[Decision]:
        """Decide ``field`` for each of ``views`` (all of step kind ``kind``), one Decision per view."""

    def label_traces(self, traces: list[dict], *, rater: str) -> list[dict]:
        """Label every applicable field of every reasoning, search and observation step.

        Parameters
        ----------
        traces : list of dict
            Canonical traces (``read_traces(path).traces``). Inline labels are ignored.
        rater : str
            The rater name written into every record.

        Returns
        -------
        list of dict
            Annotation records (``schemas/annotation.schema.json``) in trace, step, field
            order: ``value`` an ontology value, or None with ``unscored_reason``.
            Deterministic given the traces (only ``provenance.time`` varies between runs).
        """
        return self.label_views(trace_views(traces), rater=rater)

    def label_views(self, views_per_trace: list[list[StepView]], *, rater: str) -> list[dict]:
        """:meth:`label_traces` on precomputed step views (``_context.trace_views(traces)``)."""
        time = utc_now()
        model = self.model_id
        slots: list[tuple[StepView, str]] = []
        for views in views_per_trace:
            for view in views:
                for f in applicable_fields(view.kind):
                    slots.append((view, f))
        decided: dict[int, tuple[Decision, str]] = {}
        pending: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, (view, f) in enumerate(slots):
            rule = rule_search_type(view) if f == "search_type" else None
            if rule is not None:
                decided[i] = (rule, "rule")
            else:
                pending[(view.kind, f)].append(i)
        for (kind, f), idx in pending.items():
            got = self._decide(kind, f, [slots[i][0] for i in idx])
            if len(got) != len(idx):
                raise RuntimeError(f"{self!r} returned {len(got)} decisions for {len(idx)} {kind} steps ({f})")
            for i, d in zip(idx, got, strict=True):
                decided[i] = (d, "judge")
        return [
            self._record(view, f, *decided[i], rater=rater, time=time, model=model) for i, (view, f) in enumerate(slots)
        ]

    def _record(
        self, view: StepView, field: str, decision: Decision, source: str, *, rater: str, time: str, model: str
    ) -> dict:
        prov: dict[str, object]
        if source == "rule":
            prov = {"kind": "rule", "judge": self.name, "model": None, "rule": decision.basis, "time": time}
            if view.rule_label is not None and view.rule_label.repeat_of is not None:
                prov["repeat_of"] = view.rule_label.repeat_of
        else:
            prov = {"kind": "judge", "judge": self.name, "model": model, "time": time, "heuristic": decision.basis}
        return {
            "schema_version": SCHEMA_VERSION,
            "trace_id": view.trace_id,
            "step": view.step,
            "field": field,
            "value": decision.value,
            "unscored_reason": None if decision.value is not None else decision.reason,
            "rater": rater,
            "provenance": prov,
        }
