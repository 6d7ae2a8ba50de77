"""Which judges produced a label set, and their validation records (shown where the labels are used).

Label provenance names the judge (``provenance.judge``) and what produced the
labels (``provenance.model``: ``rules@1``, ``learned@1:<model sha>`` with a
``+minilm`` suffix when the embedding features were used, or an API model
name). The judge's file is looked up by name as ``--judge NAME`` would find it,
and its record read from beside it (:func:`seekbench.llm.load_validation`). A
record measured on other labels than these (another learned model, another API
model) is not shown as theirs: the note says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._errors import UserInputError
from ..labels import AnnotationSet
from ..llm import find_judge_file, load_validation, record_lines, record_notices

#: The suffix of ``provenance.model`` when a learned judge used its embedding features.
_EMBED_SUFFIX = "+minilm"


@dataclass(frozen=True)
class JudgeRecord:
    """A judge whose labels are in use, with its validation record (None: it has none).

    Attributes
    ----------
    judge : str
        The judge's name, from the labels' provenance.
    model : str or None
        ``provenance.model`` of its labels (the most frequent one).
    features : str or None
        The learned judge's feature set (``lexical`` / ``lexical+minilm``); None for other judges.
    record : dict or None
    note : str
        Why no record is shown although a file exists (a different model), else empty.
    """

    judge: str
    model: str | None
    features: str | None
    record: dict | None
    note: str = ""

    def notices(self) -> list[str]:
        """The one-line notices: no record (with the reason), or the fields with kappa below 0.4."""
        if self.record is None and self.note:
            return [f"judge {self.judge!r} has no validation record for these labels: {self.note}"]
        return record_notices(self.judge, self.record, self.features)

    def markdown(self) -> list[str]:
        """The record as Markdown lines (:func:`seekbench.llm.record_lines`), or the notice."""
        if self.record is None:
            return [f"- {n}" for n in self.notices()]
        return record_lines(self.judge, self.record, self.features)


def judge_records(label_sets: Sequence[AnnotationSet]) -> list[JudgeRecord]:
    """The judges whose own decisions are in ``label_sets`` (human and rule labels are not judges), by name.

    Parameters
    ----------
    label_sets : list of AnnotationSet
        The label sets a report or an agreement uses.

    Returns
    -------
    list of JudgeRecord
        One per judge name, in first-appearance order; empty when no label came from a judge.
    """
    seen: dict[str, list[str | None]] = {}
    for ls in label_sets:
        for prov in ls.records["provenance"]:
            if not isinstance(prov, dict) or prov.get("kind") != "judge" or not prov.get("judge"):
                continue
            seen.setdefault(str(prov["judge"]), []).append(prov.get("model"))
    out = []
    for judge, models in seen.items():
        named = [m for m in models if m]
        model = max(dict.fromkeys(named), key=named.count) if named else None
        out.append(_lookup(judge, model))
    return out


def _lookup(judge: str, model: str | None) -> JudgeRecord:
    features = None
    if model and model.startswith("learned@"):
        features = "lexical+minilm" if model.endswith(_EMBED_SUFFIX) else "lexical"
    base = model[: -len(_EMBED_SUFFIX)] if model and model.endswith(_EMBED_SUFFIX) else model
    try:
        path = find_judge_file(judge)
    except UserInputError:  # labels made elsewhere, by a judge file not found here
        return JudgeRecord(judge, model, features, None, note=f"no judge file named {judge!r} is found here")
    try:
        record = load_validation(path)
    except UserInputError as e:  # a record file that does not read
        return JudgeRecord(judge, model, features, None, note=e.one_line())
    if record is not None and record.get("model") and base and record["model"] != base:
        note = f"the record measures {record['model']}, these labels come from {model}"
        return JudgeRecord(judge, model, features, None, note=note)
    return JudgeRecord(judge, model, features, record)
