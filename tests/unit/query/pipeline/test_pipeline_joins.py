"""$lookup, $graphLookup, $unionWith and $facet over other collections."""
from bson.int64 import Int64
from pipekit import code_of, run

PRODUCTS = [{"_id": 1, "name": "p1"}, {"_id": 2, "name": "p2", "tags": ["x", "y"]},
            {"_id": 3, "name": "p3"}]
COLLS = {"products": PRODUCTS}


def test_lookup_equality_matches_numbers_of_any_width():
    out = run([{"$lookup": {"from": "products", "localField": "pid", "foreignField": "_id",
                            "as": "p"}}], [{"pid": 1.0}, {"pid": Int64(2)}, {"pid": 9}],
              collections=COLLS)
    assert [[p["name"] for p in d["p"]] for d in out] == [["p1"], ["p2"], []]


def test_lookup_array_local_field_matches_any_element():
    out = run([{"$lookup": {"from": "products", "localField": "ids", "foreignField": "_id",
                            "as": "p"}}], [{"ids": [3, 1]}], collections=COLLS)
    assert [p["_id"] for p in out[0]["p"]] == [1, 3]


def test_lookup_array_foreign_field_and_missing_local():
    out = run([{"$lookup": {"from": "products", "localField": "t", "foreignField": "tags",
                            "as": "p"}}], [{"t": "y"}, {}], collections=COLLS)
    assert [p["_id"] for p in out[0]["p"]] == [2]
    assert [p["_id"] for p in out[1]["p"]] == [1, 3]


def test_lookup_pipeline_form_with_let():
    spec = {"from": "products", "let": {"want": "$w"},
            "pipeline": [{"$match": {"$expr": {"$eq": ["$name", "$$want"]}}},
                         {"$project": {"_id": 1}}], "as": "p"}
    assert run([{"$lookup": spec}], [{"w": "p3"}], collections=COLLS) == \
        [{"w": "p3", "p": [{"_id": 3}]}]


def test_lookup_uncorrelated_pipeline():
    spec = {"from": "products", "pipeline": [{"$count": "n"}], "as": "c"}
    assert run([{"$lookup": spec}], [{}, {}], collections=COLLS) == [{"c": [{"n": 3}]}] * 2


def test_lookup_validation():
    assert code_of([{"$lookup": {"from": "x", "localField": "a", "foreignField": "b"}}]) == 40414
    assert code_of([{"$lookup": {"from": "x", "as": "a", "localField": "a"}}]) == 9
    assert code_of([{"$lookup": {"from": "x", "as": 1, "localField": "a",
                                 "foreignField": "b"}}]) == 14
    assert code_of([{"$lookup": {"from": "x", "as": "a", "bogus": 1}}]) == 40415
    assert code_of([{"$lookup": {"from": "x", "as": "a", "pipeline": [{"$out": "y"}]}}]) == 51047


def test_graph_lookup_follows_edges_with_depth():
    people = [{"_id": "a", "boss": "b"}, {"_id": "b", "boss": "c"}, {"_id": "c", "boss": None}]
    spec = {"from": "people", "startWith": "$boss", "connectFromField": "boss",
            "connectToField": "_id", "as": "chain", "depthField": "d"}
    out = run([{"$graphLookup": spec}], [{"_id": "a", "boss": "b"}],
              collections={"people": people})
    assert [(p["_id"], p["d"]) for p in out[0]["chain"]] == [("b", 0), ("c", 1)]
    spec["maxDepth"] = 0
    out = run([{"$graphLookup": spec}], [{"_id": "a", "boss": "b"}],
              collections={"people": people})
    assert [p["_id"] for p in out[0]["chain"]] == ["b"]


def test_union_with_appends_other_collection():
    out = run([{"$unionWith": {"coll": "products", "pipeline": [{"$limit": 1}]}}], [{"x": 1}],
              collections=COLLS)
    assert out == [{"x": 1}, PRODUCTS[0]]


def test_facet_runs_each_pipeline_on_same_input():
    out = run([{"$facet": {"n": [{"$count": "n"}], "top": [{"$sort": {"v": -1}},
                                                           {"$limit": 1}]}}],
              [{"v": 1}, {"v": 3}])
    assert out == [{"n": [{"n": 2}], "top": [{"v": 3}]}]
    assert code_of([{"$facet": {"a": [{"$facet": {}}]}}]) == 40600
    assert code_of([{"$facet": {"a": 1}}]) == 40170
