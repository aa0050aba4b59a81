"""find's positional projection (`{"a.$": 1}`) through the find and findAndModify commands: the
element the filter's positional match points at, mongod 7.0's path rules, and its errors."""
from __future__ import annotations

import pytest


def one(run, doc, filter, projection, **kw):
    """The projected document (without _id) of `doc`, found by `filter`."""
    run({"delete": "p", "deletes": [{"q": {}, "limit": 0}]})
    run.insert("p", {"_id": 1, **doc})
    out = run.find("p", filter, projection=projection, **kw)
    assert len(out) == 1, out
    out[0].pop("_id", None)
    return out[0]


def error(run, filter, projection, doc=None):
    run({"delete": "p", "deletes": [{"q": {}, "limit": 0}]})
    run.insert("p", {"_id": 1, **(doc or {"xs": [1, 2, 3], "ys": [{"k": 1}]})})
    err = run.error({"find": "p", "filter": filter, "projection": projection})
    return err["code"], err["errmsg"]


GRADES = {"grades": [{"k": "a", "n": 1}, {"k": "b", "n": 2}, {"k": "a", "n": 3}], "other": [7, 8]}


def test_the_matched_element_of_a_scalar_array(run):
    assert one(run, {"xs": [5, 6, 7]}, {"xs": 6}, {"xs.$": 1}) == {"xs": [6]}


def test_the_first_matching_document_of_an_array_of_documents(run):
    assert one(run, GRADES, {"grades.k": "a"}, {"grades.$": 1}) == {"grades": [{"k": "a", "n": 1}]}
    assert one(run, GRADES, {"grades.n": {"$gt": 1}}, {"grades.$": 1}) == {"grades": [{"k": "b", "n": 2}]}


def test_other_fields_are_left_out_and_id_kept(run):
    run.insert("q", {"_id": 9, "xs": [1, 2], "b": 1})
    assert run.find("q", {"xs": 2}, projection={"xs.$": 1}) == [{"_id": 9, "xs": [2]}]
    assert run.find("q", {"xs": 2}, projection={"xs.$": 1, "_id": 0, "b": 1}) == [{"xs": [2], "b": 1}]


def test_nested_path_and_sub_document_spelling(run):
    doc = {"x": {"y": [{"a": 1, "b": 1}, {"a": 2, "b": 2}]}}
    assert one(run, doc, {"x.y.a": 2}, {"x.y.$": 1}) == {"x": {"y": [{"a": 2, "b": 2}]}}
    assert one(run, doc, {"x.y.a": 2}, {"x": {"y.$": 1}}) == {"x": {"y": [{"a": 2, "b": 2}]}}


def test_applied_to_the_first_array_on_the_path(run):
    doc = {"x": [0, 1, 2], "a": [{"b": {"c": [1, 2]}}, {"b": {"c": [3, 4]}}]}
    assert one(run, doc, {"x": 1}, {"a.b.c.$": 1}) == {"a": [{"b": {"c": [3, 4]}}]}
    assert one(run, {"x": [0, 1], "a": {"b": {"c": [5, 6]}}}, {"x": 1}, {"a.b.c.$": 1}) == {"a": {"b": {"c": [6]}}}


def test_a_path_without_array_or_missing_is_returned_as_inclusion(run):
    assert one(run, {"x": [0, 1], "a": {"b": {"c": 5}}}, {"x": 1}, {"a.b.c.$": 1}) == {"a": {"b": {"c": 5}}}
    assert one(run, {"x": [0, 1], "a": {"b": {"d": 5}}}, {"x": 1}, {"a.b.c.$": 1}) == {"a": {"b": {}}}
    assert one(run, {"x": 1}, {"x": 1}, {"g.$": 1}) == {}
    assert one(run, {"x": [1]}, {}, {"g.$": 1}) == {}


def test_the_position_comes_from_a_different_array_of_the_filter(run):
    doc = {"a": [1, 2, 3], "b": [4, 5, 6]}
    assert one(run, doc, {"a": 3}, {"b.$": 1}) == {"b": [6]}
    assert one(run, doc, {"a": {"$in": [2, 3]}}, {"b.$": 1}) == {"b": [5]}
    assert one(run, doc, {"$or": [{"a": 2}, {"a": 3}]}, {"b.$": 1}) == {"b": [5]}
    assert one(run, doc, {"a": {"$elemMatch": {"$gt": 1, "$lt": 3}}}, {"b.$": 1}) == {"b": [5]}


def test_beside_slice_of_another_array(run):
    doc = {"a": [1, 2, 3], "z": [11, 12, 13]}
    assert one(run, doc, {"z": 13}, {"a": {"$slice": 2}, "z.$": 1}) == {"a": [1, 2], "z": [13]}


def test_with_an_index_and_over_several_batches(run):
    run({"createIndexes": "p2", "indexes": [{"key": {"ys.d": 1}, "name": "d"}]})
    run.insert("p2", *[{"_id": i, "ys": [{"d": i}, {"d": 100 + i}]} for i in range(5)])
    first = run({"find": "p2", "filter": {"ys.d": {"$gte": 100}}, "projection": {"ys.$": 1},
                 "sort": {"_id": 1}, "batchSize": 2})
    cid = first["cursor"]["id"]
    more = run({"getMore": cid, "collection": "p2"})["cursor"]["nextBatch"]
    docs = first["cursor"]["firstBatch"] + more
    assert [d["ys"] for d in docs] == [[{"d": 100 + i}] for i in range(5)]


def test_no_recorded_position_is_51246(run):
    msg = "positional operator '.$' couldn't find a matching element in the array"
    assert error(run, {}, {"xs.$": 1}) == (51246, msg)
    assert error(run, {"xs": [1, 2, 3]}, {"xs.$": 1}) == (51246, msg)
    assert error(run, {"$or": [{"xs": 1}, {"zz": {"$exists": False}}]}, {"xs.$": 1}) == (51246, msg)
    assert error(run, {"$nor": [{"xs": 9}]}, {"xs.$": 1}) == (51246, msg)


def test_position_past_the_end_is_51247(run):
    assert error(run, {"xs": 3}, {"ys.$": 1}) == (51247, "positional operator '.$' element mismatch")


@pytest.mark.parametrize("projection,code,msg", [
    ({"xs.$": 1, "ys.$": 1}, 31276, "Cannot specify more than one positional projection per query."),
    ({"xs.$": 1, "ys": {"$elemMatch": {"k": 1}}}, 31255, "Cannot specify positional operator and $elemMatch."),
    ({"ys": {"$elemMatch": {"k": 1}}, "xs.$": 1}, 31256, "Cannot specify positional operator and $elemMatch."),
    ({"xs.$": {"$slice": 1}}, 31271, "positional projection cannot be used with an expression or sub object"),
    ({"xs.$": "x"}, 31308, "positional projection cannot be used with a literal"),
    ({"xs.$": 0}, 31395, "positional projection cannot be used with exclusion"),
    ({"xs.$": 1, "ys": 0}, 31254, "Cannot do exclusion on field ys in inclusion projection"),
    ({"ys": 0, "xs.$": 1}, 31253, "Cannot do inclusion on field xs.$ in exclusion projection"),
    ({"xs": 1, "xs.$": 1}, 31250, "Path collision at xs"),
    ({".$": 1}, 5392900, "Projection on field .$ is invalid"),
])
def test_projection_rules(run, projection, code, msg):
    assert error(run, {"xs": 1}, projection) == (code, msg)


def test_positional_in_the_middle_of_a_path_is_31394(run):
    code, msg = error(run, {"ys.k": 1}, {"ys.$.k": 1})
    assert code == 31394 and msg.startswith("As of 4.4, it's illegal to specify positional operator in the middle")
    assert error(run, {"ys.k": 1}, {"ys.$.$": 1})[0] == 31394


@pytest.mark.parametrize("filter,code,msg", [
    ({"$where": "true", "xs": 1}, 2, "$where is not allowed in this context"),
    ({"$and": [{"xs": 1}, {"$expr": True}]}, 224, "$expr is not allowed in this context"),
    ({"$jsonSchema": {}}, 224, "$jsonSchema is not allowed in this context"),
])
def test_special_filter_features_are_refused_beside_positional(run, filter, code, msg):
    assert error(run, filter, {"xs.$": 1}) == (code, msg)


def test_refused_before_any_document_is_read(run):
    err = run.error({"find": "nothing_here", "filter": {}, "projection": {"a.$": 1, "b.$": 1}})
    assert err["code"] == 31276


def test_aggregation_refuses_positional(run):
    run.insert("p", {"_id": 1, "xs": [1]})
    err = run.error({"aggregate": "p", "pipeline": [{"$project": {"xs.$": 1}}], "cursor": {}})
    assert (err["code"], err["errmsg"]) == (31324, "Cannot use positional projection in aggregation projection")


def test_find_and_modify_fields_project_the_pre_image(run):
    run.insert("f", {"_id": 1, "xs": [5, 6, 7]})
    reply = run({"findAndModify": "f", "query": {"xs": 6}, "update": {"$set": {"t": 1}}, "fields": {"xs.$": 1}})
    assert reply["value"] == {"_id": 1, "xs": [6]}
    reply = run({"findAndModify": "f", "query": {"xs": 7}, "remove": True, "fields": {"xs.$": 1}})
    assert reply["value"] == {"_id": 1, "xs": [7]}


def test_find_and_modify_positional_with_new_is_bad_value_and_writes_nothing(run):
    run.insert("f", {"_id": 1, "xs": [5, 6, 7]})
    err = run.error({"findAndModify": "f", "query": {"xs": 6}, "update": {"$set": {"t": 1}},
                     "fields": {"xs.$": 1}, "new": True})
    assert (err["code"], err["errmsg"]) == (2, "Cannot use a positional projection and return the new document")
    assert run.find("f") == [{"_id": 1, "xs": [5, 6, 7]}]


def test_find_and_modify_bad_fields_write_nothing(run):
    run.insert("f", {"_id": 1, "xs": [5, 6, 7]})
    err = run.error({"findAndModify": "f", "query": {"xs": 6}, "update": {"$set": {"t": 1}},
                     "fields": {"xs.$": 1, "ys.$": 1}})
    assert err["code"] == 31276
    assert run.find("f") == [{"_id": 1, "xs": [5, 6, 7]}]
