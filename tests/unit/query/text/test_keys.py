"""Text index entries and key format 1 (docs/design/text-index.md)."""
import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ginkgodb.bsonutil import keycodec
from ginkgodb.errors import CommandError
from ginkgodb.query.text import (
    TEXT_KEY_FORMAT_VERSION,
    TextIndexEntry,
    TextIndexSpec,
    decode_entry,
    encode_entry,
    index_entries,
    index_keys,
    key_prefix,
    normalize_text_index_spec,
    term_key,
    term_range,
)


def spec_for(key, **options):
    return TextIndexSpec.from_stored(normalize_text_index_spec({"key": key, **options}))


def test_format_version():
    assert TEXT_KEY_FORMAT_VERSION == 1


def test_golden_key_bytes():
    # DO NOT CHANGE: term "cake" (key codec string), score 1.1 (key codec double).
    spec = spec_for({"t": "text"})
    assert index_keys(spec, {"t": "cake"}) == [bytes.fromhex("1e63616b650000" "1404bff199999999999a02")]
    spec = spec_for({"a": 1, "t": "text", "z": -1})
    key = index_keys(spec, {"a": 5, "t": "cake", "z": True})[0]
    assert key == (keycodec.encode_value(5) + bytes.fromhex("1e63616b650000" "1404bff199999999999a02")
                   + keycodec.invert(keycodec.encode_value(True)))


def test_entries_one_per_term_with_prefix_and_suffix_values():
    spec = spec_for({"cat": 1, "t": "text", "n": 1})
    entries = index_entries(spec, {"cat": "books", "t": "Baking a cake", "n": 3})
    assert entries == [TextIndexEntry(("books",), "bake", 0.75, (3,)), TextIndexEntry(("books",), "cake", 0.75, (3,))]


def test_missing_prefix_fields_are_null_and_documents_without_terms_have_no_entries():
    spec = spec_for({"cat": 1, "t": "text"})
    assert index_entries(spec, {"t": "cake"}) == [TextIndexEntry((None,), "cake", 1.1, ())]
    assert index_entries(spec, {"cat": 1, "t": "the"}) == []
    assert index_keys(spec, {"cat": 1}) == []


@pytest.mark.parametrize("doc", [{"a": {"b": []}}, {"a": {"b": [1]}}, {"a": {"b": [1, 2]}}, {"a": []},
                                 {"a": [{"b": 1}]}, {"a": [{"b": 1}, {"b": 2}]}])
def test_arrays_on_prefix_paths_fail(doc):
    spec = spec_for({"a.b": 1, "words": "text"})
    with pytest.raises(CommandError) as e:
        index_entries(spec, {**doc, "words": "omnibus"})
    assert e.value.code == 201
    assert e.value.errmsg.startswith("Field 'a.b' of text index contains an array in document: { a: ")


def test_arrays_on_suffix_paths_fail():
    spec = spec_for({"words": "text", "y.z": 1})
    for doc in ({"y": {"z": []}}, {"y": [{"z": 1}]}, {"y": []}):
        with pytest.raises(CommandError) as e:
            index_entries(spec, {"words": "macerate", **doc})
        assert e.value.code == 201


def test_positional_paths_may_pick_array_elements():
    spec = spec_for({"a.0": 1, "words": "text"})
    assert index_entries(spec, {"a": [0, 1, 2], "words": "dander"})[0].prefix == (0,)
    with pytest.raises(CommandError):
        index_entries(spec, {"a": [[8, 9], 1, 2], "words": "dander"})
    spec = spec_for({"a.0.1": 1, "words": "text"})
    assert index_entries(spec, {"a": [[8, 9], 1, 2], "words": "dander"})[0].prefix == (9,)
    assert index_entries(spec, {"a": [], "words": "dander"})[0].prefix == (None,)


def test_long_terms_keep_224_bytes_and_an_md5():
    short = "a" * 224
    assert term_key(short) == short
    long = "b" * 300
    assert term_key(long) == "b" * 224 + hashlib.md5(long.encode()).hexdigest()
    assert len(term_key(long).encode()) == 256
    # A multi-byte character is never cut in half.
    wide = "é" * 200  # 400 bytes
    assert term_key(wide) == "é" * 112 + hashlib.md5(wide.encode()).hexdigest()
    assert term_key("b" * 224 + "x") != term_key("b" * 224 + "y")


def test_long_terms_are_found_by_their_term_key():
    spec = spec_for({"t": "text"})
    word = "x" * 400
    key = index_keys(spec, {"t": word})[0]
    lo, hi = term_range(spec, word)
    assert lo <= key < hi


def test_decode_entry_round_trip():
    spec = spec_for({"a": -1, "t": "text", "z": 1})
    for entry in index_entries(spec, {"a": "x", "t": "Coffee Shopping", "z": 2.5}):
        assert decode_entry(spec, encode_entry(spec, entry)) == entry


def test_term_range_holds_exactly_the_terms_entries():
    spec = spec_for({"cat": 1, "t": "text"})
    docs = [{"cat": c, "t": t} for c in ("a", "b") for t in ("cake", "cakes and more", "caked", "cak", "cakewalk")]
    keys = sorted(k for d in docs for k in index_keys(spec, d))
    lo, hi = term_range(spec, "cake", ["a"])
    inside = [decode_entry(spec, k) for k in keys if lo <= k < hi]
    assert {(e.prefix, e.term) for e in inside} == {(("a",), "cake")}
    assert len(inside) == 3  # "cake", "cakes and more", "caked" all stem to "cake"
    assert key_prefix(spec, ["a"]) == keycodec.encode_value("a")


def test_entries_of_a_term_sort_by_score():
    spec = spec_for({"t": "text"})
    keys = sorted(k for t in ("cake", "a cake and tea", "cake cake pie") for k in index_keys(spec, {"t": t})
                  if decode_entry(spec, k).term == "cake")
    scores = [decode_entry(spec, k).score for k in keys]
    assert scores == sorted(scores) and len(scores) == 3


words = st.text(alphabet="abcdeé ", min_size=0, max_size=30)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), words), min_size=1, max_size=8))
def test_key_order_is_prefix_then_term_then_score(docs):
    spec = spec_for({"p": -1, "t": "text"})
    entries = [e for p, t in docs for e in index_entries(spec, {"p": p, "t": t})]
    by_key = sorted(entries, key=lambda e: encode_entry(spec, e))
    expected = sorted(entries, key=lambda e: (-e.prefix[0], e.term.encode(), e.score))
    assert [(e.prefix, e.term, e.score) for e in by_key] == [(e.prefix, e.term, e.score) for e in expected]
