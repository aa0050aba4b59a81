"""Text-search languages: names and codes as mongod accepts them, stop words, stemmers."""
import pytest

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.text import LANGUAGES, find_language, get_language

CODES = {"danish": "da", "dutch": "nl", "english": "en", "finnish": "fi", "french": "fr", "german": "de",
         "hungarian": "hu", "italian": "it", "norwegian": "nb", "portuguese": "pt", "romanian": "ro",
         "russian": "ru", "spanish": "es", "swedish": "sv", "turkish": "tr"}


def test_the_fifteen_languages_and_none():
    assert set(LANGUAGES) == set(CODES) | {"none"}
    for name, code in CODES.items():
        assert find_language(name).name == name
        assert find_language(code).name == name
        assert find_language(name.upper()).name == name
        assert find_language(code.upper()).name == name
    assert find_language("None").name == "none"


@pytest.mark.parametrize("name", ["no", "nor", "eng", "klingon", "", "engl", "ﬀ", "english "])
def test_other_names_are_unsupported(name):
    assert find_language(name) is None
    with pytest.raises(CommandError) as e:
        get_language(name)
    assert (e.value.code, e.value.errmsg) == (ErrorCode.BadValue,
                                              f'unsupported language: "{name}" for text index version 3')


def test_only_ascii_letters_fold_in_names():
    # mongod lowercases byte by byte in the C locale: "ENGLİSH" (dotted I) is no language.
    assert find_language("ENGLİSH") is None


def test_english_stop_words_are_mongods_list():
    words = get_language("english").stop_words
    assert len(words) == 174
    for common in ("a", "an", "the", "and", "or", "is", "are", "of", "to", "in", "it", "it's", "don't",
                   "cannot", "ought", "i'm", "you're", "let's", "yourselves", "what", "why's"):
        assert common in words
    # Words other lists drop but mongod indexes.
    for kept in ("can", "will", "just", "now", "also", "don", "s", "t", "one", "new"):
        assert kept not in words


def test_stop_words_of_other_languages():
    assert {"und", "der", "die", "das"} <= get_language("german").stop_words
    assert {"el", "la", "de", "que"} <= get_language("spanish").stop_words
    assert {"le", "la", "et", "été"} <= get_language("french").stop_words
    assert {"и", "в", "не"} <= get_language("russian").stop_words
    assert "ve" in get_language("turkish").stop_words
    assert get_language("romanian").stop_words == frozenset()  # mongod has no Romanian list
    assert get_language("none").stop_words == frozenset()


def test_stemmers():
    assert get_language("english").stem_words(["running", "cakes", "coffee", "skies"]) == ["run", "cake", "coffe", "sky"]
    assert get_language("none").stem_words(["running"]) == ["running"]
    assert get_language("spanish").stem("leche") == "lech"
    assert get_language("german").stem("häuser") == "haus"
    # Dutch is the Porter-based Snowball stemmer, as in mongod's libstemmer.
    assert get_language("nl").stem_words(["lichamelijk", "opgaven"]) == ["licham", "opgav"]
    for language in LANGUAGES.values():
        assert isinstance(language.stem("test"), str)


def test_stemmers_are_per_thread():
    import threading
    english = get_language("english")
    results = []

    def work():
        results.append(english.stem_words(["jumping"] * 1000))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == ["jump"] * 1000 for r in results)
