"""A one-sided quick check of a JSON document against a schema: Python source generated from the schema.

The check answers True only for documents the schema accepts; False means "not sure",
and the caller then asks the exact check (:mod:`._fastschema`, then ``jsonschema``).
That one-sidedness is what makes it cheap: it accepts only the exact Python types a
JSON parser produces (``type(v) is str``, ``int`` but not ``bool`` nor a float with no
fraction, ``list``, ``dict``) and leaves every rarer spelling of a valid value (a str
subclass, ``1.0`` for an integer, NaN against a bound, a tuple, a ``dict`` subclass)
to the exact check, so the generated code needs no per-node dispatch.

Objects cost the most. Where the schema has an object, the code generated for a document
holds the key sets seen in it (up to ``MAX_INLINED`` per place): a dict of ``n`` keys
whose ``n`` lookups by name succeed has exactly those keys, so it is checked by
straight-line code over its present properties, with no key tuple built and nothing
spent on absent optional ones. Any other dict goes to a function generated for its key
tuple (its first use compiles it, ``d.values()`` unpacked in one step), kept in a cache
bounded per object schema: past ``MAX_KEY_TUPLES``, new key tuples answer False.

A caller can add its own rules over an array's items to the same pass (``each_item``
of :func:`generate`): validate_trace checks the step order there.

Only the keywords of :mod:`._fastschema` are compiled, under stricter conditions
(bounds, ``minLength`` and object or array keywords only beside a ``type``; an object
or array type not mixed with other types; ``oneOf`` only over branches of disjoint JSON
types, where a one-sided "exactly one" is sound). Anything else compiles to None:
callers then skip this check.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

from .._schemas import load_schema

Predicate = Callable[[object], bool]
# After an item's schema checks: (the item's variable, {property: variable holding its value} when the
# item is a dict checked by inlined code, else None) -> statements that return False when the rule fails.
After = Callable[[str, "dict[str, str] | None"], list[str]]
# fresh variable names -> (statements before the loop over the array, the check of each item)
ItemCheck = Callable[[Callable[[], str]], tuple[list[str], After]]
_ANNOTATIONS = frozenset({"description", "title", "$schema", "$id", "$defs", "$comment", "examples", "default"})
_KNOWN = frozenset(
    {"type", "enum", "const", "properties", "required", "additionalProperties", "items", "$ref", "oneOf"}
    | {"minimum", "maximum", "minLength"}
)
_JSON_TYPES = ("null", "boolean", "number", "string", "object", "array")
# Most distinct key tuples kept per object schema: real writers produce a handful each.
MAX_KEY_TUPLES = 256
# Object shapes inlined at one place (the rest go through the cache), and examples looked at to find them.
MAX_INLINED = 8
MAX_EXAMPLES = 64


class Unsupported(Exception):
    """The schema uses a keyword, or a combination, this generator does not compile."""


def _no(d: object) -> bool:
    return False


class _Object:
    """One object schema's checks: per key tuple, generated when first seen (see the module docstring)."""

    def __init__(self, gen: _Generator, schema: dict) -> None:
        self.gen = gen
        self.props: dict[str, dict] = schema.get("properties", {})
        self.required = frozenset(schema.get("required", ()))
        extra = schema.get("additionalProperties", True)
        if extra is not True and extra is not False:
            raise Unsupported("additionalProperties schema")
        self.closed = extra is False
        self.cache: dict[tuple, Predicate] = {}
        self.cache_name = gen.constant(self.cache)
        self.make_name = gen.constant(self.make)

    def allows(self, keys: tuple) -> bool:
        """Whether dicts with these keys can be valid (no unknown key of a closed object, none missing)."""
        return not (self.closed and any(k not in self.props for k in keys)) and self.required.issubset(keys)

    def checks(self, keys: tuple, names: list[str], examples: list[dict]) -> list[str]:
        """The checks of the values ``names`` of keys ``keys`` (of one dict); ``examples`` have these keys."""
        out: list[str] = []
        for name, key in zip(names, keys, strict=True):
            if key in self.props:  # an unknown key of an open object: nothing to check
                out += self.gen.emit(self.props[key], name, [e[key] for e in examples if key in e])
        return out

    def make(self, d: dict) -> Predicate:
        """Compile (and keep, while there is room) the check of dicts with ``d``'s key tuple."""
        keys = tuple(d)
        fn = self.cache.get(keys)
        if fn is not None:
            return fn
        if len(self.cache) >= MAX_KEY_TUPLES:
            return _no
        fn = _no
        if self.allows(keys):
            names = [self.gen.var() for _ in keys]
            unpack = [f"{', '.join(names)}, = _d.values()"] if keys else []  # in key order: keys is d's order
            # With d's shapes inlined; if that nests deeper than Python compiles, without (nested objects
            # then go through their caches); if still too deep, not sure, always.
            for examples in ([d], []):
                try:
                    fn = self.gen.function(unpack + self.checks(keys, names, examples), "_d")
                    break
                except Unsupported:
                    pass
        self.cache[keys] = fn
        return fn

    def emit(self, v: str, examples: list, after: After | None) -> list[str]:
        """Statements checking ``v`` (known to be a dict): the key sets of the examples inlined (see the
        module docstring), any other dict through the cache; then ``after``'s."""
        shapes: dict[frozenset, tuple[tuple, list[dict]]] = {}
        for e in examples:
            if type(e) is dict and all(type(k) is str for k in e):
                keyset = frozenset(e)
                if keyset in shapes or (len(shapes) < MAX_INLINED and self.allows(tuple(e))):
                    shapes.setdefault(keyset, (tuple(e), []))[1].append(e)
        fallback = [f"if not ({self.cache_name}.get(tuple({v})) or {self.make_name}({v}))({v}): return False"]
        fallback += after(v, None) if after else []
        if not shapes:
            return fallback
        n = self.gen.var()
        out = [f"{n} = len({v})"]
        for i, (keyset, (keys, same)) in enumerate(shapes.items()):
            # a key in this shape and not in the other of the same size, for each: the likely shape is tried
            others = [o for o in shapes if o != keyset and len(o) == len(keyset)]
            tells = sorted({min(keyset - o) for o in others})
            test = " and ".join([f"{n} == {len(keyset)}", *(f"{k!r} in {v}" for k in tells)])
            names = [self.gen.var() for _ in keys]
            lookups = [f"{name} = {v}[{key!r}]" for name, key in zip(names, keys, strict=True)]
            body = self.checks(keys, names, same[:MAX_EXAMPLES])
            body += after(v, dict(zip(keys, names, strict=True))) if after else []
            out += [f"{'if' if i == 0 else 'elif'} {test}:", "    try:", *_indent(lookups, 2)]
            out += ["    except KeyError:", *_indent(fallback, 2), "    else:", *_indent(body, 2)]
        return out + ["else:", *_indent(fallback, 1)]


def _indent(lines: list[str], depth: int) -> list[str]:
    return ["    " * depth + line for line in lines or ["pass"]]


class _Generator:
    def __init__(self, root: dict, each_item: dict[int, ItemCheck] | None = None) -> None:
        self.root = root
        self.each_item = each_item or {}
        self.ns: dict[str, Any] = {}
        self.counter = 0
        self.expanding: set[str] = set()
        self.objects: dict[int, _Object] = {}  # by id() of the object schema, wherever it is used

    def constant(self, value: object) -> str:
        """An expression for ``value``: a literal when Python spells it exactly (folded into the code), else
        a name in the generated code's namespace."""
        if type(value) is int or type(value) is str or (type(value) is float and value - value == 0):
            return repr(value)
        if type(value) is frozenset and all(type(x) is str for x in value) and value:
            return "{" + ", ".join(repr(x) for x in sorted(value)) + "}"  # `x in {...}`: a frozenset constant
        if type(value) is tuple and all(type(x) is str for x in value):
            return repr(value)
        self.counter += 1
        name = f"_K{self.counter}"
        self.ns[name] = value
        return name

    def var(self) -> str:
        self.counter += 1
        return f"_v{self.counter}"

    def function(self, body: list[str], arg: str) -> Predicate:
        """Compile ``def f(arg): <body>; return True`` in the shared namespace."""
        src = "\n".join([f"def _f({arg}):", *("    " + line for line in body), "    return True"])
        scope: dict[str, Any] = {}
        try:
            code = compile(src, "<seekbench schema check>", "exec")
        except (SyntaxError, RecursionError) as e:  # "too many statically nested blocks", and the like
            raise Unsupported(f"generated code Python does not compile: {e}") from e
        exec(code, self.ns, scope)
        return scope["_f"]

    def emit_then(self, schema: object, v: str, examples: list, after: After) -> list[str]:
        """:meth:`emit`, then ``after``'s statements (inside the inlined shapes when ``schema`` is one object
        schema, or a ``$ref`` to one, so they can use the variables holding its properties)."""
        target = schema
        if isinstance(schema, dict) and set(schema) - _ANNOTATIONS == {"$ref"}:
            target = self.root.get("$defs", {}).get(schema["$ref"][len("#/$defs/") :])
        out = self.emit(schema, v, examples)  # also refuses what cannot be generated
        obj = self.objects.get(id(target))
        # ``target`` is the object schema of ``obj``, which has only object keywords (container() refuses
        # others), and ``schema`` is it or a lone $ref to it: the same checks, with ``after`` inside
        if obj is not None:
            return [f"if type({v}) is not dict: return False", *obj.emit(v, examples, after)]
        return out + after(v, None)

    def emit(self, schema: object, v: str, examples: list | None = None) -> list[str]:
        """Statements that ``return False`` unless ``v`` (a variable) is accepted; they return False for
        some valid values, never pass an invalid one. ``examples``: values seen there, whose object
        shapes are worth inlining."""
        examples = examples or []
        if schema is True:
            return []
        if not isinstance(schema, dict):
            raise Unsupported(f"schema {schema!r}")
        keys = set(schema) - _ANNOTATIONS
        if keys - _KNOWN:
            raise Unsupported(", ".join(sorted(keys - _KNOWN)))
        out: list[str] = []
        if "$ref" in schema:
            out += self.ref(schema["$ref"], v, examples)
        if "type" in schema:
            out += self.typed(schema, keys, v, examples)
        elif keys & {"minimum", "maximum", "minLength", "properties", "required", "additionalProperties", "items"}:
            raise Unsupported("a type-specific keyword without a type")
        if "enum" in schema:
            values = schema["enum"]
            if not all(x is None or isinstance(x, str) for x in values):
                raise Unsupported("enum of non-strings")
            strings = self.constant(frozenset(x for x in values if x is not None))
            null = f"{v} is None or " if None in values else ""
            out.append(f"if not ({null}(type({v}) is str and {v} in {strings})): return False")
        if "const" in schema:
            if not isinstance(schema["const"], str):
                raise Unsupported("const of a non-string")
            out.append(f"if type({v}) is not str or {v} != {self.constant(schema['const'])}: return False")
        if "oneOf" in schema:
            out += self.one_of(schema["oneOf"], v)
        return out

    def ref(self, ref: str, v: str, examples: list) -> list[str]:
        name = ref[len("#/$defs/") :]
        if not ref.startswith("#/$defs/") or "/" in name or name not in self.root.get("$defs", {}):
            raise Unsupported(f"$ref {ref!r}")
        if name in self.expanding:
            raise Unsupported(f"recursive $ref {ref!r}")
        self.expanding.add(name)
        try:
            return self.emit(self.root["$defs"][name], v, examples)
        finally:
            self.expanding.discard(name)

    def typed(self, schema: dict, keys: set[str], v: str, examples: list) -> list[str]:
        names = [schema["type"]] if isinstance(schema["type"], str) else list(schema["type"])
        if not names or any(n not in (*_JSON_TYPES, "integer") for n in names):
            raise Unsupported(f"type {names!r}")
        if {"object", "array"} & set(names):
            if len(names) > 1:
                raise Unsupported("an object or array type mixed with others")
            return self.container(schema, names[0], v, examples)
        if keys & {"properties", "required", "additionalProperties", "items"}:
            raise Unsupported("object or array keywords on a scalar type")
        bounds = ""
        for key, op in (("minimum", ">="), ("maximum", "<=")):
            if key in schema:
                if type(schema[key]) not in (int, float):
                    raise Unsupported(f"{key} {schema[key]!r}")
                bounds += f" and {v} {op} {self.constant(schema[key])}"
        length = f" and len({v}) >= {self.constant(schema['minLength'])}" if "minLength" in schema else ""
        tests = {
            "null": f"{v} is None",
            "boolean": f"type({v}) is bool",
            "string": f"(type({v}) is str{length})",
            "integer": f"(type({v}) is int{bounds})",
            # NaN fails both bounds here (jsonschema accepts it): one-sided, so allowed.
            "number": f"((type({v}) is int or type({v}) is float){bounds})",
        }
        if "number" in names and "integer" in names:
            names.remove("integer")
        return [f"if not ({' or '.join(tests[n] for n in names)}): return False"]

    def container(self, schema: dict, kind: str, v: str, examples: list) -> list[str]:
        if kind == "array":
            if set(schema) - _ANNOTATIONS - {"type", "items"}:
                raise Unsupported("array keywords other than items")
            out = [f"if type({v}) is not list: return False"]
            item = self.var()
            seen = list(itertools.islice((x for e in examples if type(e) is list for x in e), MAX_EXAMPLES))
            items = schema.get("items", True)
            if id(schema) in self.each_item:  # the caller's rule over the items, after each item's checks
                before, after = self.each_item[id(schema)](self.var)
                out += before
                inner = self.emit_then(items, item, seen, after)
            else:
                inner = self.emit(items, item, seen)
            if inner:
                out += [f"for {item} in {v}:", *("    " + line for line in inner)]
            return out
        if set(schema) - _ANNOTATIONS - {"type", "properties", "required", "additionalProperties"}:
            raise Unsupported("object keywords other than properties, required, additionalProperties")
        out = [f"if type({v}) is not dict: return False"]
        if {"properties", "required"} & set(schema) or schema.get("additionalProperties", True) is not True:
            obj = self.objects.get(id(schema))
            if obj is None:  # one key-tuple cache per object schema, wherever it is used
                obj = self.objects[id(schema)] = _Object(self, schema)
                # the properties' checks now, so an unsupported keyword shows when the schema is compiled
                for prop in obj.props.values():
                    self.emit(prop, self.var())
            out += obj.emit(v, examples, None)
        return out

    def one_of(self, branches: list, v: str) -> list[str]:
        kinds = [self.json_types(b) for b in branches]
        if sum(len(k) for k in kinds) != len(set().union(*kinds)):
            raise Unsupported("oneOf over branches that may overlap")
        # The branches' JSON types are disjoint, so at most one can accept: "one accepts" is "exactly one".
        tests = [self.constant(self.function(self.emit(b, "_x"), "_x")) for b in branches]
        return [f"if not ({' or '.join(f'{t}({v})' for t in tests)}): return False"]

    def json_types(self, schema: object) -> set[str]:
        """The JSON types a schema can accept (all of them when it does not say)."""
        if not isinstance(schema, dict):
            return set(_JSON_TYPES)
        if "type" in schema:
            names = {schema["type"]} if isinstance(schema["type"], str) else set(schema["type"])
            return {"number" if n == "integer" else n for n in names}
        if "enum" in schema and all(x is None or isinstance(x, str) for x in schema["enum"]):
            return {"null" if x is None else "string" for x in schema["enum"]}
        if isinstance(schema.get("const"), str):
            return {"string"}
        if "$ref" in schema and set(schema) - _ANNOTATIONS == {"$ref"}:
            name = schema["$ref"][len("#/$defs/") :]
            if name not in self.expanding and name in self.root.get("$defs", {}):
                self.expanding.add(name)
                try:
                    return self.json_types(self.root["$defs"][name])
                finally:
                    self.expanding.discard(name)
        return set(_JSON_TYPES)


def generate(schema: dict, *, each_item: dict[int, ItemCheck] | None = None) -> Predicate:
    """The quick check of ``schema``; raises :class:`Unsupported` when it cannot be generated.

    ``each_item`` adds a caller's rule to the check of an array: keyed by ``id()`` of the array's
    subschema (an object inside ``schema``), an :data:`ItemCheck`: given a source of fresh variable
    names, it returns the statements to run before the loop over the items, and a function giving the
    statements to run on an item once its schema checks passed (they ``return False`` when the rule
    fails); that function gets the item's variable and, where the item is a dict checked by inlined
    code, the variables holding its properties (else None: it looks them up).
    """
    gen = _Generator(schema, each_item)
    return gen.function(gen.emit(schema, "_root"), "_root")


@functools.cache
def quick_validator(name: str) -> Predicate | None:
    """The quick check of ``schemas/<name>.schema.json`` (True only for valid documents), or None
    when the schema uses something this module does not generate.

    Examples
    --------
    >>> ok = quick_validator("trace")
    >>> ok({"schema_version": "1.0", "trace_id": "t", "agent": "a", "question": "q", "steps": []})
    True
    >>> ok({"schema_version": "1.0", "trace_id": "", "agent": "a", "question": "q", "steps": []})
    False
    """
    try:
        return generate(load_schema(name))
    except Unsupported:
        return None
