"""The mapping an importer used, written in the ``--map`` syntax (``convert --explain``).

Built from the first record: the ``sources`` its importer stated (the path each field was read at)
and, for the formats whose steps are one item per step, the fixed paths of those steps. Every part a
map cannot say (a span of text, a path outside the record, steps in tags or spans) is a TOML comment
saying why, so the block is ready to edit and to pass back with ``--map``.
"""

from __future__ import annotations

import json
import re

from ._base import ImportedRecord
from ._mapping import KEYS, Mapping

#: Trace field (as in ImportedRecord.sources) -> key of the [trace] table.
TRACE_FIELDS = {
    "trace_id": "id",
    "question": "question",
    "final_answer": "answer",
    "gold_answers": "gold",
    "agent": "agent",
    "correct": "correct",
    "dataset": "dataset",
}

_SEEKBENCH_STEPS = {
    "steps": {
        "path": "$.trace[*]",
        "kind": "$.type",
        "text": "$.content",
        "query": "$.query",
        "depends_on": "$.trace_dependency.dependent_on",
    },
    "documents": {
        "path": "$.documents[*]",
        "id": "$.id",
        "title": "$.title",
        "url": "$.url",
        "text": "$.content",
        "score": "$.score",
    },
}
_CANONICAL_STEPS = {
    "steps": {
        "path": "$.steps[*]",
        "kind": "$.kind",
        "text": "$.text",
        "query": "$.query",
        "depends_on": "$.depends_on",
    },
    "tool": {"name": "$.tool"},
    "documents": {
        "path": "$.documents[*]",
        "id": "$.id",
        "title": "$.title",
        "url": "$.url",
        "text": "$.text",
        "score": "$.score",
    },
}
#: The formats whose steps are one JSON item each, at fixed keys.
FIXED_STEPS = {"seekbench": _SEEKBENCH_STEPS, "canonical": _CANONICAL_STEPS}
#: What a map cannot say about the steps of the other formats (the format is then the way to read them).
NOT_EXPRESSIBLE = {
    "search_r1": "the steps are tags inside the text at {tagged} (<search>, <information>, <answer> ...)",
    "atif": "each ATIF step holds a message, tool calls and observations matched by call id: several steps per item",
    "inspect": "the samples sit in an Inspect log with its header (the agent and task), not one record each",
    "otel": "the steps are spans linked by parent ids across records",
    "parquet": "a Parquet table holds one row per step, not one record per trace",
    "openai_chat": "the messages are one conversation joined from {messages_from} (a map names one message list)",
    "langfuse": "the steps are observations nested by parentObservationId, in startTime order",
    "langsmith": "the steps are runs nested by parent_run_id, in start_time order, patched by later updates",
    "smolagents": "the tool calls are Python text inside the memory's messages (or memory step dicts)",
}
_SLICE = re.compile(r"\[-?\d*:-?\d*\]$")


def _toml(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(value, ensure_ascii=False)


def _below(path: str, base: str) -> str | None:
    """``path`` relative to ``base`` (``$.a[0].q`` below ``$.a[0]`` -> ``$.q``), or None when outside it."""
    if base == "$":
        return path
    if path == base:
        return "$"
    if path.startswith(base) and path[len(base)] in ".[":
        return "$" + path[len(base) :]
    return None


def mapping_lines(fmt: str, rec: ImportedRecord, *, mapping: Mapping | None = None) -> list[str]:
    """The TOML lines of the mapping ``fmt`` used for ``rec`` (with ``mapping``: that mapping itself)."""
    if mapping is not None:
        return _render({t: dict(getattr(mapping, t)) for t in KEYS}, {t: [] for t in KEYS}, mapping.kinds)
    trace = rec.trace or {}
    base = (trace.get("source") or {}).get("path") or "$"
    tables: dict[str, dict[str, str]] = {t: {} for t in KEYS}
    notes: dict[str, list[str]] = {t: [] for t in KEYS}
    if not re.fullmatch(r"\$\[\d+\]", base) and base != "$":  # a top-level array is split without a path
        tables["trace"]["path"] = re.sub(r"\[\d+\]$", "[*]", base)
    messages = rec.sources.get("messages")
    rel_messages = None if messages is None else _below(messages, base)
    answers = [st for st in trace.get("steps", []) if st["kind"] == "answer"]
    last_answer = (answers[-1].get("source_ref") or {}).get("path") if answers else None
    for field, key in TRACE_FIELDS.items():
        src = rec.sources.get(field)
        rel = None if src is None or not src.startswith("$") else _below(src, base)
        if src is None:
            if field not in ("trace_id", "agent"):
                notes["trace"].append(f"{key}: not found in the first record")
        elif rel_messages is not None and rel is not None and rel.startswith(rel_messages + "["):
            notes["trace"].append(f"{key} <- {src}: read from the messages by the chat reader")
        elif _SLICE.search(src):
            notes["trace"].append(f"{key} <- {src}: a span found in the text, different in each record")
        elif field == "final_answer" and src == last_answer:
            notes["trace"].append(f"{key} <- {src}: the last answer step's text (what a map takes without answer)")
        elif rel is None:
            notes["trace"].append(f"{key} <- {src}: not a path inside the record; a map cannot name it")
        else:
            tables["trace"][key] = rel
            if re.search(r"\[-?\d+\]", rel):
                notes["trace"].append(f"{key} = {rel} names a position in a list: check it holds in every record")
    if fmt in FIXED_STEPS:
        for table, paths in FIXED_STEPS[fmt].items():
            tables[table].update(paths)
        if fmt == "seekbench":
            notes["steps"].append("the inline labels ($.trace[*].annotation) and other keys are not read by a map")
        else:
            notes["steps"].append("step labels, urls and other keys are not read by a map")
    elif rel_messages is not None:
        tables["trace"]["messages"] = rel_messages
    else:
        why = NOT_EXPRESSIBLE.get(fmt, "the steps are in a shape a map cannot name").format(
            tagged=rec.sources.get("tagged", "the text"), messages_from=rec.sources.get("messages_from", "several keys")
        )
        notes["steps"].append(f"{why}; a map cannot name them: read this file with --format {fmt}")
    kinds: dict[str, str] = {}
    if fmt in FIXED_STEPS:
        for st in trace.get("steps", []):
            raw = st.get("original_kind")
            if isinstance(raw, str) and raw != st["kind"]:
                kinds[raw] = st["kind"]
    return _render(tables, notes, kinds)


def _render(tables: dict[str, dict[str, str]], notes: dict[str, list[str]], kinds: dict[str, str]) -> list[str]:
    out = ["# seekbench mapping file: save it (map.toml), edit the paths, pass it back with --map map.toml"]
    for table in KEYS:
        if not tables[table] and not notes[table] and not (table == "steps" and kinds):
            continue
        out.append(f"[{table}]")
        out += [f"{key} = {_toml(tables[table][key])}" for key in KEYS[table] if key in tables[table]]
        out += [f"# {n}" for n in notes[table]]
        if table == "steps" and kinds:
            out.append("[steps.kinds]")
            by_kind: dict[str, list[str]] = {}
            for raw, kind in kinds.items():
                by_kind.setdefault(kind, []).append(raw)
            out += [f"{k} = [{', '.join(_toml(v) for v in vs)}]" for k, vs in by_kind.items()]
    return out
