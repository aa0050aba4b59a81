"""Text search as mongod 7.0 does it (textIndexVersion 3): pure functions, no storage access.

- Index specs: `normalize_text_index_spec(createIndexes entry) -> stored spec` (also what
  listIndexes shows, see `list_indexes_entry`); `TextIndexSpec.from_stored(stored)`.
- Index entries: `index_entries(spec, doc)`, `index_keys(spec, doc)` (key format 1),
  `term_range(spec, term, prefix_values)` for lookups, `decode_entry(spec, key)`.
- Queries: `parse_text_operator($text operand) -> TextParams`,
  `parse_text_query(params, spec.default_language) -> TextQuery`.
- Matching: `TextMatcher(spec, query).matches(doc)` / `.score(doc)`.
- Extension: `SynonymMap(documents)`, `expand_query(query, synonyms)`.
Design and formulas: docs/design/text-index.md.
"""
from __future__ import annotations

from .keys import (
                   TEXT_KEY_FORMAT_VERSION,
                   TextIndexEntry,
                   decode_entry,
                   encode_entry,
                   entry_score,
                   index_entries,
                   index_keys,
                   key_prefix,
                   term_key,
                   term_range,
)
from .languages import LANGUAGES, Language, find_language, get_language
from .matcher import TextMatcher
from .query import TextParams, TextQuery, parse_text_operator, parse_text_query, split_search
from .scoring import score_document
from .spec import TextIndexSpec, is_text_key, list_indexes_entry, normalize_text_index_spec
from .synonyms import SynonymMap, expand_query
from .tokenizer import tokens
from .walk import text_values

__all__ = [
    "LANGUAGES", "TEXT_KEY_FORMAT_VERSION", "Language", "SynonymMap", "TextIndexEntry", "TextIndexSpec",
    "TextMatcher", "TextParams", "TextQuery", "decode_entry", "encode_entry", "entry_score", "expand_query",
    "find_language", "get_language", "index_entries", "index_keys", "is_text_key", "key_prefix",
    "list_indexes_entry", "normalize_text_index_spec", "parse_text_operator", "parse_text_query",
    "score_document", "split_search", "term_key", "term_range", "text_values", "tokens",
]
