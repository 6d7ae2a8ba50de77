"""Helpers shared by the importer tests: read every record of a file, write JSONL fixtures."""

from __future__ import annotations

import json
from pathlib import Path

from seekbench import UserInputError
from seekbench.traces import validate_trace

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "importers"


def load_records(iter_records, path, **options) -> list:
    """Every record of a file: traces (validated against the schema) and errors, in order."""
    out = []
    for rec in iter_records(path, **options):
        if rec.trace is not None:
            validate_trace(rec.trace, file=str(path), line=rec.line)
            out.append(rec.trace)
        else:
            assert isinstance(rec.error, UserInputError)
            out.append(rec.error)
    return out


def write_jsonl(tmp_path: Path, *records: object, name: str) -> Path:
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path
