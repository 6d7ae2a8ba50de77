"""One JSONL line parsed by orjson, where orjson gives exactly what the standard reader gives.

orjson parses a trace line about three times as fast as the ``json`` module (the 1x corpus in
the SeekBench release format: 0.33 against 0.95 CPU s; ``scripts/bench/release_speed.py``). It
refuses, as the standard reader of :mod:`seekbench._io` does, what is not JSON text: invalid
UTF-8, a byte order mark, NaN and Infinity, numbers that overflow a float, unpaired surrogate
escapes, control characters, a blank line. Those lines go to the standard reader, which words
the error (or reads a blank line as no record). Two kinds of line orjson would read differently,
so they never reach it:

- an integer beyond 64 bits: orjson makes it a float (``2**64`` -> ``1.8446744073709552e+19``),
  the standard reader an exact int. Such an integer has at least 19 digits, so a line with 19
  digits in a row (in a number or in a string alike) goes to the standard reader;
- nesting near the recursion limit: the standard reader refuses depths near Python's recursion
  limit (about 990 levels at the top of the stack, fewer below), orjson reads up to 1024. A
  line with fewer than :data:`MAX_OPENINGS` ``[`` and ``{`` bytes nests less deep than that, which
  both read.

Both are found in one pass: the line's bytes translated to digits, brackets and blanks.
Without orjson (it is a core dependency, but an environment may lack a wheel for it) every line
goes to the standard reader.
"""

from __future__ import annotations

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover (no wheel for this platform: the standard reader reads every line)
    _orjson = None  # type: ignore[assignment]

#: What :func:`fast_loads` returns for a line the standard reader must read.
SLOW = object()
#: A line with at least this many opening brackets goes to the standard reader (see the module doc).
MAX_OPENINGS = 500
#: Each byte as one of three marks: ``0`` a digit, ``[`` an opening bracket (``[`` or ``{``), blank else.
_MARKS = bytes(48 if 48 <= b <= 57 else 91 if b in b"[{" else 32 for b in range(256))
#: 19 digits in a row: the shortest integer orjson reads as a float (below -2**63).
_LONG_DIGITS = b"0" * 19


def fast_loads(raw: bytes) -> object:
    """The value of one JSONL line (bytes, newline included or not) read by orjson, or :data:`SLOW`
    when the standard reader must read it (no orjson, a line orjson refuses or reads differently)."""
    if _orjson is None:
        return SLOW
    marks = raw.translate(_MARKS)
    if _LONG_DIGITS in marks or marks.count(b"[") >= MAX_OPENINGS:
        return SLOW
    try:
        return _orjson.loads(raw)
    except _orjson.JSONDecodeError:
        return SLOW
