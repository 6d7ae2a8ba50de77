"""Fuzzing every importer and the validator: any input ends in valid traces or a clean user error.

Inputs are arbitrary bytes, byte-level damage to valid files (cuts, stray
bytes, NULs, invalid UTF-8, BOMs, CRLF, duplicated or swapped lines) and
structure-aware mutations of valid records (fields deleted, retyped, set to
odd values, lists shuffled, duplicated or emptied, values nested). Each input
is read with every importer forced and with format detection, leniently and
strictly (:func:`hostile_support.check_outcome`). The validator is also fed
arbitrary objects directly, and its fast compiled check is compared with
jsonschema on every one. Seeds are fixed (``derandomize``, no example
database) and the budget is bounded so the file runs in well under a minute.
"""

from __future__ import annotations

import copy
import itertools
import json
import tempfile
from pathlib import Path

import pytest
from hostile_support import CANONICAL_SEED, FORMATS, SEEDS, assert_clean_error, canonical_trace, check_outcome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seekbench import UserInputError
from seekbench._io import dumps
from seekbench._schemas import validator
from seekbench.labels import load_annotations
from seekbench.traces import validate_trace
from seekbench.traces._fastschema import fast_validator
from seekbench.traces._trace_check import quick_trace_check

FUZZ = settings(derandomize=True, database=None, deadline=None, max_examples=200,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_DIR = Path(tempfile.mkdtemp(prefix="seekbench-fuzz-"))
_COUNTER = itertools.count()


def _write(data: bytes, name: str) -> Path:
    path = _DIR / f"{next(_COUNTER)}-{name}"
    path.write_bytes(data)
    return path


def _check_all_formats(path: Path) -> None:
    for fmt in [None, *FORMATS]:
        check_outcome(path, fmt)


# -- values --------------------------------------------------------------------------------------------------

_TEXT = st.text(max_size=12) | st.sampled_from([
    "", " ", "\u2028", "\x85", "\ufeff", "\r\n", "\x00", "\u202e", "NaN", "null", "<think>", "</answer>",
    "Doc 1(Title: ", "STEPS_JSON>>>", "{\"", "\\", "\U0001f600", "a" * 300,
])
_SCALARS = (st.none() | st.booleans() | st.integers(-2, 10) | st.integers(-(2**70), 2**70)
            | st.floats(allow_nan=True, allow_infinity=True) | _TEXT)
_JSON = st.recursive(_SCALARS, lambda kids: st.lists(kids, max_size=3)
                     | st.dictionaries(_TEXT, kids, max_size=3), max_leaves=8)


def _paths(obj, prefix=()):
    """Every position in a JSON value: ``(container path, key)`` pairs, plus the root ``((), None)``."""
    yield prefix, None
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


def _get(obj, path):
    for p in path:
        obj = obj[p]
    return obj


def _set(root, path, value):
    if not path:
        return value
    _get(root, path[:-1])[path[-1]] = value
    return root


@st.composite
def _mutated(draw, obj):
    """``obj`` after one to four structure-aware mutations."""
    obj = copy.deepcopy(obj)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from([p for p, _ in _paths(obj)]))
        here = _get(obj, path)
        op = draw(st.sampled_from(["delete", "replace", "retype", "nest", "stringify", "dup", "swap", "empty",
                                   "add_key", "odd_number", "big_index"]))
        parent = _get(obj, path[:-1]) if path else None
        if op == "delete" and path and isinstance(parent, (dict, list)):
            del parent[path[-1]]
        elif op == "replace":
            obj = _set(obj, path, draw(_JSON))
        elif op == "retype":
            obj = _set(obj, path, {str: 1, int: "1", float: [here], bool: "true", type(None): {},
                                   list: {"0": here}, dict: [here]}[type(here)])
        elif op == "nest":
            obj = _set(obj, path, json.loads("[" * 40 + json.dumps(here) + "]" * 40))
        elif op == "stringify":
            obj = _set(obj, path, json.dumps(here))
        elif op == "dup" and isinstance(here, list) and here:
            here.append(copy.deepcopy(here[draw(st.integers(0, len(here) - 1))]))
        elif op == "swap" and isinstance(here, list) and len(here) > 1:
            i, j = draw(st.integers(0, len(here) - 1)), draw(st.integers(0, len(here) - 1))
            here[i], here[j] = here[j], here[i]
        elif op == "empty" and isinstance(here, (list, dict, str)):
            obj = _set(obj, path, type(here)())
        elif op == "add_key" and isinstance(here, dict):
            here[draw(_TEXT)] = draw(_JSON)
        elif op == "odd_number":
            obj = _set(obj, path, draw(st.sampled_from([-1, 0, 1.0, 1.5, 2**64, -(2**63), 1e308, True])))
        elif op == "big_index":
            obj = _set(obj, path, draw(st.sampled_from(["9" * 40, 10**30, -0.0])))
    return obj


def _records(seed: bytes) -> tuple[list, bool]:
    """The JSON records of a seed file, and whether it is one whole-file document."""
    try:
        text = seed.decode("utf-8")
    except UnicodeDecodeError:  # Parquet: byte damage only
        return [], False
    if text.lstrip()[:1] not in "[{":
        return [], False
    try:
        return [json.loads(text)], True
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()], False


def _serialise(records: list, whole: bool, style: str) -> bytes:
    if whole:
        body = json.dumps(records[0], indent=2, ensure_ascii=style == "ascii", allow_nan=True)
    else:
        body = "\n".join(json.dumps(r, ensure_ascii=style == "ascii", allow_nan=True) for r in records)
    body += "\n"
    if style == "crlf":
        body = body.replace("\n", "\r\n")
    data = body.encode("utf-8", "surrogatepass")
    return b"\xef\xbb\xbf" + data if style == "bom" else data


_JSON_SEEDS = [(fmt, name, data) for fmt, name, data in SEEDS if _records(data)[0]]


@FUZZ
@given(data=st.data())
def test_structure_aware_mutations_of_valid_records(data):
    fmt, name, seed = _JSON_SEEDS[data.draw(st.integers(0, len(_JSON_SEEDS) - 1), label="seed")]
    records, whole = _records(seed)
    k = data.draw(st.integers(0, len(records) - 1), label="record")
    records[k] = data.draw(_mutated(records[k]), label="mutated")
    style = data.draw(st.sampled_from(["plain", "ascii", "crlf", "bom"]), label="style")
    _check_all_formats(_write(_serialise(records, whole, style), name))


_BYTE_OPS = ["cut", "drop", "insert", "flip", "nul", "bad_utf8", "bom_mid", "crlf", "dup_line", "swap_lines",
             "blank_lines"]


_TEXT_SEEDS = [seed for seed in SEEDS if seed[0] != "parquet"]
_PARQUET_SEEDS = [seed for seed in SEEDS if seed[0] == "parquet"]


def _damage(data, seed: bytes) -> bytes:
    buf = bytearray(seed)
    for _ in range(data.draw(st.integers(1, 3), label="n_ops")):
        op = data.draw(st.sampled_from(_BYTE_OPS), label="op")
        i = data.draw(st.integers(0, max(0, len(buf) - 1)), label="at")
        if op == "cut":
            del buf[i:]
        elif op == "drop":
            del buf[i:i + data.draw(st.integers(1, 40))]
        elif op == "insert":
            buf[i:i] = data.draw(st.binary(min_size=1, max_size=8))
        elif op == "flip" and buf:
            buf[i] ^= 1 << data.draw(st.integers(0, 7))
        elif op == "nul":
            buf[i:i] = b"\x00"
        elif op == "bad_utf8":
            buf[i:i] = data.draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]))
        elif op == "bom_mid":
            buf[i:i] = b"\xef\xbb\xbf"
        elif op == "crlf":
            buf = bytearray(bytes(buf).replace(b"\n", b"\r\n"))
        elif op in ("dup_line", "swap_lines", "blank_lines"):
            lines = bytes(buf).split(b"\n")
            j = data.draw(st.integers(0, len(lines) - 1))
            if op == "dup_line":
                lines.insert(j, lines[j])
            elif op == "swap_lines":
                lines[0], lines[j] = lines[j], lines[0]
            else:
                lines.insert(j, b"   \t")
            buf = bytearray(b"\n".join(lines))
    return bytes(buf)


@FUZZ
@given(data=st.data())
def test_byte_damage_to_valid_files(data):
    fmt, name, seed = _TEXT_SEEDS[data.draw(st.integers(0, len(_TEXT_SEEDS) - 1), label="seed")]
    _check_all_formats(_write(_damage(data, seed), name))


@pytest.mark.skipif(not _PARQUET_SEEDS, reason="the Parquet importer (pyarrow) is not available")
@FUZZ
@given(data=st.data())
def test_byte_damage_to_parquet_files(data):
    """Damaged footers, page headers and pages of a valid Parquet file: clean user errors too."""
    fmt, name, seed = _PARQUET_SEEDS[0]
    _check_all_formats(_write(_damage(data, seed), name))


@FUZZ
@given(blob=st.binary(max_size=400) | st.text(max_size=200).map(lambda t: t.encode("utf-8")))
def test_arbitrary_bytes(blob):
    _check_all_formats(_write(blob, "blob.jsonl"))


_TAG_PIECES = st.sampled_from([
    "<think>", "</think>", "<search>", "</search>", "<information>", "</information>", "<answer>", "</answer>",
    "<result>", "<THINK>", "<search></search>", "\n", " ", "Doc 1(Title: a) b\n", "Doc 0(Title: (x) y\n",
    "Question: q\n", "<|im_start|>assistant\n", "<|im_end|>", "{", '"', "\\", "\u2028", "text",
])


@FUZZ
@given(pieces=st.lists(_TAG_PIECES | st.text(max_size=5), max_size=30), as_text=st.booleans())
def test_tagged_generations(pieces, as_text):
    """Search-R1 generations made of tags in any order, unclosed, nested, doubled, in a text file or a record."""
    text = "".join(pieces)
    if as_text:
        data = ("<think>" + text).encode("utf-8")
    else:
        data = (json.dumps({"id": "g", "question": "q", "output": text}) + "\n").encode("utf-8")
    path = _write(data, "gen.txt" if as_text else "gen.jsonl")
    assert check_outcome(path, "search_r1") in ("ok", "partial", "error")
    check_outcome(path, None)


# -- the validator ---------------------------------------------------------------------------------------------

def _schema_valid(obj) -> bool:
    return next(iter(validator("trace").iter_errors(obj)), None) is None


def _validate_checked(obj) -> None:
    """``validate_trace`` returns or raises a clean user error; its fast path agrees with jsonschema."""
    fast = fast_validator("trace")
    if fast is not None:
        assert fast(obj) == _schema_valid(obj), "the compiled schema check and jsonschema disagree"
    if quick_trace_check(obj):  # one-sided: it may leave a valid record to the exact checks
        assert _schema_valid(obj), "the hand-written quick check passed a record jsonschema rejects"
    try:
        validate_trace(obj, file="x.jsonl", line=1)
    except UserInputError as e:
        assert_clean_error(e)


@FUZZ
@given(obj=_JSON)
def test_validator_on_arbitrary_values(obj):
    _validate_checked(obj)


@FUZZ
@given(data=st.data())
def test_validator_on_mutated_canonical_traces(data):
    seed = canonical_trace("v", data.draw(st.integers(1, 8), label="n_steps"))
    _validate_checked(data.draw(_mutated(seed), label="mutated"))


# -- annotation sets ---------------------------------------------------------------------------------------------

_LABEL = {"schema_version": "1.0", "trace_id": "t1", "step": 0, "field": "groundness", "value": "Not Grounded",
          "rater": "r", "provenance": {"kind": "judge", "judge": "j", "time": "2025-01-01T00:00:00Z"}}


@FUZZ
@given(data=st.data())
def test_annotation_sets(data):
    """``load_annotations`` (``validate --annotations``, ``--labels``) on mutated label records."""
    records = [data.draw(_mutated(_LABEL), label="record") for _ in range(data.draw(st.integers(1, 3)))]
    path = _write(_serialise(records, False, data.draw(st.sampled_from(["plain", "crlf", "bom"]))), "labels.jsonl")
    for skip in (False, True):
        try:
            aset = load_annotations(path, skip_invalid=skip)
        except UserInputError as e:
            assert_clean_error(e)
            continue
        for e in aset.skipped:
            assert_clean_error(e)
        for rec in aset.to_records():
            dumps(rec).encode("utf-8")


def test_seeds_are_valid():
    """The fuzzers start from inputs every importer reads cleanly (so mutations are what breaks them)."""
    for fmt, name, data in [*SEEDS, CANONICAL_SEED]:
        # same.openai.jsonl line 3 is a bare conversation with no agent: the file's stem is its agent (issue 11)
        assert check_outcome(_write(data, name), fmt) == "ok", name


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_fuzzed(fmt):
    assert fmt in {f for f, _, _ in SEEDS}
