"""Text index entries and their byte layout (text key format 1, see docs/design/text-index.md).

A document has one entry per distinct term. An entry key is the key codec's encoding of

    prefix values..., term key, score, suffix values...

with the prefix and suffix fields in their index directions and the term and score ascending,
so the entries of one term under one prefix are one contiguous byte range. The engine appends
the record id. The term key is the term itself up to 224 UTF-8 bytes; a longer term keeps its
first 224 bytes (cut at a character boundary) followed by the 32 hex digits of the MD5 of the
whole term, as mongod does, so keys stay short and equal terms still meet.

Prefix and suffix fields take one value each: a missing field is null, and an array anywhere on
the path fails with CannotBuildIndexKeys (a numeric component such as `a.0` may pick an element).
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...bsonutil import keycodec
from ...bsonutil.shell_format import format_document
from ...errors import CommandError
from ..index_keys import EOO
from ..index_keys import get_field_or_eoo as get_field
from .codes import CANNOT_BUILD_INDEX_KEYS
from .scoring import score_document
from .spec import TextIndexSpec

TEXT_KEY_FORMAT_VERSION = 1  # DO NOT CHANGE the layout of format 1: it is persisted
TERM_PREFIX_BYTES = 224


@dataclass(frozen=True, slots=True)
class TextIndexEntry:
    prefix: tuple[Any, ...]
    term: str
    score: float
    suffix: tuple[Any, ...]


def term_key(term: str) -> str:
    """The term as stored: itself, or its first 224 bytes plus the MD5 of the whole term."""
    data = term.encode("utf-8", "surrogatepass")
    if len(data) <= TERM_PREFIX_BYTES:
        return term
    cut = data[:TERM_PREFIX_BYTES].decode("utf-8", "ignore")
    return cut + hashlib.md5(data, usedforsecurity=False).hexdigest()


def extra_value(doc: Mapping, path: str) -> Any:
    """The one value a prefix or suffix field takes in `doc` (None when missing)."""
    current: Any = doc
    for part in path.split("."):
        if isinstance(current, list) and not (part.isdigit() and (part == "0" or part[0] != "0")):
            raise _array_error(path, doc)
        current = get_field(current, part)
        if current is EOO:
            return None
    if isinstance(current, list):
        raise _array_error(path, doc)
    return current


def _array_error(path: str, doc: Mapping) -> CommandError:
    return CommandError(CANNOT_BUILD_INDEX_KEYS,
                        f"Field '{path}' of text index contains an array in document: {format_document(doc)}")


def _extras(spec: TextIndexSpec, doc: Mapping) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return (tuple(extra_value(doc, path) for path, _ in spec.prefix),
            tuple(extra_value(doc, path) for path, _ in spec.suffix))


def index_entries(spec: TextIndexSpec, doc: Mapping) -> list[TextIndexEntry]:
    """The entries `doc` puts in the index, in term order; none for a document without terms."""
    prefix, suffix = _extras(spec, doc)
    scores = score_document(spec, doc)
    return [TextIndexEntry(prefix, term, scores[term], suffix) for term in sorted(scores)]


def _directions(spec: TextIndexSpec) -> list[int]:
    return [d for _, d in spec.prefix] + [1, 1] + [d for _, d in spec.suffix]


def key_prefix(spec: TextIndexSpec, prefix_values: Sequence[Any]) -> bytes:
    """The bytes every entry with these prefix values starts with."""
    return keycodec.encode_key(list(prefix_values), [d for _, d in spec.prefix])


def _key_suffix(spec: TextIndexSpec, suffix_values: Sequence[Any]) -> bytes:
    return keycodec.encode_key(list(suffix_values), [d for _, d in spec.suffix])


def _term_and_score(term: str, score: float) -> bytes:
    return keycodec.encode_value(term_key(term)) + keycodec.encode_value(float(score))


def encode_entry(spec: TextIndexSpec, entry: TextIndexEntry) -> bytes:
    return (key_prefix(spec, entry.prefix) + _term_and_score(entry.term, entry.score)
            + _key_suffix(spec, entry.suffix))


def index_keys(spec: TextIndexSpec, doc: Mapping) -> list[bytes]:
    """The encoded entry keys of `doc` (without record id), sorted."""
    prefix, suffix = _extras(spec, doc)
    scores = score_document(spec, doc)
    if not scores:
        return []
    head, tail = key_prefix(spec, prefix), _key_suffix(spec, suffix)
    return sorted(head + _term_and_score(term, score) + tail for term, score in scores.items())


def decode_entry(spec: TextIndexSpec, key: bytes) -> TextIndexEntry:
    """An entry back from its key (the term key, not a long term's full text)."""
    values = keycodec.decode_key(key, _directions(spec))
    n = len(spec.prefix)
    return TextIndexEntry(tuple(values[:n]), values[n], float(values[n + 1]), tuple(values[n + 2:]))


def entry_score(spec: TextIndexSpec, key: bytes) -> float:
    return decode_entry(spec, key).score


def term_range(spec: TextIndexSpec, term: str, prefix_values: Sequence[Any] = ()) -> tuple[bytes, bytes]:
    """[lo, hi): exactly the entry keys of `term` under these prefix values."""
    lo = key_prefix(spec, prefix_values) + keycodec.encode_value(term_key(term))
    return lo, _successor(lo)


def _successor(prefix: bytes) -> bytes:
    """The smallest byte string above every string that starts with `prefix`."""
    stripped = prefix.rstrip(b"\xff")
    return stripped[:-1] + bytes([stripped[-1] + 1])
