"""Collations: string comparison by language rules (case and accent sensitivity, numeric order).

A `Collation` maps every string to a *collation key*, another string whose plain code-point order
is the collation's order, and which is equal for strings the collation deems equal. Applying the
key to both sides of a comparison (query values, document values, sort keys, index keys) gives
collation-aware results from code that only knows the simple order.

The keys follow the levels of the Unicode Collation Algorithm (primary: base letters; secondary:
accents; tertiary: case) over the root order, without per-locale tailoring: see
docs/compatibility.md.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any, Optional

from ..errors import CommandError, ErrorCode

_FIELDS = {"locale": str, "caseLevel": bool, "caseFirst": str, "strength": int, "numericOrdering": bool,
           "alternate": str, "maxVariable": str, "normalization": bool, "backwards": bool, "version": str}
_SEP = "\x00"  # below every character a key level uses, so a shorter level sorts first
_DIGITS = re.compile(r"\d+")
_VARIABLE = re.compile(r"[\s\W_]+", re.UNICODE)


class Collation:
    """A validated, non-simple collation (see `from_spec`)."""

    def __init__(self, spec: dict) -> None:
        self.spec = spec
        self.strength = spec.get("strength", 3)
        self.case_level = spec.get("caseLevel", False)
        self.case_first = spec.get("caseFirst", "off")
        self.numeric = spec.get("numericOrdering", False)
        self.shifted = spec.get("alternate", "non-ignorable") == "shifted"
        self._cache: dict[str, str] = {}

    def key(self, s: str) -> str:
        k = self._cache.get(s)
        if k is None:
            k = self._key(s)
            if len(self._cache) < 100_000:
                self._cache[s] = k
        return k

    def _key(self, s: str) -> str:
        if self.shifted and self.strength <= 3:
            s = _VARIABLE.sub("", s)
        if self.numeric:
            s = _DIGITS.sub(lambda m: _numeric(m.group()), s)
        decomposed = unicodedata.normalize("NFD", s)
        base = "".join(c for c in decomposed if not unicodedata.combining(c))
        primary = base.casefold()
        levels = [primary]
        if self.strength >= 2:
            levels.append("".join(c if unicodedata.combining(c) else "\x01" for c in decomposed))
        if self.strength >= 3 or self.case_level:
            levels.append(_case_level(base, self.case_first))
        if self.strength >= 4:
            levels.append(s)
        return _SEP.join(levels)

    def transform(self, value: Any) -> Any:
        """`value` with every string (inside documents and arrays too) replaced by its key."""
        if type(value) is str:
            return self.key(value)
        if isinstance(value, dict):
            return {k: self.transform(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.transform(v) for v in value]
        return value

    def transform_query(self, value: Any) -> Any:
        """Like `transform` for a filter: operands of $regex stay as written (mongod's regex
        matching ignores the collation)."""
        if type(value) is str:
            return self.key(value)
        if isinstance(value, dict):
            return {k: (v if k in ("$regex", "$options", "$type", "$exists", "$where") else
                        self.transform_query(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.transform_query(v) for v in value]
        return value


def _numeric(digits: str) -> str:
    stripped = digits.lstrip("0") or "0"
    return chr(0x30 + min(len(stripped), 0xFFFF - 0x30)) + stripped


def _case_level(base: str, case_first: str) -> str:
    upper_first = case_first == "upper"
    out = []
    for c in base:
        if c.isupper():
            out.append("\x02" if not upper_first else "\x01")
        else:
            out.append("\x01" if not upper_first else "\x02")
    return "".join(out)


def from_spec(spec: Any) -> Optional[Collation]:
    """A Collation for a `collation` document; None for none or `{locale: "simple"}`.

    Raises mongod's errors for malformed specs."""
    if spec is None:
        return None
    if not isinstance(spec, Mapping):
        raise CommandError(ErrorCode.TypeMismatch, "collation must be an object")
    if not spec:
        return None
    for field, value in spec.items():
        expected = _FIELDS.get(field)
        if expected is None:
            raise CommandError(ErrorCode.IDLUnknownField, f"BSON field 'collation.{field}' is an unknown field.")
        if expected is int and isinstance(value, (int, float)) and not isinstance(value, bool):
            continue
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise CommandError(ErrorCode.TypeMismatch,
                               f"BSON field 'collation.{field}' is the wrong type")
    if "locale" not in spec:
        raise CommandError(ErrorCode.IDLFailedToParse,
                           "BSON field 'collation.locale' is missing but a required field")
    if spec["locale"] == "simple":
        if len(spec) > 1:
            raise CommandError(ErrorCode.BadValue, "If locale=simple, no other fields may be specified")
        return None
    strength = spec.get("strength", 3)
    if strength not in (1, 2, 3, 4, 5):
        raise CommandError(ErrorCode.BadValue, f"collation strength must be an integer from 1 to 5, got {strength}")
    if spec.get("caseFirst", "off") not in ("upper", "lower", "off"):
        raise CommandError(ErrorCode.FailedToParse, f"unknown caseFirst value: {spec['caseFirst']}")
    if spec.get("alternate", "non-ignorable") not in ("non-ignorable", "shifted"):
        raise CommandError(ErrorCode.FailedToParse, f"unknown alternate value: {spec['alternate']}")
    return Collation(dict(spec))


def same(a: Optional[Collation], b: Optional[Collation]) -> bool:
    """Whether two collations order strings identically (an index serves only its own)."""
    if a is None or b is None:
        return a is b
    return a.spec == b.spec
