"""mongod's Unicode rules for text search: word delimiters, case folding, diacritic removal.

- A delimiter is a code point with any of the Unicode properties White_Space, Dash, Hyphen,
  Quotation_Mark, Terminal_Punctuation, Pattern_Syntax or Sentence_Terminal; everything else
  (letters, digits, `_`, symbols outside Pattern_Syntax, controls) is part of a word. For
  English the apostrophe U+0027 is a word character.
- Case folding is Unicode *simple* case folding (one code point to one code point, so `ß` stays
  `ß`); Turkish maps `I` to `ı` and `İ` to `i`.
- Diacritic removal drops code points with the Diacritic property and maps a code point whose
  canonical decomposition, without its diacritics, recomposes to one other code point onto that
  one (`é` -> `e`, `ñ` -> `n`; `ø` and `ł`, which do not decompose, stay).

The properties come from the `regex` module and decompositions from `unicodedata`; each code
point is worked out once and cached in a `str.translate` table.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Callable

import regex

_DELIMITER_PROPERTIES = (r"\p{White_Space}\p{Dash}\p{Hyphen}\p{Quotation_Mark}"
                         r"\p{Terminal_Punctuation}\p{Pattern_Syntax}\p{Sentence_Terminal}")
WORDS = regex.compile(rf"[^{_DELIMITER_PROPERTIES}]+")
WORDS_ENGLISH = regex.compile(rf"(?V1)[^[{_DELIMITER_PROPERTIES}]--[']]+")
_DIACRITIC = regex.compile(r"\p{Diacritic}")


def words(text: str, english: bool) -> list[str]:
    """The runs of non-delimiters in `text`, in order."""
    return (WORDS_ENGLISH if english else WORDS).findall(text)


class _Table(dict):
    """A `str.translate` table filled on demand: code point -> replacement (None deletes)."""

    def __init__(self, rule: Callable[[str], str | None]) -> None:
        super().__init__()
        self.rule = rule

    def __missing__(self, cp: int) -> str | None:
        value = self[cp] = self.rule(chr(cp))
        return value


def _simple_lower(c: str) -> str:
    folded = c.casefold()
    if len(folded) == 1:          # a common (C) folding
        return folded
    lower = c.lower()             # a full (F) folding: keep the simple (S) one, if any
    return lower if len(lower) == 1 else c


def _turkish_lower(c: str) -> str:
    if c == "I":
        return "ı"
    if c == "İ":
        return "i"
    return _simple_lower(c)


def _strip(c: str) -> str | None:
    if _DIACRITIC.match(c):
        return None
    parts = unicodedata.normalize("NFD", c)
    base = unicodedata.normalize("NFC", "".join(p for p in parts if not _DIACRITIC.match(p)))
    return base if len(base) == 1 and base != c else c


def _compose(first: Callable[[str], str], second: Callable[[str], str | None]):
    return lambda c: second(first(c))


_LOWER = _Table(_simple_lower)
_LOWER_TR = _Table(_turkish_lower)
_STRIP = _Table(_strip)
_LOWER_STRIP = _Table(_compose(_simple_lower, _strip))
_LOWER_STRIP_TR = _Table(_compose(_turkish_lower, _strip))


def lower(s: str, turkish: bool = False) -> str:
    """Simple case folding of every code point (mongod's codepointToLower)."""
    if s.isascii():
        return s.replace("I", "ı").lower() if turkish and "I" in s else s.lower()
    return s.translate(_LOWER_TR if turkish else _LOWER)


def strip_diacritics(s: str) -> str:
    """`s` without diacritics, case unchanged."""
    if s.isascii():
        return s.replace("^", "").replace("`", "") if ("^" in s or "`" in s) else s
    return s.translate(_STRIP)


def fold(s: str, *, case_sensitive: bool = False, diacritic_sensitive: bool = False,
         turkish: bool = False) -> str:
    """mongod's caseFoldAndStripDiacritics: what phrase matching compares."""
    if case_sensitive and diacritic_sensitive:
        return s
    if case_sensitive:
        return strip_diacritics(s)
    if diacritic_sensitive:
        return lower(s, turkish)
    if s.isascii() and not (turkish and "I" in s):
        s = s.lower()
        return s.replace("^", "").replace("`", "") if ("^" in s or "`" in s) else s
    return s.translate(_LOWER_STRIP_TR if turkish else _LOWER_STRIP)
