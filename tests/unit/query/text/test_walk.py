"""Which strings a text index reads (mongod's FTSElementIterator): paths, arrays, languages."""
import pytest
from bson.code import Code
from bson.dbref import DBRef

from ginkgodb.errors import CommandError
from ginkgodb.query.text import TextIndexSpec, normalize_text_index_spec, text_values


def spec_for(key, **options):
    return TextIndexSpec.from_stored(normalize_text_index_spec({"key": key, **options}))


def read(spec, doc):
    return [(text, lang.name, weight) for text, lang, weight in text_values(spec, doc)]


def test_only_weighted_string_fields_are_read_in_document_order():
    spec = spec_for({"title": "text", "body": "text"})
    doc = {"body": "b", "n": 5, "title": "t", "other": "o", "title2": "x"}
    assert read(spec, doc) == [("b", "english", 1.0), ("t", "english", 1.0)]


def test_non_strings_at_weighted_paths_are_skipped():
    spec = spec_for({"t": "text"})
    for value in (5, None, True, b"bytes", Code("function(){}"), {"x": "inner"}):
        assert read(spec, {"t": value}) == []


def test_dotted_paths_enter_subdocuments():
    spec = spec_for({"a.b": "text"}, weights={"a.b": 3})
    assert read(spec, {"a": {"b": "deep", "c": "no"}, "b": "no"}) == [("deep", "english", 3.0)]
    assert read(spec, {"a": "not a document"}) == []


def test_dbrefs_are_documents():
    spec = spec_for({"r.label": "text"})
    ref = DBRef("coll", 1, label="hello")
    assert read(spec, {"r": ref}) == [("hello", "english", 1.0)]


def test_arrays_of_strings_and_of_documents():
    spec = spec_for({"tags": "text", "comments.text": "text"}, weights={"comments.text": 2})
    doc = {"tags": ["red", 5, "blue"], "comments": [{"text": "first"}, {"text": "second", "x": "no"}, "stray"]}
    assert read(spec, doc) == [("red", "english", 1.0), ("blue", "english", 1.0),
                               ("first", "english", 2.0), ("second", "english", 2.0)]


def test_nested_arrays_are_not_entered_without_the_wildcard():
    spec = spec_for({"tags": "text"})
    assert read(spec, {"tags": ["a", ["b", "c"]]}) == [("a", "english", 1.0)]
    assert read(spec_for({"$**": "text"}), {"tags": ["a", ["b", "c"]]}) == [
        ("a", "english", 1.0), ("b", "english", 1.0), ("c", "english", 1.0)]


def test_a_weighted_path_that_is_a_document_is_not_entered():
    spec = spec_for({"a": "text"})
    assert read(spec, {"a": {"b": "inner"}}) == []


def test_wildcard_reads_every_string_but_the_language_fields():
    spec = spec_for({"$**": "text"})
    doc = {"a": "one", "language": "english", "b": {"c": "two", "language": "spanish", "d": ["three"]}}
    assert read(spec, doc) == [("one", "english", 1.0), ("two", "spanish", 1.0), ("three", "spanish", 1.0)]


def test_wildcard_weights_only_the_named_paths():
    # Unweighted fields weigh 1, not the weight of the next weighted path (SERVER-45363).
    spec = spec_for({"$**": "text"}, weights={"title": 10})
    doc = {"abstract": "x", "title": "y", "zebra": "z", "sub": {"title": "w"}}
    assert read(spec, doc) == [("x", "english", 1.0), ("y", "english", 10.0), ("z", "english", 1.0),
                               ("w", "english", 1.0)]


def test_wildcard_with_a_named_field_ranks_the_named_field_first():
    # SERVER-45363's own case: weights {name: 500} over $**.
    spec = spec_for({"$**": "text"}, weights={"name": 500})
    assert read(spec, {"name": "Spot", "guardian": "Kevin"}) == [("Spot", "english", 500.0),
                                                                 ("Kevin", "english", 1.0)]


def test_language_override_at_the_top_and_in_subdocuments():
    spec = spec_for({"title": "text", "comments.body": "text"})
    doc = {"language": "es", "title": "hola",
           "comments": [{"body": "bonjour", "language": "french"}, {"body": "adiós"}]}
    assert read(spec, doc) == [("hola", "spanish", 1.0), ("bonjour", "french", 1.0), ("adiós", "spanish", 1.0)]


def test_custom_override_field_and_default_language():
    spec = spec_for({"t": "text"}, default_language="german", language_override="lang")
    assert read(spec, {"t": "x"}) == [("x", "german", 1.0)]
    assert read(spec, {"t": "x", "lang": "NONE", "language": "klingon"}) == [("x", "none", 1.0)]


def test_override_field_is_read_as_text_when_weighted_without_wildcard():
    spec = spec_for({"language": "text"})
    assert read(spec, {"language": "english"}) == [("english", "english", 1.0)]


def test_bad_overrides_fail_even_without_text():
    spec = spec_for({"t": "text"})
    with pytest.raises(CommandError) as e:
        list(text_values(spec, {"language": "klingon"}))
    assert (e.value.code, e.value.errmsg, e.value.code_name) == (17262, "language override unsupported: klingon",
                                                                 "Location17262")
    with pytest.raises(CommandError) as e:
        list(text_values(spec, {"language": 5}))
    assert (e.value.code, e.value.errmsg) == (17261, "found language override field in document with non-string type")


def test_bad_override_in_a_subdocument_fails_only_when_entered():
    spec = spec_for({"a.b": "text"})
    with pytest.raises(CommandError):
        list(text_values(spec, {"a": {"b": "x", "language": "xx"}}))
    assert read(spec, {"other": {"language": "xx"}, "a": {"b": "x"}}) == [("x", "english", 1.0)]
