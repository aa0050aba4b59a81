"""Text index specifications: what createIndexes stores, and the parsed form that indexes.

`normalize_text_index_spec` is mongod's FTSSpec::fixSpec for textIndexVersion 3: the text
fields of the key pattern collapse into `_fts: "text", _ftsx: 1` between the prefix and suffix
fields, and the stored spec gains `weights` (every text field at 1 unless `weights` says
otherwise, sorted by field name, as int32), `default_language` ("english"),
`language_override` ("language") and `textIndexVersion: 3`. That stored spec is also what
listIndexes shows. `TextIndexSpec` is the parsed stored spec that keys, scores and matches
documents.

Versions 1 and 2 (the legacy tokenizers) are refused with NotImplemented rather than built with
version 3's rules.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bson.decimal128 import Decimal128
from bson.int64 import Int64

from ...errors import CommandError, ErrorCode
from .codes import UNRECOGNIZED_INDEX_LANGUAGE
from .languages import TEXT_INDEX_VERSION, Language, find_language

TEXT = "text"
WILDCARD = "$**"
DEFAULT_LANGUAGE = "english"
DEFAULT_LANGUAGE_OVERRIDE = "language"
MAX_WORD_WEIGHT = 100000  # mongod: MAX_WEIGHT (1e9) / 10000; weights lie in (0, MAX_WORD_WEIGHT)
_INT_MIN = -(2 ** 31)


def is_text_key(key: Mapping) -> bool:
    """Whether a key pattern belongs to a text index (mongod picks the plugin from it)."""
    return any(v == TEXT for v in key.values() if isinstance(v, str))


def _fail(message: str) -> CommandError:
    return CommandError(ErrorCode.CannotCreateIndex, message)


def number_int(v: Any) -> int:
    """BSONElement::numberInt(): int32 truncation of a number, 0 for anything else."""
    if isinstance(v, bool) or not isinstance(v, (int, float, Decimal128)):
        return 0
    if isinstance(v, Decimal128):
        d = v.to_decimal()
        if not d.is_finite():
            return _INT_MIN
        v = int(d.to_integral_value())  # round half to even, as Decimal128::toInt
        return v if -2 ** 31 <= v < 2 ** 31 else _INT_MIN
    if isinstance(v, float):
        if math.isnan(v) or not -2 ** 31 <= v < 2 ** 31:
            return _INT_MIN  # the x86 conversion's "integer indefinite"
        return int(v)
    v = int(v) & 0xFFFFFFFF  # int32 passes through, int64 wraps
    return v - 2 ** 32 if v >= 2 ** 31 else v


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, Int64, Decimal128)) and not isinstance(v, bool)


def _valid_override(name: str) -> bool:
    return bool(name) and not name.startswith("$") and "." not in name


def _check_layout(key: Mapping) -> None:
    """Prefix fields, then the text fields (or _fts, _ftsx), then suffix fields."""
    items = list(key.items())
    reserved = _fail("text index with reserved fields _fts/_ftsx not allowed")
    i = 0
    while not isinstance(items[i][1], str):
        if items[i][0] in ("_fts", "_ftsx"):
            raise reserved
        i += 1
        if i == len(items):
            raise _fail("expected additional fields in text index key pattern")
    if items[i][0] == "_fts":
        if i + 1 == len(items) or items[i + 1][0] != "_ftsx":
            raise _fail("expected _ftsx after _fts")
        i += 2
    else:
        while i < len(items) and isinstance(items[i][1], str):
            if items[i][0] in ("_fts", "_ftsx"):
                raise reserved
            i += 1
    for name, value in items[i:]:
        if isinstance(value, str):
            raise _fail("'text' fields in index must all be adjacent")
        if name in ("_fts", "_ftsx"):
            raise reserved


def _fixed_key(key: Mapping, weights: dict[str, int]) -> dict:
    fixed: dict[str, Any] = {}
    added = False
    for name, value in key.items():
        if name == "_fts":
            if value != TEXT:
                raise _fail('expecting _fts:"text"')
            added = True
            fixed[name] = value
        elif name == "_ftsx":
            if number_int(value) != 1:
                raise _fail("expecting _ftsx:1")
            fixed[name] = value
        elif value == TEXT:
            if not added:
                fixed["_fts"], fixed["_ftsx"] = TEXT, 1
                added = True
            weights[name] = 1
        else:
            if number_int(value) not in (1, -1):
                raise _fail("expected value 1 or -1 for non-text key in compound index")
            fixed[name] = value
    return fixed


def _check_weight_path(name: str) -> None:
    if name == WILDCARD:
        return
    parts = name.split(".")
    if name == "":
        raise _fail("weight cannot be on an empty field")
    for part in parts:
        if not part:
            raise _fail("weight cannot have empty path component")
        if part.startswith("$"):
            raise _fail("weight cannot have path component with $ prefix")


def normalize_text_index_spec(spec: Mapping) -> dict:
    """The spec mongod stores for a createIndexes entry whose key has "text" fields.

    Field order follows the entry, with `weights`, `default_language` and `language_override`
    added after the given fields when absent, then `v` and `textIndexVersion`.
    """
    if number_int(spec.get("textIndexVersion")) == 1:
        raise CommandError(ErrorCode.NotImplemented, "textIndexVersion 1 is not supported; use 3")
    key = spec["key"]
    weights: dict[str, int] = {}
    fixed_key = _fixed_key(key, weights)
    _check_layout(key)

    given = spec.get("weights", _ABSENT)
    if isinstance(given, Mapping):
        for name, value in given.items():
            if not _is_number(value):
                raise _fail("weight for text index needs numeric type")
            weights[name] = number_int(value)
    elif given == WILDCARD:
        weights[WILDCARD] = 1
    elif given is not _ABSENT:
        raise _fail("text index option 'weights' must be an object")
    if not weights:
        raise _fail("text index option 'weights' must specify fields or the wildcard")
    sorted_weights = {}
    for name in sorted(weights):
        value = weights[name]
        if value <= 0 or value >= MAX_WORD_WEIGHT:
            raise _fail(f"text index weight must be in the exclusive interval (0,{MAX_WORD_WEIGHT}) "
                        f"but found: {value}")
        _check_weight_path(name)
        sorted_weights[name] = value

    language = spec.get("default_language", _ABSENT)
    if language is _ABSENT:
        language = DEFAULT_LANGUAGE
    elif not isinstance(language, str):
        raise _fail("default_language needs a string type")
    if find_language(language) is None:
        raise _fail("default_language is not valid")

    override = spec.get("language_override", _ABSENT)
    if override is _ABSENT:
        override = DEFAULT_LANGUAGE_OVERRIDE
    elif not isinstance(override, str):
        raise _fail("language_override must be a string")
    elif not _valid_override(override):
        raise _fail("language_override is not valid")

    out: dict[str, Any] = {}
    pending = {"weights": sorted_weights, "default_language": language, "language_override": override}
    version: int | None = None
    text_version = TEXT_INDEX_VERSION
    for name, value in spec.items():
        if name == "key":
            out["key"] = fixed_key
        elif name in pending:
            out[name] = pending.pop(name)
        elif name == "v":
            version = number_int(value)
        elif name == "textIndexVersion":
            if not _is_number(value):
                raise _fail("text index option 'textIndexVersion' must be a number")
            text_version = number_int(value)
            if text_version == 2:
                raise CommandError(ErrorCode.NotImplemented, "textIndexVersion 2 is not supported; use 3")
            if text_version != TEXT_INDEX_VERSION:
                raise _fail(f"bad textIndexVersion: {text_version}")
        else:
            out[name] = value
    out.update(pending)
    if version is not None and version >= 0:
        out["v"] = version
    out["textIndexVersion"] = text_version
    return out


def list_indexes_entry(stored: Mapping, v: int = 2) -> dict:
    """The stored spec as listIndexes shows it: v, key and name first."""
    out: dict[str, Any] = {"v": stored.get("v", v), "key": stored["key"]}
    if "name" in stored:
        out["name"] = stored["name"]
    for name, value in stored.items():
        if name not in out:
            out[name] = value
    return out


class _Absent:
    pass


_ABSENT = _Absent()


@dataclass(frozen=True, eq=False)
class TextIndexSpec:
    """A stored text index spec, parsed (mongod's FTSSpec)."""

    weight_names: tuple[str, ...]        # sorted field paths with a weight (not "$**")
    weights: Mapping[str, float]
    wildcard: bool
    default_language: Language
    language_override: str
    prefix: tuple[tuple[str, int], ...]  # (field, direction) before _fts
    suffix: tuple[tuple[str, int], ...]  # (field, direction) after _ftsx

    @classmethod
    def from_stored(cls, stored: Mapping) -> TextIndexSpec:
        weights = {name: float(value) for name, value in stored["weights"].items() if name != WILDCARD}
        names = tuple(sorted(weights))
        language = find_language(stored.get("default_language", DEFAULT_LANGUAGE))
        if language is None:
            raise CommandError(UNRECOGNIZED_INDEX_LANGUAGE,
                               f"Unrecognized language {stored['default_language']} found for text index. "
                               "Verify mongod was started with the correct options.")
        prefix: list[tuple[str, int]] = []
        suffix: list[tuple[str, int]] = []
        side = prefix
        for name, value in stored["key"].items():
            if name in ("_fts", "_ftsx"):
                side = suffix
                continue
            side.append((name, -1 if number_int(value) < 0 else 1))
        return cls(names, weights, WILDCARD in stored["weights"], language,
                   stored.get("language_override", DEFAULT_LANGUAGE_OVERRIDE), tuple(prefix), tuple(suffix))

    def weight_at(self, key: str) -> str | None:
        """The first weighted path at or after `key` (std::map::lower_bound; code point order
        is UTF-8 byte order)."""
        names = self.weight_names
        i = bisect_left(names, key)
        return names[i] if i < len(names) else None
