"""Where a trace keeps its evidence set and per-k answer judgments, and the table built from them.

A trace that carries an InfoDeepSeek-style evidence set stores it in
``metadata["evidence_set"]`` (:data:`EVIDENCE_SET_KEY`)::

    "metadata": {"evidence_set": {
        "evidence": [{"url": "...", "content": "..."}, ...],   # C, ranked, most important first
        "sources": ["https://...", ...],          # S_q, the reference source set (for IC)
        "answers": {"1": "...", "2": "...", ...}, # optional: the answer from the top-k evidence
        "judgments": {"1": true, "2": null, ...}, # is answer k correct; null = pending or failed
        "no_retrieval_answer": "..." | null,      # optional: the answer without retrieval
        "no_retrieval_correct": true | false | null,
        "attributes": {"multi_hop": true, "domain": ["history"], ...},
        "judgment_detail": {"k1": {...votes...}, "no_retrieval": {...}}  # written by judge-answers
    }}

Keys of ``answers``/``judgments`` are the decimal k as strings (``"k3"`` is
accepted too). The trace's own ``correct`` is the judgment of its final answer,
made with all observations (ACC). ``n_evidence`` may be given explicitly when
the evidence texts are not kept; it defaults to ``len(evidence)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from .._errors import UserInputError

#: The metadata key of a trace's evidence set.
EVIDENCE_SET_KEY = "evidence_set"
#: Columns of :func:`evidence_set_table`.
EVIDENCE_COLUMNS = [
    "trace_id",
    "agent",
    "question_id",
    "correct",
    "n_evidence",
    "n_sources",
    "judgments",
    "no_retrieval_correct",
    "has_no_retrieval_answer",
    "attributes",
]


def slot_key(k: object) -> int:
    """``"3"``, ``"k3"`` or ``3`` -> 3; a user error for anything else."""
    text = str(k).strip().lower()
    text = text.removeprefix("k")
    if not text.isdigit() or int(text) < 1:
        raise UserInputError(f"evidence-set judgment key {k!r} is not a rank k >= 1 ('1', '2', ... or 'k1')")
    return int(text)


def normalize_judgment(value: object) -> bool | None:
    """An evidence-set judgment as True (correct), False (wrong) or None (not judged yet).

    Accepts booleans, 1 / 0, None, and ``-1`` (the published pending marker, read as None);
    anything else is a user error.

    Examples
    --------
    >>> [normalize_judgment(v) for v in (True, 1, 0, -1, None)]
    [True, True, False, None, None]
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, (int, float)) and value == -1:
        return None
    raise UserInputError(f"a judgment must be true, false or null, got {value!r}")


def evidence_set_of(trace: Mapping) -> dict | None:
    """The trace's evidence set, normalised (int keys, tri-state judgments), or None when it has none."""
    es = (trace.get("metadata") or {}).get(EVIDENCE_SET_KEY)
    if es is None:
        return None
    tid = trace.get("trace_id")
    if not isinstance(es, Mapping):
        raise UserInputError("metadata.evidence_set must be an object", trace_id=tid, path="$.metadata.evidence_set")
    try:
        judgments = {slot_key(k): normalize_judgment(v) for k, v in (es.get("judgments") or {}).items()}
        answers = {slot_key(k): v for k, v in (es.get("answers") or {}).items()}
        no_ret = normalize_judgment(es.get("no_retrieval_correct"))
    except UserInputError as e:
        raise UserInputError(e.message, trace_id=tid, path="$.metadata.evidence_set") from e
    evidence = list(es.get("evidence") or [])
    n_evidence = es.get("n_evidence", len(evidence))
    if isinstance(n_evidence, bool) or not isinstance(n_evidence, int) or n_evidence < 0:
        raise UserInputError(
            f"n_evidence must be an integer >= 0, got {n_evidence!r}",
            trace_id=tid,
            path="$.metadata.evidence_set.n_evidence",
        )
    sources = es.get("sources")
    n_sources = es.get("n_sources", len(sources) if isinstance(sources, list) else None)
    attributes = es.get("attributes") or {}
    if not isinstance(attributes, Mapping):
        raise UserInputError("attributes must be an object", trace_id=tid, path="$.metadata.evidence_set.attributes")
    return {
        "evidence": evidence,
        "n_evidence": n_evidence,
        "n_sources": n_sources,
        "judgments": judgments,
        "answers": answers,
        "no_retrieval_answer": es.get("no_retrieval_answer"),
        "no_retrieval_correct": no_ret,
        "attributes": dict(attributes),
    }


def is_false_premise(trace: Mapping) -> bool:
    """True when the trace's question is flagged as resting on a false premise.

    Looked up, in order, at ``metadata.false_premise``, ``metadata.attributes.false_premise`` and
    ``metadata.evidence_set.attributes.false_premise``.

    >>> is_false_premise({"metadata": {"evidence_set": {"attributes": {"false_premise": True}}}})
    True
    """
    md = trace.get("metadata") or {}
    for holder in (md, md.get("attributes") or {}, (md.get(EVIDENCE_SET_KEY) or {}).get("attributes") or {}):
        if isinstance(holder, Mapping) and "false_premise" in holder:
            return bool(holder["false_premise"])
    return False


def evidence_set_table(traces: Iterable[Mapping]) -> pd.DataFrame:
    """One row per trace that carries an evidence set (spec section 6, InfoDeepSeek metrics).

    Columns: ``trace_id, agent, question_id, correct`` (the final answer's judgment:
    True / False / None when not judged), ``n_evidence`` (n_q = |C|), ``n_sources``
    (|S_q|, None when unknown), ``judgments`` (dict k -> True / False / None),
    ``no_retrieval_correct``, ``has_no_retrieval_answer``, ``attributes`` (dict).

    Examples
    --------
    >>> t = {"trace_id": "t1", "agent": "a", "correct": {"value": True, "source": "judge"},
    ...      "metadata": {"evidence_set": {"evidence": ["e1", "e2"], "sources": ["s1"],
    ...                                    "judgments": {"1": False, "2": True}}}}
    >>> evidence_set_table([t])[["trace_id", "correct", "n_evidence", "n_sources"]].to_dict("records")
    [{'trace_id': 't1', 'correct': True, 'n_evidence': 2, 'n_sources': 1}]
    """
    rows = []
    for tr in traces:
        es = evidence_set_of(tr)
        if es is None:
            continue
        correct = (tr.get("correct") or {}).get("value")
        has_nr = es["no_retrieval_answer"] is not None or es["no_retrieval_correct"] is not None
        rows.append(
            {
                "trace_id": tr.get("trace_id"),
                "agent": tr.get("agent"),
                "question_id": tr.get("question_id"),
                "correct": correct,
                "n_evidence": es["n_evidence"],
                "n_sources": es["n_sources"],
                "judgments": es["judgments"],
                "no_retrieval_correct": es["no_retrieval_correct"],
                "has_no_retrieval_answer": has_nr,
                "attributes": es["attributes"],
            }
        )
    df = pd.DataFrame(rows, columns=EVIDENCE_COLUMNS)
    for col in ("correct", "no_retrieval_correct", "n_sources"):
        df[col] = df[col].astype(object).where(df[col].notna(), None)
    return df
