"""CSV cells a spreadsheet would run are written as text (OWASP CSV Injection); numbers stay numbers."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

from seekbench._csv import FORMULA_START, csv_cell, csv_text

#: What OWASP lists, written out by hand (not read back from the module under test).
OWASP = ["=", "+", "-", "@", "\t", "\r"]


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_the_prefixed_starts_are_owasps():
    assert sorted(FORMULA_START) == sorted(OWASP)


@pytest.mark.parametrize("start", OWASP)
def test_a_text_cell_starting_a_formula_gets_a_quote(start):
    value = f'{start}HYPERLINK("http://evil.example","x")'
    assert csv_cell(value) == "'" + value
    rows = _rows(csv_text(pd.DataFrame({"agent": [value, "plain"]})))
    assert rows == [["agent"], ["'" + value], ["plain"]]  # one cell each, read back whole


def test_safe_text_and_other_values_are_unchanged():
    for v in ("agent-a", " =1", "a=1", "'=1", "", "x@y", "1-2"):
        assert csv_cell(v) == v
    for v in (-0.25, -3, None, np.nan, True, pd.Timestamp("2024-01-01")):
        assert csv_cell(v) is v or (isinstance(v, float) and np.isnan(csv_cell(v)))
    assert csv_cell(("-a", 1)) == "('-a', 1)" and csv_cell({"=": 1}) == "{'=': 1}"


def test_numeric_columns_stay_numbers():
    df = pd.DataFrame(
        {
            "agent": ["-x", "=y"],
            "difference": [-0.25, 0.5],
            "n": [-3, 4],
            "ok": [True, False],
            "mixed": [-1.5, "-1.5"],
            "when": pd.to_datetime(["2024-01-01", "2024-01-02"]),
        }
    )
    text = csv_text(df)
    back = pd.read_csv(io.StringIO(text))
    assert back["difference"].tolist() == [-0.25, 0.5] and back["n"].tolist() == [-3, 4]
    assert back["agent"].tolist() == ["'-x", "'=y"]
    assert back["ok"].tolist() == [True, False] and back["when"].tolist() == ["2024-01-01", "2024-01-02"]
    # In a column of text, a float stays a float; the string "-1.5" is text and is prefixed.
    assert _rows(text)[1][4] == "-1.5" and _rows(text)[2][4] == "'-1.5"
    assert text.replace("'", "") == df.to_csv(index=False)  # nothing else differs from pandas' own CSV


def test_string_and_categorical_columns_and_headers():
    df = pd.DataFrame({"=h": ["a", "b"], "s": pd.array(["+1", None], dtype="string"), "c": pd.Categorical(["@x", "y"])})
    assert _rows(csv_text(df)) == [["'=h", "s", "c"], ["a", "'+1", "'@x"], ["b", "", "y"]]


def test_a_cell_with_separators_is_quoted_and_cannot_split():
    value = "-2+3+cmd|' /C calc'!A0,\"next\"\nline"
    rows = _rows(csv_text(pd.DataFrame({"a": [value], "b": [1]})))
    assert rows == [["a", "b"], ["'" + value, "1"]]


def test_the_input_is_not_changed():
    df = pd.DataFrame({"agent": ["=x"], "v": [[1, 2]]})
    csv_text(df)
    assert df["agent"].tolist() == ["=x"] and df["v"].tolist() == [[1, 2]]
