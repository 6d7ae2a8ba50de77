"""The metric options: their allowed values, the one check, and :class:`MetricOptions` that carries them.

Nine options choose between definitions of a number (the paper's, or the released
code's): how E is mapped and scoped (spec section 2), how CE aggregates and where its
decision points are (section 5), what counts as recovery, which estimator and time scale
the ERF uses (section 4), and how RQI aggregates (section 3). Each allowed set is a
``Literal`` defined here once; every function that takes one of these options checks it
with :func:`check_option`, so an unknown value always fails with the same wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal, TypedDict, get_args

from .._errors import UserInputError

EvidenceMapping = Literal["sum", "sufficiency_first"]
EvidenceScope = Literal["cumulative", "latest"]
CEAggregate = Literal["trace", "pooled"]
Prevalence = Literal["global", "group"]
DecisionPoints = Literal["turn", "step"]
Recovery = Literal["evidence_or_correct", "evidence"]
Method = Literal["aalen_johansen", "km"]
TimeScale = Literal["turn", "step"]
RQIAggregate = Literal["trace", "step"]

MAPPING_OPTIONS: tuple[str, ...] = get_args(EvidenceMapping)
SCOPE_OPTIONS: tuple[str, ...] = get_args(EvidenceScope)
CE_AGGREGATE_OPTIONS: tuple[str, ...] = get_args(CEAggregate)
PREVALENCE_OPTIONS: tuple[str, ...] = get_args(Prevalence)
DECISION_POINTS: tuple[str, ...] = get_args(DecisionPoints)
RECOVERY_OPTIONS: tuple[str, ...] = get_args(Recovery)
METHOD_OPTIONS: tuple[str, ...] = get_args(Method)
TIME_OPTIONS: tuple[str, ...] = get_args(TimeScale)
RQI_AGGREGATE_OPTIONS: tuple[str, ...] = get_args(RQIAggregate)


class EvidenceOptions(TypedDict):
    """The two options of E, as keywords (``**options.evidence``)."""

    evidence_mapping: EvidenceMapping
    evidence_scope: EvidenceScope


class EvidenceKeywords(TypedDict, total=False):
    """The two options of E as optional keywords of a function (``**evidence``)."""

    evidence_mapping: EvidenceMapping
    evidence_scope: EvidenceScope


def evidence_keywords(function: str, given: Mapping[str, Any]) -> EvidenceOptions:
    """The E options a function received as ``**evidence``, defaults filled in and checked.

    The functions that only pass E on take its two options as one unit; a keyword other
    than the two is a TypeError, as for any function without it.

    >>> evidence_keywords("f", {"evidence_scope": "latest"})
    {'evidence_mapping': 'sum', 'evidence_scope': 'latest'}
    """
    unknown = sorted(set(given) - {"evidence_mapping", "evidence_scope"})
    if unknown:
        raise TypeError(f"{function}() got unexpected keyword argument(s): {', '.join(unknown)}")
    mapping = given.get("evidence_mapping", "sum")
    scope = given.get("evidence_scope", "cumulative")
    check_option("evidence_mapping", mapping, MAPPING_OPTIONS)
    check_option("evidence_scope", scope, SCOPE_OPTIONS)
    return {"evidence_mapping": mapping, "evidence_scope": scope}


def check_option(name: str, value: object, allowed: tuple[str, ...]) -> None:
    """The one error wording for an unknown option value (no silent fallback)."""
    if value not in allowed:
        raise UserInputError(f"unknown {name} {value!r}; choose one of: {', '.join(allowed)}")


@dataclass(frozen=True)
class MetricOptions:
    """The nine metric options, checked once when made; passed whole instead of nine keywords.

    Functions that take them (:func:`~seekbench.metrics.summarize`,
    :func:`~seekbench.agreement.compare_annotations`,
    :func:`~seekbench.agreement.metric_sensitivity`) accept ``options=MetricOptions(...)``
    as well as the single keywords; a keyword given beside ``options`` overrides it.

    Attributes
    ----------
    evidence_mapping : {"sum", "sufficiency_first"}
        E = C + Q (Def. 3.1, default) or the released code's sufficiency-first mapping (spec 2).
    evidence_scope : {"cumulative", "latest"}
        E at turn t: the best evidence so far (default) or the latest observation only (spec 2).
    ce_aggregate : {"trace", "pooled"}
        CE per trace then the mean (default, the paper) or pooled over decision points (spec 5).
    ce_prevalence : {"global", "group"}
        With ``ce_aggregate="pooled"``: P(E = k) over all agents (default) or within the group.
    decision_points : {"turn", "step"}
        CE decision points: every turn (default) or every step (the released code).
    recovery : {"evidence_or_correct", "evidence"}
        The ERF event: E = 2 or a correct answer (default), or E = 2 only (spec 4).
    erf_method : {"aalen_johansen", "km"}
        The ERF estimator: Aalen-Johansen cumulative incidence (default) or 1 - Kaplan-Meier.
    time : {"turn", "step"}
        The ERF time scale.
    rqi_aggregate : {"trace", "step"}
        RQI: the mean of per-trace RQI (default) or pooled over reasoning steps (spec 3).

    Notes
    -----
    The CE window H of the overcautious rate (``overcautious_window`` of
    :func:`~seekbench.metrics.answer_calibration`) is not one of them: it is a number,
    not a choice of definition, and ``horizon`` of the ERF fitter is another quantity.

    Examples
    --------
    >>> opts = MetricOptions(erf_method="km")
    >>> opts.erf_method, opts.evidence_mapping
    ('km', 'sum')
    >>> MetricOptions.resolve(opts, time="step").time
    'step'
    >>> MetricOptions(recovery="answer")
    Traceback (most recent call last):
    ...
    seekbench._errors.UserInputError: unknown recovery 'answer'; choose one of: evidence_or_correct, evidence
    """

    evidence_mapping: EvidenceMapping = "sum"
    evidence_scope: EvidenceScope = "cumulative"
    ce_aggregate: CEAggregate = "trace"
    ce_prevalence: Prevalence = "global"
    decision_points: DecisionPoints = "turn"
    recovery: Recovery = "evidence_or_correct"
    erf_method: Method = "aalen_johansen"
    time: TimeScale = "turn"
    rqi_aggregate: RQIAggregate = "trace"

    def __post_init__(self) -> None:
        for f in fields(self):
            check_option(f.name, getattr(self, f.name), _ALLOWED[f.name])

    @classmethod
    def resolve(cls, options: MetricOptions | None = None, /, **overrides: Any) -> MetricOptions:
        """``options`` (default: the defaults) with the keywords that are not None put over it.

        The one way loose keywords become options: an unknown keyword raises
        :class:`~seekbench._errors.UserInputError` naming the known ones.
        """
        if options is not None and not isinstance(options, MetricOptions):
            raise UserInputError(f"options must be a MetricOptions, got {type(options).__name__}")
        unknown = sorted(set(overrides) - set(_ALLOWED))
        if unknown:
            raise UserInputError(f"unknown metric option(s) {', '.join(unknown)}; choose from: {', '.join(_ALLOWED)}")
        given = {k: v for k, v in overrides.items() if v is not None}
        base = cls() if options is None else options
        return replace(base, **given) if given else base

    @staticmethod
    def choices(name: str) -> tuple[str, ...]:
        """The allowed values of the option ``name`` (for command lines and forms)."""
        if name not in _ALLOWED:
            raise UserInputError(f"unknown metric option(s) {name}; choose from: {', '.join(_ALLOWED)}")
        return _ALLOWED[name]

    def as_dict(self) -> dict[str, Any]:
        """The nine options by name, in the order of the attributes (JSON-ready)."""
        return asdict(self)

    @property
    def evidence(self) -> EvidenceOptions:
        """``evidence_mapping`` and ``evidence_scope``, the keywords every E-based function takes."""
        return {"evidence_mapping": self.evidence_mapping, "evidence_scope": self.evidence_scope}


_ALLOWED: dict[str, tuple[str, ...]] = {
    "evidence_mapping": MAPPING_OPTIONS,
    "evidence_scope": SCOPE_OPTIONS,
    "ce_aggregate": CE_AGGREGATE_OPTIONS,
    "ce_prevalence": PREVALENCE_OPTIONS,
    "decision_points": DECISION_POINTS,
    "recovery": RECOVERY_OPTIONS,
    "erf_method": METHOD_OPTIONS,
    "time": TIME_OPTIONS,
    "rqi_aggregate": RQI_AGGREGATE_OPTIONS,
}
