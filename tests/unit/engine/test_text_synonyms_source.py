"""The synonym source collection of a text index, read in a snapshot (engine/text_synonyms.py):
an unchanged collection gives the cached map; any change gives a new one."""
from __future__ import annotations

import pytest
from support.runner import Runner

from ginkgodb.engine import text_synonyms
from ginkgodb.errors import CommandError


def load(engine):
    reader = engine.reader()
    with reader:
        return text_synonyms.load(reader, reader.catalog, "test", "syn")


def test_the_parsed_map_is_cached_until_the_collection_changes(engine):
    run = Runner(engine)
    assert load(engine) is load(engine)   # missing: the empty map
    run.insert("syn", {"_id": 1, "mappingType": "equivalent", "synonyms": ["a", "b"]})
    first = load(engine)
    assert load(engine) is first
    run({"update": "syn", "updates": [{"q": {"_id": 1}, "u": {"$set": {"synonyms": ["a", "c"]}}}]})
    second = load(engine)
    assert second is not first and load(engine) is second


def test_option_values(engine):
    assert text_synonyms.check_option("test", "syn") == "syn"
    with pytest.raises(CommandError) as failure:
        text_synonyms.check_option("test", ["syn"])
    assert failure.value.code == 67
