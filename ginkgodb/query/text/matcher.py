"""Whether a document matches a `$text` query, and its `textScore` (mongod's FTSMatcher).

A document matches when
- one of the query's positive terms is among its terms (in the document's own language, with
  the query's case and diacritic sensitivity); a query without positive terms matches nothing,
  since its index lookup reads nothing;
- none of the negated terms is;
- every phrase occurs, and no negated phrase occurs, as a substring of one string the index
  reads, both sides folded per the sensitivity options (Turkish strings always fold case).

Its `textScore` is the sum of the index scores of the positive lookup terms it has: the
insensitive terms, whatever the options, as the index stores only those.
"""
from __future__ import annotations

from collections.abc import Mapping

from .folding import fold
from .query import TextQuery
from .scoring import score_document
from .spec import TextIndexSpec
from .tokenizer import tokens
from .walk import text_values


class TextMatcher:
    """One query against one index spec; `matches` and `score` take decoded documents."""

    def __init__(self, spec: TextIndexSpec, query: TextQuery) -> None:
        self.spec, self.query = spec, query
        self._sensitive = query.case_sensitive or query.diacritic_sensitive

    def score(self, doc: Mapping) -> float:
        """The document's textScore (0.0 when it has none of the terms)."""
        scores = score_document(self.spec, doc)
        total = 0.0
        for term in self.query.terms_for_bounds:
            if term in scores:
                total += scores[term]
        return total

    def matches(self, doc: Mapping, *, found_in_index: bool = False) -> bool:
        """Whether `doc` matches. `found_in_index`: the document came from an index lookup of
        the positive terms, so an insensitive query need not look for them again."""
        q = self.query
        if not q.terms_for_bounds:
            return False
        need_positive = not (found_in_index and not self._sensitive)
        check_terms = need_positive or bool(q.negated_terms)
        values = list(text_values(self.spec, doc)) if (check_terms or q.phrases or q.negated_phrases) else []
        if check_terms:
            found_positive = False
            for raw, language, _ in values:
                for term in tokens(raw, language, case_sensitive=q.case_sensitive,
                                   diacritic_sensitive=q.diacritic_sensitive):
                    if term in q.negated_terms:
                        return False
                    if term in q.positive_terms:
                        found_positive = True
            if need_positive and not found_positive:
                return False
        for phrase in q.phrases:
            if not self._phrase_in(phrase, values):
                return False
        for phrase in q.negated_phrases:
            if self._phrase_in(phrase, values):
                return False
        return True

    def match_score(self, doc: Mapping) -> float | None:
        """The textScore of a matching document, None when it does not match."""
        return self.score(doc) if self.matches(doc) else None

    def _phrase_in(self, phrase: str, values) -> bool:
        q = self.query
        for raw, language, _ in values:
            turkish = language.turkish
            case_sensitive = q.case_sensitive and not turkish
            needle = fold(phrase, case_sensitive=case_sensitive, diacritic_sensitive=q.diacritic_sensitive,
                          turkish=turkish)
            haystack = fold(raw, case_sensitive=case_sensitive, diacritic_sensitive=q.diacritic_sensitive,
                            turkish=turkish)
            if needle in haystack and (needle or haystack):
                return True
        return False
