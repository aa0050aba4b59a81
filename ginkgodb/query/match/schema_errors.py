"""Why a document fails a `$jsonSchema`: the `errInfo.details` of a document validation failure,
in mongod 5.0+'s shape (`operatorName: "$jsonSchema"`, `schemaRulesNotSatisfied`).

The schema has already been compiled (jsonschema.py checked it), so this walks the spec itself
and, for each keyword whose restriction the value breaks, reports the keyword's rule
(`operatorName`, `specifiedAs`, `reason`, the considered value), descending into `properties`,
`items`, `additionalProperties` and the logical keywords. Keywords are reported scalar (maximum
before minimum), array, object and logical keywords first and the type restriction last, as
mongod's schema parser orders them.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ginkgodb.bsonutil.compare import compare
from ginkgodb.bsonutil.types import TYPE_ALIASES, TYPE_NAMES

from .element import NUMBER_TYPE_CODES, type_code
from .jsonschema import JSON_TYPES, _as_decimal, _Schema, unordered_equal
from .numbers import is_bson_number
from .regex import compile_pcre
from .values import as_document, is_object


def schema_details(schema: Mapping, doc: Mapping) -> dict:
    """`{operatorName: "$jsonSchema", [title,] [description,] schemaRulesNotSatisfied}`."""
    out: dict[str, Any] = {"operatorName": "$jsonSchema"}
    for key in ("title", "description"):
        if key in schema:
            out[key] = schema[key]
    out["schemaRulesNotSatisfied"] = _failures(schema, doc, root=True)
    return out


def _passes(schema: Mapping, value: Any) -> bool:
    return _Schema(schema, root=False).predicate(value)


def _type_names(value: Any) -> str:
    return TYPE_NAMES.get(type_code(value), "unknown")


def _types(kw: Mapping) -> tuple[str, frozenset[int]] | None:
    for name, aliases in (("type", JSON_TYPES), ("bsonType", TYPE_ALIASES)):
        if name in kw:
            names = kw[name] if isinstance(kw[name], list) else [kw[name]]
            codes: set[int] = set()
            for n in names:
                if n == "number":
                    codes |= NUMBER_TYPE_CODES
                elif n in aliases:
                    codes.add(aliases[n])
            return name, frozenset(codes)
    return None


def _failures(kw: Mapping, value: Any, root: bool) -> list[dict]:
    out: list[dict] = []
    if not root:
        out.extend(_scalar(kw, value))
        out.extend(_array(kw, value))
    if root or is_object(value):
        out.extend(_object(kw, as_document(value)))
    out.extend(_logical(kw, value, root))
    types = _types(kw)
    if types is not None and not root and type_code(value) not in types[1]:
        name = types[0]
        out.append({"operatorName": name, "specifiedAs": {name: kw[name]}, "reason": "type did not match",
                    "consideredValue": value, "consideredType": _type_names(value)})
    return out


def _scalar(kw: Mapping, value: Any) -> list[dict]:
    out: list[dict] = []
    if is_bson_number(value):
        for name, excl_name, ok in (("maximum", "exclusiveMaximum", lambda c, e: c < 0 or (c == 0 and not e)),
                                    ("minimum", "exclusiveMinimum", lambda c, e: c > 0 or (c == 0 and not e))):
            if name not in kw:
                continue
            exclusive = bool(kw.get(excl_name, False))
            bound = kw[name]
            nan = _as_decimal(bound).is_nan() or _as_decimal(value).is_nan()
            if nan or not ok(compare(value, bound), exclusive):
                specified = {name: bound, **({excl_name: kw[excl_name]} if excl_name in kw else {})}
                out.append({"operatorName": name, "specifiedAs": specified, "reason": "comparison failed",
                            "consideredValue": value})
        if "multipleOf" in kw and not _passes({"multipleOf": kw["multipleOf"]}, value):
            out.append({"operatorName": "multipleOf", "specifiedAs": {"multipleOf": kw["multipleOf"]},
                        "reason": "considered value is not a multiple of the specified value",
                        "consideredValue": value})
    if type(value) is str:
        for name, ok in (("maxLength", lambda n: len(value) <= n), ("minLength", lambda n: len(value) >= n)):
            if name in kw and not ok(kw[name]):
                out.append({"operatorName": name, "specifiedAs": {name: kw[name]},
                            "reason": "specified string length was not satisfied", "consideredValue": value})
        if "pattern" in kw and compile_pcre(kw["pattern"], "").search(value) is None:
            out.append({"operatorName": "pattern", "specifiedAs": {"pattern": kw["pattern"]},
                        "reason": "regular expression did not match", "consideredValue": value})
    return out


def _array(kw: Mapping, value: Any) -> list[dict]:
    if type(value) is not list:
        return []
    out: list[dict] = []
    items = kw.get("items")
    start = None
    if isinstance(items, dict):
        for i, item in enumerate(value):
            if not _passes(items, item):
                out.append({"operatorName": "items", "reason": "At least one item did not match the sub-schema",
                            "itemIndex": i, "details": _failures(items, item, root=False)})
                break
    elif isinstance(items, list):
        start = len(items)
        for i, (sub, item) in enumerate(zip(items, value)):
            if not _passes(sub, item):
                out.append({"operatorName": "items", "details": [
                    {"itemIndex": i, "details": _failures(sub, item, root=False)}]})
                break
    if start is not None and "additionalItems" in kw:
        extra = kw["additionalItems"]
        for i, item in enumerate(value[start:], start):
            if extra is False or (isinstance(extra, dict) and not _passes(extra, item)):
                entry: dict[str, Any] = {"operatorName": "additionalItems"}
                if extra is False:
                    entry.update(specifiedAs={"additionalItems": False},
                                 reason="found additional items", additionalItems=value[start:])
                else:
                    entry.update(reason="At least one item did not match the sub-schema", itemIndex=i,
                                 details=_failures(extra, item, root=False))
                out.append(entry)
                break
    for name, ok in (("maxItems", lambda n: len(value) <= n), ("minItems", lambda n: len(value) >= n)):
        if name in kw and not ok(kw[name]):
            out.append({"operatorName": name, "specifiedAs": {name: kw[name]},
                        "reason": "array did not match specified length", "consideredValue": value})
    if kw.get("uniqueItems") is True:
        for j in range(len(value)):
            if any(unordered_equal(value[i], value[j]) for i in range(j)):
                out.append({"operatorName": "uniqueItems", "specifiedAs": {"uniqueItems": True},
                            "reason": "found a duplicate item", "consideredValue": value,
                            "duplicatedValue": value[j]})
                break
    return out


def _object(kw: Mapping, doc: Mapping) -> list[dict]:
    out: list[dict] = []
    properties = kw.get("properties") if isinstance(kw.get("properties"), dict) else {}
    if properties:
        failing = []
        for name, sub in properties.items():
            if name in doc and not _passes(sub, doc[name]):
                entry: dict[str, Any] = {"propertyName": name}
                for key in ("title", "description"):
                    if key in sub:
                        entry[key] = sub[key]
                entry["details"] = _failures(sub, doc[name], root=False)
                failing.append(entry)
        if failing:
            out.append({"operatorName": "properties", "propertiesNotSatisfied": failing})
    if "required" in kw:
        missing = sorted(n for n in kw["required"] if n not in doc)
        if missing:
            out.append({"operatorName": "required", "specifiedAs": {"required": kw["required"]},
                        "missingProperties": missing})
    out.extend(_additional_properties(kw, doc, properties))
    for name, ok in (("maxProperties", lambda n: len(doc) <= n), ("minProperties", lambda n: len(doc) >= n)):
        if name in kw and not ok(kw[name]):
            out.append({"operatorName": name, "specifiedAs": {name: kw[name]},
                        "reason": "specified number of properties was not satisfied",
                        "numberOfProperties": len(doc)})
    if isinstance(kw.get("dependencies"), dict):
        failing_deps = []
        for name, dep in kw["dependencies"].items():
            if name not in doc:
                continue
            if isinstance(dep, list):
                missing = [n for n in dep if n not in doc]
                if missing:
                    failing_deps.append({"conditionalProperty": name, "missingProperties": missing})
            elif not _Schema(dep, root=False).predicate(dict(doc)):
                failing_deps.append({"conditionalProperty": name, "details": _failures(dep, dict(doc), root=False)})
        if failing_deps:
            out.append({"operatorName": "dependencies", "failingDependencies": failing_deps})
    return out


def _additional_properties(kw: Mapping, doc: Mapping, properties: Mapping) -> list[dict]:
    patterns = kw.get("patternProperties") if isinstance(kw.get("patternProperties"), dict) else {}
    compiled = [(p, compile_pcre(p, "").search, sub) for p, sub in patterns.items()]
    out: list[dict] = []
    pattern_failures = []
    others = []
    for name, value in doc.items():
        matched = False
        for pattern, search, sub in compiled:
            if search(name) is not None:
                matched = True
                if not _passes(sub, value):
                    pattern_failures.append({"propertyName": name, "regexMatched": pattern,
                                             "details": _failures(sub, value, root=False)})
        if not matched and name not in properties:
            others.append((name, value))
    if pattern_failures:
        out.append({"operatorName": "patternProperties", "details": pattern_failures})
    additional = kw.get("additionalProperties")
    if additional is False and others:
        out.append({"operatorName": "additionalProperties", "specifiedAs": {"additionalProperties": False},
                    "additionalProperties": [name for name, _ in others]})
    elif isinstance(additional, dict):
        for name, value in others:
            if not _passes(additional, value):
                out.append({"operatorName": "additionalProperties",
                            "reason": "at least one additional property did not match the subschema",
                            "failingProperty": name, "details": _failures(additional, value, root=False)})
                break
    return out


def _logical(kw: Mapping, value: Any, root: bool) -> list[dict]:
    out: list[dict] = []

    def passes(sub: Mapping) -> bool:
        return _Schema(sub, root=root).predicate(value)

    for name in ("allOf", "anyOf", "oneOf"):
        subs = kw.get(name)
        if not isinstance(subs, list):
            continue
        results = [passes(s) for s in subs]
        if name == "oneOf" and results.count(True) > 1:
            out.append({"operatorName": "oneOf", "reason": "more than one subschema matched",
                        "matchingSchemaIndexes": [i for i, ok in enumerate(results) if ok]})
            continue
        if (name == "allOf" and all(results)) or (name != "allOf" and any(results)):
            continue
        out.append({"operatorName": name, "schemasNotSatisfied": [
            {"index": i, "details": _failures(s, value, root)} for i, (s, ok) in enumerate(zip(subs, results))
            if not ok]})
    if isinstance(kw.get("not"), dict) and passes(kw["not"]):
        out.append({"operatorName": "not", "reason": "child expression matched"})
    if isinstance(kw.get("enum"), list):
        values = [v for v in kw["enum"] if is_object(v)] if root else kw["enum"]
        if not any(unordered_equal(value, x) for x in values):
            out.append({"operatorName": "enum", "specifiedAs": {"enum": kw["enum"]},
                        "reason": "value was not found in enum", "consideredValue": value})
    return out
