"""Record fields the JSON importers share: ids, agent, question, gold answers and correctness.

Two readers: :func:`record_fields` reads the fields seekbench always read (``id``, ``agent`` /
``model``, ``question``, ``dataset``, ``question_id``, ``golden_answers`` / ``gold_answers`` /
``ground_truth``, ``is_correct``); ATIF and SeekBench keep exactly that. The rollout and chat
importers pass ``common=True`` to also read the keys the producers of search-agent rollouts use:
gold from ``answer`` / ``answers`` / ``gold`` / ``gts`` / ``reward_model.ground_truth``, a judge
verdict (``judge_result``, ``gpt4o_output``, ``verdict``, ...) and a 0/1 ``score`` / ``reward``.
Each decision keeps the field that made it (``correct.detail.field``, :data:`SOURCES`).
"""

from __future__ import annotations

from ..._errors import UserInputError
from ._base import RecordContext, expect_type

GOLD_FIELDS = ("golden_answers", "gold_answers", "ground_truth")
#: Read too with ``common=True``, after :data:`GOLD_FIELDS`, first present wins.
COMMON_GOLD_FIELDS = ("reward_model.ground_truth", "answers", "answer", "gold", "gts")
#: Fields holding a judge's verdict on the final answer (a string such as CORRECT / False, or a boolean).
JUDGE_FIELDS = ("judge_result", "gpt4o_output", "judge", "verdict", "llm_judge", "judgement", "judgment")
#: Fields holding a 0/1 outcome (a reward of exactly 0 or 1, or a boolean); other numbers decide nothing.
SCORE_FIELDS = ("correct", "score", "reward", "acc", "em")
#: Record keys the shared header reader consumes; the rest go to ``metadata``.
HEADER_FIELDS = frozenset({"id", "agent", "model", "question", "dataset", "question_id", "is_correct", *GOLD_FIELDS})
_TRUE = frozenset({"true", "correct", "yes", "1", "pass", "right"})
_FALSE = frozenset({"false", "incorrect", "no", "0", "fail", "wrong"})


def get_path(rec: dict, path: str) -> object:
    """``rec["a"]["b"]`` for ``"a.b"``; None when a part is missing or not an object."""
    value: object = rec
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def named_field(rec: dict, field: str, option: str, ctx: RecordContext, prefix: str, *, what: str = "record") -> str:
    """The text at the dotted path ``field`` that the user named with ``option`` (``--question-field``);
    a user error when it is missing or not a string."""
    value = get_path(rec, field)
    if value is None:
        raise UserInputError(f"no field {field!r} (from {option}) in this {what}", path=f"{prefix}.{field}", **ctx)
    return expect_type(value, str, what=field, path=f"{prefix}.{field}", **ctx)


def question_key(question: str | None, dataset: str | None) -> str | None:
    """The question id used when a record gives none: dataset plus the whitespace-folded, lowercased question."""
    if not question or not question.strip():
        return None
    return f"{dataset or ''}::{' '.join(question.split()).lower()}"


def record_id(rec: dict, ctx: RecordContext, prefix: str = "$", key: str = "id") -> str | None:
    """``rec[key]`` as a string (a string or an integer in the source), or None."""
    if rec.get(key) is None:
        return None
    expect_type(rec[key], (str, int), what=key, path=f"{prefix}.{key}", **ctx)
    return str(rec[key])


def gold_list(value: object, ctx: RecordContext, path: str) -> list[str]:
    """Gold answers as a list of strings: a string, a list (nested lists flattened, in order), or
    ``{"target": ...}``; numbers become strings.

    Examples
    --------
    >>> ctx = {"file": "f", "line": 1, "trace_id": None}
    >>> gold_list([["Paris", "City of Light"], ["Lutetia"]], ctx, "$.answer"), gold_list(1842, ctx, "$.answer")
    (['Paris', 'City of Light', 'Lutetia'], ['1842'])
    """
    if isinstance(value, dict) and "target" in value:
        value, path = value["target"], f"{path}.target"
    if isinstance(value, str):
        return [value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [str(value)]
    value = expect_type(value, list, what="gold answers", path=path, **ctx)
    out: list[str] = []
    for i, g in enumerate(value):
        if isinstance(g, list):  # nested lists (``[["x"]]``, one list of aliases per answer) are flattened
            out += gold_list(g, ctx, f"{path}[{i}]")
            continue
        expect_type(g, (str, int, float), what="gold answer", path=f"{path}[{i}]", **ctx)
        out.append(g if isinstance(g, str) else str(g))
    return out


def verdict(value: object) -> bool | None:
    """A judge verdict as a boolean: True / "CORRECT" / "yes" / 1, False / "INCORRECT" / "no" / 0; else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().strip(".!\"'").lower()
        return True if word in _TRUE else False if word in _FALSE else None
    return None


def record_fields(
    rec: dict,
    ctx: RecordContext,
    prefix: str = "$",
    *,
    common: bool = False,
    question_field: str | None = None,
    answer_field: str | None = None,
) -> dict:
    """Type-checked record fields: ``agent``, ``question``, ``dataset``, ``question_id`` (None when absent),
    ``gold_answers`` (list of str), ``correct`` (schema object or None), and ``sources``: the field path
    each came from. ``question_field`` / ``answer_field`` name the question and gold fields (dotted paths)."""
    out: dict = {"agent": None, "sources": {}}
    for key in ("model", "agent", "question", "dataset"):  # "agent" wins over the legacy "model"
        if rec.get(key) is not None:
            expect_type(rec[key], str, what=key, path=f"{prefix}.{key}", **ctx)
            out["agent" if key == "model" else key] = rec[key]
            out["sources"]["agent" if key == "model" else key] = f"{prefix}.{key}"
        elif key != "model":
            out.setdefault(key, None)
    if question_field is not None:
        out["question"] = named_field(rec, question_field, "--question-field", ctx, prefix)
        out["sources"]["question"] = f"{prefix}.{question_field}"
    out["question_id"] = record_id(rec, ctx, prefix, "question_id")
    out["gold_answers"] = []
    keys = (answer_field,) if answer_field else GOLD_FIELDS + (COMMON_GOLD_FIELDS if common else ())
    for key in keys:
        value = get_path(rec, key)
        if value is not None:
            out["gold_answers"] = gold_list(value, ctx, f"{prefix}.{key}")
            out["sources"]["gold_answers"] = f"{prefix}.{key}"
            break
    else:
        if answer_field:
            raise UserInputError(
                f"no field {answer_field!r} (from --answer-field) in this record",
                path=f"{prefix}.{answer_field}",
                **ctx,
            )
    out["correct"] = None
    if rec.get("is_correct") is not None:
        expect_type(rec["is_correct"], bool, what="is_correct", path=f"{prefix}.is_correct", **ctx)
        out["correct"] = {"value": rec["is_correct"], "source": "source_data", "detail": {"field": "is_correct"}}
    elif common:
        out["correct"] = _common_correct(rec)
    if out["correct"] is not None:
        out["sources"]["correct"] = f"{prefix}.{out['correct']['detail']['field']}"
    return out


def _common_correct(rec: dict) -> dict | None:
    """Correctness from a judge verdict field, else a 0/1 score field; None when neither decides."""
    for source, keys in (("judge", JUDGE_FIELDS), ("source_data", SCORE_FIELDS)):
        for key in keys:
            value = verdict(rec.get(key)) if source == "judge" or not isinstance(rec.get(key), str) else None
            if value is not None:
                return {"value": value, "source": source, "detail": {"field": key}}
    return None


def consumed_fields(fields: dict) -> set[str]:
    """Top-level record keys :func:`record_fields` read, so they are not copied into metadata again."""
    return {path[2:].split(".")[0].split("[")[0] for path in fields["sources"].values() if path.startswith("$.")}


def apply_fields(trace: dict, fields: dict) -> None:
    """Copy :func:`record_fields` output (gold, dataset, ids, correctness) into a trace."""
    trace["gold_answers"] = fields["gold_answers"]
    trace["dataset"] = fields["dataset"]
    trace["correct"] = fields["correct"]
    trace["question_id"] = fields["question_id"] or question_key(trace["question"], fields["dataset"])
