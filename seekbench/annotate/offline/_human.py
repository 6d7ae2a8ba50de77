"""Reference labels for training and evaluation: inline trace labels or an annotation set."""

from __future__ import annotations

import hashlib
import json

import pandas as pd

from ..._errors import UserInputError
from ...labels import AnnotationSet
from ...traces import LABEL_FIELDS, canonical_value, normalize_answer

#: (trace_id, step index, field) -> canonical label value.
LabelMap = dict[tuple[str, int, str], str]


def human_labels(traces: list[dict], labels: pd.DataFrame | None = None, *, rater: str | None = None) -> LabelMap:
    """Collect reference labels for ``traces``.

    Parameters
    ----------
    traces : list of dict
        Canonical traces.
    labels : DataFrame, optional
        An annotation set's records (``AnnotationSet.records``: ``trace_id, step, field, value, rater``).
        When None, the traces' inline ``steps[].labels`` are used.
    rater : str, optional
        The rater whose labels to use; required when ``labels`` holds several raters.

    Returns
    -------
    dict
        ``(trace_id, step, field) -> value`` for every labeled (non-null) field; unscored
        records and fields outside the ontology are left out.

    Raises
    ------
    UserInputError
        If ``labels`` holds several raters and ``rater`` is not given, or no label matches the traces.
    """
    # Inline labels: each trace names its one rater, so there is nothing to choose between.
    recs = AnnotationSet.from_traces(traces).records if labels is None else labels
    if rater is not None:
        recs = recs[recs["rater"] == rater]
    elif labels is not None and recs["rater"].nunique() > 1:
        raters = sorted(recs["rater"].dropna().unique().tolist())
        raise UserInputError(
            f"the label set holds {len(raters)} raters ({', '.join(raters[:5])}); choose one with --rater"
        )
    ids = {tr["trace_id"] for tr in traces}
    out: LabelMap = {}
    for row in recs.itertuples(index=False):
        if row.trace_id in ids and row.field in LABEL_FIELDS and row.value is not None:
            canon = canonical_value(row.field, row.value)
            if canon is not None:
                out[(row.trace_id, int(row.step), row.field)] = canon
    if not out:
        where = (
            "the traces carry no inline labels (pass --labels SET)"
            if labels is None
            else "no labels in the label set match the traces' ids"
        )
        raise UserInputError(where + (f" for rater {rater!r}" if rater else ""))
    return out


def question_groups(traces: list[dict]) -> list[str]:
    """Cross-validation groups: traces sharing a question id *or* a normalised question text are one group.

    Connected components over both keys, so a question id missing from some traces, or two ids
    for the same question text, cannot put one question on both sides of a split.

    Returns
    -------
    list of str
        One group label per trace (the smallest key of its component).

    Examples
    --------
    >>> question_groups([{"trace_id": "a", "question_id": "q1", "question": "Who?"},
    ...                  {"trace_id": "b", "question_id": None, "question": "who"},
    ...                  {"trace_id": "c", "question_id": "q2", "question": "Where?"}])
    ['qid:q1', 'qid:q1', 'qid:q2']
    """
    parent: dict[str, str] = {}

    def find(k: str) -> str:
        parent.setdefault(k, k)
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    keys = []
    for t in traces:
        ks = [f"trace:{t['trace_id']}"]
        if t.get("question_id"):
            ks.append(f"qid:{t['question_id']}")
        q = normalize_answer(t.get("question") or "")
        if q:
            ks.append(f"question:{q}")
        for k in ks[1:]:
            a, b = find(ks[0]), find(k)
            if a != b:
                parent[max(a, b)] = min(a, b)
        keys.append(ks)
    return [find(ks[0]) for ks in keys]


def training_data_sha256(traces: list[dict], labels: LabelMap) -> str:
    """SHA-256 of the training content: the traces (without source locations) and the labels used.

    Moving or renaming the input files does not change it; changing a step's text or a label does.
    """
    h = hashlib.sha256()
    for tr in sorted(traces, key=lambda t: t["trace_id"]):
        body = {k: v for k, v in tr.items() if k not in ("source", "inline_labels")}
        body["steps"] = [
            {k: v for k, v in st.items() if k not in ("source_ref", "labels")} for st in tr.get("steps") or ()
        ]
        h.update(json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    for key in sorted(labels):
        h.update(json.dumps([*key, labels[key]], ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()
