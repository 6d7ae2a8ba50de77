"""The tidy step table and trace table every metric reads (one pass over the traces).

Step table: one row per step in trace order, columns

    trace_id, agent, dataset, question_id, step, pos, kind, turn, query, query_norm,
    visit_id, n_documents, reasoning_type, grounding, search_type, clarity, sufficiency

``turn`` follows spec section 1: the number of tool calls at or before the step, so a
tool call and its observation share turn t, a call without an observation still opens
its turn, and reasoning and answer steps keep the turn of the last call before them
(0 before the first call). Label columns hold
canonical values or None (missing, never a default).

Trace table: one row per trace, columns

    trace_id, agent, dataset, question_id, question, gold_answers, final_answer,
    answered, answer_pos, answer_turn, last_turn, correct, correct_source, n_steps,
    em, f1
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping

import numpy as np
import pandas as pd

from ._answers import em_f1
from ._dict_columns import DictColumns
from ._normalize import normalized
from ._ontology import LABEL_FIELDS

STEP_COLUMNS = [
    "trace_id",
    "agent",
    "dataset",
    "question_id",
    "step",
    "pos",
    "kind",
    "turn",
    "query",
    "query_norm",
    "visit_id",
    "n_documents",
    *LABEL_FIELDS,
]
TRACE_COLUMNS = [
    "trace_id",
    "agent",
    "dataset",
    "question_id",
    "question",
    "gold_answers",
    "final_answer",
    "answered",
    "answer_pos",
    "answer_turn",
    "last_turn",
    "correct",
    "correct_source",
    "n_steps",
    "em",
    "f1",
]

_INT_COLUMNS = ("step", "pos", "turn", "n_documents")
#: Step columns repeating a trace column over the trace's steps.
_REPEATED = ("trace_id", "agent", "dataset", "question_id")
#: Object step columns whose strings-only check can be known without scanning them.
_KNOWABLE = (*_REPEATED, "query_norm", "kind", "query", "visit_id", *LABEL_FIELDS)
#: Object trace columns of strings and None in traces that passed the schema (the rest hold lists
#: or three-valued correctness, and go to pandas as they are).
_TRACE_TEXT = (*_REPEATED, "question", "final_answer", "correct_source")
_VISIT_TOOLS = ("visit", "open", "browse", "fetch", "read", "click")


def _visit_id(url: str | None, tool: str | None, query: str | None) -> str | None:
    """The visited URL or document id of a search step: its ``url``, else its query when the
    tool is visit-like (visit, open, browse, ...)."""
    if url:
        return url
    if query and _visit_like(tool or ""):
        return query
    return None


@functools.lru_cache(maxsize=1024)
def _visit_like(tool: str) -> bool:
    """Whether a tool name contains one of ``_VISIT_TOOLS`` (tool names are a small vocabulary)."""
    name = tool.lower()
    return any(t in name for t in _VISIT_TOOLS)


#: Traces gathered into Python lists before they become arrays (the trace dicts are not held).
_CHUNK = 2048


def _turns(kinds: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """The turn of each step (spec section 1) for the steps of consecutive traces.

    The turn of a step is the number of tool calls at or before it in its trace: a call
    opens a turn whether or not an observation follows (truncated Search-R1 rollouts end on
    one), its observation shares it, and reasoning, answer and other steps keep the turn of
    the last call before them (0 if none). ``owner`` numbers the trace of each step
    (non-decreasing).
    """
    n = len(kinds)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    is_call = kinds == "search"
    start = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    length = np.diff(np.r_[start, n])
    c = np.cumsum(is_call, dtype=np.int64)
    return (c - np.repeat(c[start] - is_call[start], length)).astype(np.int64)


class _Columns:
    """Step and trace columns, filled one chunk of traces at a time (the single pass)."""

    def __init__(self, use_inline: bool) -> None:
        self.use_inline = use_inline
        self.steps: dict[str, list] = {c: [] for c in STEP_COLUMNS}
        self.trows: dict[str, list] = {c: [] for c in TRACE_COLUMNS}
        # Object step columns known to hold only strings and None (checked on the short per-trace
        # arrays they repeat, or so by construction): frames() need not scan their every step.
        self.strings: dict[str, bool] = {}
        # The same for the object trace columns of _TRACE_TEXT.
        self.trace_strings: dict[str, bool] = {}

    def add(self, chunk: list[dict]) -> None:
        """Add a chunk of canonical traces (dicts)."""
        gathered = DictColumns(self.use_inline)
        for tr in chunk:
            gathered.add(tr)
        self.add_dicts(gathered)

    def add_dicts(self, gathered: DictColumns) -> None:
        """Add the traces gathered in ``gathered`` (which starts afresh)."""
        tcols, scols, counts, strings = gathered.take()
        self.add_columns(tcols, scols, counts, strings=strings)

    def add_columns(
        self,
        tcols: Mapping[str, list | np.ndarray],
        scols: Mapping[str, list | np.ndarray],
        counts: np.ndarray,
        *,
        strings: Collection[str] = (),
        schema_valid: bool = False,
    ) -> None:
        """Add traces given as columns: per trace ``trace_id, agent, dataset, question_id, question,
        gold_answers, final_answer, correct_value, correct_source``; per step (``counts[i]`` steps
        of trace i, in order) ``index, kind, query, url, tool, n_documents`` and the label fields.
        ``strings`` names step columns the caller knows hold only strings and None;
        ``schema_valid``: the traces passed the trace schema, so every text column does."""
        n_traces = len(counts)
        kinds, queries = _objects(scols["kind"]), _objects(scols["query"])
        owner = np.repeat(np.arange(n_traces), counts)
        turn = _turns(kinds, owner)
        col = self.steps
        known = {*strings, "query_norm"}
        if schema_valid:  # the schema types these string or null, and visit ids are urls or queries
            known.update(("kind", *LABEL_FIELDS))
            if len(kinds):  # else frames() passes them to pandas as lists, whose dtype it infers as before
                known.update(("query", "visit_id"))
        for name in _REPEATED:
            values = _objects(tcols[name])
            if schema_valid or _strings_only(values):  # then so is the step column repeating it
                known.add(name)
            col[name].append(np.repeat(values, counts))
        for name in _KNOWABLE:
            self.strings[name] = self.strings.get(name, True) and name in known
        for name in _TRACE_TEXT:
            self.trace_strings[name] = self.trace_strings.get(name, True) and (schema_valid or name in known)
        col["step"].append(_objects(scols["index"]))
        first = np.cumsum(counts) - counts
        col["pos"].append(np.arange(len(kinds)) - np.repeat(first, counts))
        col["kind"].append(kinds)
        col["turn"].append(turn)
        col["query"].append(queries)
        # Normalised queries and visit ids exist for search steps only: computed for those alone.
        searches = np.flatnonzero(kinds == "search")
        at = queries[searches]
        query_norm = np.full(len(kinds), None, dtype=object)
        query_norm[searches] = _objects(_normalized_queries(at.tolist()))
        col["query_norm"].append(query_norm)
        visit = np.full(len(kinds), None, dtype=object)
        urls, tools = _objects(scols["url"])[searches], _objects(scols["tool"])[searches]
        # A search step without a url or a tool name (plain search rollouts: all of them) has no visit id.
        if any(urls.tolist()) or any(tools.tolist()):
            # urls, tools and at are taken at the same search rows: equal lengths.
            visit[searches] = _objects([_visit_id(u, t, q) for u, t, q in zip(urls, tools, at, strict=True)])
        col["visit_id"].append(visit)
        col["n_documents"].append(np.asarray(scols["n_documents"], dtype=np.int64))
        for f in LABEL_FIELDS:
            col[f].append(_objects(scols[f]))
        self._traces(tcols, counts, first, turn, kinds == "answer", owner)

    def _traces(
        self,
        tcols: Mapping[str, list | np.ndarray],
        counts: np.ndarray,
        first: np.ndarray,
        turn: np.ndarray,
        is_answer: np.ndarray,
        owner: np.ndarray,
    ) -> None:
        """The trace-table rows: the first answer step, last turn, EM/F1 and correctness."""
        n = len(counts)
        rows = np.flatnonzero(is_answer)
        found, at = np.unique(owner[rows], return_index=True)
        answered = np.zeros(n, dtype=bool)
        answered[found] = True
        # Integers while every trace answered (as pandas infers from a list of ints), else floats with NaN.
        answer_pos = np.zeros(n, np.int64) if answered.all() else np.full(n, np.nan)
        answer_turn = answer_pos.copy()
        answer_pos[found] = rows[at] - first[found]
        answer_turn[found] = turn[rows[at]]
        last_turn = np.zeros(n, np.int64)
        has = counts > 0
        last_turn[has] = turn[(first + counts - 1)[has]]
        golds = [g or [] for g in tcols["gold_answers"]]
        finals = tcols["final_answer"]
        # One entry per trace in every per-trace column, so these zips are of equal lengths.
        scored = [f is not None and bool(g) for f, g in zip(finals, golds, strict=True)]
        scores = [em_f1(f, g) if ok else (np.nan, np.nan) for f, g, ok in zip(finals, golds, scored, strict=True)]
        values, sources = [], []
        for v, src, ok, (em, _) in zip(tcols["correct_value"], tcols["correct_source"], scored, scores, strict=True):
            if v is None and ok:
                v, src = bool(em), "em"
            values.append(v)
            sources.append(src if v is not None else None)
        row = self.trows
        for name in ("trace_id", "agent", "dataset", "question_id", "question", "final_answer"):
            row[name].append(_objects(tcols[name]))
        row["gold_answers"].append(_objects([list(g) for g in golds]))
        row["answered"].append(answered)
        row["answer_pos"].append(answer_pos)
        row["answer_turn"].append(answer_turn)
        row["last_turn"].append(last_turn)
        row["correct"].append(_objects(values))
        row["correct_source"].append(_objects(sources))
        row["n_steps"].append(np.asarray(counts, dtype=np.int64))
        row["em"].append(np.array([e for e, _ in scores], dtype=float))
        row["f1"].append(np.array([f for _, f in scores], dtype=float))

    def frames(self, labels: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The step and trace DataFrames of everything added."""
        data: dict[str, np.ndarray | list] = {}
        for c in STEP_COLUMNS:
            parts = self.steps[c]
            if not parts:
                data[c] = [] if c not in _INT_COLUMNS else np.zeros(0, dtype=np.int64)
                continue
            arr = np.concatenate(parts) if len(parts) > 1 else parts[0]
            if c in _INT_COLUMNS:
                data[c] = arr.astype(np.int64)
            else:
                data[c] = arr if self.strings.get(c) and _strings_kept() else _as_column(arr)
        # copy=False: the arrays are this builder's own, and pandas then keeps them as they are
        # instead of copying the object columns into one consolidated block.
        step_df = pd.DataFrame(data, columns=STEP_COLUMNS, copy=False)
        trace_df = self._trace_frame()
        if labels is not None:
            step_df = attach_labels(step_df, labels)
        return step_df, trace_df

    def _trace_frame(self) -> pd.DataFrame:
        """The trace DataFrame: the dtypes pandas infers from the rows' Python values, made from arrays."""
        if not self.trows["trace_id"]:  # no trace: empty columns as pandas makes them, correctness of objects
            empty = pd.DataFrame({c: [] for c in TRACE_COLUMNS}, columns=TRACE_COLUMNS)
            empty["correct"] = pd.Series([], dtype=object)
            return empty
        data: dict[str, np.ndarray | list] = {}
        for c in TRACE_COLUMNS:
            parts = self.trows[c]
            arr = np.concatenate(parts) if len(parts) > 1 else parts[0]
            # Correctness is three-valued (True, False, unknown): kept as Python objects, never a bool
            # dtype; the gold answers are lists. The other object columns go to pandas as rows would.
            if arr.dtype != object or c in ("correct", "gold_answers"):
                data[c] = arr
            else:
                known = len(arr) and self.trace_strings.get(c) and _strings_kept()
                data[c] = arr if known else _as_column(arr)
        return pd.DataFrame(data, columns=TRACE_COLUMNS)


def _normalized_queries(queries: list) -> list:
    """The normalised text of each query (None where it is not a string)."""
    if set(map(type, queries)) <= {str}:  # the usual case, in one call (no test per query)
        return list(map(normalized, queries))
    return [normalized(q) if isinstance(q, str) else None for q in queries]


def _objects(values) -> np.ndarray:
    """A 1-d object array of ``values`` (a list, or an object array as it is; items never unpacked)."""
    if isinstance(values, np.ndarray) and values.dtype == object:
        return values
    return np.fromiter(values, dtype=object, count=len(values))


def _strings_kept() -> bool:
    """Whether pandas keeps an object column of strings as it is (not with ``future.infer_string``)."""
    return not pd.get_option("future.infer_string")


def _strings_only(arr: np.ndarray) -> bool:
    """Whether ``arr`` (object) holds only strings and None."""
    strings = arr[arr != None]  # noqa: E711 (elementwise comparison with None)
    return pd.api.types.infer_dtype(strings, skipna=False) in ("string", "empty")


def _as_column(arr: np.ndarray) -> np.ndarray | list:
    """An object column for the DataFrame: as it is when it holds only strings and None (what
    pandas would infer from a list anyway, without the cost), else as a list for pandas to infer."""
    if len(arr) and _strings_kept() and _strings_only(arr):
        return arr
    return arr.tolist()


def build_tables(traces: Iterable[dict], labels: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Build ``(steps, traces)`` DataFrames from canonical traces.

    One pass over ``traces``, which may be a generator (e.g. a file being read): traces
    are turned into columns a chunk at a time and not kept, so memory holds the tables,
    not the traces.

    Parameters
    ----------
    traces : iterable of dict
        Canonical traces (schemas/trace.schema.json).
    labels : DataFrame, optional
        An annotation set's records (columns ``trace_id, step, field, value``).
        When None, the traces' inline labels are used.

    Returns
    -------
    steps, traces : DataFrame
        See the module docstring for the columns.

    Examples
    --------
    >>> steps, table = build_tables([{"trace_id": "t", "agent": "a", "steps": [
    ...     {"index": 0, "kind": "search", "query": "q"}, {"index": 1, "kind": "search_result"},
    ...     {"index": 2, "kind": "answer"}]}])
    >>> steps["turn"].tolist(), table["answer_turn"].tolist()
    ([1, 1, 1], [1])
    """
    cols = _Columns(use_inline=labels is None)
    gathered = DictColumns(cols.use_inline)
    for tr in traces:
        gathered.add(tr)
        if len(gathered) == _CHUNK:
            cols.add_dicts(gathered)
    if len(gathered):
        cols.add_dicts(gathered)
    return cols.frames(labels)


def attach_labels(steps: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """Replace the label columns of ``steps`` by the values of an annotation set.

    ``labels`` has one row per (trace_id, step, field) with ``value`` canonical or None.
    Labels for steps that do not exist are ignored here (validation reports them).
    """
    out = steps.drop(columns=[f for f in LABEL_FIELDS if f in steps.columns])
    if len(labels):
        wide = (
            labels[labels["field"].isin(LABEL_FIELDS)]
            .drop_duplicates(["trace_id", "step", "field"], keep="last")
            .pivot(index=["trace_id", "step"], columns="field", values="value")
        )
        wide = wide.reindex(columns=list(LABEL_FIELDS)).reset_index()
        out = out.merge(wide, on=["trace_id", "step"], how="left")
    else:
        for f in LABEL_FIELDS:
            out[f] = None
    for f in LABEL_FIELDS:
        out[f] = out[f].astype(object).where(out[f].notna(), None)
    return out[STEP_COLUMNS]
