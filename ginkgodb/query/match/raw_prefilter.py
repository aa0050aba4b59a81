"""A test on a stored document's BSON bytes that rejects, without decoding, documents a filter
cannot match (issue: scans that decode only what may match).

A string, an ObjectId or a date a document equals is encoded in its bytes exactly as the query's
value encodes alone, whether it is a field's value or an array's element, at any depth: a
string is its length, its UTF-8 bytes and a NUL; an ObjectId its 12 bytes; a date its 8-byte
milliseconds. So for an equality (`{f: v}`, `$eq`), an `$in` of such values, an `$all` or an
`$elemMatch` over them, a document whose bytes hold none of the encodings cannot match. The
test is a conjunction of groups, one group per such predicate that every match must satisfy;
a group passes when any of its encodings occurs in the bytes. Predicates it cannot bound
(ranges, negations, `$expr`, `$where`, numbers, whose several types compare equal with
different bytes, documents, arrays, regexes, null, which matches missing fields) add no group:
they are left to the compiled filter, which runs on every document the test passes. The test
never rejects a match; it may pass documents that do not match (the bytes occur elsewhere).

Only filters compared without a collation use it: a collation makes strings equal whose bytes
differ (the compiler's Matcher carries it; a collated matcher has none).
"""
from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping
from typing import Any, Optional

import bson
from bson.datetime_ms import DatetimeMS
from bson.objectid import ObjectId

from .nodes import all_of

RawTest = Callable[[bytes], Any]
#: value types whose equality implies their exact encoding in the document's bytes
_EXACT_TYPES = frozenset({str, ObjectId, datetime.datetime, DatetimeMS})
#: more encodings than this in one group: the test would cost more than it saves
_MAX_NEEDLES = 64


def raw_prefilter(spec: Mapping) -> Optional[RawTest]:
    """The bytes test for a filter, or None when the filter bounds no predicate this way."""
    try:
        groups = _document_groups(spec)
    except Exception:   # a malformed filter: the compiler reports it; no test
        return None
    tests = [_search(group) for group in groups if 0 < len(group) <= _MAX_NEEDLES]
    return all_of(tests) if tests else None


def _search(needles: frozenset[bytes]) -> RawTest:
    """Whether any of the encodings occurs: one compiled search (C), its match or None."""
    return re.compile(b"|".join(re.escape(n) for n in sorted(needles))).search


def _encoding(value: Any) -> Optional[bytes]:
    """A value's BSON encoding without type and name, if equality to it implies those bytes."""
    if type(value) not in _EXACT_TYPES:
        return None
    return bson.encode({"": value})[6:-1]   # int32 size, type, empty name's NUL ... the closing NUL


def _document_groups(spec: Mapping) -> list[frozenset[bytes]]:
    """The groups every document matching a filter document satisfies (an implicit AND)."""
    groups: list[frozenset[bytes]] = []
    for key, value in spec.items():
        if key == "$and" and isinstance(value, list):
            for sub in value:
                if isinstance(sub, Mapping):
                    groups.extend(_document_groups(sub))
        elif key == "$or" and isinstance(value, list) and value:
            either = _either(value)
            if either:
                groups.append(either)
        elif not key.startswith("$"):
            groups.extend(_field_groups(value))
    return groups


def _either(branches: list) -> frozenset[bytes]:
    """An `$or`: a match satisfies every group of one branch, so the union of one group of each
    branch (its smallest) holds; empty when some branch bounds nothing."""
    union: set[bytes] = set()
    for branch in branches:
        groups = _document_groups(branch) if isinstance(branch, Mapping) else []
        if not groups:
            return frozenset()
        union |= min(groups, key=len)
    return frozenset(union)


def _field_groups(value: Any) -> list[frozenset[bytes]]:
    """The groups of one field's condition: a value (equality) or an operator document."""
    if isinstance(value, Mapping):
        if not value or not all(isinstance(k, str) and k.startswith("$") for k in value):
            return []   # equality to a document: numbers inside compare across types
        return _operator_groups(value)
    encoded = _encoding(value)
    return [frozenset((encoded,))] if encoded is not None else []


def _operator_groups(ops: Mapping) -> list[frozenset[bytes]]:
    groups: list[frozenset[bytes]] = []
    for op, arg in ops.items():
        if op == "$eq":
            encoded = _encoding(arg)
            if encoded is not None:
                groups.append(frozenset((encoded,)))
        elif op == "$in" and isinstance(arg, list) and arg:
            encodings = [_encoding(v) for v in arg]
            if all(e is not None for e in encodings):
                groups.append(frozenset(e for e in encodings if e is not None))
        elif op == "$all" and isinstance(arg, list):
            for v in arg:
                encoded = _encoding(v)
                if encoded is not None:
                    groups.append(frozenset((encoded,)))
        elif op == "$elemMatch" and isinstance(arg, Mapping):
            if arg and all(isinstance(k, str) and k.startswith("$") and k not in ("$and", "$or", "$nor")
                           for k in arg):
                groups.extend(_operator_groups(arg))
            else:
                groups.extend(_document_groups(arg))
    return groups


__all__ = ["raw_prefilter"]
