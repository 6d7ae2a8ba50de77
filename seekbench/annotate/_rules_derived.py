"""Labels derived by rule, never paid for: InitialQuery and RepeatQuery (spec section 1).

The first search step of a trace is ``InitialQuery``; a search step whose
query equals, after :func:`~seekbench.traces.normalize_query`, the query of an
earlier search step of the same trace is ``RepeatQuery``. These are facts of
the trace, not judgments: they are computed locally, shown to the judge as
context, and written with ``provenance.kind = "rule"``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..traces import normalize_query

RULE_FIRST_SEARCH = "first_search"
RULE_REPEAT_QUERY = "repeat_normalized_query"


@dataclass(frozen=True)
class RuleLabel:
    """One rule-derived label: ``(step, field) = value`` because of ``rule`` (``repeat_of`` for repeats)."""

    step: int
    field: str
    value: str
    rule: str
    repeat_of: int | None = None


def search_key(step: dict) -> str | None:
    """The normalised text that identifies a search: its query, else its URL, else its text."""
    for name in ("query", "url", "text"):
        value = step.get(name)
        if isinstance(value, str) and value.strip():
            return normalize_query(value) if name != "url" else value.strip()
    return None


def rule_labels(trace: dict) -> dict[tuple[int, str], RuleLabel]:
    """Rule-derived labels of one canonical trace, keyed by ``(step index, field)``.

    Parameters
    ----------
    trace : dict
        A canonical trace (``read_traces(...).traces[i]``).

    Returns
    -------
    dict
        ``{(step, "search_type"): RuleLabel}`` for the first search (InitialQuery)
        and every exact repeat of an earlier query (RepeatQuery). A search with
        no query text is neither (after the first).

    Examples
    --------
    >>> tr = {"steps": [{"index": 0, "kind": "search", "query": "Capital of France?"},
    ...                 {"index": 1, "kind": "search", "query": "capital of  france"}]}
    >>> sorted((k[0], v.value) for k, v in rule_labels(tr).items())
    [(0, 'InitialQuery'), (1, 'RepeatQuery')]
    """
    out: dict[tuple[int, str], RuleLabel] = {}
    seen: dict[str, int] = {}
    first = True
    for step in trace.get("steps", []):
        if step.get("kind") != "search":
            continue
        idx = int(step["index"])
        key = search_key(step)
        if first:
            out[(idx, "search_type")] = RuleLabel(idx, "search_type", "InitialQuery", RULE_FIRST_SEARCH)
            first = False
        elif key is not None and key in seen:
            out[(idx, "search_type")] = RuleLabel(
                idx, "search_type", "RepeatQuery", RULE_REPEAT_QUERY, repeat_of=seen[key]
            )
        if key is not None:
            seen.setdefault(key, idx)
    return out
