"""`$text` queries: the operand's validation, then mongod's parse of `$search`.

`$search` is read as words, `"phrases"` and `-negations`:
- space, LF, VT, FF and CR separate words (a tab does not: it is part of a word, which the
  tokenizer then splits); `"` and `-` are delimiters; there is no escape character, so a literal
  quote is just a quote in the string.
- `-` negates the word or phrase that starts right after it, if whitespace (or the start)
  precedes it; the negation runs until the next whitespace, so `-foo-bar` negates both and
  `-"a b"-"c d"` both phrases. A `-` inside a word (`e-mail`) just separates two positive words.
- A phrase runs from a quote to the next quote; an unclosed phrase is no phrase, but its words
  still count. The words of a positive phrase are positive terms too; those of a negated phrase
  are not terms at all.
Positive and negated words are then tokenized in the query's language (stop words dropped,
stemmed): the case- and diacritic-insensitive positive terms select index entries; with
`$caseSensitive`/`$diacriticSensitive` the matcher compares sensitive forms instead.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...bsonutil.types import type_name
from ...errors import CommandError, ErrorCode
from .languages import Language, get_language
from .tokenizer import tokens

_WHITESPACE = frozenset("\n\v\f\r ")


@dataclass(frozen=True)
class TextParams:
    """The validated `$text` operand."""

    search: str
    language: str = ""            # "" -> the index's default_language
    case_sensitive: bool = False
    diacritic_sensitive: bool = False


def _extract(operand: Mapping, name: str, kind: type, kind_name: str) -> Any:
    if name not in operand:
        return None
    value = operand[name]
    if not isinstance(value, kind) or (kind is str and type_name(value) != "string"):
        raise CommandError(ErrorCode.TypeMismatch, f'"{name}" had the wrong type. Expected {kind_name}, '
                                                   f"found {type_name(value)}")
    return value


def parse_text_operator(operand: Any) -> TextParams:
    """The `$text` operand, with mongod's errors (ExtensionsCallback's checks)."""
    if not isinstance(operand, Mapping):
        raise CommandError(ErrorCode.BadValue, "$text expects an object")
    if "$search" not in operand:
        raise CommandError(ErrorCode.NoSuchKey, 'Missing expected field "$search"')
    search = _extract(operand, "$search", str, "string")
    language = _extract(operand, "$language", str, "string")
    case = _extract(operand, "$caseSensitive", bool, "bool")
    diacritic = _extract(operand, "$diacriticSensitive", bool, "bool")
    expected = 1 + sum(v is not None for v in (language, case, diacritic))
    if len(operand) != expected:
        raise CommandError(ErrorCode.BadValue, "extra fields in $text")
    return TextParams(search, language or "", bool(case), bool(diacritic))


@dataclass(frozen=True)
class TextQuery:
    """A parsed `$text` search, ready to look up and match."""

    params: TextParams
    language: Language
    terms_for_bounds: tuple[str, ...]   # insensitive positive terms, sorted: the index lookups
    positive_terms: frozenset[str]      # what the matcher looks for (sensitive forms if asked)
    negated_terms: frozenset[str]
    phrases: tuple[str, ...]
    negated_phrases: tuple[str, ...]
    positive_sentence: str              # the positive words, space-separated (synonym expansion)

    @property
    def case_sensitive(self) -> bool:
        return self.params.case_sensitive

    @property
    def diacritic_sensitive(self) -> bool:
        return self.params.diacritic_sensitive

    def explain(self) -> dict:
        """explain's `parsedTextQuery`."""
        return {"terms": sorted(self.positive_terms), "negatedTerms": sorted(self.negated_terms),
                "phrases": list(self.phrases), "negatedPhrases": list(self.negated_phrases)}


def _query_tokens(search: str):
    """(kind, text, offset, whitespace before) for each token of `$search` (FTSQueryParser)."""
    n, pos = len(search), 0
    while pos < n and search[pos] in _WHITESPACE:
        pos += 1
    before = True
    while pos < n:
        start = pos
        c = search[pos]
        pos += 1
        if c in '-"':
            kind = "delimiter"
        else:
            kind = "text"
            while pos < n and search[pos] not in _WHITESPACE and search[pos] not in '-"':
                pos += 1
        token = (kind, search[start:pos], start, before)
        ws_start = pos
        while pos < n and search[pos] in _WHITESPACE:
            pos += 1
        before = pos > ws_start
        yield token


def split_search(search: str) -> tuple[str, str, list[str], list[str]]:
    """(positive sentence, negated sentence, phrases, negated phrases) of a `$search` string."""
    positive: list[str] = []
    negative: list[str] = []
    phrases: list[str] = []
    negated_phrases: list[str] = []
    in_negation = in_phrase = False
    quote = 0
    for kind, text, offset, ws_before in _query_tokens(search):
        if kind == "text":
            if in_phrase and in_negation:
                continue
            if in_negation and ws_before:
                in_negation = False
            (negative if in_negation else positive).append(text)
        elif text == "-":
            if not in_phrase and ws_before:
                in_negation = True
        elif in_phrase:
            (negated_phrases if in_negation else phrases).append(search[quote + 1:offset])
            in_phrase = False
        else:
            in_phrase = True
            if in_negation and ws_before:
                in_negation = False
            quote = offset
    return " ".join(positive), " ".join(negative), phrases, negated_phrases


def _terms(sentence: str, language: Language, params: TextParams) -> tuple[list[str], list[str]]:
    """(insensitive terms, the terms the matcher compares) of one sentence."""
    plain = tokens(sentence, language, filter_stop_words=True)
    if not (params.case_sensitive or params.diacritic_sensitive):
        return plain, plain
    return plain, tokens(sentence, language, filter_stop_words=True, case_sensitive=params.case_sensitive,
                         diacritic_sensitive=params.diacritic_sensitive)


def parse_text_query(params: TextParams, default_language: Language) -> TextQuery:
    """Parse `$search` in `$language` (or the index's default language)."""
    language = get_language(params.language) if params.language else default_language
    positive, negative, phrases, negated_phrases = split_search(params.search)
    bounds, matched = _terms(positive, language, params)
    _, negated = _terms(negative, language, params)
    return TextQuery(params, language, tuple(sorted(set(bounds))), frozenset(matched), frozenset(negated),
                     tuple(phrases), tuple(negated_phrases), positive)
