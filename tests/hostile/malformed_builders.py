"""Builders of the malformed inputs of ``test_malformed_cases.py``: each returns the bytes of one file.

Small cases are also kept as files in ``tests/hostile/cases/`` (written by
``cases/make_cases.py``); the huge ones (10 MB strings, 10,000 steps, deep
nesting) are only built here.
"""

from __future__ import annotations

import copy
import json

from hostile_support import canonical_trace


def jsonl(*records: object, **dumps_kw) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False, **dumps_kw) + "\n" for r in records).encode("utf-8")


def canon(tid: str = "t1", n_steps: int = 4, **fields) -> dict:
    """A valid canonical trace with top-level fields replaced (``None`` as a value deletes the field)."""
    tr = canonical_trace(tid, n_steps)
    for k, v in fields.items():
        if v is _DELETE:
            tr.pop(k, None)
        else:
            tr[k] = v
    return tr


_DELETE = object()
DELETE = _DELETE


def canon_step(pos: int, tid: str = "t1", n_steps: int = 4, **fields) -> dict:
    """A valid canonical trace with fields of step ``pos`` replaced (``DELETE`` removes one)."""
    tr = canonical_trace(tid, n_steps)
    for k, v in fields.items():
        if v is _DELETE:
            tr["steps"][pos].pop(k, None)
        else:
            tr["steps"][pos][k] = v
    return tr


def canon_line(**fields) -> bytes:
    return jsonl(canon(**fields))


def step_line(pos: int, **fields) -> bytes:
    return jsonl(canon_step(pos, **fields))


def many_steps(n: int, *, last_kind: str = "answer", repeat_index_at: int | None = None) -> bytes:
    steps = [{"index": i, "kind": ("reasoning", "search", "search_result")[i % 3], "text": f"s{i}"}
             for i in range(n - 1)]
    steps.append({"index": n - 1, "kind": last_kind, "text": "done"})
    if repeat_index_at is not None:
        steps[repeat_index_at]["index"] = repeat_index_at - 1
    return jsonl({"schema_version": "1.0", "trace_id": "long", "agent": "a", "question": "q", "steps": steps})


def huge_text(n_bytes: int, *, then_bad_kind: bool) -> bytes:
    tr = canon("huge")
    tr["steps"][0]["text"] = "x" * n_bytes
    if then_bad_kind:
        tr["steps"][3]["kind"] = "final"
    return jsonl(tr)


def truncated(data: bytes, keep: int) -> bytes:
    return data[:keep]


def deep_array(depth: int) -> bytes:
    return ("[" * depth + "]" * depth + "\n").encode()


def deep_field(depth: int) -> bytes:
    tr = canon("deep")
    text = json.dumps(tr)
    return (text[:-1] + ', "metadata": {"x": ' + "[" * depth + "]" * depth + "}}\n").encode()


SEEKBENCH = {"id": "sb1", "question": "Where is Velmora?", "ground_truth": ["Norland"], "is_correct": True,
             "final_answer": "Norland", "model": "toy-agent", "dataset": "toyqa",
             "trace": [{"type": "reasoning", "content": "Find Velmora.",
                        "annotation": {"type": "PlanFormation", "attributes": {"groundness": "Grounded"}}},
                       {"type": "search", "content": "Velmora", "query": "Velmora"},
                       {"type": "search_result", "content": "Velmora is in Norland.",
                        "documents": [{"title": "Velmora", "content": "Velmora is in Norland."}],
                        "annotation": {"attributes": {"information_clarity": "Clear"}}},
                       {"type": "CorrectAnswer", "content": "Norland"}]}


def seekbench(mutate=None) -> bytes:
    rec = copy.deepcopy(SEEKBENCH)
    if mutate is not None:
        mutate(rec)
    return jsonl(rec)


OPENAI = {"id": "oa1", "model": "chat-agent", "gold_answers": ["Norland"], "messages": [
    {"role": "system", "content": "Use the search tool."},
    {"role": "user", "content": "Where is Velmora?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"query\": \"Velmora\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "[{\"title\": \"Velmora\", \"text\": \"In Norland.\"}]"},
    {"role": "assistant", "content": "<answer>Norland</answer>"}]}


def openai(mutate=None, **dumps_kw) -> bytes:
    rec = copy.deepcopy(OPENAI)
    if mutate is not None:
        mutate(rec)
    return jsonl(rec, **dumps_kw)


ATIF = {"schema_version": "ATIF-v1.4", "session_id": "at1", "agent": {"name": "toy", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "Where is Velmora?"},
                  {"step_id": 2, "source": "agent", "message": "", "reasoning_content": "Search it.",
                   "tool_calls": [{"tool_call_id": "k1", "function_name": "search", "arguments": {"query": "Velmora"}}],
                   "observation": {"results": [{"source_call_id": "k1", "content": "Velmora is in Norland."}]}},
                  {"step_id": 3, "source": "agent", "message": "Norland"}],
        "extra": {"gold_answers": ["Norland"]}}


def atif(mutate=None) -> bytes:
    rec = copy.deepcopy(ATIF)
    if mutate is not None:
        mutate(rec)
    return jsonl(rec)


R1 = {"id": "r1", "question": "Where is Velmora?", "golden_answers": ["Norland"], "model": "r1-agent",
      "output": "<think>Search.</think><search>Velmora</search><information>Doc 1(Title: Velmora) In Norland."
                "</information><answer>Norland</answer>"}


def search_r1(mutate=None) -> bytes:
    rec = copy.deepcopy(R1)
    if mutate is not None:
        mutate(rec)
    return jsonl(rec)


def setitem(path: str, value):
    """A mutation setting ``rec[a][b]...`` (keys split on ``/``; digits index lists)."""
    keys = [int(k) if k.isdigit() else k for k in path.split("/")]

    def mutate(rec):
        obj = rec
        for k in keys[:-1]:
            obj = obj[k]
        if value is _DELETE:
            del obj[keys[-1]]
        else:
            obj[keys[-1]] = value

    return mutate
