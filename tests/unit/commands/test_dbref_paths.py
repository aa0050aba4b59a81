"""DBRef field paths (`link.$id`, `$ref`, `$db`): mongod's FieldPath accepts these three
`$`-prefixed names, in $lookup, expressions, `let`, projections and sorts; any other
`$`-prefixed component stays 16410."""
from __future__ import annotations

import pytest
from bson.dbref import DBRef


@pytest.fixture
def linked(run):
    run.insert("authors", {"_id": 1, "name": "ann"}, {"_id": 2, "name": "bob"})
    run.insert("books", {"_id": 10, "title": "t1", "author": DBRef("authors", 2),
                         "reviewers": [DBRef("authors", 1), DBRef("authors", 2, "other")]},
               {"_id": 11, "title": "t2", "author": DBRef("authors", 1), "reviewers": []})
    return run


def agg(run, coll, pipeline):
    return run({"aggregate": coll, "pipeline": pipeline, "cursor": {}})["cursor"]["firstBatch"]


def test_lookup_local_field_through_a_dbref(linked):
    out = agg(linked, "books", [{"$sort": {"_id": 1}},
                                {"$lookup": {"from": "authors", "localField": "author.$id",
                                             "foreignField": "_id", "as": "a"}},
                                {"$project": {"name": {"$first": "$a.name"}}}])
    assert out == [{"_id": 10, "name": "bob"}, {"_id": 11, "name": "ann"}]


def test_lookup_local_field_through_an_array_of_dbrefs(linked):
    out = agg(linked, "books", [{"$match": {"_id": 10}},
                                {"$lookup": {"from": "authors", "localField": "reviewers.$id",
                                             "foreignField": "_id", "as": "r"}},
                                {"$project": {"_id": 0, "names": "$r.name"}}])
    assert out == [{"names": ["ann", "bob"]}]


def test_lookup_foreign_field_through_a_dbref(linked):
    out = agg(linked, "authors", [{"$sort": {"_id": 1}},
                                  {"$lookup": {"from": "books", "localField": "_id",
                                               "foreignField": "author.$id", "as": "wrote"}},
                                  {"$project": {"titles": "$wrote.title"}}])
    assert out == [{"_id": 1, "titles": ["t2"]}, {"_id": 2, "titles": ["t1"]}]


def test_let_variables_and_expressions_read_dbref_fields(linked):
    out = agg(linked, "books", [{"$match": {"_id": 10}},
                                {"$lookup": {"from": "authors", "let": {"who": "$author.$id"},
                                             "pipeline": [{"$match": {"$expr": {"$eq": ["$_id", "$$who"]}}}],
                                             "as": "a"}},
                                {"$project": {"_id": 0, "n": {"$first": "$a.name"}, "ref": "$author.$ref",
                                              "dbs": "$reviewers.$db", "ids": "$reviewers.$id"}}])
    assert out == [{"n": "bob", "ref": "authors", "dbs": ["other"], "ids": [1, 2]}]


def test_project_and_find_projection_of_a_dbref_field(linked):
    assert agg(linked, "books", [{"$match": {"_id": 11}}, {"$project": {"author.$id": 1}}]) == \
        [{"_id": 11, "author": {"$id": 1}}]
    assert linked.find("books", {"_id": 10}, projection={"author.$ref": 1, "reviewers.$id": 1}) == \
        [{"_id": 10, "author": {"$ref": "authors"}, "reviewers": [{"$id": 1}, {"$id": 2}]}]
    assert linked.find("books", {"_id": 11}, projection={"author.$id": 0, "reviewers": 0, "title": 0}) == \
        [{"_id": 11, "author": {"$ref": "authors"}}]


def test_sort_and_group_by_a_dbref_field(linked):
    assert [d["_id"] for d in linked.find("books", {}, sort={"author.$id": 1})] == [11, 10]
    assert agg(linked, "books", [{"$group": {"_id": "$author.$ref", "n": {"$sum": "$author.$id"}}}]) == \
        [{"_id": "authors", "n": 3}]


@pytest.mark.parametrize("cmd", [
    {"aggregate": "books", "pipeline": [{"$project": {"author.$foo": 1}}], "cursor": {}},
    {"aggregate": "books", "pipeline": [{"$project": {"x": "$author.$idx"}}], "cursor": {}},
    {"aggregate": "books", "pipeline": [{"$lookup": {"from": "authors", "localField": "a.$x",
                                                     "foreignField": "_id", "as": "r"}}], "cursor": {}},
    {"find": "books", "projection": {"author.$ids": 1}},
    {"find": "books", "sort": {"author.$x": 1}},
])
def test_other_dollar_prefixed_components_stay_16410(linked, cmd):
    err = linked.error(cmd)
    assert (err["code"], err["errmsg"]) == (
        16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
