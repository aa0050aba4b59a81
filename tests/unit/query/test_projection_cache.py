"""The compiled-projection cache of plain field specs: a repeated spec compiles once, and only
specs whose compilation cannot depend on anything else are kept."""
import pytest

from ginkgodb.errors import CommandError
from ginkgodb.query import metadata
from ginkgodb.query.projection import compile_projection

DOC = {"_id": 7, "a": 1, "b": {"c": 2, "d": 3}, "$geoNearDistance": 0.5}


def test_a_repeated_plain_spec_is_compiled_once():
    first = compile_projection({"a": 1, "b.c": 1})
    again = compile_projection({"a": 1, "b.c": 1})
    assert again is first
    assert again.apply(DOC) == {"_id": 7, "a": 1, "b": {"c": 2}}


def test_the_cached_projection_keeps_its_own_spec():
    spec = {"a": 1, "zz_own_copy": 1}
    compiled = compile_projection(spec)
    spec["b"] = 1   # the caller changing its dict afterwards changes nothing cached
    assert compiled.spec == {"a": 1, "zz_own_copy": 1}
    assert compile_projection({"a": 1, "zz_own_copy": 1}).apply(DOC) == {"_id": 7, "a": 1}


def test_values_of_other_types_are_distinct_entries():
    assert compile_projection({"a": 1}) is not compile_projection({"a": True})
    assert compile_projection({"a": 0}).apply(DOC) == {"_id": 7, "b": {"c": 2, "d": 3},
                                                        "$geoNearDistance": 0.5}
    assert compile_projection({"a": 1}).apply(DOC) == {"_id": 7, "a": 1}


def test_the_metadata_available_is_part_of_the_key():
    plain = compile_projection({"a": 1})
    with metadata.providing(*metadata.GEO_NEAR):
        near = compile_projection({"a": 1})
    assert near is not plain
    assert near.apply(DOC) == {"_id": 7, "a": 1, "$geoNearDistance": 0.5}   # kept for a later stage
    assert plain.apply(DOC) == {"_id": 7, "a": 1}
    assert compile_projection({"a": 1}) is plain


@pytest.mark.parametrize("spec", [{"a.$": 1}, {"a": {"$slice": 1}}, {"a": "$b"}, {"a": 1.0}])
def test_specs_beyond_plain_names_and_ints_are_compiled_each_time(spec):
    assert compile_projection(spec, query={"a": 1}) is not compile_projection(spec, query={"a": 1})


def test_aggregation_and_find_specs_are_kept_apart():
    find = compile_projection({"a": 1})
    agg = compile_projection({"a": 1}, for_aggregation=True)
    assert agg is not find
    assert agg.apply(DOC) == find.apply(DOC)


def test_a_bad_spec_still_fails_every_time():
    for _ in range(2):
        with pytest.raises(CommandError) as info:
            compile_projection({"a": 1, "b": 0})
        assert info.value.code == 31254
