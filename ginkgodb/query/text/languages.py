"""The languages of text indexes (textIndexVersion 3): names, stop words and stemmers.

mongod knows 15 Snowball languages plus `none`, each by its English name or a two-letter code,
compared ASCII-case-insensitively ("EN", "English" and "en" are all English). `none` has no
stop words and no stemming. English keeps the apostrophe inside words ("don't" is one word);
Turkish folds case with the dotted/dotless i rules.

Stop words come from kept lists rather than our own: English from the `stopwords` package
(the Snowball project's English list, contractions included, which is exactly the list mongod
uses), the others from the Snowball lists Whoosh ships (`whoosh.lang.stopwords`). Romanian has
none, as in mongod. Stemming is Snowball's, through PyStemmer (the same C library mongod links).
docs/design/text-index.md records where these differ from mongod.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...errors import CommandError, ErrorCode

TEXT_INDEX_VERSION = 3

# canonical name -> (two-letter code, PyStemmer algorithm, Whoosh stop-list code)
_TABLE: dict[str, tuple[str | None, str | None, str | None]] = {
    "none": (None, None, None),
    "danish": ("da", "danish", "da"),
    # Snowball 3 replaced its Dutch stemmer; mongod's libstemmer has the older one.
    "dutch": ("nl", "dutch_porter", "nl"),
    "english": ("en", "english", None),
    "finnish": ("fi", "finnish", "fi"),
    "french": ("fr", "french", "fr"),
    "german": ("de", "german", "de"),
    "hungarian": ("hu", "hungarian", "hu"),
    "italian": ("it", "italian", "it"),
    "norwegian": ("nb", "norwegian", "no"),
    "portuguese": ("pt", "portuguese", "pt"),
    "romanian": ("ro", "romanian", None),
    "russian": ("ru", "russian", "ru"),
    "spanish": ("es", "spanish", "es"),
    "swedish": ("sv", "swedish", "sv"),
    "turkish": ("tr", "turkish", "tr"),
}


def _ascii_lower(s: str) -> str:
    """std::tolower per byte in the C locale: only A-Z change."""
    return s.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


@dataclass(eq=False)
class Language:
    """One text-search language: its stop words and stemmer, loaded on first use."""

    name: str
    code: str | None
    _algorithm: str | None = field(repr=False)
    _stop_list: str | None = field(repr=False)
    _stop_words: frozenset[str] | None = field(default=None, repr=False)
    _local: threading.local = field(default_factory=threading.local, repr=False)

    @property
    def english(self) -> bool:
        """English tokenizes with the apostrophe as a word character."""
        return self.name == "english"

    @property
    def turkish(self) -> bool:
        """Turkish folds I to dotless ı and İ to i."""
        return self.name == "turkish"

    @property
    def stop_words(self) -> frozenset[str]:
        if self._stop_words is None:
            self._stop_words = _load_stop_words(self.name, self._stop_list)
        return self._stop_words

    def stem_words(self, words: Sequence[str]) -> list[str]:
        """Snowball stems of `words` (unchanged for `none`)."""
        if self._algorithm is None:
            return list(words)
        return self._stemmer().stemWords(words)

    def stem(self, word: str) -> str:
        if self._algorithm is None:
            return word
        return self._stemmer().stemWord(word)

    def _stemmer(self):
        # PyStemmer objects keep a cache and are not thread-safe: one per thread.
        stemmer = getattr(self._local, "stemmer", None)
        if stemmer is None:
            import Stemmer
            stemmer = self._local.stemmer = Stemmer.Stemmer(self._algorithm)
        return stemmer


def _load_stop_words(name: str, whoosh_code: str | None) -> frozenset[str]:
    if name == "english":
        import stopwords
        return frozenset(w for w in stopwords.get_stopwords("english") if w)
    if whoosh_code is None:
        return frozenset()
    from whoosh.lang.stopwords import stoplists
    return frozenset(stoplists[whoosh_code])


LANGUAGES: dict[str, Language] = {
    name: Language(name, code, algorithm, stop_list)
    for name, (code, algorithm, stop_list) in _TABLE.items()
}
_BY_KEY: dict[str, Language] = {}
for _lang in LANGUAGES.values():
    _BY_KEY[_lang.name] = _lang
    if _lang.code:
        _BY_KEY[_lang.code] = _lang


def find_language(name: str) -> Language | None:
    """The language a name or code denotes (ASCII case-insensitive), or None."""
    return _BY_KEY.get(_ascii_lower(name))


def unsupported_language(name: str) -> CommandError:
    return CommandError(ErrorCode.BadValue,
                        f'unsupported language: "{name}" for text index version {TEXT_INDEX_VERSION}')


def get_language(name: str) -> Language:
    """The language `name` denotes; mongod's BadValue for any other string."""
    lang = find_language(name)
    if lang is None:
        raise unsupported_language(name)
    return lang

