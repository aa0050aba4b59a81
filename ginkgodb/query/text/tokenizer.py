"""mongod's Unicode text tokenizer (textIndexVersion 3).

Each word (a run of non-delimiters, see `folding`) goes through, in this order:
1. case folding, then the stop-word check on the folded word, accents still on (when stop
   words are filtered);
2. back to the word as written if the tokens are to be case-sensitive;
3. Snowball stemming (the stemmer sees accents: some rely on them);
4. diacritic removal, unless the tokens are to be diacritic-sensitive.
Index keys use the default (fold case and diacritics, drop stop words); `$caseSensitive` and
`$diacriticSensitive` queries tokenize documents again with the sensitive options.
"""
from __future__ import annotations

from .folding import lower, strip_diacritics, words
from .languages import Language


def tokens(text: str, language: Language, *, filter_stop_words: bool = False,
           case_sensitive: bool = False, diacritic_sensitive: bool = False) -> list[str]:
    """The terms of `text` in order, repeats kept."""
    raw = words(text, language.english)
    if not raw:
        return raw
    turkish = language.turkish
    folded = [lower(w, turkish) for w in raw]
    if filter_stop_words:
        stop = language.stop_words
        keep = [i for i, w in enumerate(folded) if w not in stop]
        if len(keep) != len(folded):
            raw = [raw[i] for i in keep]
            folded = [folded[i] for i in keep]
    stemmed = language.stem_words(raw if case_sensitive else folded)
    if diacritic_sensitive:
        return stemmed
    return [strip_diacritics(w) for w in stemmed]
