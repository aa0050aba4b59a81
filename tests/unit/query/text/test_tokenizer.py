"""mongod's Unicode tokenizer: delimiters, case folding, diacritics, stop words, stemming order."""
import pytest

from ginkgodb.query.text import get_language, tokens
from ginkgodb.query.text.folding import fold, lower, strip_diacritics, words

NONE = get_language("none")
EN = get_language("english")
FR = get_language("french")
TR = get_language("turkish")


@pytest.mark.parametrize("text, expected", [
    ("hello world", ["hello", "world"]),
    ("  leading and trailing\t\n", ["leading", "and", "trailing"]),
    ("e-mail", ["e", "mail"]),                       # Dash
    ("snake_case", ["snake_case"]),                  # _ is a word character
    ("iphone 15 pro/max", ["iphone", "15", "pro", "max"]),
    ("a.b,c;d:e!f?g", ["a", "b", "c", "d", "e", "f", "g"]),
    ("(x) [y] {z} <w>", ["x", "y", "z", "w"]),
    ("#tag @user $5 %20 &amp *star +plus =eq |pipe ~tilde", ["tag", "user", "5", "20", "amp", "star", "plus",
                                                             "eq", "pipe", "tilde"]),
    ("hello—world–again", ["hello", "world", "again"]),   # em and en dashes
    ("«bonjour» „hallo“ “hi”", ["bonjour", "hallo", "hi"]),  # quotation marks
    ("¿Qué? ¡Sí!", ["Qué", "Sí"]),
    ("end。 next", ["end", "next"]),                  # ideographic full stop (Terminal_Punctuation)
    ("10€ 5£ ©2024", ["10€", "5", "2024"]),           # € is no delimiter; £ and © are Pattern_Syntax
    ("a\x01b", ["a\x01b"]),                          # control characters are part of words
    ("naïve café", ["naïve", "café"]),
    ("日本語 テキスト", ["日本語", "テキスト"]),          # no word segmentation for CJK
])
def test_words_split_on_mongods_delimiters(text, expected):
    assert words(text, english=False) == expected


def test_apostrophe_is_a_word_character_in_english_only():
    assert words("don't l'homme", english=True) == ["don't", "l'homme"]
    assert words("don't l'homme", english=False) == ["don", "t", "l", "homme"]
    # Only U+0027: the typographic apostrophe (a quotation mark) always separates.
    assert words("don’t", english=True) == ["don", "t"]


def test_simple_case_folding():
    assert lower("HELLO World") == "hello world"
    assert lower("STRAẞE Straße") == "straße straße"  # simple folding: ß stays ß
    assert lower("ΣΊΣΥΦΟΣ ς") == "σίσυφοσ σ"          # final sigma folds to sigma
    assert lower("ÀÉÎÕÜ") == "àéîõü"
    assert lower("ДОБРО") == "добро"


def test_turkish_case_folding():
    assert lower("DİYARBAKIR", turkish=True) == "diyarbakır"
    assert lower("DİYARBAKIR") == "dİyarbakir"  # outside Turkish İ has no simple folding


def test_diacritic_removal():
    assert strip_diacritics("Crème Brûlée") == "Creme Brulee"
    assert strip_diacritics("naïve Ångström ñandú") == "naive Angstrom nandu"
    assert strip_diacritics("сы́рники") == "сырники"      # a combining acute accent is dropped
    assert strip_diacritics("smørrebrød łódź") == "smørrebrød łodz"  # ø and ł do not decompose
    assert strip_diacritics("donʼt") == "dont"            # modifier letter apostrophe is a diacritic
    assert strip_diacritics("plain ascii") == "plain ascii"


def test_fold_for_phrases():
    assert fold("Café CON leche") == "cafe con leche"
    assert fold("Café", case_sensitive=True) == "Cafe"
    assert fold("Café", diacritic_sensitive=True) == "café"
    assert fold("Café", case_sensitive=True, diacritic_sensitive=True) == "Café"
    assert fold("İSTANBUL", turkish=True) == "istanbul"
    # Outside Turkish, İ has no lower case and loses its dot afterwards.
    assert fold("İSTANBUL") == "Istanbul"


def test_tokens_lowercase_stem_and_strip():
    assert tokens("Running Shoes", EN) == ["run", "shoe"]
    assert tokens("Crème Brûlée", NONE) == ["creme", "brulee"]
    assert tokens("CAFÉS", EN) == ["cafe"]


def test_stop_words_are_dropped_only_when_asked():
    assert tokens("the cake is a lie", EN, filter_stop_words=True) == ["cake", "lie"]
    assert tokens("the cake is a lie", EN) == ["the", "cake", "is", "a", "lie"]
    assert tokens("Don't stop", EN, filter_stop_words=True) == ["stop"]
    assert tokens("the cake", NONE, filter_stop_words=True) == ["the", "cake"]


def test_stop_words_are_checked_with_accents_after_folding_case():
    assert tokens("Été chaud", FR, filter_stop_words=True) == ["chaud"]
    assert tokens("Ete chaud", FR, filter_stop_words=True) == ["ete", "chaud"]


def test_case_sensitive_tokens_keep_case_and_still_drop_stop_words():
    assert tokens("The Running Shoes", EN, filter_stop_words=True, case_sensitive=True) == ["Run", "Shoe"]


def test_diacritic_sensitive_tokens_keep_accents():
    assert tokens("Cafés", EN, diacritic_sensitive=True) == ["café"]
    assert tokens("Crème", NONE, diacritic_sensitive=True, case_sensitive=True) == ["Crème"]


def test_stemming_sees_accents_before_they_are_removed():
    # French stems "légères" with its accents (-> "léger"), then the accent goes.
    assert FR.stem("légères") == "léger"
    assert tokens("légères", FR) == ["leger"]


def test_turkish_tokens():
    assert tokens("İSTANBUL", TR) == tokens("istanbul", TR)
    assert tokens("IRMAK", TR) == tokens("ırmak", TR)


def test_empty_and_delimiter_only_text():
    assert tokens("", EN) == []
    assert tokens(" -- ... !!! ", EN) == []
