"""A fast yes/no check of a JSON document against seekbench's schemas, compiled from the schema.

``jsonschema`` walks the schema for every instance (creating a validator per
subschema visited); on paper-scale corpora that costs milliseconds per trace.
This module compiles the schema once into nested Python predicates that answer
only "valid or not", with the semantics of JSON Schema draft 2020-12 as
``jsonschema`` implements them (``integer`` accepts 1.0 but not True, ``number``
excludes booleans, ``enum``/``const`` tell True from 1, keywords apply only to
instances of their type). When it answers "not valid", the caller asks
``jsonschema`` to find and word the error, so every message is jsonschema's.

Only the keywords the shipped schemas use are compiled (``type``, ``enum``,
``const``, ``properties``, ``required``, ``additionalProperties``, ``items``,
``$ref`` to ``#/$defs/...``, ``oneOf``, ``minimum``, ``maximum``, ``minLength``)
plus annotations (``description``, ``title``, ``$schema``, ``$id``, ``$defs``).
A schema using anything else compiles to None: callers then use ``jsonschema``
alone, so a schema edit can make validation slower but never wrong.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable
from typing import Any

from .._schemas import load_schema

Predicate = Callable[[object], bool]
_ANNOTATIONS = {"description", "title", "$schema", "$id", "$defs", "$comment", "examples", "default"}


class _Unsupported(Exception):
    """The schema uses a keyword this compiler does not implement."""


def _is_integer(v: object) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, float) and v.is_integer())


def _is_number(v: object) -> bool:
    return not isinstance(v, bool) and isinstance(v, numbers.Number)


_TYPE_TESTS: dict[str, Predicate] = {
    "string": lambda v: isinstance(v, str),
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "integer": _is_integer,
    "number": _is_number,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def _type_predicate(types: str | list[str]) -> Predicate:
    names = [types] if isinstance(types, str) else list(types)
    if any(n not in _TYPE_TESTS for n in names):
        raise _Unsupported(f"type {names!r}")
    simple: dict[str, type] = {"string": str, "null": type(None), "boolean": bool, "object": dict, "array": list}
    if all(n in simple for n in names):
        exact = tuple(simple[n] for n in names)  # bool is excluded from integer/number, fine here
        return lambda v: isinstance(v, exact)
    tests = [_TYPE_TESTS[n] for n in names]
    return lambda v: any(t(v) for t in tests)


def _enum_predicate(values: list) -> Predicate:
    if not all(v is None or isinstance(v, str) for v in values):
        raise _Unsupported("enum of non-strings")
    strings = frozenset(v for v in values if v is not None)
    allow_null = any(v is None for v in values)
    return lambda v: (v is None and allow_null) or (isinstance(v, str) and v in strings)


class _Num:
    """An inlined numeric property check: ``integer``/``number`` (maybe null) within [lo, hi]."""

    __slots__ = ("float_cls", "nullable", "lo", "hi", "exact")

    def __init__(self, schema: dict, exact: Predicate) -> None:
        names = [schema["type"]] if isinstance(schema["type"], str) else list(schema["type"])
        self.float_cls = float if "number" in names else int  # a float integer goes the exact way
        self.nullable = "null" in names
        self.lo = schema.get("minimum", float("-inf"))
        self.hi = schema.get("maximum", float("inf"))
        self.exact = exact


def _is_numeric_field(schema: dict) -> bool:
    names = schema.get("type")
    names = [names] if isinstance(names, str) else names
    return (
        isinstance(names, list)
        and set(schema) - _ANNOTATIONS <= {"type", "minimum", "maximum"}
        and bool({"integer", "number"} & set(names))
        and set(names) <= {"integer", "number", "null"}
        and all(_is_number(schema.get(k, 0)) for k in ("minimum", "maximum"))
    )


class _Compiler:
    def __init__(self, root: dict) -> None:
        self.root = root
        self.refs: dict[str, Predicate] = {}

    def ref(self, ref: str) -> Predicate:
        if not ref.startswith("#/$defs/") or "/" in ref[len("#/$defs/") :]:
            raise _Unsupported(f"$ref {ref!r}")
        if ref not in self.refs:
            slot: list[Predicate] = []
            self.refs[ref] = lambda v: slot[0](v)  # resolves recursive references
            slot.append(self.compile(self.root["$defs"][ref[len("#/$defs/") :]]))
            self.refs[ref] = slot[0]
        return self.refs[ref]

    def compile(self, schema: dict) -> Predicate:
        """An exact predicate: True iff ``jsonschema`` finds no error against ``schema``."""
        keys = set(schema) - _ANNOTATIONS
        unknown = keys - {
            "type",
            "enum",
            "const",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "$ref",
            "oneOf",
            "minimum",
            "maximum",
            "minLength",
        }
        if unknown:
            raise _Unsupported(", ".join(sorted(unknown)))
        if schema.get("type") == "object" and keys <= {"type", "properties", "required", "additionalProperties"}:
            return self.object(schema, typed=True)
        if schema.get("type") == "array" and keys == {"type", "items"}:
            return self.array(schema["items"])
        checks: list[Predicate] = []
        if "$ref" in schema:
            checks.append(self.ref(schema["$ref"]))
        if "type" in schema:
            checks.append(_type_predicate(schema["type"]))
        if "enum" in schema:
            checks.append(_enum_predicate(schema["enum"]))
        if "const" in schema:
            const = schema["const"]
            if not isinstance(const, str):
                raise _Unsupported("const of a non-string")
            checks.append(lambda v: isinstance(v, str) and v == const)
        if "minimum" in schema or "maximum" in schema:
            lo, hi = schema.get("minimum"), schema.get("maximum")
            checks.append(lambda v: not _is_number(v) or ((lo is None or v >= lo) and (hi is None or v <= hi)))
        if "minLength" in schema:
            n = schema["minLength"]
            checks.append(lambda v: not isinstance(v, str) or len(v) >= n)
        if "oneOf" in schema:
            options = [self.compile(s) for s in schema["oneOf"]]
            checks.append(lambda v: sum(1 for o in options if o(v)) == 1)
        if "items" in schema:
            array = self.array(schema["items"])
            checks.append(lambda v: not isinstance(v, list) or array(v))
        if {"properties", "required", "additionalProperties"} & keys:
            checks.append(self.object(schema, typed=False))
        if not checks:
            return lambda v: True
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:
            first, second = checks
            return lambda v: first(v) and second(v)
        return lambda v: all(c(v) for c in checks)

    def array(self, items: dict) -> Predicate:
        """``{"type": "array", "items": items}``."""
        spec = self.field(items)

        def check(v: object) -> bool:
            if not isinstance(v, list):
                return False
            if spec.__class__ is tuple:
                for x in v:
                    if not isinstance(x, spec):
                        return False
                return True
            if spec.__class__ is _Num:
                for x in v:
                    if x.__class__ is int and spec.lo <= x <= spec.hi:
                        continue
                    if not spec.exact(x):
                        return False
                return True
            pred = spec if callable(spec) else self.compile(items)
            for x in v:
                if not pred(x):
                    return False
            return True

        return check

    def object(self, schema: dict, *, typed: bool) -> Predicate:
        """``properties``/``required``/``additionalProperties`` (with ``type: object`` if ``typed``)."""
        # Any: check dispatches on the exact class (``__class__ is``, faster than isinstance in this hot
        # loop), which mypy does not narrow on; each value is what field() returns.
        props: dict[str, Any] = {k: self.field(s) for k, s in schema.get("properties", {}).items()}
        required = frozenset(schema.get("required", ()))
        extra = schema.get("additionalProperties", True)
        if extra is not False and extra is not True:
            raise _Unsupported("additionalProperties schema")
        closed = extra is False
        get = props.get

        def check(v: object) -> bool:
            if not isinstance(v, dict):
                return not typed
            if required and not required <= v.keys():
                return False
            for key, value in v.items():
                spec = get(key)
                if spec is None:
                    if closed:
                        return False
                elif spec.__class__ is tuple:  # a type test inlined: isinstance(value, types)
                    if not isinstance(value, spec):
                        return False
                elif spec.__class__ is frozenset:  # a string enum inlined (None allowed if listed)
                    if not (value is None or isinstance(value, str)) or value not in spec:
                        return False
                elif spec.__class__ is _Num:  # the common cases inlined, the rest exact
                    cls = value.__class__
                    if cls is int or cls is spec.float_cls:
                        if value < spec.lo or value > spec.hi:
                            return False
                    elif value is None:
                        if not spec.nullable:
                            return False
                    elif not spec.exact(value):
                        return False
                elif not spec(value):
                    return False
            return True

        return check

    def field(self, schema: dict) -> Predicate | tuple | frozenset | _Num:
        """The check of one property or array item: a tuple of Python types, a frozenset of allowed
        strings (and None) or a :class:`_Num` when that is all the subschema says (tested inline),
        else a predicate."""
        keys = set(schema) - _ANNOTATIONS
        simple: dict[str, type] = {"string": str, "null": type(None), "boolean": bool, "object": dict, "array": list}
        if keys == {"type"}:
            names = [schema["type"]] if isinstance(schema["type"], str) else list(schema["type"])
            if names and all(n in simple for n in names):
                return tuple(simple[n] for n in names)
        if keys == {"enum"} and all(v is None or isinstance(v, str) for v in schema["enum"]):
            return frozenset(schema["enum"])
        if _is_numeric_field(schema):
            return _Num(schema, self.compile(schema))
        return self.compile(schema)


@functools.cache
def fast_validator(name: str) -> Predicate | None:
    """The compiled "is it valid?" predicate of ``schemas/<name>.schema.json``, or None when the
    schema uses a keyword this module does not compile (then use ``jsonschema``).

    Examples
    --------
    >>> ok = fast_validator("trace")
    >>> ok({"schema_version": "1.0", "trace_id": "t", "agent": "a", "question": "q", "steps": []})
    True
    >>> ok({"schema_version": "1.0", "trace_id": "", "agent": "a", "question": "q", "steps": []})
    False
    """
    schema = load_schema(name)
    try:
        return _Compiler(schema).compile(schema)
    except _Unsupported:
        return None
