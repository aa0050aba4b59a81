"""$jsonSchema: MongoDB's JSON Schema (draft 4 subset plus bsonType) as predicates on values.

Each keyword restricts only values of the type it is about (`maximum` ignores strings, `items`
ignores non-arrays); `type`/`bsonType`/`enum` restrict every value; `properties` apply only to
fields that are present. A schema compiles to `value -> bool`; the top-level schema is applied
to the whole document, where scalar and array keywords have no effect. Arrays are never
traversed implicitly. Messages and codes follow mongod's JSON Schema parser.
"""
from __future__ import annotations

import decimal
from collections.abc import Callable, Mapping
from typing import Any

from ginkgodb.bsonutil.compare import compare
from ginkgodb.bsonutil.types import TYPE_ALIASES, TYPE_NAMES
from ginkgodb.errors import CommandError, ErrorCode

from .element import NUMBER_TYPE_CODES, type_code
from .numbers import is_bson_number, parse_non_negative_long
from .regex import compile_pcre
from .values import as_document, is_object

Pred = Callable[[Any], bool]

KEYWORDS = frozenset({
    "additionalItems", "additionalProperties", "allOf", "anyOf", "bsonType", "dependencies",
    "description", "encrypt", "encryptMetadata", "enum", "exclusiveMaximum", "exclusiveMinimum",
    "items", "maxItems", "maxLength", "maxProperties", "maximum", "minItems", "minLength",
    "minProperties", "minimum", "multipleOf", "not", "oneOf", "pattern", "patternProperties",
    "properties", "required", "title", "type", "uniqueItems",
})
UNSUPPORTED = frozenset({"$ref", "$schema", "default", "definitions", "format", "id"})
JSON_TYPES = {"array": 4, "boolean": 8, "null": 10, "object": 3, "string": 2}
OBJECT_CODE, ARRAY_CODE = 3, 4


def schema_error(code: ErrorCode, message: str) -> CommandError:
    return CommandError(code, message)


def _type_name(v: Any) -> str:
    return TYPE_NAMES.get(type_code(v), "unknown")


def compile_schema(schema: Mapping) -> Callable[[Mapping], bool]:
    """The top-level schema as a document predicate."""
    return _Schema(schema, root=True).predicate


class _Schema:
    """One (sub)schema; `predicate(value)` is its meaning for a present value."""

    def __init__(self, schema: Mapping, root: bool) -> None:
        self.root = root
        self.kw = _keywords(schema)
        self.checks: list[Pred] = []
        types = self._types()
        if types is not None:
            self.checks.append(lambda v: type_code(v) in types)
        self._scalar_keywords()
        self._array_keywords()
        self._object_keywords()
        self._logical_keywords()
        if root and types is not None and OBJECT_CODE not in types:
            self.checks = [lambda v: False]  # documents are objects: nothing can match
        self.predicate = _all(self.checks)

    # -- type ----------------------------------------------------------------------------------
    def _types(self) -> frozenset[int] | None:
        kw = self.kw
        if "type" in kw and "bsonType" in kw:
            raise schema_error(ErrorCode.FailedToParse,
                               "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'")
        if "encrypt" in kw or "encryptMetadata" in kw:
            raise CommandError(ErrorCode.NotImplemented,
                               "$jsonSchema encryption keywords are not supported by ginkgodb")
        if "type" in kw:
            return _type_set("type", kw["type"], JSON_TYPES)
        if "bsonType" in kw:
            return _type_set("bsonType", kw["bsonType"], TYPE_ALIASES)
        return None

    def _add(self, applies_to: Callable[[Any], bool], check: Pred) -> None:
        """A restriction: `check` must hold for values `applies_to` selects; others pass."""
        if not self.root:
            self.checks.append(lambda v: not applies_to(v) or check(v))

    # -- strings and numbers ----------------------------------------------------------------------
    def _scalar_keywords(self) -> None:
        kw = self.kw
        if "pattern" in kw:
            if type(kw["pattern"]) is not str:
                raise schema_error(ErrorCode.TypeMismatch,
                                   "$jsonSchema keyword 'pattern' must be a string")
            search = compile_pcre(kw["pattern"], "").search
            self._add(_is_str, lambda v: search(v) is not None)
        for name, test in (("maxLength", lambda n, v: len(v) <= n),
                           ("minLength", lambda n, v: len(v) >= n)):
            if name in kw:
                n = parse_non_negative_long(name, kw[name])
                self._add(_is_str, lambda v, n=n, test=test: test(n, v))
        if "multipleOf" in kw:
            self._multiple_of(kw["multipleOf"])
        self._bound("maximum", "exclusiveMaximum", lambda c, excl: c < 0 or (c == 0 and not excl))
        self._bound("minimum", "exclusiveMinimum", lambda c, excl: c > 0 or (c == 0 and not excl))

    def _multiple_of(self, arg: Any) -> None:
        if not is_bson_number(arg):
            raise schema_error(ErrorCode.TypeMismatch,
                               "$jsonSchema keyword 'multipleOf' must be a number")
        divisor = _as_decimal(arg)
        if divisor.is_nan() or divisor <= 0:
            raise schema_error(ErrorCode.FailedToParse,
                               "$jsonSchema keyword 'multipleOf' must have a positive value")

        def is_multiple(v: Any) -> bool:
            d = _as_decimal(v)
            if not d.is_finite():
                return False
            with decimal.localcontext() as ctx:
                ctx.prec = 34
                ctx.traps[decimal.InvalidOperation] = False  # huge quotients give NaN: no match
                return d % divisor == 0

        self._add(is_bson_number, is_multiple)

    def _bound(self, name: str, exclusive_name: str, ok: Callable[[int, bool], bool]) -> None:
        kw = self.kw
        if name not in kw:
            if exclusive_name in kw:
                raise schema_error(ErrorCode.FailedToParse, f"$jsonSchema keyword '{name}' must "
                                   f"be a present if {exclusive_name} is present")
            return
        exclusive = kw.get(exclusive_name, False)
        if type(exclusive) is not bool:
            raise schema_error(ErrorCode.TypeMismatch,
                               f"$jsonSchema keyword '{exclusive_name}' must be a boolean")
        bound = kw[name]
        if not is_bson_number(bound):
            raise schema_error(ErrorCode.TypeMismatch, f"$jsonSchema keyword '{name}' must be a number")
        if _as_decimal(bound).is_nan():
            self._add(is_bson_number, lambda v: False)
            return
        self._add(is_bson_number, lambda v: not _as_decimal(v).is_nan()
                  and ok(compare(v, bound), exclusive))

    # -- arrays ------------------------------------------------------------------------------------
    def _array_keywords(self) -> None:
        kw = self.kw
        for name, test in (("minItems", lambda n, v: len(v) >= n),
                           ("maxItems", lambda n, v: len(v) <= n)):
            if name in kw:
                n = parse_non_negative_long(name, kw[name])
                self._add(_is_array, lambda v, n=n, test=test: test(n, v))
        if "uniqueItems" in kw:
            if type(kw["uniqueItems"]) is not bool:
                raise schema_error(ErrorCode.TypeMismatch,
                                   "$jsonSchema keyword 'uniqueItems' must be a boolean")
            if kw["uniqueItems"]:
                self._add(_is_array, _all_distinct)
        start = self._items()
        if "additionalItems" in kw:
            self._additional_items(kw["additionalItems"], start)

    def _items(self) -> int | None:
        items = self.kw.get("items")
        if items is None:
            return None
        if type(items) is dict:
            each = _Schema(items, root=False).predicate
            self._add(_is_array, lambda v: all(each(x) for x in v))
            return None
        if type(items) is not list:
            raise schema_error(ErrorCode.TypeMismatch, "$jsonSchema keyword 'items' must be an "
                               f"array or an object, not {_type_name(items)}")
        positional = []
        for sub in items:
            if type(sub) is not dict:
                raise schema_error(ErrorCode.TypeMismatch, "$jsonSchema keyword 'items' requires "
                                   "that each element of the array is an object, but found a "
                                   f"{_type_name(sub)}")
            positional.append(_Schema(sub, root=False).predicate)
        self._add(_is_array, lambda v: all(p(x) for p, x in zip(positional, v)))
        return len(positional)

    def _additional_items(self, arg: Any, start: int | None) -> None:
        if type(arg) is bool:
            rest: Pred = (lambda x: True) if arg else (lambda x: False)
        elif type(arg) is dict:
            rest = _Schema(arg, root=False).predicate
        else:
            raise schema_error(ErrorCode.TypeMismatch, "$jsonSchema keyword 'additionalItems' must "
                               f"be either an object or a boolean, but got a {_type_name(arg)}")
        if start is not None:
            self._add(_is_array, lambda v: all(rest(x) for x in v[start:]))

    # -- objects ---------------------------------------------------------------------------------
    def _object_keywords(self) -> None:
        kw = self.kw
        required = _required(kw["required"]) if "required" in kw else ()
        checks: list[Pred] = []
        if "properties" in kw:
            checks.append(_properties(kw["properties"]))
        if "patternProperties" in kw or "additionalProperties" in kw:
            checks.append(_allowed_properties(kw.get("properties"), kw.get("patternProperties"),
                                              kw.get("additionalProperties")))
        if required:
            checks.append(lambda d: all(name in d for name in required))
        for name, test in (("minProperties", lambda n, d: len(d) >= n),
                           ("maxProperties", lambda n, d: len(d) <= n)):
            if name in kw:
                n = parse_non_negative_long(name, kw[name])
                checks.append(lambda d, n=n, test=test: test(n, d))
        if "dependencies" in kw:
            checks.append(_dependencies(kw["dependencies"]))
        if not checks:
            return
        on_document = _all(checks)
        if self.root:
            self.checks.append(lambda doc: on_document(as_document(doc)))
        else:
            self.checks.append(lambda v: not is_object(v) or on_document(as_document(v)))

    # -- logic -----------------------------------------------------------------------------------
    def _logical_keywords(self) -> None:
        kw = self.kw
        for name in ("allOf", "anyOf", "oneOf"):
            if name in kw:
                subs = _schema_list(name, kw[name], self.root)
                if name == "allOf":
                    self.checks.append(lambda v, subs=subs: all(s(v) for s in subs))
                elif name == "anyOf":
                    self.checks.append(lambda v, subs=subs: any(s(v) for s in subs))
                else:
                    self.checks.append(lambda v, subs=subs: sum(1 for s in subs if s(v)) == 1)
        if "not" in kw:
            if type(kw["not"]) is not dict:
                raise schema_error(ErrorCode.TypeMismatch, "$jsonSchema keyword 'not' must be an "
                                   f"object, but found an element of type {_type_name(kw['not'])}")
            negated = _Schema(kw["not"], root=self.root).predicate
            self.checks.append(lambda v: not negated(v))
        if "enum" in kw:
            self.checks.append(_enum(kw["enum"], self.root))


def _keywords(schema: Mapping) -> dict[str, Any]:
    for key in schema:
        if key not in KEYWORDS:
            if key in UNSUPPORTED:
                raise schema_error(ErrorCode.FailedToParse,
                                   f"$jsonSchema keyword '{key}' is not currently supported")
            raise schema_error(ErrorCode.FailedToParse, f"Unknown $jsonSchema keyword: {key}")
    for name in ("description", "title"):
        if name in schema and type(schema[name]) is not str:
            raise schema_error(ErrorCode.TypeMismatch,
                               f"$jsonSchema keyword '{name}' must be of type string")
    return dict(schema)


def _type_set(keyword: str, arg: Any, aliases: Mapping[str, int]) -> frozenset[int]:
    if type(arg) is str:
        names = [arg]
    elif type(arg) is list:
        names = arg
        for name in names:
            if type(name) is not str:
                raise schema_error(ErrorCode.TypeMismatch,
                                   f"$jsonSchema keyword '{keyword}' array elements must be strings")
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise schema_error(ErrorCode.FailedToParse,
                               f"$jsonSchema keyword '{keyword}' has duplicate value: {dup}")
    else:
        raise schema_error(ErrorCode.TypeMismatch, f"$jsonSchema keyword '{keyword}' must be "
                           "either a string or an array of strings")
    codes: set[int] = set()
    for name in names:
        if name == "integer":
            raise schema_error(ErrorCode.FailedToParse,
                               "$jsonSchema type 'integer' is not currently supported.")
        if name == "number":
            codes |= NUMBER_TYPE_CODES
        elif name in aliases:
            codes.add(aliases[name])
        else:
            raise schema_error(ErrorCode.BadValue, f"Unknown type name alias: {name}")
    if not codes:
        raise schema_error(ErrorCode.FailedToParse,
                           f"$jsonSchema keyword '{keyword}' must name at least one type")
    return frozenset(codes)


def _required(arg: Any) -> tuple[str, ...]:
    if type(arg) is not list:
        raise schema_error(ErrorCode.TypeMismatch, "$jsonSchema keyword 'required' must be an "
                           f"array, but found an element of type {_type_name(arg)}")
    for name in arg:
        if type(name) is not str:
            raise schema_error(ErrorCode.TypeMismatch, "$jsonSchema keyword 'required' must be an "
                               f"array of strings, but found an element of type: {_type_name(name)}")
    if not arg:
        raise schema_error(ErrorCode.FailedToParse,
                           "$jsonSchema keyword 'required' cannot be an empty array")
    if len(set(arg)) != len(arg):
        raise schema_error(ErrorCode.FailedToParse,
                           "$jsonSchema keyword 'required' array cannot contain duplicate values")
    return tuple(arg)


def _properties(arg: Any) -> Pred:
    if type(arg) is not dict:
        raise schema_error(ErrorCode.TypeMismatch,
                           "$jsonSchema keyword 'properties' must be an object")
    nested = []
    for name, sub in arg.items():
        if type(sub) is not dict:
            raise schema_error(ErrorCode.TypeMismatch,
                               f"Nested schema for $jsonSchema property '{name}' must be an object")
        nested.append((name, _Schema(sub, root=False).predicate))

    def properties_hold(d: Mapping) -> bool:
        for name, pred in nested:
            if name in d and not pred(d[name]):
                return False
        return True

    return properties_hold


def _allowed_properties(properties: Any, patterns: Any, additional: Any) -> Pred:
    named = frozenset(properties) if type(properties) is dict else frozenset()
    compiled = []
    if patterns is not None:
        if type(patterns) is not dict:
            raise schema_error(ErrorCode.TypeMismatch,
                               "$jsonSchema keyword 'patternProperties' must be an object")
        for pattern, sub in patterns.items():
            if type(sub) is not dict:
                raise schema_error(ErrorCode.TypeMismatch, "$jsonSchema keyword 'patternProperties'"
                                   f" has property '{pattern}' which is not an object")
            compiled.append((compile_pcre(pattern, "").search, _Schema(sub, root=False).predicate))
    if additional is None or additional is True:
        otherwise: Pred = lambda v: True  # noqa: E731
    elif additional is False:
        otherwise = lambda v: False  # noqa: E731
    elif type(additional) is dict:
        otherwise = _Schema(additional, root=False).predicate
    else:
        raise schema_error(ErrorCode.TypeMismatch, "$jsonSchema keyword 'additionalProperties' "
                           "must be an object or a boolean")

    def allowed(d: Mapping) -> bool:
        for name, value in d.items():
            matched = False
            for search, pred in compiled:
                if search(name) is not None:
                    matched = True
                    if not pred(value):
                        return False
            if not matched and name not in named and not otherwise(value):
                return False
        return True

    return allowed


def _dependencies(arg: Any) -> Pred:
    if type(arg) is not dict:
        raise schema_error(ErrorCode.TypeMismatch,
                           "$jsonSchema keyword 'dependencies' must be an object")
    rules: list[tuple[str, Pred]] = []
    for name, dep in arg.items():
        if type(dep) is dict:
            schema = _Schema(dep, root=False).predicate
            rules.append((name, schema))
        elif type(dep) is list:
            rules.append((name, _property_dependency(name, dep)))
        else:
            raise schema_error(ErrorCode.TypeMismatch, f"property '{name}' in $jsonSchema keyword "
                               "'dependencies' must be either an object or an array")
    return lambda d: all(name not in d or rule(d) for name, rule in rules)


def _property_dependency(name: str, names: list) -> Pred:
    if not names:
        raise schema_error(ErrorCode.FailedToParse, f"property '{name}' in $jsonSchema keyword "
                           "'dependencies' cannot be an empty array")
    seen: set[str] = set()
    for other in names:
        if type(other) is not str:
            raise schema_error(ErrorCode.TypeMismatch, f"array '{name}' in $jsonSchema keyword "
                               "'dependencies' can only contain strings, but found element of "
                               f"type: {_type_name(other)}")
        if other in seen:
            raise schema_error(ErrorCode.FailedToParse, f"array '{name}' in $jsonSchema keyword "
                               f"'dependencies' contains duplicate element: {other}")
        seen.add(other)
    needed = tuple(names)
    return lambda d: all(n in d for n in needed)


def _schema_list(name: str, arg: Any, root: bool) -> list[Pred]:
    if type(arg) is not list:
        raise schema_error(ErrorCode.TypeMismatch, f"$jsonSchema keyword '{name}' must be an array")
    if not arg:
        raise schema_error(ErrorCode.BadValue,
                           f"$jsonSchema keyword '{name}' must be a non-empty array")
    subs = []
    for sub in arg:
        if type(sub) is not dict:
            raise schema_error(ErrorCode.TypeMismatch, f"$jsonSchema keyword '{name}' must be an "
                               "array of objects, but found an element of type "
                               f"{_type_name(sub)}")
        subs.append(_Schema(sub, root).predicate)
    return subs


def _enum(arg: Any, root: bool) -> Pred:
    if type(arg) is not list:
        raise schema_error(ErrorCode.TypeMismatch, "$jsonSchema keyword 'enum' must be an array, "
                           f"but found an element of type {_type_name(arg)}")
    if not arg:
        raise schema_error(ErrorCode.FailedToParse,
                           "$jsonSchema keyword 'enum' cannot be an empty array")
    for i, value in enumerate(arg):
        if any(unordered_equal(value, other) for other in arg[:i]):
            raise schema_error(ErrorCode.FailedToParse,
                               "$jsonSchema keyword 'enum' array cannot contain duplicate values.")
    values = [v for v in arg if is_object(v)] if root else list(arg)
    if not values:
        return lambda v: False
    return lambda v: any(unordered_equal(v, x) for x in values)


def unordered_equal(a: Any, b: Any) -> bool:
    """Equality where embedded documents ignore field order (mongod's enum/uniqueItems rule)."""
    if is_object(a) and is_object(b):
        da, db = as_document(a), as_document(b)
        return len(da) == len(db) and all(k in db and unordered_equal(v, db[k])
                                          for k, v in da.items())
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(unordered_equal(x, y) for x, y in zip(a, b))
    return compare(a, b) == 0


def _all_distinct(v: list) -> bool:
    return all(not unordered_equal(v[i], v[j]) for i in range(len(v)) for j in range(i))


def _all(checks: list[Pred]) -> Pred:
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    fs = tuple(checks)
    return lambda v: all(f(v) for f in fs)


def _is_str(v: Any) -> bool:
    return type(v) is str


def _is_array(v: Any) -> bool:
    return type(v) is list


def _as_decimal(v: Any) -> decimal.Decimal:
    """numberDecimal(): doubles are rounded to 15 significant digits, as mongod converts them."""
    if type(v) is float:
        return decimal.Decimal(f"{v:.15g}") if v == v and abs(v) != float("inf") \
            else decimal.Decimal(str(v).replace("inf", "Infinity"))
    if hasattr(v, "to_decimal"):
        return v.to_decimal()
    return decimal.Decimal(int(v))
