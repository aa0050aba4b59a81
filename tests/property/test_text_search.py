"""Every `$text` query answers what a direct tokenize-stem-match over all documents answers:
the same documents, with the same textScore, whatever writes came before (the index is kept
in step) and whichever storage engine holds it."""
from __future__ import annotations

import bson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.engines import ENGINES, fresh_engine

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.query.text import TextIndexSpec, TextMatcher, parse_text_operator, parse_text_query, score_document

# stems shared by several forms, case and accents, stop words, a Spanish document
WORDS = ["cake", "Cakes", "baking", "baked", "coffee", "café", "CAFE", "the", "and", "red", "reds",
         "shoe", "shoes", "running", "runs", "tea", "leaf", "leaves", "zapatos", "rojo"]
word = st.sampled_from(WORDS)
text = st.lists(word, max_size=6).map(" ".join)
document = st.fixed_dictionaries({"title": text, "body": st.one_of(text, st.lists(text, max_size=2))},
                                 optional={"language": st.sampled_from(["spanish", "english", "none"]),
                                           "n": st.integers(0, 3)})
term = st.one_of(word, word.map(lambda w: "-" + w), st.lists(word, min_size=1, max_size=2)
                 .map(lambda ws: '"' + " ".join(ws) + '"'))
search = st.lists(term, min_size=1, max_size=4).map(" ".join)
text_query = st.fixed_dictionaries({"$search": search}, optional={
    "$caseSensitive": st.booleans(), "$diacriticSensitive": st.booleans(),
    "$language": st.sampled_from(["english", "spanish", "none"])})
writes = st.lists(st.tuples(st.integers(0, 7), st.one_of(document, st.none())), max_size=8)
INDEX = {"key": {"title": "text", "body": "text"}, "name": "tb", "weights": {"title": 3}}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("engines")


def _run(ctx, cmd):
    reply = dispatch(ctx, {**cmd, "$db": "t"})
    assert reply["ok"] == 1.0, reply
    return reply


@pytest.mark.parametrize("kind", ENGINES)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(document, max_size=8), writes, st.lists(text_query, min_size=1, max_size=3))
def test_text_queries_agree_with_a_direct_match(kind, scratch, docs, later, queries):
    with fresh_engine(kind, scratch) as engine:
        ctx = CommandContext(engine=engine)
        _run(ctx, {"insert": "c", "documents": [{"_id": i, **d} for i, d in enumerate(docs)] or [{"_id": 99}]})
        _run(ctx, {"createIndexes": "c", "indexes": [INDEX]})
        for target, doc in later:  # writes after the build: replacements, inserts, deletes
            if doc is None:
                _run(ctx, {"delete": "c", "deletes": [{"q": {"_id": target}, "limit": 1}]})
            else:
                _run(ctx, {"update": "c", "updates": [{"q": {"_id": target}, "u": doc, "upsert": True}]})
        stored = [bson.decode(bson.encode(d)) for d in
                  _run(ctx, {"find": "c", "filter": {}, "batchSize": 1000})["cursor"]["firstBatch"]]
        stored_spec = [ix for ix in _run(ctx, {"listIndexes": "c"})["cursor"]["firstBatch"] if ix["name"] == "tb"][0]
        spec = TextIndexSpec.from_stored(stored_spec)
        for operand in queries:
            query = parse_text_query(parse_text_operator(operand), spec.default_language)
            matcher = TextMatcher(spec, query)
            # mongod reads the documents holding one of the lookup terms (tokenized in each
            # document's language), then matches them with the query's options
            expected = {d["_id"]: matcher.score(d) for d in stored
                        if set(query.terms_for_bounds) & set(score_document(spec, d))
                        and matcher.matches(d, found_in_index=True)}
            reply = _run(ctx, {"find": "c", "filter": {"$text": operand}, "batchSize": 1000,
                               "projection": {"s": {"$meta": "textScore"}}})
            got = {d["_id"]: d["s"] for d in reply["cursor"]["firstBatch"]}
            assert got.keys() == expected.keys(), operand
            for key, score in expected.items():
                assert got[key] == pytest.approx(score), (operand, key)
            ranked = _run(ctx, {"find": "c", "filter": {"$text": operand}, "batchSize": 1000,
                                "sort": {"s": {"$meta": "textScore"}}, "projection": {"s": {"$meta": "textScore"}}})
            scores = [d["s"] for d in ranked["cursor"]["firstBatch"]]
            assert scores == sorted(scores, reverse=True)
