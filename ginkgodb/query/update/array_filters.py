"""arrayFilters: one filter per identifier, matched against each element of an array.

A filter names its identifier as the first component of every path it uses (`{"x.a": 1}`); an
array element matches when the filter matches `{<identifier>: element}`.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ginkgodb.errors import CommandError, ErrorCode

_IDENTIFIER = re.compile(r"[a-z][a-zA-Z0-9]*\Z")
_LOGICAL = ("$and", "$or", "$nor")
_CONTEXT = "Error parsing array filter :: caused by :: "

ElementMatcher = Callable[[Any], bool]


def parse_array_filters(filters: list | None, collation: Any = None) -> dict[str, Any]:
    """identifier -> the filter document; errors as mongod's parseArrayFilters."""
    out: dict[str, Any] = {}
    for spec in filters or ():
        if not isinstance(spec, Mapping):
            raise CommandError(ErrorCode.TypeMismatch, "Each array filter must be an object")
        ident = _identifier(spec)
        if ident is None:
            raise CommandError(ErrorCode.FailedToParse, "Cannot use an expression without a "
                               "top-level field name in arrayFilters")
        if not _IDENTIFIER.match(ident):
            raise CommandError(ErrorCode.BadValue, _CONTEXT + "The top-level field name must be "
                               "an alphanumeric string beginning with a lowercase letter, found "
                               f"'{ident}'")
        if ident in out:
            raise CommandError(ErrorCode.FailedToParse, "Found multiple array filters with the "
                               f"same top-level field name {ident}")
        out[ident] = spec
    return out


def _identifier(spec: Mapping) -> str | None:
    found: str | None = None
    for key, value in spec.items():
        if key in _LOGICAL and isinstance(value, list):
            for clause in value:
                if isinstance(clause, Mapping):
                    found = _merge(found, _identifier(clause))
        elif key.startswith("$"):
            continue
        else:
            found = _merge(found, key.split(".", 1)[0])
    return found


def _merge(found: str | None, ident: str | None) -> str | None:
    if found is None or ident is None or found == ident:
        return found or ident
    raise CommandError(ErrorCode.FailedToParse, _CONTEXT + "Expected a single top-level field "
                       f"name, found '{found}' and '{ident}'")


_BANNED = ("$expr", "$where", "$text")


def check_plain_filter(spec: Any) -> None:
    """Filters inside updates ($pull conditions, arrayFilters) may not use $expr/$where/$text."""
    if not isinstance(spec, Mapping):
        return
    for key, value in spec.items():
        if key in _BANNED:
            raise CommandError(ErrorCode.QueryFeatureNotAllowed,
                               f"{key} is not allowed in this context")
        if key in _LOGICAL and isinstance(value, list):
            for clause in value:
                check_plain_filter(clause)
        elif isinstance(value, Mapping):
            for op in ("$elemMatch", "$not"):
                if op in value:
                    check_plain_filter(value[op])


def compile_array_filters(filters: dict[str, Any], compile_filter: Callable,
                          collation: Any = None) -> dict[str, ElementMatcher]:
    """identifier -> predicate over one array element."""
    out: dict[str, ElementMatcher] = {}
    for ident, spec in filters.items():
        try:
            check_plain_filter(spec)
            matcher = compile_filter(spec, collation=collation) if collation is not None \
                else compile_filter(spec)
        except CommandError as exc:
            raise CommandError(exc.code, _CONTEXT + exc.errmsg) from None
        out[ident] = _element_matcher(ident, matcher)
    return out


def _element_matcher(ident: str, matcher: Callable[[Any], bool]) -> ElementMatcher:
    return lambda element: bool(matcher({ident: element}))
