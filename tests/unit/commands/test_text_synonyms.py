"""Text index synonyms (the `synonyms` option, a ginkgodb extension) through the commands, on
both storage engines: validation at createIndexes, listIndexes and explain, and the synonym
collection read as of each query's snapshot."""
from __future__ import annotations

MAPPINGS = [
    {"_id": "cars", "mappingType": "equivalent", "synonyms": ["car", "vehicle", "automobile"]},
    {"_id": "beer", "mappingType": "explicit", "input": ["beer"], "synonyms": ["beer", "brew", "pint"]},
]
DOCS = [
    {"_id": 1, "title": "red car"},
    {"_id": 2, "title": "blue vehicles"},
    {"_id": 3, "title": "an old automobile"},
    {"_id": 4, "title": "craft brew"},
    {"_id": 5, "title": "a pint of beer"},
    {"_id": 6, "title": "tea"},
]


def make(run, **options):
    run.insert("syn", *MAPPINGS)
    run.insert("c", *DOCS)
    run({"createIndexes": "c", "indexes": [{"key": {"title": "text"}, "name": "t", "synonyms": "syn", **options}]})


def search(run, text, **operand):
    docs = run.find("c", {"$text": {"$search": text, **operand}})
    return sorted(d["_id"] for d in docs)


def test_equivalent_words_find_each_other(run):
    make(run)
    assert search(run, "car") == [1, 2, 3]
    assert search(run, "vehicle") == [1, 2, 3]
    assert search(run, "Automobiles") == [1, 2, 3]   # folded and stemmed like the index terms


def test_explicit_mappings_go_one_way(run):
    make(run)
    assert search(run, "beer") == [4, 5]
    assert search(run, "brew") == [4]
    assert search(run, "pint") == [5]


def test_negations_and_other_words_still_apply(run):
    make(run)
    assert search(run, "car -red") == [2, 3]
    assert search(run, "tea car") == [1, 2, 3, 6]
    # case sensitive: the query's words keep their case, the synonyms the case they are written in
    assert search(run, "vehicle", **{"$caseSensitive": True}) == [1, 2, 3]
    assert search(run, "Vehicle", **{"$caseSensitive": True}) == [1, 2, 3]


def test_scores_count_each_matched_synonym(run):
    make(run)
    run.insert("c", {"_id": 7, "title": "car vehicle"})
    docs = run.find("c", {"$text": {"$search": "car"}}, projection={"s": {"$meta": "textScore"}},
                    sort={"s": {"$meta": "textScore"}})
    assert docs[0] == {"_id": 7, "title": "car vehicle", "s": 1.5}   # both words count
    assert {d["_id"]: d["s"] for d in docs[1:]} == {1: 0.75, 2: 0.75, 3: 0.75}


def test_changes_to_the_synonym_collection_apply_to_the_next_query(run):
    make(run)
    assert search(run, "tea") == [6]
    run.insert("syn", {"mappingType": "explicit", "input": ["tea"], "synonyms": ["tea", "car"]})
    assert search(run, "tea") == [1, 6]
    run({"delete": "syn", "deletes": [{"q": {"_id": "cars"}, "limit": 1}]})
    assert search(run, "vehicle") == [2]
    run({"drop": "syn"})
    assert search(run, "tea") == [6]


def test_a_missing_collection_is_no_synonyms(run):
    run.insert("c", *DOCS)
    run({"createIndexes": "c", "indexes": [{"key": {"title": "text"}, "name": "t", "synonyms": "later"}]})
    assert search(run, "car") == [1]
    run.insert("later", MAPPINGS[0])
    assert search(run, "car") == [1, 2, 3]


def test_list_indexes_and_explain_show_the_option(run):
    make(run)
    index = run({"listIndexes": "c"})["cursor"]["firstBatch"][1]
    assert index["synonyms"] == "syn" and "textKeyFormat" not in index
    stage = run.explain("c", {"$text": {"$search": "car"}})["queryPlanner"]["winningPlan"]
    assert stage["stage"] == "TEXT_MATCH" and stage["synonyms"] == "syn"
    assert stage["parsedTextQuery"]["terms"] == ["automobil", "car", "vehicl"]


def test_invalid_options_are_refused(run):
    run.insert("c", *DOCS)
    spec = {"key": {"title": "text"}, "name": "t"}
    bad_type = run.error({"createIndexes": "c", "indexes": [{**spec, "synonyms": 5}]})
    assert bad_type["code"] == 67 and bad_type["codeName"] == "CannotCreateIndex"
    bad_name = run.error({"createIndexes": "c", "indexes": [{**spec, "synonyms": "a$b"}]})
    assert bad_name["code"] == 73
    not_text = run.error({"createIndexes": "c", "indexes": [{"key": {"title": 1}, "name": "x", "synonyms": "syn"}]})
    assert not_text["code"] == 197
    run.insert("syn", {"_id": "odd", "mappingType": "oneway", "synonyms": ["a"]})
    bad_doc = run.error({"createIndexes": "c", "indexes": [{**spec, "synonyms": "syn"}]})
    assert bad_doc["code"] == 2 and "test.syn" in bad_doc["errmsg"] and "odd" in bad_doc["errmsg"]
    assert len(run({"listIndexes": "c"})["cursor"]["firstBatch"]) == 1   # nothing changed
    run({"createIndexes": "view_src", "indexes": [{"key": {"a": 1}, "name": "a"}]})
    run({"create": "v", "viewOn": "view_src", "pipeline": []})
    on_view = run.error({"createIndexes": "c", "indexes": [{**spec, "synonyms": "v"}]})
    assert on_view["code"] == 2


def test_a_mapping_made_invalid_later_fails_the_query(run):
    make(run)
    run.insert("syn", {"_id": "bad", "mappingType": "explicit", "synonyms": ["x"]})
    reply = run.error({"find": "c", "filter": {"$text": {"$search": "car"}}})
    assert reply["code"] == 2 and "'input'" in reply["errmsg"]


def test_a_different_synonym_source_is_a_different_index(run):
    make(run)
    reply = run.error({"createIndexes": "c", "indexes": [{"key": {"title": "text"}, "name": "t",
                                                          "synonyms": "other"}]})
    assert reply["code"] == 85


def test_leading_match_of_an_aggregation_expands_too(run):
    make(run)
    out = run({"aggregate": "c", "pipeline": [{"$match": {"$text": {"$search": "automobile"}}},
                                             {"$sort": {"_id": 1}}, {"$project": {"_id": 1}}],
               "cursor": {}})["cursor"]["firstBatch"]
    assert out == [{"_id": 1}, {"_id": 2}, {"_id": 3}]
