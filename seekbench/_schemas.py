"""Locating and loading the JSON Schemas shipped in ``schemas/``."""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path

_REPO_SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


def schema_path(name: str) -> Path:
    """Path of ``schemas/<name>.schema.json`` (the repo copy, else the packaged copy)."""
    repo = _REPO_SCHEMAS / f"{name}.schema.json"
    if repo.exists():
        return repo
    return Path(str(resources.files("seekbench") / "schemas" / f"{name}.schema.json"))


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
