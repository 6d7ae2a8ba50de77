"""Render some of the sample traces in two source formats, for the docs' Quickstart to convert.

Used by ``make_sample_data.py``; stdlib only. The traces are the generated canonical sample
traces (the fictional province of Vessary), written as their producers would write them:

* :func:`search_r1_record`: a Search-R1 rollout record (``question``, ``golden_answers``,
  ``model``, ``dataset`` and the model's tagged ``output``: ``<think>``, ``<search>``,
  ``<information>Doc i(Title: t) text``, ``<answer>``). Search-R1 writes no step labels.
* :func:`release_record`: a SeekBench release record (``trace`` steps typed reasoning /
  search / search_result / CorrectAnswer / IncorrectAnswer, each with its human labels in
  ``annotation``, spelled as the release spells them: ``groundness``,
  ``information_clarity``, ``information_quality``, ``"Not Grounded"``).
"""

from __future__ import annotations

#: Which sample traces each file holds: (agents, question ids). Two agents each, so a report compares them.
SEARCH_R1_TRACES = (("careful-planner", "eager-answerer"), ("q01", "q02", "q03"))
RELEASE_TRACES = (("looper", "synthesizer"), ("q01", "q02", "q03"))

#: Canonical field -> the release's attribute name; canonical value -> the release's spelling.
_RELEASE_FIELD = {"grounding": "groundness", "clarity": "information_clarity", "sufficiency": "information_quality"}
_RELEASE_VALUE = {"NotGrounded": "Not Grounded"}
_TYPE_FIELD = {"reasoning": "reasoning_type", "search": "search_type"}


def pick(traces: list[dict], which: tuple[tuple[str, ...], tuple[str, ...]]) -> list[dict]:
    """The traces of the given agents and questions, in the order of ``traces``."""
    agents, questions = which
    return [t for t in traces if t["agent"] in agents and t["question_id"] in questions]


def _information(documents: list[dict]) -> str:
    return "".join(f"Doc {i}(Title: {d['title']}) {d['text']}\n" for i, d in enumerate(documents, start=1))


def search_r1_record(trace: dict) -> dict:
    """One Search-R1 rollout record holding ``trace``'s steps as tagged text (no labels)."""
    parts = []
    for st in trace["steps"]:
        if st["kind"] == "reasoning":
            parts.append(f"<think>{st['text']}</think>\n")
        elif st["kind"] == "search":
            parts.append(f"<search> {st['query']} </search>\n")
        elif st["kind"] == "search_result":
            parts.append(f"\n<information>{_information(st['documents'])}</information>\n\n")
        elif st["kind"] == "answer":
            parts.append(f"<answer> {st['text']} </answer>")
    return {
        "id": trace["trace_id"].replace("sample-", "r1-", 1),
        "question": trace["question"],
        "golden_answers": trace["gold_answers"],
        "model": trace["agent"],
        "dataset": trace["dataset"],
        "output": "".join(parts),
    }


def _annotation(step: dict) -> dict | None:
    labels = step.get("labels") or {}
    if not labels:
        return None
    annotation: dict = {}
    type_field = _TYPE_FIELD.get(step["kind"])
    if type_field and labels.get(type_field) is not None:
        annotation["type"] = labels[type_field]
    attributes = {
        _RELEASE_FIELD[f]: None if v is None else _RELEASE_VALUE.get(v, v)
        for f, v in labels.items()
        if f in _RELEASE_FIELD
    }
    if attributes:
        annotation["attributes"] = attributes
    return annotation


def _release_step(step: dict, correct: bool | None) -> dict:
    kind = step["kind"]
    if kind == "answer":
        return {"type": "CorrectAnswer" if correct else "IncorrectAnswer", "content": step["text"]}
    out: dict = {"type": kind}
    if kind == "reasoning":
        out["content"] = step["text"]
    elif kind == "search":
        out["content"] = step["query"]
        out["query"] = step["query"]
    elif kind == "search_result":
        out["content"] = _information(step["documents"])
        out["documents"] = [{"title": d["title"], "content": d["text"]} for d in step["documents"]]
    annotation = _annotation(step)
    if annotation is not None:
        out["annotation"] = annotation
    return out


def release_record(trace: dict) -> dict:
    """One SeekBench release record holding ``trace`` with its labels inline, in the release's spellings."""
    correct = (trace.get("correct") or {}).get("value")
    return {
        "id": trace["trace_id"].replace("sample-", "release-", 1),
        "question": trace["question"],
        "ground_truth": trace["gold_answers"],
        "is_correct": correct,
        "final_answer": trace["final_answer"],
        "model": trace["agent"],
        "dataset": trace["dataset"],
        "trace": [_release_step(st, correct) for st in trace["steps"]],
    }
