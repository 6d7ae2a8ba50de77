"""Mapping files (``--map FILE``): where a record of an unknown shape keeps each part of a trace.

A mapping file is TOML with four tables, every value a path of :mod:`._jsonpath`::

    [trace]                        # paths from the record ($)
    path = "$.items[*]"            # where records sit in each JSON document (default: the document)
    id = "$.run_id"
    question = "$.task.prompt"     # required, unless messages gives the first user message
    answer = "$.result.answer"
    gold = "$.task.expected"       # a string, a number, or a list of them (nested lists flattened)
    agent = "$.meta.model"
    correct = "$.result.ok"        # a boolean, 0/1, or a verdict word (correct / incorrect, yes / no)
    dataset = "$.meta.dataset"
    messages = "$.conversation"    # a chat message list, read as openai_chat reads one (instead of [steps])

    [steps]                        # path from the record; the others from each step ($ = the step)
    path = "$.events[*]"
    kind = "$.type"
    text = "$.content"
    query = "$.query"
    depends_on = "$.parents"       # an index or a list of indices of earlier steps

    [steps.kinds]                  # which values of kind are which step kind
    search = ["tool_call"]
    answer = ["final"]

    [tool]                         # paths from each step
    name = "$.tool.name"
    arguments = "$.tool.args"
    result = "$.tool.output"       # a result becomes a step of its own, right after its call

    [documents]                    # path from each step; the others from each document
    path = "$.tool.output.hits[*]"
    title = "$.title"
    url = "$.link"
    text = "$.snippet"

Every error here is one line naming the map file and the key.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field

from ..._errors import UserInputError
from .._ontology import STEP_KINDS
from ._jsonpath import PathError, container, parse

#: The keys of each table; every value is a path.
KEYS: dict[str, tuple[str, ...]] = {
    "trace": ("path", "id", "question", "answer", "gold", "agent", "correct", "dataset", "messages"),
    "steps": ("path", "kind", "text", "query", "depends_on"),
    "tool": ("name", "arguments", "result"),
    "documents": ("path", "id", "title", "url", "text", "score"),
}


@dataclass(frozen=True)
class Mapping:
    """A validated mapping file: for each table, key -> path; ``kinds`` maps a source value to a step kind."""

    file: str
    trace: dict[str, str] = field(default_factory=dict)
    steps: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    tool: dict[str, str] = field(default_factory=dict)
    documents: dict[str, str] = field(default_factory=dict)


def load_mapping(path: str | os.PathLike | Mapping) -> Mapping:
    """Read and check a mapping file; :class:`UserInputError` (one line: the file, the key, what is wrong).

    A :class:`Mapping` is returned as it is.
    """
    if isinstance(path, Mapping):
        return path
    file = str(path)
    try:
        with open(file, "rb") as fh:
            raw = tomllib.load(fh)
    except FileNotFoundError as e:
        raise UserInputError("--map: mapping file not found", file=file) from e
    except IsADirectoryError as e:
        raise UserInputError("--map: is a directory, expected a TOML mapping file", file=file) from e
    except tomllib.TOMLDecodeError as e:
        raise UserInputError(f"--map: not valid TOML ({e})", file=file) from e
    except UnicodeDecodeError as e:
        raise UserInputError("--map: not UTF-8 text; a mapping file is TOML", file=file) from e
    return parse_mapping(raw, file=file)


def parse_mapping(raw: dict, *, file: str) -> Mapping:
    """Check the tables of a parsed mapping file (see the module docstring for the schema)."""
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise UserInputError(
            f"unknown table [{unknown[0]}]; a mapping file has the tables {', '.join(f'[{t}]' for t in KEYS)}",
            file=file,
        )
    tables: dict[str, dict[str, str]] = {}
    kinds: dict[str, str] = {}
    for table, keys in KEYS.items():
        value = raw.get(table, {})
        if not isinstance(value, dict):
            raise UserInputError(f"[{table}] must be a table of paths, got a {type(value).__name__}", file=file)
        tables[table] = {}
        for key, path in value.items():
            where = f"[{table}] {key}"
            if table == "steps" and key == "kinds":
                kinds = _kinds(path, file)
                continue
            if key not in keys:
                raise UserInputError(f"unknown key; [{table}] takes {', '.join(keys)}", file=file, path=where)
            if not isinstance(path, str):
                raise UserInputError(f'must be a path string such as "$.{key}", got {path!r}', file=file, path=where)
            try:
                parse(path)
            except PathError as e:
                raise UserInputError(str(e), file=file, path=where) from e
            tables[table][key] = path
    trace, steps = tables["trace"], tables["steps"]
    if "messages" in trace and steps:
        raise UserInputError(
            "give the steps either as a chat message list ([trace] messages) or as [steps] path, not both",
            file=file,
            path="[trace] messages",
        )
    if "messages" not in trace and "path" not in steps:
        raise UserInputError(
            'no steps: name where they are with [steps] path (e.g. "$.steps[*]") or [trace] messages',
            file=file,
            path="[steps] path",
        )
    if "messages" not in trace and "question" not in trace:
        raise UserInputError('no question: name its path, e.g. question = "$.question"', file=file, path="[trace]")
    for table, key in (("steps", "path"), ("documents", "path")):
        value = tables[table].get(key)
        if value is not None and container(value) is None:
            raise UserInputError(
                f"must end in [*] (each item of an array), e.g. {value}[*]", file=file, path=f"[{table}] {key}"
            )
    if tables["documents"] and "path" not in tables["documents"]:
        raise UserInputError("[documents] needs path (where a step's documents are)", file=file, path="[documents]")
    if tables["tool"] and "name" not in tables["tool"]:
        raise UserInputError("[tool] needs name (where a step's tool name is)", file=file, path="[tool]")
    if kinds and "kind" not in steps:
        raise UserInputError("[steps.kinds] needs [steps] kind (where a step's type is)", file=file, path="[steps]")
    return Mapping(file, trace, steps, kinds, tables["tool"], tables["documents"])


def _kinds(value: object, file: str) -> dict[str, str]:
    """``[steps.kinds]`` (step kind -> list of source values) as source value -> step kind."""
    if not isinstance(value, dict):
        raise UserInputError("must be a table: step kind = [source values]", file=file, path="[steps.kinds]")
    out: dict[str, str] = {}
    for kind, names in value.items():
        where = f"[steps.kinds] {kind}"
        if kind not in STEP_KINDS:
            raise UserInputError(f"unknown step kind; choose from {', '.join(STEP_KINDS)}", file=file, path=where)
        names = [names] if isinstance(names, str) else names
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise UserInputError("must be a list of strings (the source's values)", file=file, path=where)
        for n in names:
            if n in out and out[n] != kind:
                raise UserInputError(f"{n!r} is also listed under {out[n]}", file=file, path=where)
            out[n] = kind
    return out
