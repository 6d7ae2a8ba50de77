"""Shared by the schema-check tests: the positions in a document (to mutate it), and validate_trace's word."""

from seekbench import UserInputError
from seekbench.traces import validate_trace


def positions(obj, path=()):
    """The paths (tuples of keys and indices) of ``obj`` and of everything inside it, ``()`` first."""
    yield path
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from positions(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from positions(v, (*path, i))


def message(obj) -> str | None:
    """The one-line error ``validate_trace`` raises for ``obj`` (as line 7 of f.jsonl), or None if valid."""
    try:
        validate_trace(obj, file="f.jsonl", line=7)
    except UserInputError as e:
        return str(e)
    return None
