"""Query operands in the Python shapes pymongo accepts, and the collation argument."""
import collections
import datetime
import re
import uuid

import bson
import pytest
from bson.binary import Binary, UuidRepresentation
from bson.raw_bson import RawBSONDocument
from bson.son import SON
from matchkit import matches

from ginkgodb.errors import CommandError
from ginkgodb.query.match import compile_filter


def test_tuple_operand_is_an_array():
    assert matches({"a": (1, 2)}, {"a": [1, 2]})
    assert matches({"a": {"$in": (1, 2)}}, {"a": 2})


def test_uuid_operand_is_bindata_subtype_4():
    u = uuid.UUID("12345678123456781234567812345678")
    stored = Binary.from_uuid(u, UuidRepresentation.STANDARD)
    assert matches({"a": u}, {"a": stored})
    assert matches({"a": {"$in": [u]}}, {"a": stored})


def test_son_and_ordered_dict_filters_and_operands():
    spec = SON([("a", SON([("$gt", 1)]))])
    assert matches(spec, {"a": 2})
    assert matches({"a": collections.OrderedDict([("x", 1), ("y", 2)])}, {"a": {"x": 1, "y": 2}})


def test_raw_bson_filter():
    raw = RawBSONDocument(bson.encode({"a": {"$in": [1, 2]}, "b.c": "x"}))
    assert matches(raw, {"a": 2, "b": {"c": "x"}})
    assert not matches(raw, {"a": 3, "b": {"c": "x"}})


def test_compiled_pattern_operand():
    assert matches({"a": {"$in": [re.compile("^x")]}}, {"a": "xy"})
    assert matches({"a": {"$not": re.compile("^x")}}, {"a": "yx"})


def test_timezone_aware_datetime_operand_compares_in_utc():
    stored = datetime.datetime(2024, 5, 1, 12, 0)
    paris = datetime.timezone(datetime.timedelta(hours=2))
    assert matches({"t": datetime.datetime(2024, 5, 1, 14, 0, tzinfo=paris)}, {"t": stored})


def test_datetime_operand_is_truncated_to_milliseconds_like_a_stored_date():
    stored = datetime.datetime(2024, 5, 1, 12, 0, 0, 123000)
    assert matches({"t": datetime.datetime(2024, 5, 1, 12, 0, 0, 123456)}, {"t": stored})


def test_filter_operands_are_not_mutated():
    spec = {"a": {"$in": (1, 2)}, "b": [(1, 2)]}
    compile_filter(spec)
    assert spec == {"a": {"$in": (1, 2)}, "b": [(1, 2)]}


def test_none_filter_matches_everything():
    assert compile_filter(None)({"a": 1})


def test_simple_collation_is_accepted_and_others_refused():
    compile_filter({"a": 1}, collation={"locale": "simple"})
    compile_filter({"a": 1}, collation={})
    with pytest.raises(CommandError) as info:
        compile_filter({"a": 1}, collation={"locale": "fr"})
    assert info.value.code == 238


def test_matcher_is_reusable_and_exposes_its_closure():
    m = compile_filter({"a": {"$gt": 1}})
    assert m.match({"a": 2}) is True
    assert [m({"a": i}) for i in range(4)] == [False, False, True, True]
