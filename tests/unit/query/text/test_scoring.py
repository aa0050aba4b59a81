"""Term scores as mongod's FTSSpec::scoreDocument computes them, worked out by hand.

score(t) = sum over the strings read of  weight * freq * coeff * adjustment, where for one string
with n terms (stop words dropped) of which t occurs c times:
    freq = 1 + 1/2 + ... + 1/2^(c-1),  coeff = 0.5 * c / n + 0.5,
    adjustment = 1.1 when the whole string is exactly the term (ASCII case aside), else 1.
"""
import pytest

from ginkgodb.query.text import TextIndexSpec, normalize_text_index_spec, score_document


def spec_for(key, **options):
    return TextIndexSpec.from_stored(normalize_text_index_spec({"key": key, **options}))


TITLE = spec_for({"title": "text"})


def scores(doc, spec=TITLE):
    return score_document(spec, doc)


def test_one_word_string():
    # "coffee" -> "coffe": c = 1, n = 1: 1 * 1 * (0.5 + 0.5) * 1; no boost, the stem differs.
    assert scores({"title": "coffee"}) == {"coffe": 1.0}


def test_string_that_is_its_term_gets_the_boost():
    # "cake" stems to itself: 1 * 1 * 1 * 1.1, whatever the ASCII case.
    assert scores({"title": "cake"}) == {"cake": 1.1}
    assert scores({"title": "CAKE"}) == {"cake": 1.1}
    # Accents make the bytes differ from the term: no boost.
    assert scores({"title": "café"}) == {"cafe": 1.0}


def test_stop_words_do_not_count_in_n():
    # "Baking a cake": n = 2 ("a" is a stop word): 0.5 * 1 / 2 + 0.5 = 0.75 each (the manual's 0.75).
    assert scores({"title": "Baking a cake"}) == {"bake": 0.75, "cake": 0.75}
    # "the cake": n = 1, but the string is not the term: 1.0.
    assert scores({"title": "the cake"}) == {"cake": 1.0}


def test_repeated_terms_count_less_and_less():
    # coffee x2 in 3 terms: freq 1.5, coeff 0.5 * 2 / 3 + 0.5; tea: freq 1, coeff 0.5 / 3 + 0.5.
    assert scores({"title": "coffee coffee tea"}) == {"coffe": 1.5 * (0.5 * 2 / 3 + 0.5),
                                                      "tea": 1.0 * (0.5 * 1 / 3 + 0.5)}
    # go x3: freq 1 + 0.5 + 0.25, coeff 1.
    assert scores({"title": "go go go"}) == {"go": 1.75}
    # Stemming merges forms: run, running, runs are one term, c = 3, n = 3.
    assert scores({"title": "run running runs"}) == {"run": 1.75}


def test_weights_multiply_and_fields_add_up():
    spec = spec_for({"title": "text", "body": "text"}, weights={"title": 10, "body": 2})
    doc = {"title": "Blue suede shoes", "body": "shoes for walking"}
    title_each = 10 * 1.0 * (0.5 * 1 / 3 + 0.5)   # three terms in the title
    body_each = 2 * 1.0 * (0.5 * 1 / 2 + 0.5)     # "for" is a stop word: two terms
    assert score_document(spec, doc) == pytest.approx({"blue": title_each, "sued": title_each,
                                                       "shoe": title_each + body_each, "walk": body_each})
    assert score_document(spec, doc)["shoe"] == title_each + body_each  # same order of additions


def test_each_array_element_is_its_own_string():
    # "red" alone: 1.1 (boost); "red shoes": 0.75 each.
    assert scores({"title": ["red", "red shoes"]}) == {"red": 1.1 + 0.75, "shoe": 0.75}


def test_documents_without_terms_have_no_scores():
    assert scores({"title": "the and of"}) == {}
    assert scores({"title": ""}) == {}
    assert scores({"other": "coffee"}) == {}
    assert scores({}) == {}


def test_language_of_the_document_decides_stems_and_stop_words():
    assert scores({"title": "las casas", "language": "spanish"}) == {"cas": 1.0}
    assert scores({"title": "las casas", "language": "none"}) == {"las": 0.75, "casas": 0.75}


def test_nested_languages_score_each_string_in_its_own_language():
    spec = spec_for({"a.t": "text", "t": "text"})
    doc = {"t": "running", "a": {"t": "corriendo", "language": "es"}}
    assert score_document(spec, doc) == {"run": 1.0, "corr": 1.0}


def test_manual_articles_example_scores():
    docs = {1: "coffee", 2: "Coffee Shopping", 3: "Baking a cake", 4: "baking", 5: "Café Con Leche",
            6: "Сырники", 7: "coffee and cream", 8: "Cafe con Leche"}
    got = {i: scores({"subject": s}, spec_for({"subject": "text"})) for i, s in docs.items()}
    assert got[2] == {"coffe": 0.75, "shop": 0.75}
    assert got[5] == got[8] == {"cafe": 2 / 3, "con": 2 / 3, "lech": 2 / 3}
    assert got[6] == {"сырники": 1.0}
    assert got[4] == {"bake": 1.0}
