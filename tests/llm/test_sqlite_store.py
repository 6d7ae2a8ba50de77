"""The SQLite stores' files: tables created all together or not at all."""

from __future__ import annotations

import sqlite3

import pytest

from seekbench import UserInputError
from seekbench.llm._sqlite import open_store


def _tables(path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_schema_is_created_in_one_transaction(tmp_path):
    # The second statement fails (as if the process died after the first): the first table must not be
    # left behind on its own, which a killed `seekbench annotate` once did to the judge cache.
    path = tmp_path / "store.sqlite"
    with pytest.raises(UserInputError, match="cannot open the test store"):
        open_store(path, "CREATE TABLE a (x);\nCREATE TABLE b (y REFERENCES", what="the test store", option="--x")
    assert _tables(path) == set()
    db = open_store(
        path, "CREATE TABLE IF NOT EXISTS a (x);\nCREATE TABLE IF NOT EXISTS b (y);", what="s", option="--x"
    )
    db.close()
    assert _tables(path) == {"a", "b"}
