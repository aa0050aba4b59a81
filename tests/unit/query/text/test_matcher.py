"""$text matching and textScore (mongod's FTSMatcher and TEXT_OR scoring)."""
import re

import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from ginkgodb.query.text import (
    TextIndexSpec,
    TextMatcher,
    get_language,
    normalize_text_index_spec,
    parse_text_operator,
    parse_text_query,
)


def spec_for(key, **options):
    return TextIndexSpec.from_stored(normalize_text_index_spec({"key": key, **options}))


# The manual's `articles` collection, indexed {subject: "text"}.
ARTICLES = [
    {"_id": 1, "subject": "coffee", "author": "xyz", "views": 50},
    {"_id": 2, "subject": "Coffee Shopping", "author": "efg", "views": 5},
    {"_id": 3, "subject": "Baking a cake", "author": "abc", "views": 90},
    {"_id": 4, "subject": "baking", "author": "xyz", "views": 100},
    {"_id": 5, "subject": "Café Con Leche", "author": "abc", "views": 200},
    {"_id": 6, "subject": "Сырники", "author": "jkl", "views": 80},
    {"_id": 7, "subject": "coffee and cream", "author": "efg", "views": 10},
    {"_id": 8, "subject": "Cafe con Leche", "author": "xyz", "views": 10},
]
SUBJECT = spec_for({"subject": "text"})


def matcher(operand, spec=SUBJECT):
    return TextMatcher(spec, parse_text_query(parse_text_operator(operand), spec.default_language))


def found(operand, docs=ARTICLES, spec=SUBJECT):
    m = matcher(operand, spec)
    return sorted(d["_id"] for d in docs if m.matches(d))


def ranked(operand, docs=ARTICLES, spec=SUBJECT):
    """(_id, score) by descending score, then _id: a sort on {$meta: "textScore"}."""
    m = matcher(operand, spec)
    hits = [(d["_id"], m.score(d)) for d in docs if m.matches(d)]
    return sorted(hits, key=lambda h: (-h[1], h[0]))


def test_manual_single_word():
    assert ranked({"$search": "coffee"}) == [(1, 1.0), (2, 0.75), (7, 0.75)]


def test_manual_any_of_the_terms():
    assert found({"$search": "bake coffee cake"}) == [1, 2, 3, 4, 7]
    # "Baking a cake" has two of the terms: 0.75 + 0.75.
    assert ranked({"$search": "bake coffee cake"})[0] == (3, 1.5)


def test_manual_phrase():
    assert found({"$search": '"coffee shop"'}) == [2]


def test_manual_negation():
    assert found({"$search": "coffee -shop"}) == [1, 7]


def test_manual_other_language():
    assert found({"$search": "leche", "$language": "es"}) == [5, 8]


def test_manual_case_and_diacritic_insensitive():
    assert found({"$search": "сы́рники CAFÉS"}) == [5, 6, 8]


def test_manual_case_sensitive():
    assert found({"$search": "Coffee", "$caseSensitive": True}) == [2]
    assert found({"$search": '"Café Con Leche"', "$caseSensitive": True}) == [5]
    assert found({"$search": "Coffee -shop", "$caseSensitive": True}) == [2]


def test_manual_diacritic_sensitive():
    assert found({"$search": "CAFÉ", "$diacriticSensitive": True}) == [5]
    assert found({"$search": "leches -cafés", "$diacriticSensitive": True}) == [8]


def test_manual_text_score():
    assert ranked({"$search": "cake"}) == [(3, 0.75)]


def test_scores_use_the_insensitive_terms_even_for_sensitive_queries():
    assert ranked({"$search": "Coffee", "$caseSensitive": True}) == [(2, 0.75)]


def test_no_positive_terms_match_nothing():
    for search in ("-coffee", "the", "", "   ", '-"coffee shop"'):
        assert found({"$search": search}) == []


def test_phrases_must_all_occur_in_one_indexed_string():
    spec = spec_for({"a": "text", "b": "text"})
    docs = [{"_id": 1, "a": "red apple", "b": "green pear"},
            {"_id": 2, "a": "red", "b": "apple"},
            {"_id": 3, "a": "red apple", "c": "green pear"}]
    assert found({"$search": '"red apple" "green pear"'}, docs, spec) == [1]
    assert found({"$search": '"red apple"'}, docs, spec) == [1, 3]
    assert found({"$search": 'apple -"green pear"'}, docs, spec) == [2, 3]


def test_phrases_are_substrings_not_words():
    docs = [{"_id": 1, "subject": "coffeeshop owners"}, {"_id": 2, "subject": "coffee, shop"}]
    # The phrase's own words are terms too: "ffees" alone finds nothing, beside a present term it matches.
    assert found({"$search": '"ffees"'}, docs) == []
    assert found({"$search": 'coffeeshop "ffees"'}, docs) == [1]
    assert found({"$search": '"coffee shop"'}, docs) == []
    assert found({"$search": '"coffee, shop"'}, docs) == [2]


def test_empty_phrase_needs_a_non_empty_string():
    docs = [{"_id": 1, "subject": "cake"}]
    assert found({"$search": 'cake ""'}, docs) == [1]


def test_negated_terms_in_any_indexed_string():
    spec = spec_for({"a": "text", "b": "text"})
    docs = [{"_id": 1, "a": "tea", "b": "cake"}, {"_id": 2, "a": "tea", "c": "cake"}]
    assert found({"$search": "tea -cake"}, docs, spec) == [2]


def test_documents_tokenize_in_their_own_language():
    docs = [{"_id": 1, "subject": "corriendo", "language": "spanish"}, {"_id": 2, "subject": "corriendo"}]
    assert found({"$search": "corriendo", "$language": "es"}, docs) == [1]
    assert found({"$search": "corriendo"}, docs) == [2]


def test_turkish_phrases_always_fold_case():
    docs = [{"_id": 1, "subject": "Istanbul", "language": "turkish"}, {"_id": 2, "subject": "Istanbul"}]
    assert found({"$search": '"ıstanbul" ıstanbul', "$caseSensitive": True, "$language": "tr"}, docs) == []
    m = matcher({"$search": '"ISTANBUL" ISTANBUL', "$caseSensitive": True, "$language": "tr"})
    assert m.matches(docs[0]) is False  # the term is case-sensitive ("ISTANBUL" vs "Istanbul")
    m = matcher({"$search": 'Istanbul "ISTANBUL"', "$caseSensitive": True, "$language": "tr"})
    assert [m.matches(d) for d in docs] == [True, False]


def test_found_in_index_skips_the_positive_check_only_when_insensitive():
    doc = {"_id": 1, "subject": "tea"}
    assert matcher({"$search": "coffee"}).matches(doc, found_in_index=True) is True
    assert matcher({"$search": "coffee"}).matches(doc) is False
    assert matcher({"$search": "Coffee", "$caseSensitive": True}).matches(doc, found_in_index=True) is False


def test_match_score():
    m = matcher({"$search": "coffee"})
    assert [m.match_score(d) for d in ARTICLES[:3]] == [1.0, 0.75, None]


def test_weights_order_results():
    spec = spec_for({"title": "text", "body": "text"}, weights={"title": 10})
    docs = [{"_id": 1, "title": "shoes", "body": "red"}, {"_id": 2, "title": "red", "body": "shoes"}]
    assert ranked({"$search": "shoes"}, docs, spec) == [(1, 10.0), (2, 1.0)]


# ------------------------------------------------------------------ property: an independent oracle

VOCAB = ["coffee", "Coffee", "shop", "shopping", "cake", "cakes", "baking", "the", "and", "a", "of", "tea",
         "running", "runs", "run", "red", "RED", "blue", "cat's", "it's", "don't", "can", "will", "x1", "snake_case"]
SEPARATORS = [" ", " ", ", ", ". ", "-", " (", ") ", "!", "\t", "/"]
STEM = Stemmer.Stemmer("english")
STOP = get_language("english").stop_words
ORACLE_WORD = re.compile(r"[A-Za-z0-9_']+")  # ASCII: every punctuation but _ and ' delimits


def oracle_terms(text, drop_stop_words):
    out = set()
    for w in ORACLE_WORD.findall(text):
        w = w.lower()
        if drop_stop_words and w in STOP:
            continue
        out.add(STEM.stemWord(w))
    return out


def oracle_score(text, term):
    words = [STEM.stemWord(w.lower()) for w in ORACLE_WORD.findall(text) if w.lower() not in STOP]
    c, n = words.count(term), len(words)
    if not c:
        return 0.0
    boost = 1.1 if text.lower() == term else 1.0
    return sum(0.5 ** k for k in range(c)) * (0.5 * c / n + 0.5) * boost


texts = st.lists(st.tuples(st.sampled_from(VOCAB), st.sampled_from(SEPARATORS)), max_size=6).map(
    lambda parts: "".join(w + s for w, s in parts))
query_items = st.lists(st.tuples(st.sampled_from(["word", "not", "phrase", "not phrase"]),
                                 st.lists(st.sampled_from(VOCAB), min_size=1, max_size=2)), min_size=1, max_size=4)


@settings(max_examples=400, deadline=None)
@given(st.lists(texts, min_size=1, max_size=3), query_items)
def test_match_agrees_with_a_direct_tokenize_stem_compare(fields, items):
    doc = {f"f{i}": text for i, text in enumerate(fields)}
    spec = spec_for({f"f{i}": "text" for i in range(len(fields))})
    rendered, positive, negated, phrases, negated_phrases = [], set(), set(), [], []
    for kind, words in items:
        if kind == "word":
            rendered.append(" ".join(words))
            positive |= oracle_terms(" ".join(words), True)
        elif kind == "not":
            rendered.append(" ".join("-" + w for w in words))
            negated |= oracle_terms(" ".join(words), True)
        elif kind == "phrase":
            phrase = " ".join(words)
            rendered.append(f'"{phrase}"')
            phrases.append(phrase)
            positive |= oracle_terms(phrase, True)
        else:
            phrase = " ".join(words)
            rendered.append(f'-"{phrase}"')
            negated_phrases.append(phrase)
    m = matcher({"$search": " ".join(rendered)}, spec)

    doc_terms = set().union(*(oracle_terms(t, False) for t in fields))
    expected = (bool(positive & doc_terms) and not (negated & doc_terms)
                and all(any(p.lower() in t.lower() for t in fields) for p in phrases)
                and not any(any(p.lower() in t.lower() for t in fields) for p in negated_phrases))
    assert m.matches(doc) is expected
    expected_score = sum(oracle_score(t, term) for term in sorted(positive) for t in fields)
    assert abs(m.score(doc) - expected_score) < 1e-9
