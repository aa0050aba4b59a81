"""Which strings of a document a text index reads, with their language and weight.

mongod's FTSElementIterator, in document order:
- A string is read when its dotted path has a weight, or anywhere with the `$**` wildcard.
- An embedded document is entered when its path is a proper prefix of a weighted path (or with
  the wildcard); an array when its parent is not an array (or with the wildcard). Array
  elements take the array's path.
- Each document entered (the top one included) may name its language in the
  `language_override` field; that language holds for everything under it. With the wildcard,
  fields with that name are not read as text.
- A string's weight is its path's weight; under the wildcard an unweighted path weighs 1
  (mongod before SERVER-45363 gave it the weight of the next weighted path in byte order).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from bson.code import Code
from bson.dbref import DBRef

from ...errors import CommandError
from .codes import LANGUAGE_OVERRIDE_NOT_STRING, LANGUAGE_OVERRIDE_UNSUPPORTED
from .languages import Language, find_language
from .spec import TextIndexSpec

DEFAULT_WEIGHT = 1.0


def _is_string(v: Any) -> bool:
    return isinstance(v, str) and not isinstance(v, Code)


def _as_document(v: Any) -> Mapping | None:
    if isinstance(v, Mapping):
        return v
    if isinstance(v, DBRef):
        return v.as_doc()
    return None


def frame_language(spec: TextIndexSpec, container: Any, inherited: Language) -> Language:
    """The language of a document (or array) entered: its override field, else the parent's."""
    name = spec.language_override
    if isinstance(container, list):
        if not (name.isdigit() and (name == "0" or name[0] != "0")) or int(name) >= len(container):
            return inherited
        value = container[int(name)]
    elif name in container:
        value = container[name]
    else:
        return inherited
    if not _is_string(value):
        raise CommandError(LANGUAGE_OVERRIDE_NOT_STRING,
                           "found language override field in document with non-string type")
    language = find_language(value)
    if language is None:
        raise CommandError(LANGUAGE_OVERRIDE_UNSUPPORTED, f"language override unsupported: {value}")
    return language


def text_values(spec: TextIndexSpec, doc: Mapping) -> Iterator[tuple[str, Language, float]]:
    """(string, language, weight) for every string the index reads in `doc`."""
    language = frame_language(spec, doc, spec.default_language)
    yield from _walk(spec, doc.items(), language, "", False)


def _walk(spec: TextIndexSpec, items, language: Language, parent: str,
          in_array: bool) -> Iterator[tuple[str, Language, float]]:
    wildcard = spec.wildcard
    for name, value in items:
        if wildcard and name == spec.language_override:
            continue
        dotted = name if not parent else (parent if in_array else f"{parent}.{name}")
        sub = _as_document(value)
        found = spec.weight_at(dotted + "." if sub is not None else dotted)
        if not wildcard and (found is None or not (found == dotted or found.startswith(dotted + "."))):
            continue
        exact = found == dotted
        if _is_string(value):
            if exact or wildcard:
                yield value, language, spec.weights[found] if exact else DEFAULT_WEIGHT
        elif sub is not None:
            if not exact or wildcard:
                yield from _walk(spec, sub.items(), frame_language(spec, sub, language), dotted, False)
        elif isinstance(value, list):
            if not in_array or wildcard:
                yield from _walk(spec, ((str(i), v) for i, v in enumerate(value)),
                                 frame_language(spec, value, language), dotted, True)
