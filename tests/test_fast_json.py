"""JSONL lines read by orjson give what the standard reader gives, value for value and error for error.

Every line is read twice through :func:`seekbench._io.iter_jsonl`: as installed (orjson where
:func:`seekbench._fast_json.fast_loads` takes the line) and with orjson taken away (the standard
reader alone, the path of an install without an orjson wheel). The two must agree exactly: the same
values of the same types (``repr`` compared, so ``1`` against ``1.0`` or ``-0.0`` against ``0.0``
differ) and the same one-line errors.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seekbench import UserInputError, _fast_json
from seekbench._fast_json import MAX_OPENINGS, SLOW, fast_loads
from seekbench._io import iter_jsonl


def _read(path) -> list[tuple[int, str]]:
    """``(line, repr of the value or the error's one line)`` of each record of ``path``."""
    return [(n, v.one_line() if isinstance(v, UserInputError) else repr(v)) for n, v in iter_jsonl(path)]


def _both(path, monkeypatch) -> tuple[list, list]:
    fast = _read(path)
    with monkeypatch.context() as m:
        m.setattr(_fast_json, "_orjson", None)
        slow = _read(path)
    return fast, slow


# Lines orjson refuses or would read differently (each goes to the standard reader), then lines both
# read. The reasons are orjson's behaviour as checked by hand in a Python shell (orjson 3.9.15 to 3.13):
EDGE_LINES = [
    b'{"n": 18446744073709551616}',  # 2**64: orjson would give the float 1.8446744073709552e+19
    b'{"n": -9223372036854775809}',  # -(2**63) - 1: orjson would give a float too (19 digits)
    b'{"n": 18446744073709551615}',  # 2**64 - 1: orjson reads it exactly, but 20 digits send it to the json module
    b'{"x": NaN}',  # not JSON: orjson refuses, the json module words the error
    b'{"x": -Infinity}',
    b'{"x": 1e999}',  # overflows a float: orjson refuses, the standard reader names the path
    b'{"x": "\\ud800"}',  # an unpaired surrogate escape: not text
    b'{"x": "\\udc00 after"}',
    b'{"x": "\xed\xa0\x80"}',  # a surrogate encoded in the bytes: not UTF-8
    b'{"x": "\xff"}',  # not UTF-8
    b'\xef\xbb\xbf{"x": 1}',  # a BOM on a line after the first
    b'{"x": "a\x00b"}',  # a NUL byte
    b'{"x": 1}\x00',
    b"   ",  # blank: no record
    b"\x0b\x0c",  # whitespace the json module does not skip, but str.isspace does: no record
    b"[" * 995 + b"]" * 995,  # deeper than the json module reads (orjson reads up to 1024)
    b'{"x": ' + b"[" * 600 + b"]" * 600 + b"}",  # MAX_OPENINGS or more brackets: the json module reads it
    b'{"x": 1, "x": 2, "y": 3}',  # a duplicate key: the last one wins, in the first one's place
    b'{"x": "\\ud83d\\ude00", "y": "\xc3\xa9"}',  # a surrogate pair escaped, and UTF-8
    b'{"x": [0.1, -0.0, 1e308, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1E5, 1e-400]}',
    b'{"x": [0, -0, 9223372036854775807, -9223372036854775808, 12345678901234567, true, false, null]}',
    b'{"x": "1234567890123456789 in a string"}',  # 19 digits in a string: the json module reads it, the same
    b'{"x": 1}\r',
    b'{"x": 1} {"y": 2}',  # extra data
    b'{"x": 1',  # truncated
    b'"just a string"',
]


def test_edge_lines_read_as_the_json_module_reads_them(tmp_path, monkeypatch):
    path = tmp_path / "edges.jsonl"
    path.write_bytes(b'{"first": true}\n' + b"\n".join(EDGE_LINES) + b"\n")
    fast, slow = _both(path, monkeypatch)
    assert fast == slow
    # What the standard reader makes of them, by hand: the exact integers, the errors, the blank lines skipped.
    got = dict(fast)
    assert got[2] == "{'n': 18446744073709551616}"
    assert got[3] == "{'n': -9223372036854775809}"
    assert "NaN is not valid JSON" in got[5]
    assert got[7].endswith(
        "at $.x: the number 1e999 is too large for a 64-bit float: seekbench cannot hold it "
        "(no infinite numbers in traces); write a finite number; fix or remove this line, "
        "or pass --skip-invalid"
    )
    assert "unpaired surrogate" in got[8]
    assert "invalid UTF-8" in got[10]
    assert "NUL byte" in got[13]
    assert 15 not in got and 16 not in got  # blank lines are no records
    # got[17]: "nested too deeply" at the default recursion limit; the json module's limit follows
    # sys.getrecursionlimit(), which a library in the test run may have raised. Either way as above.
    assert got[19] == "{'x': 2, 'y': 3}"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"a": [1, 2.5, "s", null, true]}\n', {"a": [1, 2.5, "s", None, True]}),
        (b'{"n": 18446744073709551616}', SLOW),  # 20 digits in a row
        (b'{"s": "1234567890123456789"}', SLOW),  # 19 in a string: sent to the json module too (it reads the same)
        (b'{"s": "123456789012345678"}', {"s": "123456789012345678"}),  # 18 digits: orjson
        (b"[" * MAX_OPENINGS + b"]" * MAX_OPENINGS, SLOW),
        (
            b"[" * (MAX_OPENINGS - 1) + b"]" * (MAX_OPENINGS - 1),
            json.loads("[" * (MAX_OPENINGS - 1) + "]" * (MAX_OPENINGS - 1)),
        ),
        (b'{"x": NaN}', SLOW),  # refused by orjson
        (b"", SLOW),
    ],
    ids=["plain", "20 digits", "19 digits in a string", "18 digits", "deep", "just below deep", "NaN", "empty"],
)
def test_fast_loads_takes_only_the_lines_it_reads_exactly(raw, expected):
    got = fast_loads(raw)
    assert got is SLOW if expected is SLOW else got == expected


def test_without_orjson_every_line_goes_to_the_json_module(monkeypatch):
    monkeypatch.setattr(_fast_json, "_orjson", None)
    assert fast_loads(b'{"a": 1}') is SLOW


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()  # beyond 64 bits too
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()  # lone surrogates included: json.dumps escapes them, and both readers must refuse them
)
_values = st.recursive(
    _scalars, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(), kids, max_size=4), max_leaves=20
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(_values, min_size=1, max_size=5), ascii_only=st.booleans())
def test_any_json_reads_the_same_with_and_without_orjson(tmp_path, monkeypatch, values, ascii_only):
    lines = []
    for v in values:
        try:
            lines.append(json.dumps({"v": v}, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"))
        except UnicodeEncodeError:  # pragma: no cover (surrogatepass encodes every str)
            continue
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    fast, slow = _both(path, monkeypatch)
    assert fast == slow
