"""parse_update_statement's shortcut for plain statements gives what its general checks give."""
from __future__ import annotations

import bson
import pytest
from bson.raw_bson import RawBSONDocument

from ginkgodb.commands.write import parse_update_statement
from ginkgodb.errors import CommandError

STATEMENTS = [
    {"q": {"sku": "a"}, "u": {"$inc": {"n": 1}}},
    {"q": {"sku": "a"}, "u": {"$inc": {"n": 1}}, "multi": False, "upsert": True},
    {"q": {}, "u": {"x": 1}, "multi": True, "upsert": False},
    {"u": {"$set": {"a": 1}}, "q": {"a": {"$gt": 0}}, "upsert": False},
    {"q": {"a": 1}, "u": [{"$set": {"b": 1}}], "multi": False},   # a pipeline: the general path
    {"q": {"a": 1}, "u": {"$set": {"b": 1}}, "multi": 1},          # a number for a flag
    {"q": {"a": 1}, "u": {"$set": {"b": 1}}, "upsert": None},
]


@pytest.mark.parametrize("st", STATEMENTS)
def test_shortcut_matches_general_path(st):
    general = parse_update_statement(RawBSONDocument(bson.encode(st)), {"v": 1})
    assert parse_update_statement(st, {"v": 1}) == general


@pytest.mark.parametrize("st", [
    {"q": {"a": 1}},
    {"u": {"$set": {"a": 1}}},
    {"q": {"a": 1}, "u": {"$set": {"a": 1}}, "multi": "yes"},
    {"q": {"a": 1}, "u": 5},
])
def test_bad_statements_fail_alike(st):
    with pytest.raises(CommandError) as fast:
        parse_update_statement(st)
    with pytest.raises(CommandError) as general:
        parse_update_statement(RawBSONDocument(bson.encode(st)))
    assert (fast.value.code, str(fast.value)) == (general.value.code, str(general.value))
