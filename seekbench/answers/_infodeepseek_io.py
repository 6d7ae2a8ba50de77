"""Import InfoDeepSeek result and score files as canonical traces with an evidence set.

Formats (as written by the released InfoDeepSeek code; inferred from it, since
the paper does not specify files): both are JSONL, one benchmark question per
line, carrying the benchmark record's fields (``id``, ``query_en``/``query_zh``,
``answer_en``/``answer_zh``, boolean attributes such as ``multi_hop``,
``long_tail``, ``time_sensitive``, ``freshness``, ``mixed_truth``,
``false_premise``, ``difficulty_*``, the lists ``domain`` and
``advantage_language``, and ``sources``: the annotated source pages S_q) and

- a **result file** (the agent run, ``..._result_<lang>_<llm>_<iters>_<pages>_wotool_<bool>_<engine>.jsonl``):
  ``result = {"response": final answer, "more_info": {"ranked_webpages": [{"url", "content"}, ...]
  (the evidence set C, most important first), "answer_at_k": {"1": answer from the top-1 page, ...}
  (all null when no page was kept), "offline_response": answer without retrieval or null}, ...}``;
- a **score file** (the evaluator's output, the result file name + ``_<judge llm>_score.jsonl``): the
  same record with ``result`` cut to ``response`` and ``more_info``, plus ``answer_at_k_score``
  (``{"k1": true/false/-1, ...}``), ``response_score`` and ``off_response_score``, where ``-1``
  marks a judgment still pending after the evaluator's retries.

Mapping: one trace per line; ``question_id = "infodeepseek:<lang>:<id>"``; agent from the file name
(``<llm>+<engine>``, ``+lang_aware`` when so run) unless given; the final answer is ``response``
(``"error"`` or empty -> none) and the only step is the answer step (the files keep no tool
calls); ``response_score`` -> ``correct`` (source ``source_data``, the evaluator LLM in
``detail``); everything else goes to ``metadata.evidence_set`` (:data:`EVIDENCE_SET_KEY`):
``evidence`` = ranked_webpages, ``sources``, ``answers`` = answer_at_k, ``judgments`` =
answer_at_k_score (-1 -> null, pending), ``no_retrieval_answer`` / ``no_retrieval_correct`` =
offline_response / off_response_score, ``attributes`` = every boolean or list-of-strings field of
the record except ``sources``.

Deliberate differences from the released evaluator: ``off_response_score`` is dropped (null) when
the record has no offline answer (the evaluator scores a missing answer False, which then enters
the interference base); pending ``-1`` stays pending instead of counting as a correct answer.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .._errors import UserInputError
from .._io import iter_jsonl
from .._version import SCHEMA_VERSION
from ..traces import EVIDENCE_SET_KEY, evidence_set_table, normalize_judgment, validate_trace

_NAME = re.compile(
    r"_result_(?P<lang>zh|en)_(?P<llm>.+?)_(?P<iters>\d+)_(?P<pages>\d+)_wotool_(?:True|False)_"
    r"(?P<engine>[A-Za-z]+)(?P<aware>_lang_aware)?(?:_(?P<judge>.+)_score)?\.jsonl?$"
)
_NOT_ATTRIBUTES = {"sources", "id", "result", "answer_at_k_score"}


@dataclass
class InfoDeepSeekImport:
    """Traces and the evidence-set table read from one InfoDeepSeek file.

    ``kind`` is ``"result"`` or ``"score"``; ``skipped`` holds the lines that could not be used.
    """

    traces: list[dict]
    table: pd.DataFrame
    kind: str
    agent: str
    lang: str
    judge: str | None = None
    skipped: list[UserInputError] = field(default_factory=list)


def _first_record(path: Path) -> dict | None:
    for _, rec in iter_jsonl(path):
        return rec if isinstance(rec, dict) else None
    return None


def is_infodeepseek_file(path: str | os.PathLike) -> bool:
    """True when the first record of a JSONL file looks like an InfoDeepSeek result or score line."""
    try:
        rec = _first_record(Path(path))
    except UserInputError:
        return False
    return isinstance(rec, dict) and "result" in rec and ("query_en" in rec or "query_zh" in rec)


def _judgment(value: object, *, file: str | None, line: int | None, path: str) -> bool | None:
    try:
        return normalize_judgment(value)
    except UserInputError as e:
        raise UserInputError(e.message, file=file, line=line, path=path) from e


def infodeepseek_record_to_trace(
    rec: dict, *, agent: str, lang: str, judge: str | None = None, file: str | None = None, line: int | None = None
) -> dict:
    """One InfoDeepSeek result/score record as a canonical trace (see the module docstring).

    Examples
    --------
    >>> rec = {"id": 3, "query_en": "Q?", "answer_en": "A.", "false_premise": True, "domain": ["sports"],
    ...        "sources": ["u1"], "result": {"response": "A", "more_info": {
    ...            "ranked_webpages": [{"url": "u1", "content": "c"}], "answer_at_k": {"1": "A"},
    ...            "offline_response": None}}, "answer_at_k_score": {"k1": -1}, "response_score": True}
    >>> t = infodeepseek_record_to_trace(rec, agent="m+ddg", lang="en")
    >>> t["correct"]["value"], t["metadata"]["evidence_set"]["judgments"], t["question_id"]
    (True, {'1': None}, 'infodeepseek:en:3')
    """
    if "id" not in rec:
        raise UserInputError("an InfoDeepSeek record needs an 'id'", file=file, line=line, path="$.id")
    qid = str(rec["id"])
    qkey, akey = f"query_{lang}", f"answer_{lang}"
    if qkey not in rec:
        raise UserInputError(
            f"no {qkey!r} in the record; pass the file's language (--lang zh|en)",
            file=file,
            line=line,
            path=f"$.{qkey}",
        )
    result = rec.get("result") or {}
    more = result.get("more_info") or {}
    response = result.get("response")
    final = response if isinstance(response, str) and response.strip() and response != "error" else None
    gold = rec.get(akey)
    tid = f"{agent}:{lang}:{qid}"
    trace: dict = {
        "schema_version": SCHEMA_VERSION,
        "trace_id": tid,
        "agent": agent,
        "dataset": "infodeepseek",
        "question_id": f"infodeepseek:{lang}:{qid}",
        "question": str(rec[qkey]),
        "gold_answers": [str(gold)] if gold not in (None, "") else [],
        "final_answer": final,
        "steps": [{"index": 0, "kind": "answer", "text": final}] if final is not None else [],
        "source": {"format": "infodeepseek", "file": file, "line": line, "record_id": qid, "path": None},
    }
    if "response_score" in rec:
        value = _judgment(rec["response_score"], file=file, line=line, path="$.response_score")
        detail: dict[str, object] = {"field": "response_score", "judge": judge}
        if value is None:
            detail["pending"] = True
        trace["correct"] = {"value": value, "source": "source_data", "detail": detail}
    scores = rec.get("answer_at_k_score")
    judgments = {}
    for k, v in (scores or {}).items():
        judgments[str(k)[1:] if str(k).lower().startswith("k") else str(k)] = _judgment(
            v, file=file, line=line, path=f"$.answer_at_k_score.{k}"
        )
    offline = more.get("offline_response")
    offline = offline if isinstance(offline, str) and offline.strip() else None
    no_ret = None
    if offline is not None and "off_response_score" in rec:
        no_ret = _judgment(rec["off_response_score"], file=file, line=line, path="$.off_response_score")
    pages = more.get("ranked_webpages") or []
    attributes = {
        k: v
        for k, v in rec.items()
        if k not in _NOT_ATTRIBUTES
        and (isinstance(v, bool) or (isinstance(v, list) and all(isinstance(x, str) for x in v)))
    }
    es = {
        "evidence": pages,
        "sources": list(rec.get("sources") or []),
        "answers": {str(k): v for k, v in (more.get("answer_at_k") or {}).items()},
        "judgments": judgments,
        "no_retrieval_answer": offline,
        "no_retrieval_correct": no_ret,
        "attributes": attributes,
    }
    if scores is None:
        es.pop("judgments")
    trace["metadata"] = {
        EVIDENCE_SET_KEY: es,
        "false_premise": bool(rec.get("false_premise", False)),
        "infodeepseek": {"id": rec["id"], "lang": lang, "judge": judge},
    }
    validate_trace(trace, file=file, line=line)
    return trace


def read_infodeepseek(
    path: str | os.PathLike, *, lang: str | None = None, agent: str | None = None, skip_invalid: bool = False
) -> InfoDeepSeekImport:
    """Read an InfoDeepSeek result or score file (JSONL).

    Parameters
    ----------
    path : path
    lang : {"en", "zh"}, optional
        The run's language; default from the file name (``_result_<lang>_``), else the only
        ``query_*`` field present.
    agent : str, optional
        Agent name; default ``<llm>+<engine>`` from the file name, else the file's stem.
    skip_invalid : bool, default False
        Collect bad lines in ``skipped`` instead of stopping at the first one.

    Returns
    -------
    InfoDeepSeekImport
        ``traces`` (canonical, validated) and ``table`` (:func:`~seekbench.answers.evidence_set_table`).
    """
    path = Path(path)
    name = str(path)
    m = _NAME.search(path.name)
    first = _first_record(path)
    if first is None:
        raise UserInputError("no records; expected InfoDeepSeek JSONL (one question per line)", file=name)
    if lang is None:
        if m:
            lang = m.group("lang")
        else:
            present = [x for x in ("en", "zh") if f"query_{x}" in first]
            if len(present) != 1:
                raise UserInputError(
                    "cannot tell the run's language from the file name; pass --lang en or zh", file=name
                )
            lang = present[0]
    if lang not in ("en", "zh"):
        raise UserInputError(f"lang is {lang!r}; use en or zh", file=name)
    if agent is None:
        agent = (
            f"{m.group('llm')}+{m.group('engine')}" + ("+lang_aware" if m.group("aware") else "") if m else path.stem
        )
    judge = m.group("judge") if m else None
    kind = "score" if "response_score" in first or "answer_at_k_score" in first else "result"
    traces, skipped = [], []
    for line, rec in iter_jsonl(path):
        try:
            if isinstance(rec, UserInputError):
                raise rec
            if not isinstance(rec, dict):
                raise UserInputError("expected a JSON object", file=name, line=line)
            traces.append(infodeepseek_record_to_trace(rec, agent=agent, lang=lang, judge=judge, file=name, line=line))
        except UserInputError as e:
            if not skip_invalid:
                raise
            skipped.append(e)
    return InfoDeepSeekImport(traces, evidence_set_table(traces), kind, agent, lang, judge, skipped)
