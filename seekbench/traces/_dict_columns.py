"""Canonical trace dicts turned into the table builder's columns, one trace at a time.

Each trace's columns, its own and its steps', are gathered in one pass that touches each
step dict once, and the trace dict is not kept: the streaming reader adds a trace right
after validating it, while its dicts are still in the processor's cache, and drops it
before parsing the next, so the memory it frees is reused at once (holding a chunk of
trace dicts cost about a third more CPU than the parsing itself: freeing them later
missed the cache, and the allocator handed fresh pages the kernel had to fault in).
Step kinds and label values are replaced by the shared strings of :data:`VOCABULARY`: the
parser makes a new string object for every step, and the metrics hash and compare these
columns faster on a few shared objects (equal strings, so the tables are equal too).
"""

from __future__ import annotations

import numpy as np

from ._ontology import LABEL_FIELDS, LABEL_VALUES, STEP_KINDS

#: One string object per step kind and label value.
VOCABULARY = {v: v for v in (*STEP_KINDS, *(v for values in LABEL_VALUES.values() for v in values))}

#: The per-step columns gathered from the step dicts, besides the label fields.
STEP_FIELDS = ("index", "kind", "query", "url", "tool", "n_documents")
#: The per-trace columns gathered from the trace dicts (``source_format``: for the import summary).
TRACE_FIELDS = (
    "trace_id",
    "agent",
    "dataset",
    "question_id",
    "question",
    "gold_answers",
    "final_answer",
    "correct_value",
    "correct_source",
    "source_format",
)


class DictColumns:
    """The columns of the traces added since the last :meth:`take`.

    Parameters
    ----------
    use_inline : bool
        Gather the steps' inline labels; else the label columns are all None.
    """

    def __init__(self, use_inline: bool) -> None:
        self.use_inline = use_inline
        self._reset()

    def _reset(self) -> None:
        self.trace_columns: dict[str, list] = {c: [] for c in TRACE_FIELDS}
        self._trace_append = tuple(self.trace_columns[c].append for c in TRACE_FIELDS)
        self.counts: list[int] = []
        self.steps: dict[str, list] = {c: [] for c in (*STEP_FIELDS, *LABEL_FIELDS)}
        self._append = tuple(self.steps[c].append for c in STEP_FIELDS)
        self._labels = [self.steps[f] for f in LABEL_FIELDS]
        self._label_of = {f: self.steps[f] for f in LABEL_FIELDS}
        self._odd = False  # a kind or label value neither a string nor None (only in unvalidated input)

    def __len__(self) -> int:
        return len(self.counts)

    def add(self, trace: dict) -> None:
        """Gather one trace's columns (the trace itself is not kept)."""
        steps = trace.get("steps", [])
        self._add_trace(trace)
        self.counts.append(len(steps))
        add_index, add_kind, add_query, add_url, add_tool, add_docs = self._append
        i = len(self.steps["index"])
        pad = [None] * len(steps)
        for labels in self._labels:
            labels += pad
        column = self._label_of.get if self.use_inline else None
        shared = VOCABULARY.get
        odd = False
        for st in steps:
            get = st.get
            add_index(st["index"])
            k = st["kind"]
            if k.__class__ is str:
                k = shared(k, k)
            else:
                odd = True
            add_kind(k)
            add_query(get("query"))
            add_url(get("url"))
            add_tool(get("tool"))
            docs = get("documents")
            add_docs(len(docs) if docs else 0)
            if column is not None and (lab := get("labels")):
                for f, v in lab.items():
                    if (values := column(f)) is not None:
                        if v.__class__ is str:
                            v = shared(v, v)
                        elif v is not None:
                            odd = True
                        values[i] = v
            i += 1
        self._odd = self._odd or odd

    def _add_trace(self, trace: dict) -> None:
        get = trace.get
        correct = get("correct") or {}
        tid, agent, dataset, qid, question, golds, final, value, source, fmt = self._trace_append
        tid(trace["trace_id"])
        agent(trace["agent"])
        dataset(get("dataset"))
        qid(get("question_id"))
        question(get("question"))
        golds(get("gold_answers"))
        final(get("final_answer"))
        value(correct.get("value"))
        source(correct.get("source"))
        fmt((get("source") or {}).get("format") or "?")

    def take(self) -> tuple[dict[str, list], dict[str, list], np.ndarray, tuple[str, ...]]:
        """``(trace columns, step columns, steps per trace, step columns of strings and None only)``
        of the traces added, as :meth:`~seekbench.traces._tables._Columns.add_columns` takes them;
        then start afresh. The trace columns are :data:`TRACE_FIELDS`."""
        out = (
            self.trace_columns,
            self.steps,
            np.array(self.counts, dtype=np.int64),
            () if self._odd else ("kind", *LABEL_FIELDS),
        )
        self._reset()
        return out
