"""Judge validation records: how far a judge's labels agree with humans, stored beside the judge file.

A record is ``validation/<judge>.json`` in the directory of the judge's TOML
file (``seekbench/judges/validation/rules.json`` for the shipped ``rules``
judge), in the format of ``schemas/judge_validation.schema.json``: Cohen's
kappa and Gwet's AC1 per label field and step kind with 95% CIs, n, the data,
the method (cross-validated, held-out or in-sample) and the cost per trace.
``seekbench judge list`` shows it; ``seekbench agree`` and ``seekbench report``
show it beside the metrics a judge's labels feed (:func:`record_lines`).
A judge without a record file has none, and the one-line notice says so.

Records are written by ``scripts/train_learned_judge.py`` (the learned judge,
cross-validated, and the rules judge on the same 190 SeekBench traces: it has
no training, so measuring it on them is fair) and ``scripts/bench/judge_kappa.py``
(any judge, after a run on the shared traces).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from .._errors import UserInputError
from .._schemas import validator

#: The ``format`` value of a record, and its version.
RECORD_FORMAT = "seekbench.judge_validation"
RECORD_VERSION = 1

#: Below this Cohen's kappa a field gets a one-line warning wherever the record is shown.
LOW_KAPPA = 0.4

#: The short column names of ``judge list``: (field, step kind) -> header.
SHORT_NAMES: dict[tuple[str, str], str] = {
    ("reasoning_type", "reasoning"): "type",
    ("grounding", "reasoning"): "ground",
    ("search_type", "search"): "search",
    ("clarity", "search_result"): "clar",
    ("sufficiency", "search_result"): "suff",
}


def validation_path(judge_file: str | Path) -> Path:
    """Where the record of the judge in ``judge_file`` lives: ``<its dir>/validation/<stem>.json``.

    >>> validation_path("judges/rules.toml").as_posix()
    'judges/validation/rules.json'
    """
    p = Path(judge_file)
    return p.parent / "validation" / f"{p.stem}.json"


def load_validation(judge_file: str | Path) -> dict | None:
    """The validation record of the judge in ``judge_file``, or None when it has none.

    Raises
    ------
    UserInputError
        The record file exists but is not valid JSON or does not follow the schema.
    """
    path = validation_path(judge_file)
    if not path.is_file():
        return None
    return read_record(path)


def read_record(path: str | Path) -> dict:
    """Read and check one record file (``schemas/judge_validation.schema.json``)."""
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise UserInputError(f"not a judge validation record ({e})", file=str(path)) from e
    errors = sorted(validator("judge_validation").iter_errors(obj), key=lambda e: list(e.absolute_path))
    if errors:
        where = "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in errors[0].absolute_path)
        raise UserInputError(f"judge validation record at {where}: {errors[0].message}", file=str(path))
    return obj


def pick_result(record: dict, features: str | None = None) -> dict:
    """The record's result for ``features`` (a learned judge's feature set), else its first result."""
    for r in record["results"]:
        if features is not None and r.get("features") == features:
            return r
    return record["results"][0]


def kappa_by_field(result: dict) -> dict[tuple[str, str], float | None]:
    """``(field, step kind) -> kappa`` of one result (None when undefined)."""
    return {(r["field"], r["step_kind"]): r["kappa"] for r in result["rows"]}


def _fmt(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def compact_kappas(record: dict | None, features: str | None = None) -> str:
    """One line of kappas per field for ``judge list``: ``type 0.42 ground 0.44 ... (cross-validated, 190 traces)``."""
    if record is None:
        return "no validation record"
    res = pick_result(record, features)
    got = kappa_by_field(res)
    cells = [f"{short} {_fmt(got.get(key))}" for key, short in SHORT_NAMES.items() if key in got]
    feats = f", {res['features']}" if res.get("features") else ""
    return f"kappa {' '.join(cells)} ({record['method']}{feats}, {record['data']['n_traces']} traces)"


def record_notices(judge: str, record: dict | None, features: str | None = None) -> list[str]:
    """The one-line notices for a judge's labels: no record, or each field whose kappa is below 0.4."""
    if record is None:
        return [
            f"judge {judge!r} has no validation record: its agreement with human labels is unknown "
            "(measure it with scripts/bench/judge_kappa.py, or seekbench agree against your own labels)"
        ]
    res = pick_result(record, features)
    low = [
        f"{r['field']} ({r['step_kind']}) {_fmt(r['kappa'])}"
        for r in res["rows"]
        if r["kappa"] is not None and r["kappa"] < LOW_KAPPA and r["n"] > 0
    ]
    if not low:
        return []
    return [f"judge {judge!r}: Cohen's kappa with human labels below {LOW_KAPPA} on {', '.join(low)}"]


def record_lines(judge: str, record: dict | None, features: str | None = None) -> list[str]:
    """A judge's record as Markdown lines (a heading-less block: a sentence, a table, the notices)."""
    if record is None:
        return [f"- {n}" for n in record_notices(judge, record)]
    res = pick_result(record, features)
    data = record["data"]
    cost = record.get("cost_per_trace_usd")
    head = (
        f"Validation record of judge `{judge}`"
        + (f" ({res['features']} features)" if res.get("features") else "")
        + f": {record['method']}, {record['method_detail']} Data: {data['name']}, {data['n_traces']} traces."
        + (f" Cost per trace: ${cost:g}." if cost is not None else "")
    )
    lines = [head, "", "| field | step kind | n | kappa (95% CI) | AC1 (95% CI) |", "|---|---|---:|---|---|"]
    for r in res["rows"]:
        k, a = r["kappa_ci"], r["ac1_ci"]
        lines.append(
            f"| {r['field']} | {r['step_kind']} | {r['n']} | {_fmt(r['kappa'])} ({_fmt(k[0])}, {_fmt(k[1])}) | "
            f"{_fmt(r['ac1'])} ({_fmt(a[0])}, {_fmt(a[1])}) |"
        )
    notices = record_notices(judge, record, features)
    if notices:
        lines += ["", *[f"- {n}" for n in notices]]
    return lines
