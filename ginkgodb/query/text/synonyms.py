"""Synonym expansion for `$text` queries (a ginkgodb extension; mongod has none).

Synonyms are documents shaped like Atlas Search's synonym source collections:

    {mappingType: "equivalent", synonyms: ["car", "vehicle", "automobile"]}
    {mappingType: "explicit", input: ["beer"], synonyms: ["beer", "brew", "pint"]}

An equivalent mapping makes every listed word stand for all of them; an explicit one makes each
`input` stand for the `synonyms` (the input itself only if listed there). Entries may be
several words ("sport utility vehicle"): they are tokenized like the query (same language, stop
words dropped, stemmed) and an input matches a run of consecutive positive words of the query.
Expansion is one step: synonyms of synonyms are not followed. The added terms are positive
terms, ORed with the rest like any other; they do not form phrases.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ...errors import CommandError, ErrorCode
from .languages import Language
from .query import TextQuery
from .tokenizer import tokens

_FIELDS = {"_id", "mappingType", "input", "synonyms"}


def _bad(message: str) -> CommandError:
    return CommandError(ErrorCode.BadValue, message)


def _strings(doc: Mapping, name: str, index: object) -> list[str]:
    value = doc.get(name)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise _bad(f"synonym document {index}: '{name}' must be a non-empty array of non-empty strings")
    return value


@dataclass(frozen=True)
class _Mapping:
    inputs: tuple[str, ...]
    synonyms: tuple[str, ...]


class SynonymMap:
    """Validated synonym documents; `expand` finds what a query's words stand for."""

    def __init__(self, documents: Iterable[Mapping]) -> None:
        self._mappings: list[_Mapping] = []
        for position, doc in enumerate(documents):
            if not isinstance(doc, Mapping):
                raise _bad(f"synonym document {position} must be an object")
            # named by its _id when it has one (a stored document), else by its position
            index: object = doc["_id"] if "_id" in doc else position
            unknown = sorted(set(doc) - _FIELDS)
            if unknown:
                raise _bad(f"synonym document {index}: unknown field '{unknown[0]}'")
            kind = doc.get("mappingType")
            synonyms = _strings(doc, "synonyms", index)
            if kind == "equivalent":
                if "input" in doc:
                    raise _bad(f"synonym document {index}: 'input' is only allowed with mappingType 'explicit'")
                inputs = synonyms
            elif kind == "explicit":
                inputs = _strings(doc, "input", index)
            else:
                raise _bad(f"synonym document {index}: mappingType must be 'equivalent' or 'explicit'")
            self._mappings.append(_Mapping(tuple(inputs), tuple(synonyms)))
        self._analyzed: dict[tuple, list[tuple[tuple[str, ...], list[tuple[str, ...]]]]] = {}

    def _rules(self, language: Language, case_sensitive: bool, diacritic_sensitive: bool):
        """(input terms, [synonym terms]) per input, analyzed for one language and options."""
        cache_key = (language.name, case_sensitive, diacritic_sensitive)
        rules = self._analyzed.get(cache_key)
        if rules is None:
            def analyze(s: str, **options) -> tuple[str, ...]:
                return tuple(tokens(s, language, filter_stop_words=True, **options))
            rules = []
            for m in self._mappings:
                targets = [analyze(s, case_sensitive=case_sensitive, diacritic_sensitive=diacritic_sensitive)
                           for s in m.synonyms]
                for source in m.inputs:
                    terms = analyze(source)
                    if terms:
                        rules.append((terms, [t for t in targets if t]))
            self._analyzed[cache_key] = rules
        return rules

    def expand(self, terms: Sequence[str], language: Language, *, case_sensitive: bool = False,
               diacritic_sensitive: bool = False) -> list[str]:
        """The terms `terms` (a query's insensitive positive terms, in order) stand for, beyond
        themselves: each synonym's terms in the requested sensitivity, without repeats."""
        out: list[str] = []
        seen = set()
        for source, targets in self._rules(language, case_sensitive, diacritic_sensitive):
            width = len(source)
            if not any(tuple(terms[i:i + width]) == source for i in range(len(terms) - width + 1)):
                continue
            for target in targets:
                for term in target:
                    if term not in seen:
                        seen.add(term)
                        out.append(term)
        return out


def expand_query(query: TextQuery, synonyms: SynonymMap) -> TextQuery:
    """`query` with the synonyms of its positive words added as positive terms."""
    language = query.language
    words = tokens(query.positive_sentence, language, filter_stop_words=True)
    bounds = synonyms.expand(words, language)
    if query.case_sensitive or query.diacritic_sensitive:
        matched = synonyms.expand(words, language, case_sensitive=query.case_sensitive,
                                  diacritic_sensitive=query.diacritic_sensitive)
    else:
        matched = bounds
    return replace(query, terms_for_bounds=tuple(sorted(set(query.terms_for_bounds) | set(bounds))),
                   positive_terms=query.positive_terms | frozenset(matched))
