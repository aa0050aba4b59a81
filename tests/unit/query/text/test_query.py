"""$text operand validation and mongod's parse of $search (FTSQueryImpl / FTSQueryParser)."""
import pytest
from bson.int64 import Int64

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.text import TextParams, get_language, parse_text_operator, parse_text_query, split_search

EN = get_language("english")


def parse(search, **options):
    return parse_text_query(TextParams(search, **options), EN)


def fails(operand, code, message):
    with pytest.raises(CommandError) as e:
        parse_text_operator(operand)
    assert (e.value.code, e.value.errmsg) == (code, message)


def test_operand_defaults_and_options():
    assert parse_text_operator({"$search": "x"}) == TextParams("x", "", False, False)
    assert parse_text_operator({"$search": "x", "$language": "es", "$caseSensitive": True,
                                "$diacriticSensitive": False}) == TextParams("x", "es", True, False)


def test_operand_errors():
    fails("coffee", ErrorCode.BadValue, "$text expects an object")
    fails([], ErrorCode.BadValue, "$text expects an object")
    fails({}, ErrorCode.NoSuchKey, 'Missing expected field "$search"')
    fails({"$language": "en"}, ErrorCode.NoSuchKey, 'Missing expected field "$search"')
    fails({"$search": 1}, ErrorCode.TypeMismatch, '"$search" had the wrong type. Expected string, found int')
    fails({"$search": None}, ErrorCode.TypeMismatch, '"$search" had the wrong type. Expected string, found null')
    fails({"$search": "x", "$language": Int64(1)}, ErrorCode.TypeMismatch,
          '"$language" had the wrong type. Expected string, found long')
    fails({"$search": "x", "$caseSensitive": 1}, ErrorCode.TypeMismatch,
          '"$caseSensitive" had the wrong type. Expected bool, found int')
    fails({"$search": "x", "$diacriticSensitive": "yes"}, ErrorCode.TypeMismatch,
          '"$diacriticSensitive" had the wrong type. Expected bool, found string')
    fails({"$search": "x", "$foo": 1}, ErrorCode.BadValue, "extra fields in $text")
    fails({"$search": "x", "language": "en"}, ErrorCode.BadValue, "extra fields in $text")


def test_unsupported_query_language():
    with pytest.raises(CommandError) as e:
        parse("x", language="klingon")
    assert (e.value.code, e.value.errmsg) == (ErrorCode.BadValue,
                                              'unsupported language: "klingon" for text index version 3')


def test_empty_language_means_the_index_default():
    q = parse_text_query(TextParams("corriendo", ""), get_language("spanish"))
    assert q.language.name == "spanish" and q.terms_for_bounds == ("corr",)


@pytest.mark.parametrize("search, positive, negative, phrases, negated_phrases", [
    ("coffee shop", "coffee shop", "", [], []),
    ("coffee -shop", "coffee", "shop", [], []),
    ("-shop coffee", "coffee", "shop", [], []),
    ("- shop", "shop", "", [], []),                        # a lone dash negates nothing
    ("coffee- shop", "coffee shop", "", [], []),
    ("e-mail", "e mail", "", [], []),                      # a dash inside a word separates
    ("-foo-bar baz", "baz", "foo bar", [], []),            # the negation runs to the next space
    ('"coffee shop" tea', "coffee shop tea", "", ["coffee shop"], []),
    ('-"coffee shop" tea', "tea", "", [], ["coffee shop"]),
    ('-"a b"-"c d" e', "e", "", [], ["a b", "c d"]),
    ('- "a b"', "a b", "", ["a b"], []),
    ('x -"a -b"', "x", "", [], ["a -b"]),                  # no negation inside a phrase
    ('"a -b"', "a b", "", ["a -b"], []),
    ('"unclosed phrase', "unclosed phrase", "", [], []),   # its words still count
    ('say "hi"there', "say hi there", "", ["hi"], []),
    ('""', "", "", [""], []),
    ('a\\"b c\\"', 'a\\ b c\\', "", ['b c\\'], []),         # backslash is no escape
    ("tab\t-sep", "tab\t sep", "", [], []),                # a tab is not whitespace here
    ("line\n-sep", "line", "sep", [], []),
    ("  -lead", "", "lead", [], []),
])
def test_split_search(search, positive, negative, phrases, negated_phrases):
    assert split_search(search) == (positive, negative, phrases, negated_phrases)


def test_terms_are_tokenized_stemmed_and_deduplicated():
    q = parse("Running runs the RUN -walking -the")
    assert q.terms_for_bounds == ("run",)
    assert q.positive_terms == {"run"} and q.negated_terms == {"walk"}


def test_phrase_words_are_terms_but_negated_phrase_words_are_not():
    q = parse('"coffee shop" -"tea room"')
    assert q.terms_for_bounds == ("coffe", "shop")
    assert q.negated_terms == frozenset() and q.negated_phrases == ("tea room",)


def test_stop_words_only_give_no_terms():
    assert parse("the and of").terms_for_bounds == ()
    assert parse("-coffee").terms_for_bounds == ()


def test_case_and_diacritic_sensitive_terms():
    q = parse("Café -Thé", case_sensitive=True)
    assert q.terms_for_bounds == ("cafe",)            # index lookups stay insensitive
    assert q.positive_terms == {"Cafe"} and q.negated_terms == {"The"}
    q = parse("Café -Thé", diacritic_sensitive=True)
    assert q.positive_terms == {"café"} and q.negated_terms == {"thé"}
    q = parse("Café", case_sensitive=True, diacritic_sensitive=True)
    assert q.positive_terms == {"Café"}


def test_explain_shape():
    q = parse('"coffee shop" cake -tea -"bad cake"')
    assert q.explain() == {"terms": ["cake", "coffe", "shop"], "negatedTerms": ["tea"],
                           "phrases": ["coffee shop"], "negatedPhrases": ["bad cake"]}


def test_query_language_changes_stop_words_and_stems():
    q = parse("las casas", language="es")
    assert q.terms_for_bounds == ("cas",)
    q = parse("las casas", language="none")
    assert q.terms_for_bounds == ("casas", "las")
