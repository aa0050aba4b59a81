"""The score of each term of a document, as mongod's FTSSpec::scoreDocument computes it.

For every string the index reads (see `walk`), with n its number of terms once stop words are
dropped, each distinct term t occurring c times adds to t's score

    weight * freq * coeff * adjustment
    freq       = 1 + 1/2 + ... + 1/2^(c-1)       (repeats count less and less)
    coeff      = 0.5 * c / n + 0.5                (a term that is most of a short string counts more)
    adjustment = 1.1 if the whole string is the term (same bytes, ASCII case aside), else 1

Scores of the same term from several strings (fields, array elements) add up. A document's
`textScore` for a query is the sum of the scores of the query's terms (see `matcher`).
The arithmetic is done in the same order as mongod's, in doubles, so scores agree bit for bit.
"""
from __future__ import annotations

from collections.abc import Mapping

from .languages import Language
from .spec import TextIndexSpec
from .tokenizer import tokens
from .walk import text_values


def score_string(raw: str, language: Language, weight: float, scores: dict[str, float]) -> None:
    """Add the scores of the terms of one string to `scores`."""
    terms = tokens(raw, language, filter_stop_words=True)
    if not terms:
        return
    counts: dict[str, int] = {}
    for term in terms:
        counts[term] = counts.get(term, 0) + 1
    n = len(terms)
    raw_bytes = None
    for term, count in counts.items():
        freq, exp = 0.0, 0.0
        for _ in range(count):
            exp = exp * 2 if exp else 1.0
            freq += 1 / exp
        coeff = (0.5 * count / n) + 0.5
        adjustment = 1.0
        if len(raw) == len(term) or not raw.isascii():
            if raw_bytes is None:
                raw_bytes = raw.encode("utf-8", "surrogatepass")
            term_bytes = term.encode("utf-8", "surrogatepass")
            if len(raw_bytes) == len(term_bytes) and raw_bytes.lower() == term_bytes.lower():
                adjustment += 0.1
        scores[term] = scores.get(term, 0.0) + (weight * freq * coeff * adjustment)


def score_document(spec: TextIndexSpec, doc: Mapping) -> dict[str, float]:
    """term -> score for `doc` under `spec`: what the index stores, one entry per term."""
    scores: dict[str, float] = {}
    for raw, language, weight in text_values(spec, doc):
        score_string(raw, language, weight, scores)
    return scores
