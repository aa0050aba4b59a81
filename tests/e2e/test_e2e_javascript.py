"""Server-side JavaScript over the wire with pymongo: $where, $function, mapReduce, killOp-free
time limits, and a server started with --noscripting."""
from __future__ import annotations

import pymongo
import pytest
from bson.code import Code
from bson.son import SON
from pymongo.errors import ExecutionTimeout, OperationFailure

from ginkgodb.server.testing import running_server

pytestmark = pytest.mark.slow


@pytest.fixture
def posts(db):
    db.posts.insert_many([{"_id": i, "n": i, "tags": ["a", "b"] if i % 2 else ["b"]} for i in range(50)])
    return db.posts


def test_where_with_pymongo(posts):
    assert [d["_id"] for d in posts.find({"$where": "this.n > 46"})] == [47, 48, 49]
    assert [d["_id"] for d in posts.find().where(Code("function() { return obj.n < 2; }"))] == [0, 1]
    assert posts.database.command("count", "posts", query={"$where": "this.tags.length == 2"})["n"] == 25
    with pytest.raises(OperationFailure) as info:  # count_documents is an aggregation: $match refuses $where
        posts.count_documents({"$where": "true"})
    assert info.value.details["errmsg"] == "$where is not allowed inside of a $match aggregation expression"


def test_where_over_several_batches(posts):
    cursor = posts.find({"$where": "this.n % 5 == 0"}, batch_size=3)
    assert [d["_id"] for d in cursor] == list(range(0, 50, 5))


def test_where_runaway_script_answers_max_time_ms(posts):
    with pytest.raises(ExecutionTimeout):
        list(posts.find({"$where": "while (true) {}"}).max_time_ms(300))


def test_function_and_accumulator_with_pymongo(posts):
    out = list(posts.aggregate([
        {"$match": {"n": {"$lt": 4}}},
        {"$group": {"_id": None, "total": {"$accumulator": {
            "init": "function() { return 0; }", "accumulate": "function(s, n) { return s + n; }",
            "accumulateArgs": ["$n"], "merge": "function(a, b) { return a + b; }", "lang": "js"}}}},
        {"$project": {"_id": 0, "total": 1, "twice": {"$function": {
            "body": "function(t) { return t * 2; }", "args": ["$total"], "lang": "js"}}}}]))
    assert out == [{"total": 6.0, "twice": 12.0}]


def test_map_reduce_inline_and_to_a_collection(db, posts):
    cmd = SON([("mapReduce", "posts"), ("map", Code("function() { this.tags.forEach(function(t) { emit(t, 1); }); }")),
               ("reduce", Code("function(k, vs) { return Array.sum(vs); }"))])
    inline = db.command(SON([*cmd.items(), ("out", {"inline": 1})]))
    assert inline["results"] == [{"_id": "a", "value": 25.0}, {"_id": "b", "value": 50.0}]
    assert db.command(SON([*cmd.items(), ("out", "tag_counts")]))["result"] == "tag_counts"
    assert {d["_id"]: d["value"] for d in db.tag_counts.find()} == {"a": 25.0, "b": 50.0}


def test_noscripting_server_refuses_javascript(tmp_path):
    with running_server(str(tmp_path / "data"), subprocess=True, quiet=True, noscripting=True) as (host, port):
        client = pymongo.MongoClient(host, port, serverSelectionTimeoutMS=5000)
        try:
            coll = client.t.c
            coll.insert_one({"a": 1})
            with pytest.raises(OperationFailure) as info:
                list(coll.find({"$where": "true"}))
            assert info.value.code == 6108304
            with pytest.raises(OperationFailure) as info:
                client.t.command("mapReduce", "c", map="function() {}", reduce="function() {}", out={"inline": 1})
            assert info.value.code == 31264
            opts = client.admin.command("getCmdLineOpts")
            assert opts["parsed"]["security"] == {"javascriptEnabled": False}
        finally:
            client.close()
