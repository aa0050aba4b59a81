"""Index keys of documents, as mongod's key generators produce them."""
from __future__ import annotations

import pytest
from bson.int64 import Int64

from ginkgodb.bsonutil import types as T
from ginkgodb.bsonutil.keycodec import decode_key, encode_key, hash_value
from ginkgodb.errors import CommandError
from ginkgodb.query.index_keys import btree_keys, hashed_keys


def extract_keys(doc, pattern, **kw):
    """The keys an index on `pattern` gives `doc` (hashed patterns have no multikey paths)."""
    if any(d == "hashed" for _, d in pattern):
        return hashed_keys(doc, pattern, **kw), set()
    return btree_keys(doc, pattern, **kw)


def keys_of(doc, pattern, **kw):
    keys, multikey = extract_keys(doc, pattern, **kw)
    directions = [1 if d == "hashed" or d > 0 else -1 for _, d in pattern]
    return [decode_key(k, directions) for k in keys], multikey


def test_scalar_field_gives_one_key_and_no_multikey_path():
    assert keys_of({"a": 5}, [("a", 1)]) == ([[5]], set())


def test_missing_field_keys_as_null():
    assert keys_of({"b": 1}, [("a", 1)]) == ([[None]], set())


def test_dotted_path_walks_embedded_documents():
    assert keys_of({"a": {"b": {"c": "x"}}}, [("a.b.c", 1)]) == ([["x"]], set())


def test_dotted_path_through_a_scalar_is_missing():
    assert keys_of({"a": 1}, [("a.b", 1)]) == ([[None]], set())


def test_array_yields_one_deduplicated_key_per_element():
    assert keys_of({"a": [3, 1, 3]}, [("a", 1)]) == ([[1], [3]], {"a"})


def test_dotted_path_over_array_of_documents():
    assert keys_of({"a": [{"b": 1}, {"b": 2}]}, [("a.b", 1)]) == ([[1], [2]], {"a"})


def test_array_elements_without_the_subfield_key_as_null():
    assert keys_of({"a": [1, {"b": 2}]}, [("a.b", 1)]) == ([[None], [2]], {"a"})


def test_nested_arrays_are_indexed_whole():
    assert keys_of({"a": [[1, 2], 3]}, [("a", 1)]) == ([[3], [[1, 2]]], {"a"})


def test_path_does_not_descend_into_nested_arrays():
    assert keys_of({"a": [[{"b": 1}]]}, [("a.b", 1)]) == ([[None]], {"a"})


def test_empty_array_indexes_as_undefined_below_null():
    (key,), multikey = keys_of({"a": []}, [("a", 1)])
    assert isinstance(key[0], T.Undefined) and multikey == {"a"}
    undefined_key = extract_keys({"a": []}, [("a", 1)])[0][0]
    assert undefined_key < extract_keys({"a": None}, [("a", 1)])[0][0]
    assert undefined_key != extract_keys({}, [("a", 1)])[0][0]


def test_path_through_empty_array_keys_as_null():
    assert keys_of({"a": []}, [("a.b", 1)]) == ([[None]], {"a"})


def test_numeric_component_indexes_one_array_position():
    assert keys_of({"a": [10, 20]}, [("a.0", 1)]) == ([[10]], set())
    assert keys_of({"a": [{"b": 1}, {"b": 2}]}, [("a.1.b", 1)]) == ([[2]], set())


def test_numeric_component_on_nested_array_keys_the_inner_array():
    assert keys_of({"a": [[1, 2], 3]}, [("a.0", 1)]) == ([[[1, 2]]], set())


def test_numeric_component_out_of_range_behaves_as_field_name():
    assert keys_of({"a": [{"5": "x"}, 1]}, [("a.5", 1)]) == ([[None], ["x"]], {"a"})


def test_numeric_field_in_array_element_is_ambiguous():
    with pytest.raises(CommandError) as err:
        extract_keys({"a": [{"0": 1}, 5]}, [("a.0", 1)])
    assert err.value.code == 16746
    assert "Ambiguous field name found in array" in err.value.errmsg


def test_compound_keys_combine_fixed_values_with_each_array_element():
    keys, multikey = keys_of({"a": 1, "b": [2, 3]}, [("a", 1), ("b", -1)])
    assert keys == [[1, 3], [1, 2]] and multikey == {"b"}  # b descending: 3 sorts first


def test_two_fields_through_the_same_array_stay_paired():
    doc = {"a": [{"b": 1, "c": "x"}, {"b": 2, "c": "y"}]}
    assert keys_of(doc, [("a.b", 1), ("a.c", 1)]) == ([[1, "x"], [2, "y"]], {"a"})


def test_parallel_arrays_are_rejected_with_mongods_message():
    with pytest.raises(CommandError) as err:
        extract_keys({"a": [1], "b": [2]}, [("a", 1), ("b", 1)])
    assert err.value.code == 171
    assert err.value.errmsg == "cannot index parallel arrays [b] [a]"


def test_parallel_arrays_name_the_last_path_components():
    with pytest.raises(CommandError) as err:
        extract_keys({"x": {"p": [1], "q": [2]}}, [("x.q", 1), ("x.p", 1)])
    assert err.value.errmsg == "cannot index parallel arrays [p] [q]"


def test_multikey_path_records_every_array_prefix():
    _, multikey = keys_of({"a": [{"b": [1, 2]}]}, [("a.b", 1)])
    assert multikey == {"a", "a.b"}


def test_sparse_index_skips_documents_missing_every_field():
    assert extract_keys({"c": 1}, [("a", 1), ("b", 1)], sparse=True) == ([], set())
    assert keys_of({"b": 1}, [("a", 1), ("b", 1)], sparse=True)[0] == [[None, 1]]


def test_sparse_index_skips_array_elements_without_the_field():
    assert keys_of({"a": [1, {"b": 2}]}, [("a.b", 1)], sparse=True)[0] == [[2]]


def test_keys_are_encoded_with_the_pattern_directions():
    keys, _ = extract_keys({"a": 1, "b": "x"}, [("a", 1), ("b", -1)])
    assert keys == [encode_key([1, "x"], [1, -1])]


def test_hashed_field_keys_as_int64_hash():
    keys, multikey = extract_keys({"a": 2.3}, [("a", "hashed")])
    assert keys == [encode_key([Int64(hash_value(2))])] and multikey == set()


def test_hashed_missing_field_hashes_null_unless_sparse():
    assert extract_keys({}, [("a", "hashed")])[0] == [encode_key([Int64(hash_value(None))])]
    assert extract_keys({}, [("a", "hashed")], sparse=True)[0] == []


def test_compound_hashed_index_keeps_other_fields_plain():
    keys, _ = extract_keys({"a": 1, "b": "x"}, [("a", 1), ("b", "hashed")])
    assert keys == [encode_key([1, Int64(hash_value("x"))])]


@pytest.mark.parametrize("doc,path,at", [
    ({"a": [1, 2]}, "a", "a"), ({"a": {"b": [1]}}, "a.b", "a.b"), ({"a": [{"b": 1}]}, "a.b", "a")])
def test_hashed_index_rejects_arrays_on_the_path(doc, path, at):
    with pytest.raises(CommandError) as err:
        extract_keys(doc, [(path, "hashed")])
    assert err.value.code == 16766
    assert err.value.errmsg == ("Error: hashed indexes do not currently support array values. "
                                f"Found array at path: {at}")


def test_compound_hashed_index_rejects_arrays_in_any_field():
    with pytest.raises(CommandError) as err:
        extract_keys({"a": [1], "b": 1}, [("a", 1), ("b", "hashed")])
    assert err.value.code == 16766


def test_dbref_values_are_traversed_like_documents():
    from bson.dbref import DBRef
    assert keys_of({"a": [DBRef("c", 5), DBRef("c", 6)]}, [("a.$id", 1)]) == ([[5], [6]], {"a"})
