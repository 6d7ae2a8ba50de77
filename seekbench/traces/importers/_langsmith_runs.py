"""LangSmith runs from a file: batch-ingest payloads and run exports, grouped into traces and trees.

A run (``langsmith.schemas.Run``) is ``{id, trace_id, parent_run_id, run_type, name, start_time,
end_time, inputs, outputs, error, extra: {metadata, runtime}, tags, dotted_order, child_runs?,
...}``. A file holds runs as

- the SDK's batch-ingest payloads ``{"post": [run, ...], "patch": [update, ...]}`` (one per file
  or per JSONL line): a patch updates the run with its ``id`` (or, as the JS SDK writes patches
  without one, its ``dotted_order``), adding ``outputs``, ``end_time``, ``error`` ...;
- a run export: a JSON list of runs, JSONL of runs, or one run with its ``child_runs`` nested.

Runs are grouped by ``trace_id`` (a run without one belongs to the trace of its root) in file order
of their first run. In a trace, runs nest by ``parent_run_id`` (else by ``dotted_order``; a parent
missing from the file makes its child a root) and siblings are ordered by ``start_time`` (ties in file order).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator

from ..._errors import UserInputError
from ..._limits import ReadLimits
from ._base import RecordContext
from ._json_documents import iter_documents
from ._langfuse_steps import start_key

RUN_TYPES = frozenset({"llm", "chain", "tool", "retriever", "prompt", "parser", "embedding"})


def is_run(obj: object) -> bool:
    """A LangSmith run: a string ``id`` (or ``dotted_order``), a known ``run_type`` and run fields."""
    return (
        isinstance(obj, dict)
        and obj.get("run_type") in RUN_TYPES
        and isinstance(obj.get("id", obj.get("dotted_order")), str)
        and any(k in obj for k in ("start_time", "trace_id", "dotted_order", "parent_run_id"))
    )


def is_batch(obj: object) -> bool:
    """A batch-ingest payload: ``post`` and / or ``patch`` lists, the first post a run."""
    if not isinstance(obj, dict) or not (set(obj) & {"post", "patch"}) or set(obj) - {"post", "patch"}:
        return False
    posts = obj.get("post", [])
    return isinstance(posts, list) and isinstance(obj.get("patch", []), list) and bool(posts) and is_run(posts[0])


class Run(dict):
    """One run after its patches, with where each of its fields was read (``at[key]``)."""

    def __init__(self, run: dict, path: str, line: int | None) -> None:
        super().__init__(run)
        self.line = line
        self.at = {k: f"{path}.{k}" for k in run}
        self.path = path


def read_runs(path: str | os.PathLike, limits: ReadLimits | None) -> Iterator[Run | UserInputError]:
    """Every run of the file, patches applied, in file order; unreadable documents as errors."""
    file = str(path)
    runs: list[Run] = []
    by_id: dict[str, Run] = {}
    by_order: dict[str, Run] = {}
    patches: list[tuple[dict, str, int | None]] = []
    for line, doc, prefix in iter_documents(path, single=lambda _: False, limits=limits):
        if isinstance(doc, UserInputError):
            yield doc
            continue
        ctx: RecordContext = {"file": file, "line": line, "trace_id": None}
        if isinstance(doc, dict) and is_batch(doc):
            located = [(r, f"{prefix}.post[{i}]") for i, r in enumerate(doc.get("post", []))]
            patches += [(u, f"{prefix}.patch[{i}]", line) for i, u in enumerate(doc.get("patch", []))]
        else:
            located = [(doc, prefix)]
        stack = list(reversed(located))
        while stack:
            raw, p = stack.pop()
            if not is_run(raw):
                yield UserInputError(
                    "not a LangSmith run: a run needs an id, a run_type (llm, chain, tool, retriever, prompt, "
                    "parser, embedding) and start_time / trace_id / dotted_order",
                    path=p,
                    **ctx,
                )
                continue
            run = Run(raw, p, line)
            runs.append(run)
            if isinstance(raw.get("id"), str):
                by_id[raw["id"]] = run
            if isinstance(raw.get("dotted_order"), str):
                by_order[raw["dotted_order"]] = run
            kids = raw.get("child_runs")
            if isinstance(kids, list):  # a run export with its children nested
                for i, kid in reversed(list(enumerate(kids))):
                    if isinstance(kid, dict) and kid.get("parent_run_id") is None and isinstance(raw.get("id"), str):
                        kid = {**kid, "parent_run_id": raw["id"]}
                    stack.append((kid, f"{p}.child_runs[{i}]"))
    for update, p, line in patches:
        ctx = {"file": file, "line": line, "trace_id": None}
        if not isinstance(update, dict):
            yield UserInputError("a patch must be an object (a run's update)", path=p, **ctx)
            continue
        key = update.get("id") if update.get("id") is not None else update.get("dotted_order")
        found = (by_id if update.get("id") is not None else by_order).get(key if isinstance(key, str) else "")
        if found is None:
            yield UserInputError(
                f"patch of run {key!r} matches no posted run in this file (by id, else dotted_order)",
                path=p,
                **ctx,
            )
            continue
        for k, v in update.items():
            if (v is not None and v != {}) or k not in found:  # a patch's empty value keeps the posted one
                found[k] = v
                found.at[k] = f"{p}.{k}"
    yield from runs


def parent_of(run: dict) -> object:
    """A run's parent: ``parent_run_id``, else the run id in the next-to-last ``dotted_order`` segment
    (each segment is the run's start time and id: ``20240101T000000000000Z<uuid>``)."""
    if run.get("parent_run_id") is not None:
        return run["parent_run_id"]
    order = run.get("dotted_order")
    segments = order.split(".") if isinstance(order, str) else []
    return segments[-2][-36:] if len(segments) > 1 and len(segments[-2]) > 36 else None


def traces(runs: list[Run]) -> dict[str, list[Run]]:
    """Runs grouped by trace (``trace_id``, else the id of their root run), in file order."""
    parent = {r["id"]: parent_of(r) for r in runs if isinstance(r.get("id"), str)}

    def root(r: Run) -> str:
        rid, seen = r.get("id"), set()
        while parent.get(rid) in parent and rid not in seen:
            seen.add(rid)
            rid = parent[rid]
        return str(rid)

    grouped: dict[str, list[Run]] = {}
    for r in runs:
        tid = r["trace_id"] if isinstance(r.get("trace_id"), str) and r["trace_id"] else root(r)
        grouped.setdefault(tid, []).append(r)
    return grouped


def walk(runs: list[Run]) -> list[Run]:
    """The runs of one trace in execution order: each parent before its children, siblings by start time."""
    ids = {r.get("id") for r in runs}
    children: dict[object, list[Run]] = defaultdict(list)
    for order, r in enumerate(runs):
        p = parent_of(r)
        children[p if p in ids and p != r.get("id") else None].append(r)
        r.order = order  # type: ignore[attr-defined]
    for kids in children.values():
        kids.sort(key=lambda r: (start_key(r.get("start_time")), r.order))  # type: ignore[attr-defined]
    out: list[Run] = []
    stack = list(reversed(children[None]))
    seen: set[int] = set()
    while stack:
        r = stack.pop()
        if id(r) in seen:
            continue
        seen.add(id(r))
        out.append(r)
        stack.extend(reversed(children[r.get("id")]))
    return out


def below(run: Run, runs: list[Run]) -> list[Run]:
    """The runs under ``run`` (its descendants), in ``runs`` order."""
    inside = {run.get("id")}
    out = []
    for r in runs:  # ``runs`` is in walk order: a parent comes before its children
        if r is not run and parent_of(r) in inside:
            inside.add(r.get("id"))
            out.append(r)
    return out
