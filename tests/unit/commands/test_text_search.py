"""Text indexes and `$text` through the commands, on both storage engines: mongod 7.0's results,
scores, explain shapes and errors (docs/design/text-index.md)."""
from __future__ import annotations

import pytest

DOCS = [
    {"_id": 1, "title": "Baking a cake", "n": 1},
    {"_id": 2, "title": "cake", "n": 2},
    {"_id": 3, "title": "coffee shop", "n": 3},
    {"_id": 4, "title": "cake and coffee cake", "n": 4},
    {"_id": 5, "title": "Tea leaves", "n": 5},
]


@pytest.fixture
def coll(run):
    run({"insert": "c", "documents": DOCS})
    run({"createIndexes": "c", "indexes": [{"key": {"title": "text"}, "name": "title_text"}]})
    return run


def find(run, filt, **opts):
    return run({"find": "c", "filter": filt, **opts})["cursor"]["firstBatch"]


def ids(docs):
    return [d["_id"] for d in docs]


def test_create_index_stores_mongods_normalised_spec(coll):
    indexes = coll({"listIndexes": "c"})["cursor"]["firstBatch"]
    assert indexes[1] == {"v": 2, "key": {"_fts": "text", "_ftsx": 1}, "name": "title_text",
                          "weights": {"title": 1}, "default_language": "english",
                          "language_override": "language", "textIndexVersion": 3}


def test_one_text_index_per_collection(coll):
    reply = coll.error({"createIndexes": "c", "indexes": [{"key": {"body": "text"}, "name": "body_text"}]})
    assert reply["code"] == 85 and reply["codeName"] == "IndexOptionsConflict"
    reply = coll.error({"createIndexes": "c", "indexes": [{"key": {"a": 1, "body": "text"}, "name": "x"}]})
    assert reply["code"] == 67
    # the same index again is no error
    again = coll({"createIndexes": "c", "indexes": [{"key": {"title": "text"}, "name": "title_text"}]})
    assert again["numIndexesBefore"] == again["numIndexesAfter"] == 2


def test_bad_specs_and_documents_fail_as_mongod(run):
    reply = run.error({"createIndexes": "c", "indexes": [{"key": {"t": "text"}, "name": "t",
                                                          "default_language": "klingon"}]})
    assert reply["code"] == 67 and reply["errmsg"] == "default_language is not valid"
    run({"createIndexes": "c", "indexes": [{"key": {"t": "text"}, "name": "t"}]})
    reply = run.raw({"insert": "c", "documents": [{"_id": 1, "t": "x", "language": 5}]})
    assert reply["writeErrors"][0]["code"] == 17261
    assert run({"count": "c"})["n"] == 0  # nothing written, the index neither


def test_text_search_matches_stems_and_ranks(coll):
    assert sorted(ids(find(coll, {"$text": {"$search": "cakes"}}))) == [1, 2, 4]
    docs = find(coll, {"$text": {"$search": "cake coffee"}}, projection={"score": {"$meta": "textScore"}},
                sort={"score": {"$meta": "textScore"}})
    assert ids(docs) == [4, 2, 1, 3]
    assert docs[0]["score"] == pytest.approx(1.25 + 2 / 3)
    assert docs[1] == {"_id": 2, "title": "cake", "n": 2, "score": 1.1}
    assert docs[2]["score"] == 0.75


def test_negations_phrases_and_other_predicates(coll):
    assert ids(find(coll, {"$text": {"$search": "cake -coffee"}}, sort={"_id": 1})) == [1, 2]
    assert ids(find(coll, {"$text": {"$search": '"coffee cake"'}})) == [4]
    assert ids(find(coll, {"$text": {"$search": "cake"}, "n": {"$gte": 2}}, sort={"_id": 1})) == [2, 4]
    assert ids(find(coll, {"$and": [{"n": {"$lt": 4}}, {"$text": {"$search": "cake"}}]},
                    sort={"_id": 1})) == [1, 2]
    assert find(coll, {"$text": {"$search": "the a"}}) == []  # only stop words: nothing
    assert ids(find(coll, {"$text": {"$search": "Cake", "$caseSensitive": True}})) == []


def test_score_is_never_stored_nor_returned_unasked(coll):
    docs = find(coll, {"$text": {"$search": "cake"}}, sort={"score": {"$meta": "textScore"}},
                projection={"title": 1})
    assert ids(docs) == [4, 2, 1] and all(set(d) == {"_id", "title"} for d in docs)
    coll({"update": "c", "updates": [{"q": {"$text": {"$search": "tea"}}, "u": {"$set": {"hot": True}}}]})
    assert find(coll, {"_id": 5}) == [{"_id": 5, "title": "Tea leaves", "n": 5, "hot": True}]
    coll({"delete": "c", "deletes": [{"q": {"$text": {"$search": "shop"}}, "limit": 0}]})
    assert ids(find(coll, {}, sort={"_id": 1})) == [1, 2, 4, 5]


def test_writes_keep_the_index_in_step(coll):
    coll({"update": "c", "updates": [{"q": {"_id": 5}, "u": {"$set": {"title": "cake tea"}}}]})
    coll({"delete": "c", "deletes": [{"q": {"_id": 2}, "limit": 1}]})
    coll({"insert": "c", "documents": [{"_id": 6, "title": ["more", "cakes"]}]})
    assert sorted(ids(find(coll, {"$text": {"$search": "cake"}}))) == [1, 4, 5, 6]
    assert find(coll, {"$text": {"$search": "leaves"}}) == []


def test_count_distinct_and_aggregate(coll):
    assert coll({"count": "c", "query": {"$text": {"$search": "cake"}}})["n"] == 3
    assert coll({"distinct": "c", "key": "n", "query": {"$text": {"$search": "coffee"}}})["values"] == [3, 4]
    reply = coll({"aggregate": "c", "cursor": {}, "pipeline": [
        {"$match": {"$text": {"$search": "cake coffee"}}},
        {"$sort": {"s": {"$meta": "textScore"}, "_id": 1}},
        {"$project": {"title": 1}},
        {"$addFields": {"s": {"$meta": "textScore"}}},
    ]})
    docs = reply["cursor"]["firstBatch"]
    assert ids(docs) == [4, 2, 1, 3] and docs[1] == {"_id": 2, "title": "cake", "s": 1.1}
    grouped = coll({"aggregate": "c", "cursor": {}, "pipeline": [
        {"$match": {"$text": {"$search": "cake"}}}, {"$group": {"_id": None, "n": {"$sum": 1}}}]})
    assert grouped["cursor"]["firstBatch"] == [{"_id": None, "n": 3}]


def test_errors_as_mongod(coll, run):
    def error(filt, **opts):
        reply = coll.error({"find": "c", "filter": filt, **opts})
        return reply["code"], reply["errmsg"]

    assert error({"$text": {"$search": "a"}, "$or": [{"$text": {"$search": "b"}}, {"n": 1}]}) == (
        2, "Too many text expressions")
    assert error({"$nor": [{"$text": {"$search": "a"}}]}) == (2, "text expression not allowed in nor")
    assert error({"a": {"$elemMatch": {"$text": {"$search": "a"}}}})[0] == 2
    assert error({"$or": [{"$text": {"$search": "a"}}, {"n": 1}]})[0] == 291
    assert error({"$text": "cake"}) == (2, "$text expects an object")
    assert error({"$text": {"$search": 1}})[0] == 14
    assert error({"$text": {"$search": "a", "$language": "xx"}})[0] == 2
    assert error({"n": {"$bad": 1}, "$text": {"$search": "a"}})[0] == 2  # the filter parses first
    assert error({"$text": {"$search": "a"}}, projection={"s": {"$meta": "textScore"}, "a.$": 1})[0] == 2
    reply = coll.error({"aggregate": "c", "cursor": {}, "pipeline": [{"$match": {"n": 1}},
                                                                     {"$match": {"$text": {"$search": "a"}}}]})
    assert reply["code"] == 17313
    assert error({"$text": {"$search": "a"}}, min={"n": 1})[0] == 51173  # min needs a hint ...
    assert error({"$text": {"$search": "a"}}, hint={"n": 1})[0] == 2  # ... which $text refuses
    missing = run.error({"find": "nope", "filter": {"$text": {"$search": "a"}}})
    assert (missing["code"], missing["codeName"]) == (27, "IndexNotFound")
    run({"insert": "plain", "documents": [{"_id": 1}]})
    reply = run.error({"find": "plain", "filter": {"$text": {"$search": "a"}}})
    assert (reply["code"], reply["errmsg"]) == (27, "text index required for $text query")
    reply = run.error({"find": "plain", "filter": {}, "projection": {"s": {"$meta": "textScore"}}})
    assert reply["code"] == 40218


def test_or_with_indexed_branches(coll):
    coll({"createIndexes": "c", "indexes": [{"key": {"n": 1}, "name": "n_1"}]})
    docs = find(coll, {"$or": [{"$text": {"$search": "coffee"}}, {"n": 5}]}, sort={"_id": 1})
    assert ids(docs) == [3, 4, 5]


def test_compound_text_index_needs_its_prefix(run):
    run({"insert": "c", "documents": [{"_id": 1, "shop": "a", "t": "red shoes"},
                                      {"_id": 2, "shop": "b", "t": "red hat"},
                                      {"_id": 3, "shop": "a", "t": "blue hat"}]})
    run({"createIndexes": "c", "indexes": [{"key": {"shop": 1, "t": "text"}, "name": "shop_t"}]})
    reply = run.error({"find": "c", "filter": {"$text": {"$search": "red"}}})
    assert reply["code"] == 291 and "prefix fields" in reply["errmsg"]
    got = run({"find": "c", "filter": {"shop": "a", "$text": {"$search": "red hat"}}, "sort": {"_id": 1}})
    assert ids(got["cursor"]["firstBatch"]) == [1, 3]
    plan = run({"explain": {"find": "c", "filter": {"shop": "b", "$text": {"$search": "red"}}}})
    assert plan["queryPlanner"]["winningPlan"]["indexPrefix"] == {"shop": "b"}


def test_weights_and_languages(run):
    run({"insert": "c", "documents": [
        {"_id": 1, "title": "shoes", "body": "nothing"},
        {"_id": 2, "title": "nothing", "body": "shoes"},
        {"_id": 3, "title": "zapatos rojos", "body": "", "language": "spanish"},
    ]})
    run({"createIndexes": "c", "indexes": [{"key": {"title": "text", "body": "text"}, "name": "tb",
                                            "weights": {"title": 10}}]})
    docs = run({"find": "c", "filter": {"$text": {"$search": "shoe"}},
                "projection": {"s": {"$meta": "textScore"}}, "sort": {"s": {"$meta": "textScore"}}})
    assert [(d["_id"], d["s"]) for d in docs["cursor"]["firstBatch"]] == [(1, 10.0), (2, 1.0)]  # "shoes" is not its term "shoe": no 1.1
    got = run({"find": "c", "filter": {"$text": {"$search": "rojo", "$language": "spanish"}}})
    assert ids(got["cursor"]["firstBatch"]) == [3]


def test_wildcard_text_index(run):
    run({"insert": "c", "documents": [{"_id": 1, "a": {"b": "deep words"}}, {"_id": 2, "c": ["word"]}]})
    run({"createIndexes": "c", "indexes": [{"key": {"$**": "text"}, "name": "all"}]})
    got = run({"find": "c", "filter": {"$text": {"$search": "word"}}, "sort": {"_id": 1}})
    assert ids(got["cursor"]["firstBatch"]) == [1, 2]


def test_explain_shapes_as_mongod(coll):
    def winning(filt, **opts):
        return coll({"explain": {"find": "c", "filter": filt, **opts}})["queryPlanner"]["winningPlan"]

    scored = winning({"$text": {"$search": "cake coffee"}}, projection={"s": {"$meta": "textScore"}})
    assert scored["stage"] == "PROJECTION_DEFAULT"
    match = scored["inputStage"]
    assert match["stage"] == "TEXT_MATCH" and match["indexName"] == "title_text"
    assert match["parsedTextQuery"] == {"terms": ["cake", "coffe"], "negatedTerms": [], "phrases": [],
                                        "negatedPhrases": []}
    assert match["textIndexVersion"] == 3 and match["indexPrefix"] == {}
    fetch = match["inputStage"]
    assert fetch["stage"] == "FETCH" and fetch["inputStage"]["stage"] == "TEXT_OR"
    scans = fetch["inputStage"]["inputStages"]
    assert [s["stage"] for s in scans] == ["IXSCAN", "IXSCAN"]
    assert scans[0]["keyPattern"] == {"_fts": "text", "_ftsx": 1} and scans[0]["direction"] == "backward"
    # no score asked: OR, or the IXSCAN alone for one term (mongod elides TEXT_OR)
    plain = winning({"$text": {"$search": "cake coffee"}})
    assert plain["inputStage"]["inputStage"]["stage"] == "OR"
    single = winning({"$text": {"$search": "cake"}, "n": 2})
    assert single["inputStage"]["inputStage"]["stage"] == "IXSCAN"
    assert single["inputStage"]["filter"] == {"n": 2}
    stats = coll({"explain": {"find": "c", "filter": {"$text": {"$search": "cake -coffee"}}},
                  "verbosity": "executionStats"})["executionStats"]
    assert stats["nReturned"] == 2 and stats["totalKeysExamined"] == 3 and stats["totalDocsExamined"] == 3
    assert stats["executionStages"]["docsRejected"] == 1


def test_a_sort_on_the_score_alone_fetches_only_what_a_limit_returns(coll):
    cmd = {"find": "c", "filter": {"$text": {"$search": "cake coffee"}}, "limit": 2,
           "sort": {"s": {"$meta": "textScore"}}, "projection": {"s": {"$meta": "textScore"}}}
    docs = coll(cmd)["cursor"]["firstBatch"]
    assert [(d["_id"], d["s"]) for d in docs] == [(4, pytest.approx(1.25 + 2 / 3)), (2, 1.1)]
    stats = coll({"explain": cmd, "verbosity": "executionStats"})["executionStats"]
    assert stats["totalDocsExamined"] == 2 and stats["totalKeysExamined"] == 5
    assert stats["executionStages"]["inputStage"]["inputStage"]["stage"] == "SORT"


NESTED_DOCS = [
    {"_id": 1, "title": "Baking a cake", "n": 1, "k": "a"},
    {"_id": 2, "title": "cake", "n": 2, "k": "b"},
    {"_id": 3, "title": "coffee shop", "n": 3, "k": "a"},
    {"_id": 4, "title": "cake and coffee cake", "n": 4, "k": "b"},
    {"_id": 5, "title": "Tea leaves", "n": 5, "k": "a"},
]
CAKE = {"$text": {"$search": "cake"}}


@pytest.fixture
def nested(run):
    run({"insert": "c", "documents": NESTED_DOCS})
    run({"createIndexes": "c", "indexes": [{"key": {"title": "text"}, "name": "title_text"},
                                           {"key": {"n": 1}, "name": "n_1"}]})
    return run


def _brute(filt, text_ids=frozenset({1, 2, 4})):
    """The expected ids: the filter evaluated in Python, `$text` being "cake" (ids 1, 2, 4)."""
    def ok(node, doc):
        for key, value in node.items():
            if key == "$text":
                good = doc["_id"] in text_ids
            elif key == "$and":
                good = all(ok(b, doc) for b in value)
            elif key == "$or":
                good = any(ok(b, doc) for b in value)
            elif isinstance(value, dict):
                (op, arg), = value.items()
                good = {"$lt": doc[key] < arg, "$gte": doc[key] >= arg, "$ne": doc[key] != arg}[op]
            else:
                good = doc[key] == value
            if not good:
                return False
        return True
    return sorted(d["_id"] for d in NESTED_DOCS if ok(filt, d))


@pytest.mark.parametrize("filt", [
    {"$and": [{"k": "b"}, {"$or": [CAKE, {"n": 5}]}]},
    {"$or": [{"$and": [CAKE, {"k": "a"}]}, {"n": 3}]},
    {"$and": [{"$and": [{"n": {"$gte": 2}}, CAKE]}]},
    {"$or": [{"$or": [CAKE, {"n": 3}]}, {"n": 5}]},
    {"k": "a", "$or": [{"$and": [{"$or": [CAKE, {"n": 3}]}, {"n": {"$lt": 4}}]}, {"n": 5}]},
    {"$or": [{"$and": [CAKE, {"n": {"$ne": 2}}]}, {"n": {"$gte": 5}}], "k": {"$ne": "b"}},
])
def test_text_nested_in_and_and_indexed_or(nested, filt):
    assert sorted(ids(find(nested, filt))) == _brute(filt)


def test_text_nested_scores_only_what_the_lookup_found(nested):
    filt = {"$or": [{"$and": [CAKE, {"n": {"$lt": 4}}]}, {"n": 5}]}
    docs = find(nested, filt, projection={"s": {"$meta": "textScore"}}, sort={"s": {"$meta": "textScore"}})
    assert [d["_id"] for d in docs] == [2, 1, 5]
    assert docs[0]["s"] > docs[1]["s"] > 0 and "s" not in docs[2]
    plan = nested({"explain": {"find": "c", "filter": filt}})["queryPlanner"]["winningPlan"]
    assert plan["stage"] == "FETCH" and plan["inputStage"]["stage"] == "OR"
    assert [s["indexName"] for s in plan["inputStage"]["inputStages"]] == ["title_text", "n_1"]
    counted = nested({"count": "c", "query": filt})
    assert counted["n"] == 3


def test_text_nested_refusals_as_mongod(nested):
    def error(filt):
        reply = nested.error({"find": "c", "filter": filt})
        return reply["code"], reply["errmsg"]
    # an unindexed branch of an $or on the way to the $text: mongod's planner finds no plan
    assert error({"$or": [{"$and": [CAKE, {"k": "a"}]}, {"k": "b"}]}) == (291, "No query solutions")
    assert error({"k": "a", "$or": [CAKE, {"k": "b"}]}) == (291, "No query solutions")
    assert error({"$and": [{"$or": [CAKE, {"k": "b"}]}]}) == (
        291, "Failed to produce a solution for TEXT under OR - other non-TEXT clauses under OR have to "
             "be indexed as well.")
    assert error({"$or": [{"$and": [CAKE]}, {"$and": [{"n": 1}, CAKE]}]}) == (2, "Too many text expressions")
    assert error({"$and": [{"$nor": [CAKE]}]}) == (2, "text expression not allowed in nor")
    assert error({"$or": [{"a": {"$elemMatch": CAKE}}, {"n": 1}]})[0] == 2
    assert error({"$or": [{"a": {"$not": CAKE}}, {"n": 1}]})[0] == 2


def test_text_nested_beside_a_compound_prefix(run):
    run({"insert": "c", "documents": [{"_id": 1, "shop": "a", "t": "red shoes", "n": 1},
                                      {"_id": 2, "shop": "b", "t": "red hat", "n": 2},
                                      {"_id": 3, "shop": "a", "t": "blue hat", "n": 3}]})
    run({"createIndexes": "c", "indexes": [{"key": {"shop": 1, "t": "text"}, "name": "shop_t"},
                                           {"key": {"n": 1}, "name": "n_1"}]})
    red = {"$text": {"$search": "red"}}
    got = run({"find": "c", "filter": {"$or": [{"shop": "a", **red}, {"n": 3}]}})["cursor"]["firstBatch"]
    assert sorted(ids(got)) == [1, 3]
    reply = run.error({"find": "c", "filter": {"shop": "a", "$or": [red, {"n": 3}]}})
    assert reply["code"] == 291 and "prefix fields" in reply["errmsg"]
