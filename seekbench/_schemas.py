"""Loading the JSON Schemas shipped in ``seekbench/schemas/`` (found by :mod:`seekbench._resources`)."""

from __future__ import annotations

import functools
import json

from ._resources import schema_path

__all__ = ["load_schema", "schema_path", "validator"]


@functools.cache
def load_schema(name: str) -> dict:
    with open(schema_path(name), encoding="utf-8") as fh:
        return json.load(fh)


@functools.cache
def validator(name: str):
    import jsonschema

    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)
