"""Text index specs: createIndexes entry -> stored spec (mongod's fixSpec), and the parsed form."""
import math

import pytest
from bson.decimal128 import Decimal128
from bson.int64 import Int64

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.text import TextIndexSpec, is_text_key, list_indexes_entry, normalize_text_index_spec
from ginkgodb.query.text.spec import number_int


def norm(key, **options):
    return normalize_text_index_spec({"key": key, "name": "ix", **options})


def fails(code, message, key, **options):
    with pytest.raises(CommandError) as e:
        norm(key, **options)
    assert (e.value.code, e.value.errmsg) == (code, message)


CANNOT = ErrorCode.CannotCreateIndex


def test_single_field_gets_mongods_defaults_in_order():
    assert norm({"title": "text"}) == {
        "key": {"_fts": "text", "_ftsx": 1}, "name": "ix", "weights": {"title": 1},
        "default_language": "english", "language_override": "language", "textIndexVersion": 3}
    assert list(norm({"title": "text"})) == ["key", "name", "weights", "default_language",
                                             "language_override", "textIndexVersion"]


def test_several_text_fields_collapse_and_weights_sort_by_name():
    stored = norm({"title": "text", "body": "text", "abstract": "text"})
    assert stored["key"] == {"_fts": "text", "_ftsx": 1}
    assert list(stored["weights"].items()) == [("abstract", 1), ("body", 1), ("title", 1)]


def test_compound_prefix_and_suffix_fields_keep_their_places_and_values():
    stored = norm({"category": 1, "title": "text", "n": -1})
    assert list(stored["key"].items()) == [("category", 1), ("_fts", "text"), ("_ftsx", 1), ("n", -1)]
    assert stored["weights"] == {"title": 1}


def test_wildcard_key_and_wildcard_weights_string():
    assert norm({"$**": "text"})["weights"] == {"$**": 1}
    assert norm({"title": "text"}, weights="$**")["weights"] == {"$**": 1, "title": 1}
    # mongod accepts $** beside named text fields: both get weights.
    assert norm({"$**": "text", "title": "text"}, weights={"title": 5})["weights"] == {"$**": 1, "title": 5}


def test_weights_override_key_fields_add_fields_and_truncate_to_int32():
    stored = norm({"title": "text"}, weights={"title": 10, "body": 2.9, "tags": Int64(3)})
    assert stored["weights"] == {"body": 2, "tags": 3, "title": 10}
    assert all(type(v) is int for v in stored["weights"].values())


def test_given_options_stay_in_place_and_missing_ones_follow():
    stored = norm({"t": "text"}, default_language="Spanish", textIndexVersion=3.0, sparse=True,
                  language_override="idioma")
    assert list(stored) == ["key", "name", "default_language", "sparse", "language_override", "weights",
                            "textIndexVersion"]
    assert stored["default_language"] == "Spanish"  # stored as given, resolved when used
    assert stored["textIndexVersion"] == 3 and type(stored["textIndexVersion"]) is int


def test_v_moves_before_text_index_version():
    stored = normalize_text_index_spec({"v": 2, "key": {"t": "text"}, "name": "t_text"})
    assert list(stored)[-2:] == ["v", "textIndexVersion"] and stored["v"] == 2


def test_already_fixed_spec_is_accepted_unchanged():
    stored = norm({"t": "text"}, weights={"t": 4})
    again = normalize_text_index_spec(stored)
    assert again == stored


def test_listindexes_entry_puts_v_key_and_name_first():
    stored = norm({"a": 1, "t": "text"})
    entry = list_indexes_entry(stored)
    assert list(entry)[:3] == ["v", "key", "name"] and entry["v"] == 2
    assert entry["key"] == {"a": 1, "_fts": "text", "_ftsx": 1}
    assert entry["textIndexVersion"] == 3


def test_is_text_key():
    assert is_text_key({"a": 1, "b": "text"})
    assert is_text_key({"_fts": "text", "_ftsx": 1})
    assert not is_text_key({"a": 1, "b": "hashed"})


@pytest.mark.parametrize("weights, found", [({"t": 0}, 0), ({"t": 0.5}, 0), ({"t": -3}, -3),
                                            ({"t": 100000}, 100000), ({"t": 1e12}, -2147483648),
                                            ({"t": math.nan}, -2147483648)])
def test_weight_out_of_range(weights, found):
    fails(CANNOT, f"text index weight must be in the exclusive interval (0,100000) but found: {found}",
          {"t": "text"}, weights=weights)


def test_weight_just_inside_the_range_is_accepted():
    assert norm({"t": "text"}, weights={"t": 99999.9})["weights"] == {"t": 99999}


def test_weight_errors():
    fails(CANNOT, "weight for text index needs numeric type", {"t": "text"}, weights={"t": "5"})
    fails(CANNOT, "weight for text index needs numeric type", {"t": "text"}, weights={"t": True})
    fails(CANNOT, "text index option 'weights' must be an object", {"t": "text"}, weights="t")
    fails(CANNOT, "text index option 'weights' must be an object", {"t": "text"}, weights=None)
    fails(CANNOT, "weight cannot be on an empty field", {"t": "text"}, weights={"": 1})
    fails(CANNOT, "weight cannot have empty path component", {"t": "text"}, weights={"a..b": 1})
    fails(CANNOT, "weight cannot have path component with $ prefix", {"t": "text"}, weights={"a.$b": 1})
    fails(CANNOT, "weight cannot have path component with $ prefix", {"a.$**": "text"})
    fails(CANNOT, "text index option 'weights' must specify fields or the wildcard", {"_fts": "text", "_ftsx": 1})


def test_language_errors():
    fails(CANNOT, "default_language needs a string type", {"t": "text"}, default_language=1)
    fails(CANNOT, "default_language is not valid", {"t": "text"}, default_language="klingon")
    fails(CANNOT, "language_override must be a string", {"t": "text"}, language_override=None)
    for bad in ("", "$lang", "a.b"):
        fails(CANNOT, "language_override is not valid", {"t": "text"}, language_override=bad)


def test_default_language_accepts_codes_and_any_ascii_case():
    for name in ("fr", "FRENCH", "French", "none", "nb", "Tr"):
        assert norm({"t": "text"}, default_language=name)["default_language"] == name


def test_text_index_version():
    fails(CANNOT, "text index option 'textIndexVersion' must be a number", {"t": "text"}, textIndexVersion="3")
    fails(CANNOT, "bad textIndexVersion: 4", {"t": "text"}, textIndexVersion=4)
    fails(CANNOT, "bad textIndexVersion: 0", {"t": "text"}, textIndexVersion=0.5)
    assert norm({"t": "text"}, textIndexVersion=3.9)["textIndexVersion"] == 3


@pytest.mark.parametrize("version", [1, 2, Int64(2)])
def test_legacy_versions_are_refused_not_built_as_version_3(version):
    with pytest.raises(CommandError) as e:
        norm({"t": "text"}, textIndexVersion=version)
    assert e.value.code == ErrorCode.NotImplemented


def test_key_pattern_errors():
    fails(CANNOT, "'text' fields in index must all be adjacent", {"a": "text", "b": 1, "c": "text"})
    fails(CANNOT, "text index with reserved fields _fts/_ftsx not allowed", {"_ftsx": 1, "a": "text"})
    fails(CANNOT, "text index with reserved fields _fts/_ftsx not allowed", {"a": "text", "_ftsx": 1})
    fails(CANNOT, "expected value 1 or -1 for non-text key in compound index", {"a": 2, "b": "text"})
    fails(CANNOT, "expected value 1 or -1 for non-text key in compound index", {"a": "text", "b": 0.5})
    fails(CANNOT, "expected value 1 or -1 for non-text key in compound index", {"a": "text", "b": "2d"})
    fails(CANNOT, 'expecting _fts:"text"', {"_fts": "word", "_ftsx": 1, "a": "text"})
    fails(CANNOT, "expecting _ftsx:1", {"_fts": "text", "_ftsx": 2})
    fails(CANNOT, "expected _ftsx after _fts", {"_fts": "text"}, weights={"a": 1})
    fails(CANNOT, "expected _ftsx after _fts", {"_fts": "text", "a": 1}, weights={"a": 1})
    fails(CANNOT, "'text' fields in index must all be adjacent",
          {"_fts": "text", "_ftsx": 1, "b": "text"}, weights={"a": 1})


def test_non_text_directions_truncate_like_mongod():
    # numberInt(1.5) == 1: accepted, and stored as given.
    assert norm({"a": 1.5, "t": "text"})["key"]["a"] == 1.5


def test_number_int_matches_bsonelement_numberint():
    assert [number_int(v) for v in (3, 3.9, -3.9, Int64(2 ** 32 + 5), Decimal128("2.5"), Decimal128("3.5"),
                                    "7", None, True)] == [3, 3, -3, 5, 2, 4, 0, 0, 0]


def test_parsed_spec():
    stored = norm({"a": 1, "t": "text", "z": -1}, weights={"b.c": 3, "$**": 1},
                  default_language="es", language_override="lang")
    spec = TextIndexSpec.from_stored(stored)
    assert spec.weight_names == ("b.c", "t") and spec.weights == {"b.c": 3.0, "t": 1.0}
    assert spec.wildcard and spec.default_language.name == "spanish" and spec.language_override == "lang"
    assert spec.prefix == (("a", 1),) and spec.suffix == (("z", -1),)
    assert spec.weight_at("b") == "b.c" and spec.weight_at("t") == "t" and spec.weight_at("u") is None


def test_stored_spec_with_an_unknown_language_fails_to_load():
    stored = norm({"t": "text"})
    stored["default_language"] = "klingon"
    with pytest.raises(CommandError) as e:
        TextIndexSpec.from_stored(stored)
    assert e.value.code == 28682 and e.value.errmsg.startswith("Unrecognized language klingon found for text index.")
