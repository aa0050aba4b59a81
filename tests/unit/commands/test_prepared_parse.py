"""The prepared parse (CommandSpec.parse per layout) answers exactly what the full parse answers:
the same Args for every value, the same errors for values a layout's first command did not have."""
from __future__ import annotations

import bson
import pytest
from bson.raw_bson import RawBSONDocument

from ginkgodb.commands import COMMANDS
from ginkgodb.errors import CommandError, ErrorCode

FIND = COMMANDS["find"]


def _fields(args) -> dict:
    return {k: v for k, v in vars(args).items() if k not in ("cmd", "layout")}


def _full(cmd):
    """What the full parse gives (the layout not yet prepared)."""
    FIND._prepared.clear()
    return FIND.parse(cmd)


def test_a_repeated_layout_reads_the_same_arguments():
    first = {"find": "c", "filter": {"a": 1}, "limit": 3, "singleBatch": True, "$db": "db"}
    FIND.parse(first)
    layout = ("find", tuple(first), tuple(map(type, first.values())))
    assert layout in FIND._prepared
    again = {"find": "d", "filter": {"b": 2}, "limit": 7, "singleBatch": False, "$db": "other"}
    prepared = FIND.parse(again)
    assert _fields(prepared) == _fields(_full(again))
    assert (prepared.coll, prepared.db, prepared.limit, prepared.single_batch) == ("d", "other", 7, False)


def test_a_value_refused_by_its_reader_is_refused_on_the_prepared_path():
    FIND.parse({"find": "c", "limit": 1, "$db": "db"})
    with pytest.raises(CommandError) as prepared:
        FIND.parse({"find": "c", "limit": -1, "$db": "db"})
    with pytest.raises(CommandError) as full:
        _full({"find": "c", "limit": -1, "$db": "db"})
    assert (prepared.value.code, str(prepared.value)) == (full.value.code, str(full.value))


@pytest.mark.parametrize("cmd", [
    {"find": "c", "limit": 2.0, "$db": "db"},           # a double limit is read as an int
    {"find": "c", "filter": RawBSONDocument(bson.encode({"a": 1})), "$db": "db"},   # decoded
    {"find": "c", "singleBatch": 1, "$db": "db"},       # a number read as a bool
])
def test_values_of_another_type_take_their_reader(cmd):
    FIND.parse({"find": "c", "limit": 1, "filter": {}, "singleBatch": True, "$db": "db"})
    assert _fields(FIND.parse(cmd)) == _fields(_full(cmd))
    assert _fields(FIND.parse(cmd)) == _fields(FIND.parse(cmd))   # and again, now prepared


def test_a_bool_limit_is_refused_after_an_int_one():
    FIND.parse({"find": "c", "limit": 1, "$db": "db"})
    with pytest.raises(CommandError) as exc:
        FIND.parse({"find": "c", "limit": True, "$db": "db"})   # a bool is no int: its reader decides
    assert exc.value.code == ErrorCode.TypeMismatch


def test_bad_names_are_refused_whatever_was_prepared():
    FIND.parse({"find": "c", "$db": "db"})
    for bad in ({"find": "", "$db": "db"}, {"find": "c", "$db": "a b"}, {"find": "c.$x", "$db": "db"}):
        with pytest.raises(CommandError):
            FIND.parse(bad)


def test_unknown_fields_are_never_prepared():
    with pytest.raises(CommandError) as exc:
        FIND.parse({"find": "c", "bogus": 1, "$db": "db"})
    assert exc.value.code == ErrorCode.IDLUnknownField
    with pytest.raises(CommandError):
        FIND.parse({"find": "c", "bogus": 1, "$db": "db"})   # refused again: nothing was kept
