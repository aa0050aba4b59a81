"""The Python copy that stands in for the BSON round trip (client/plain.py) must give exactly
what the round trip gives: same values, same types, same key order, same errors."""
from __future__ import annotations

import collections
import datetime
import enum
import re
import uuid

import bson
import pytest
from bson.binary import Binary, UuidRepresentation
from bson.codec_options import CodecOptions, TypeEncoder, TypeRegistry
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.son import SON
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import bson_values

from ginkgodb.client.codec import to_wire, wire_value
from ginkgodb.client.plain import NotPlain, copy_command, copy_value, plain_codec

DEFAULT = CodecOptions()


def round_trip(doc, codec_options=DEFAULT):
    return bson.decode(bson.encode(doc, False, codec_options))


def same(a, b) -> bool:
    """Equal, of the same types all the way down, with the same key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and a != a:
        return b != b
    if isinstance(a, Decimal128):
        return a.bid == b.bid
    return a == b


def outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as exc:  # the exception itself is what is compared
        return "error", type(exc)


class Colour(enum.IntEnum):
    RED = 1


class Text(str):
    pass


class Money:
    def __init__(self, cents: int) -> None:
        self.cents = cents


class MoneyEncoder(TypeEncoder):
    python_type = Money

    def transform_python(self, value):
        return value.cents


PYTHON_SIDE = st.one_of(
    st.integers(-2 ** 70, 2 ** 70),
    st.datetimes(timezones=st.one_of(st.none(), st.timezones())),
    st.uuids(),
    st.sampled_from([Colour.RED, Text("t"), "\ud800", "é", re.compile("a.b", re.I), (1, 2),
                     SON([("b", 1), ("a", 2)]), collections.OrderedDict(a=1), Money(5),
                     {1: "int key"}, {"nul\x00key": 1}, {"é": "ü"}, b"\x00bytes"]),
)
VALUES = st.recursive(
    st.one_of(bson_values(6), PYTHON_SIDE),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=10,
)


PLAIN = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2 ** 63, 2 ** 63 - 1), st.floats(),
              st.text(max_size=4), st.binary(max_size=3), st.builds(Int64, st.integers(0, 9)),
              st.datetimes().map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000,
                                                     fold=0))),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=3).filter(lambda k: k != "_id"), PLAIN, max_size=4))
def test_plain_commands_are_copied_as_the_round_trip_gives_them(body):
    try:
        expected = round_trip(body)
    except Exception:   # keys with NULs, lone surrogates: not plain either
        with pytest.raises(NotPlain):
            copy_command(body)
        return
    assert same(copy_command(body), expected)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=3), VALUES, max_size=4))
def test_to_wire_gives_what_the_round_trip_gives(body):
    cmd = {"find": "c", **body, "$db": "db"}
    expected = outcome(round_trip, cmd)
    got = outcome(to_wire, cmd, DEFAULT)
    assert got[0] == expected[0]
    if got[0] == "ok":
        assert same(got[1], expected[1])
    else:
        assert got[1] is expected[1]


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_wire_value_gives_what_the_round_trip_gives(value):
    expected = outcome(lambda v: round_trip({"v": v})["v"], value)
    got = outcome(wire_value, value, DEFAULT)
    assert got[0] == expected[0]
    if got[0] == "ok":
        assert same(got[1], expected[1])


@pytest.mark.parametrize("value", [
    (1, 2), SON([("a", 1)]), collections.OrderedDict(a=1), uuid.uuid4(), re.compile("x"),
    datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
    datetime.datetime(2024, 1, 1, 0, 0, 0, 1500), Colour.RED, Text("t"), 2 ** 64, "\ud800",
    {1: 2}, {"a\x00": 1}, Binary(b"x", 3), Money(1), [[(1,)]],
])
def test_values_the_round_trip_would_change_are_not_plain(value):
    with pytest.raises(NotPlain):
        copy_value(value)


def test_plain_values_keep_their_types_and_big_ints_become_int64():
    when = datetime.datetime(2024, 1, 2, 3, 4, 5, 6000)
    out = copy_value({"i": 1, "big": 2 ** 40, "f": 1.5, "s": "é", "t": when, "n": None,
                      "l": [True, Int64(3)], "d": {"x": b"raw"}})
    assert type(out["big"]) is Int64 and out["big"] == 2 ** 40
    assert out["t"] is when and out["l"] == [True, 3] and type(out["l"][1]) is Int64


def test_containers_are_copied_never_shared():
    inner = {"tags": ["a"]}
    out = copy_value({"q": inner})
    inner["tags"].append("b")
    assert out == {"q": {"tags": ["a"]}}


def test_top_level_id_takes_the_round_trip_which_moves_it_first():
    with pytest.raises(NotPlain):
        copy_command({"a": 1, "_id": 2})
    assert list(to_wire({"a": 1, "_id": 2}, DEFAULT)) == ["_id", "a"]


def test_custom_encoders_disable_the_copy():
    registry = TypeRegistry([MoneyEncoder()])
    assert plain_codec(DEFAULT)
    assert not plain_codec(CodecOptions(type_registry=registry))
    assert not plain_codec(CodecOptions(type_registry=TypeRegistry(fallback_encoder=str)))
    opts = CodecOptions(type_registry=registry)
    assert to_wire({"find": "c", "filter": {"m": Money(250)}}, opts)["filter"] == {"m": 250}


def test_uuids_follow_the_uuid_representation():
    value = uuid.UUID(int=1)
    opts = CodecOptions(uuid_representation=UuidRepresentation.STANDARD)
    assert to_wire({"f": {"u": value}}, opts)["f"]["u"] == Binary.from_uuid(value)
    with pytest.raises(ValueError):
        to_wire({"f": {"u": value}}, DEFAULT)
