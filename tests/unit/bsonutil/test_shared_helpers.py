"""The number predicates, path splitter and sentinel every layer shares."""
from __future__ import annotations

import decimal
import enum

from bson.decimal128 import Decimal128
from bson.int64 import Int64

from ginkgodb.bsonutil.paths import split_path
from ginkgodb.bsonutil.sentinels import ABSENT
from ginkgodb.bsonutil.types import is_bson_number, is_number, is_number_instance


class _Level(enum.IntEnum):
    HIGH = 2


def test_the_three_number_predicates_agree_on_decoded_bson():
    for v in (0, 2**40, Int64(5), 1.5, float("nan"), Decimal128("1.1")):
        assert is_bson_number(v) and is_number_instance(v) and is_number(v), v
    for v in (True, False, None, "1", [1], {"a": 1}):
        assert not (is_bson_number(v) or is_number_instance(v) or is_number(v)), v


def test_they_differ_on_python_only_values():
    # subclasses: only the isinstance-based checks accept them
    assert not is_bson_number(_Level.HIGH) and is_number_instance(_Level.HIGH)
    # decimal.Decimal sorts as a number but is not a BSON type
    d = decimal.Decimal("1.5")
    assert is_number(d) and not is_number_instance(d) and not is_bson_number(d)


def test_split_path_keeps_empty_parts():
    assert split_path("a.b.0") == ("a", "b", "0")
    assert split_path("a..b") == ("a", "", "b")


def test_absent_equals_no_value():
    assert {"a": None}.get("b", ABSENT) is ABSENT
    assert ABSENT != None and ABSENT != 0  # noqa: E711
