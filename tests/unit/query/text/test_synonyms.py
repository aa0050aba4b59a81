"""Synonym expansion (a ginkgodb extension shaped like Atlas Search synonym documents)."""
import pytest

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.text import (
    SynonymMap,
    TextIndexSpec,
    TextMatcher,
    TextParams,
    expand_query,
    get_language,
    normalize_text_index_spec,
    parse_text_query,
)

EN = get_language("english")
SYNONYMS = SynonymMap([
    {"mappingType": "equivalent", "synonyms": ["car", "vehicle", "automobile"]},
    {"mappingType": "explicit", "input": ["beer"], "synonyms": ["beer", "brew", "pint"]},
    {"mappingType": "explicit", "input": ["lager"], "synonyms": ["beer"]},
    {"mappingType": "equivalent", "synonyms": ["sport utility vehicle", "suv"]},
])


def query(search, **options):
    return expand_query(parse_text_query(TextParams(search, **options), EN), SYNONYMS)


def test_equivalent_words_stand_for_each_other():
    assert query("car").terms_for_bounds == ("automobil", "car", "vehicl")
    assert query("automobiles").terms_for_bounds == ("automobil", "car", "vehicl")


def test_explicit_mappings_go_one_way():
    assert query("beer").terms_for_bounds == ("beer", "brew", "pint")
    assert query("lager").terms_for_bounds == ("beer", "lager")
    assert query("brew").terms_for_bounds == ("brew",)


def test_expansion_is_one_step():
    # lager -> beer, but not on to brew and pint.
    assert "brew" not in query("lager").terms_for_bounds


def test_multi_word_inputs_match_consecutive_words():
    assert query("sport utility vehicle").terms_for_bounds == (
        "automobil", "car", "sport", "suv", "util", "vehicl")
    assert "suv" not in query("utility sport").terms_for_bounds
    assert query("suv").terms_for_bounds == ("sport", "suv", "util", "vehicl")


def test_unrelated_queries_are_unchanged():
    q = parse_text_query(TextParams("coffee -tea"), EN)
    assert expand_query(q, SYNONYMS) == q


def test_expansion_keeps_negations_and_phrases():
    q = query('"red car" -beer')
    assert q.negated_terms == {"beer"} and q.phrases == ("red car",)
    assert {"vehicl", "automobil"} <= set(q.terms_for_bounds)


def test_case_sensitive_queries_expand_to_sensitive_forms():
    q = query("car", case_sensitive=True)
    assert q.terms_for_bounds == ("automobil", "car", "vehicl")
    assert q.positive_terms == {"car", "vehicl", "automobil"}


def test_expanded_queries_find_synonymous_documents():
    spec = TextIndexSpec.from_stored(normalize_text_index_spec({"key": {"t": "text"}}))
    docs = [{"t": "a fast automobile"}, {"t": "a red vehicle"}, {"t": "a bicycle"}]
    m = TextMatcher(spec, query("cars"))
    assert [m.matches(d) for d in docs] == [True, True, False]


@pytest.mark.parametrize("docs, message", [
    (["car"], "synonym document 0 must be an object"),
    ([{"synonyms": ["a"]}], "synonym document 0: mappingType must be 'equivalent' or 'explicit'"),
    ([{"mappingType": "same", "synonyms": ["a"]}], "synonym document 0: mappingType must be 'equivalent' or 'explicit'"),
    ([{"mappingType": "equivalent"}], "synonym document 0: 'synonyms' must be a non-empty array of non-empty strings"),
    ([{"mappingType": "equivalent", "synonyms": []}],
     "synonym document 0: 'synonyms' must be a non-empty array of non-empty strings"),
    ([{"mappingType": "equivalent", "synonyms": ["a", 1]}],
     "synonym document 0: 'synonyms' must be a non-empty array of non-empty strings"),
    ([{"mappingType": "explicit", "synonyms": ["a"]}],
     "synonym document 0: 'input' must be a non-empty array of non-empty strings"),
    ([{"mappingType": "equivalent", "input": ["a"], "synonyms": ["a"]}],
     "synonym document 0: 'input' is only allowed with mappingType 'explicit'"),
    ([{"mappingType": "equivalent", "synonyms": ["a"]}, {"mappingType": "equivalent", "synonyms": ["b"], "x": 1}],
     "synonym document 1: unknown field 'x'"),
])
def test_invalid_synonym_documents(docs, message):
    with pytest.raises(CommandError) as e:
        SynonymMap(docs)
    assert (e.value.code, e.value.errmsg) == (ErrorCode.BadValue, message)


def test_id_fields_are_allowed():
    SynonymMap([{"_id": 1, "mappingType": "equivalent", "synonyms": ["a", "b"]}])
