"""The small JSONPath subset that mapping files and ``convert --explain`` speak.

A path starts at ``$`` (the record, or the step or document a relative path is read in) and
goes down by:

- ``.key`` (letters, digits, ``_`` and ``-``; not starting with a digit or ``-``),
- ``['any key']`` or ``["any key"]`` (quoted; ``\\'`` / ``\\"`` / ``\\\\`` escape),
- ``[n]`` (an array item; negative counts from the end),
- ``[*]`` (every item of an array, every value of an object),
- ``[a:b]`` (a slice of a string or an array, as in Python; the last part of a path only).

No filters, no recursive descent, no functions: what an importer needs to say where a value sat,
and what a user needs to point at one. Written here rather than taken from a JSONPath package
because the subset is small and its error messages must name the map file and the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_INDEX = re.compile(r"\[\s*(-?\d+)\s*\]")
_SLICE = re.compile(r"\[\s*(-?\d*)\s*:\s*(-?\d*)\s*\]")
_STAR = re.compile(r"\[\s*\*\s*\]|\.\*")


class PathError(ValueError):
    """A path outside the subset; the message says where and why (the caller adds file and key)."""


@dataclass(frozen=True)
class Part:
    """One step down a path: ``kind`` is ``key``, ``index``, ``star`` or ``slice``."""

    kind: str
    key: str | None = None
    index: int | None = None
    stop: int | None = None


def parse(path: str) -> tuple[Part, ...]:
    """The parts of ``path``; :class:`PathError` for anything outside the subset.

    >>> [p.kind for p in parse("$.steps[*].tool['full name'][0]")]
    ['key', 'star', 'key', 'key', 'index']
    """
    if not isinstance(path, str) or not path.startswith("$"):
        raise PathError(f"a path starts with '$' (the record), got {path!r}")
    parts: list[Part] = []
    i = 1
    while i < len(path):
        rest = path[i:]
        if (m := _STAR.match(rest)) is not None:
            parts.append(Part("star"))
        elif rest.startswith(".") and (m := _KEY.match(rest, 1)) is not None:
            parts.append(Part("key", key=m.group(0)))
        elif (m := _INDEX.match(rest)) is not None:
            parts.append(Part("index", index=int(m.group(1))))
        elif (m := _SLICE.match(rest)) is not None:
            a, b = m.group(1), m.group(2)
            parts.append(Part("slice", index=int(a) if a else None, stop=int(b) if b else None))
        elif rest[:1] == "[" and rest[1:2] in ("'", '"'):
            key, end = _quoted(path, i + 1)
            parts.append(Part("key", key=key))
            i = end
            continue
        else:
            raise PathError(f"cannot read {path!r} at {rest[:12]!r} (position {i}); write .key, ['key'], [n] or [*]")
        i += m.end()
    if any(p.kind == "slice" for p in parts[:-1]):
        raise PathError(f"in {path!r} a slice [a:b] can only be the last part")
    return tuple(parts)


def _quoted(path: str, start: int) -> tuple[str, int]:
    """The key quoted at ``path[start]`` and the position after its closing ``]``."""
    quote, out, i = path[start], [], start + 1
    while i < len(path):
        c = path[i]
        if c == "\\" and i + 1 < len(path):
            out.append(path[i + 1])
            i += 2
            continue
        if c == quote:
            if path[i + 1 : i + 2] != "]":
                raise PathError(f"in {path!r} the quoted key at position {start} is not closed by {quote}]")
            return "".join(out), i + 2
        out.append(c)
        i += 1
    raise PathError(f"in {path!r} the quoted key at position {start} is not closed")


def key_part(key: str) -> str:
    """``.key`` when ``key`` is a plain name, else ``['key']`` (quotes and backslashes escaped)."""
    if _KEY.fullmatch(key):
        return f".{key}"
    return "['" + key.replace("\\", "\\\\").replace("'", "\\'") + "']"


def find(value: object, path: str | tuple[Part, ...], base: str = "$") -> list[tuple[str, object]]:
    """Every ``(concrete path, value)`` that ``path`` matches in ``value``, in document order.

    A missing key, an index out of range, or a part that does not fit the value's type (a key on
    an array) matches nothing; a key present with a null value matches (its value None).
    ``base`` starts the concrete paths (the place ``value`` sits at).

    >>> find({"a": [{"b": 1}, {"c": 2}, {"b": 3}]}, "$.a[*].b")
    [('$.a[0].b', 1), ('$.a[2].b', 3)]
    >>> find({"q": "Which city?"}, "$.q[6:10]")
    [('$.q[6:10]', 'city')]
    """
    parts = parse(path) if isinstance(path, str) else path
    found: list[tuple[str, object]] = [(base, value)]
    for p in parts:
        nxt: list[tuple[str, object]] = []
        for where, v in found:
            if p.kind == "key" and isinstance(v, dict) and p.key in v:
                nxt.append((where + key_part(p.key), v[p.key]))  # type: ignore[arg-type]
            elif p.kind == "index" and isinstance(v, list) and -len(v) <= p.index < len(v):  # type: ignore[operator]
                nxt.append((f"{where}[{p.index}]", v[p.index]))  # type: ignore[index]
            elif p.kind == "star" and isinstance(v, list):
                nxt.extend((f"{where}[{i}]", item) for i, item in enumerate(v))
            elif p.kind == "star" and isinstance(v, dict):
                nxt.extend((where + key_part(k), item) for k, item in v.items())
            elif p.kind == "slice" and isinstance(v, (str, list)):
                a = "" if p.index is None else p.index
                b = "" if p.stop is None else p.stop
                nxt.append((f"{where}[{a}:{b}]", v[p.index : p.stop]))
        found = nxt
    return found


def first(value: object, path: str | tuple[Part, ...]) -> tuple[str, object] | None:
    """The first match of :func:`find`, or None when the path matches nothing."""
    hits = find(value, path)
    return hits[0] if hits else None


def container(path: str) -> str | None:
    """The path of the array a ``...[*]`` path iterates (``$.steps[*]`` -> ``$.steps``); None for other paths."""
    m = re.search(r"(\[\s*\*\s*\]|\.\*)$", path)
    return path[: m.start()] or "$" if m else None
