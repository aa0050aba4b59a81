"""Server-side JavaScript through the commands: $where, $function, $accumulator, mapReduce, the
javascriptEnabled switch and the time limits, with mongod's answers."""
from __future__ import annotations

import pytest
from bson.code import Code
from support.runner import Runner

from ginkgodb.commands import CommandContext

DOCS = [{"_id": i, "a": i, "tags": ["x", "y"] if i % 2 else ["y", "z"]} for i in range(6)]


@pytest.fixture
def filled(run):
    run.insert("c", *DOCS)
    return run


def agg(run, pipeline, coll="c"):
    return run({"aggregate": coll, "pipeline": pipeline, "cursor": {}})["cursor"]["firstBatch"]


def err(reply):
    return reply["code"], reply["errmsg"]


# ---- $where -------------------------------------------------------------------------------------

def test_where_binds_this_and_obj(filled):
    assert [d["_id"] for d in filled.find("c", {"$where": "this.a > 3"})] == [4, 5]
    assert [d["_id"] for d in filled.find("c", {"$where": Code("function() { return obj.a % 2 == 0; }")})] == [0, 2, 4]
    assert [d["_id"] for d in filled.find("c", {"a": {"$lt": 3}, "$where": "var t = this.tags; t.indexOf('x') >= 0"})] == [1]


def test_where_in_count_distinct_update_delete_and_find_and_modify(filled):
    assert filled({"count": "c", "query": {"$where": "this.a >= 4"}})["n"] == 2
    assert filled({"distinct": "c", "key": "a", "query": {"$where": "this.a < 2"}})["values"] == [0, 1]
    assert filled({"update": "c", "updates": [{"q": {"$where": "this.a == 1"}, "u": {"$set": {"w": 1}}}]})["nModified"] == 1
    out = filled({"findAndModify": "c", "query": {"$where": "this.a == 2"}, "update": {"$set": {"w": 2}}, "new": True})
    assert out["value"]["w"] == 2
    assert filled({"delete": "c", "deletes": [{"q": {"$where": "this.a > 4"}, "limit": 0}]})["n"] == 1


@pytest.mark.parametrize("where,code,msg", [
    (5, 2, "$where got bad type"),
    ("", 2, "code for $where cannot be empty"),
    (Code("this.a", {"x": 1}), 4649201, "$where no longer supports deprecated BSON type CodeWScope"),
    ("function( {", 6108306, "$where compile error"),
])
def test_where_parse_errors(filled, where, code, msg):
    assert err(filled.error({"find": "c", "filter": {"$where": where}})) == (code, msg)


def test_where_refused_in_the_wrong_places(filled):
    assert err(filled.error({"find": "c", "filter": {"a": {"$where": "true"}}})) == (2, "$where cannot be applied to a field")
    assert err(filled.error({"find": "c", "filter": {"tags": {"$elemMatch": {"$where": "true"}}}})) == (
        2, "$where can only be applied to the top-level document")
    assert err(filled.error({"create": "v", "validator": {"$where": "true"}})) == (2, "$where is not allowed in this context")
    assert filled.error({"aggregate": "c", "pipeline": [{"$match": {"$where": "true"}}], "cursor": {}})["code"] == 2


def test_where_script_error_is_5038802(filled):
    code, msg = err(filled.error({"find": "c", "filter": {"$where": "this.a.b.c"}}))
    assert code == 5038802
    assert msg.startswith("error on invocation of $where function:\nTypeError: ")


def test_where_infinite_loop_stops_at_max_time_ms(filled):
    reply = filled.error({"find": "c", "filter": {"$where": "while (true) {}"}, "maxTimeMS": 200})
    assert (reply["code"], reply["codeName"]) == (50, "MaxTimeMSExpired")


def test_function_time_limit_is_a_server_parameter(filled, admin):
    assert admin({"getParameter": 1, "internalQueryJavaScriptFnTimeoutMillis": 1})[
        "internalQueryJavaScriptFnTimeoutMillis"] == 60000
    admin({"setParameter": 1, "internalQueryJavaScriptFnTimeoutMillis": 150})
    try:
        reply = filled.error({"find": "c", "filter": {"$where": "while (true) {}"}})
        assert reply["code"] == 139
    finally:
        admin({"setParameter": 1, "internalQueryJavaScriptFnTimeoutMillis": 60000})
    assert admin.error({"setParameter": 1, "internalQueryJavaScriptFnTimeoutMillis": 0})["code"] == 2


# ---- $function ----------------------------------------------------------------------------------

def test_function_runs_with_its_args(filled):
    out = agg(filled, [{"$match": {"_id": {"$lt": 3}}},
                       {"$project": {"r": {"$function": {"body": "function(a, t) { return a * 10 + t.length; }",
                                                         "args": ["$a", "$tags"], "lang": "js"}}}}])
    assert out == [{"_id": 0, "r": 2.0}, {"_id": 1, "r": 12.0}, {"_id": 2, "r": 22.0}]


def test_function_in_expr_of_a_find(filled):
    f = {"$expr": {"$function": {"body": Code("function(a) { return a == 3; }"), "args": ["$a"], "lang": "js"}}}
    assert [d["_id"] for d in filled.find("c", f)] == [3]


@pytest.mark.parametrize("spec,code,msg", [
    ("x", 31260, "$function requires an object as an argument, found: string"),
    ({"args": [], "lang": "js"}, 31261, "The body function must be specified."),
    ({"body": "$a", "args": [], "lang": "js"}, 31432, "The body function must be a constant expression"),
    ({"body": 5, "args": [], "lang": "js"}, 31262, "The body function must evaluate to type string or code"),
    ({"body": "function(){}", "lang": "js"}, 31263, "The args field must be specified."),
    ({"body": "function(){}", "args": []}, 31418, "The lang field must be specified."),
    ({"body": "function(){}", "args": [], "lang": "python"}, 31419,
     "Currently the only supported language specifier is 'js'."),
    ({"body": "function(){}", "args": "$a", "lang": "js"}, 31266, "The args field must be of type array"),
])
def test_function_errors(filled, spec, code, msg):
    assert err(filled.error({"aggregate": "c", "pipeline": [{"$project": {"r": {"$function": spec}}}],
                             "cursor": {}})) == (code, msg)


def test_function_exception_is_31439(filled):
    code, msg = err(filled.error({"aggregate": "c", "pipeline": [{"$project": {"r": {"$function": {
        "body": "function() { throw new Error('no'); }", "args": [], "lang": "js"}}}}], "cursor": {}}))
    assert code == 31439 and msg.startswith("js function failed to execute: Error: no :\n")


# ---- $accumulator -------------------------------------------------------------------------------

ACC = {"init": "function(base) { return {n: 0, s: base}; }", "initArgs": [100],
       "accumulate": "function(st, a) { return {n: st.n + 1, s: st.s + a}; }", "accumulateArgs": ["$a"],
       "merge": "function(x, y) { return {n: x.n + y.n, s: x.s + y.s}; }",
       "finalize": "function(st) { return st.s / st.n; }", "lang": "js"}


def test_accumulator_init_accumulate_finalize(filled):
    out = agg(filled, [{"$group": {"_id": {"$mod": ["$a", 2]}, "r": {"$accumulator": ACC}}}, {"$sort": {"_id": 1}}])
    assert out == [{"_id": 0, "r": (100 + 0 + 2 + 4) / 3}, {"_id": 1, "r": (100 + 1 + 3 + 5) / 3}]


def test_accumulator_init_args_see_the_group_key(filled):
    acc = dict(ACC, initArgs=["$_id"], finalize="function(st) { return st.s; }")
    out = agg(filled, [{"$group": {"_id": {"$mod": ["$a", 2]}, "r": {"$accumulator": acc}}}, {"$sort": {"_id": 1}}])
    assert out == [{"_id": 0, "r": 6.0}, {"_id": 1, "r": 10.0}]


@pytest.mark.parametrize("change,code,msg", [
    ({"init": None}, 4544707, "$accumulator missing required argument 'init'"),
    ({"accumulate": None}, 4544708, "$accumulator missing required argument 'accumulate'"),
    ({"merge": None}, 4544709, "$accumulator missing required argument 'merge'"),
    ({"accumulateArgs": None}, 4544710, "$accumulator missing required argument 'accumulateArgs'"),
    ({"init": "$a"}, 4544701, "$accumulator 'init' must be a constant expression"),
    ({"merge": 3}, 4544702, "$accumulator 'merge' must be a String or Code"),
    ({"lang": 1}, 4544704, "$accumulator lang must be a string; found: int"),
    ({"lang": "py"}, 4544705, "$accumulator only supports lang: 'js'"),
    ({"other": 1}, 4544706, "$accumulator got an unexpected field: other"),
    ({"initArgs": 5}, 4544711, "$accumulator initArgs must evaluate to an array: 5"),
    ({"accumulateArgs": "$a"}, 4544712, "$accumulator accumulateArgs must evaluate to an array: 0"),
])
def test_accumulator_errors(filled, change, code, msg):
    acc = {k: v for k, v in {**ACC, **change}.items() if v is not None}
    reply = filled.error({"aggregate": "c", "pipeline": [{"$match": {"_id": 0}},
                                                          {"$group": {"_id": None, "r": {"$accumulator": acc}}}],
                          "cursor": {}})
    assert err(reply) == (code, msg)


def test_accumulator_argument_must_be_an_object(filled):
    reply = filled.error({"aggregate": "c", "pipeline": [{"$group": {"_id": None, "r": {"$accumulator": 1}}}],
                          "cursor": {}})
    assert err(reply) == (4544703, "$accumulator expects an object as an argument; found: int")


# ---- mapReduce ----------------------------------------------------------------------------------

MAP = Code("function() { this.tags.forEach(function(t) { emit(t, 1); }); }")
REDUCE = Code("function(key, values) { return Array.sum(values); }")


def mr(run, **kw):
    return run({"mapReduce": "c", "map": MAP, "reduce": REDUCE, **kw})


def test_map_reduce_inline(filled):
    assert mr(filled, out={"inline": 1}) == {"results": [{"_id": "x", "value": 3.0}, {"_id": "y", "value": 6.0},
                                                         {"_id": "z", "value": 3.0}], "ok": 1.0}


def test_map_reduce_query_sort_limit_scope_finalize(filled):
    reply = mr(filled, out={"inline": 1}, query={"a": {"$gte": 1}}, sort={"a": -1}, limit=2,
               scope={"k": 10}, finalize=Code("function(key, v) { return v * k; }"))
    assert reply["results"] == [{"_id": "x", "value": 10.0}, {"_id": "y", "value": 20.0}, {"_id": "z", "value": 10.0}]


def test_map_reduce_out_replace_merge_reduce(filled):
    assert mr(filled, out="o", query={"a": {"$lt": 2}}) == {"result": "o", "ok": 1.0}
    assert filled.find("o", sort={"_id": 1}) == [{"_id": "x", "value": 1.0}, {"_id": "y", "value": 2.0},
                                                 {"_id": "z", "value": 1.0}]
    mr(filled, out={"reduce": "o"}, query={"a": {"$lt": 2}})
    assert [d["value"] for d in filled.find("o", sort={"_id": 1})] == [2.0, 4.0, 2.0]
    filled.insert("o", {"_id": "w", "value": 9})
    mr(filled, out={"merge": "o"}, query={"a": 0})
    assert filled.find("o", sort={"_id": 1}) == [{"_id": "w", "value": 9}, {"_id": "x", "value": 2.0},
                                                 {"_id": "y", "value": 1.0}, {"_id": "z", "value": 1.0}]
    mr(filled, out={"replace": "o"}, query={"a": 0})
    assert filled.find("o", sort={"_id": 1}) == [{"_id": "y", "value": 1.0}, {"_id": "z", "value": 1.0}]


def test_map_reduce_out_to_another_database(filled):
    reply = mr(filled, out={"replace": "o", "db": "elsewhere", "nonAtomic": True})
    assert reply["result"] == {"db": "elsewhere", "collection": "o"}
    other = Runner(filled.ctx.engine, db="elsewhere")
    assert len(other.find("o")) == 3


@pytest.mark.parametrize("out,code,msg", [
    (5, 2, "'out' must be either a string or an object"),
    ({"inline": 1, "db": "x"}, 72, "'inline' must be specified alone"),
    ({"inline": 2}, 2, "'inline' takes only numeric '1'"),
    ({"db": "x"}, 2, "'out' requires 'replace', 'merge' or 'reduce'"),
    ({"merge": 1}, 2, "'merge' supports only string consisting of output collection name"),
    ({"merge": "o", "nonAtomic": False}, 2, "nonAtomic field value must be true"),
    ({"merge": "o", "sharded": False}, 2, "sharded field value must be true"),
    ({"replace": "o", "db": "admin"}, 115, "cannot target internal database as output"),
    ({"replace": "o", "extra": 1}, 2, "'out' supports only output type with collection name, optional 'sharded' and optional 'db'"),
])
def test_map_reduce_out_errors(filled, out, code, msg):
    assert err(filled.error({"mapReduce": "c", "map": MAP, "reduce": REDUCE, "out": out})) == (code, msg)


def test_map_reduce_required_fields(filled):
    assert filled.error({"mapReduce": "c", "map": MAP, "reduce": REDUCE})["errmsg"] == \
        "BSON field 'mapReduce.out' is missing but a required field"
    assert filled.error({"mapReduce": "c", "reduce": REDUCE, "out": {"inline": 1}})["code"] == 40414


def test_map_reduce_emit_errors_and_views(filled):
    reply = filled.error({"mapReduce": "c", "map": "function() { emit(1); }", "reduce": REDUCE, "out": {"inline": 1}})
    assert reply["code"] == 31470 and "emit takes 2 args" in reply["errmsg"]
    filled({"create": "view", "viewOn": "c", "pipeline": []})
    assert filled.error({"mapReduce": "view", "map": MAP, "reduce": REDUCE, "out": {"inline": 1}})["code"] == 166


# ---- the switch ---------------------------------------------------------------------------------

def test_disabled_javascript_is_refused_as_mongod_noscripting(engine):
    run = Runner(engine)
    run.ctx = CommandContext(engine=engine, javascript_enabled=False)
    run.insert("c", {"_id": 1, "a": 1})
    assert err(run.error({"find": "c", "filter": {"$where": "true"}})) == (
        6108304, "no globalScriptEngine in $where parsing")
    refused = (31264, "Cannot run server-side javascript without the javascript engine enabled")
    assert err(run.error({"aggregate": "c", "pipeline": [{"$project": {"r": {"$function": {
        "body": "function() {}", "args": [], "lang": "js"}}}}], "cursor": {}})) == refused
    assert err(run.error({"aggregate": "c", "pipeline": [{"$group": {"_id": None, "r": {"$accumulator": ACC}}}],
                          "cursor": {}})) == refused
    assert err(run.error({"mapReduce": "c", "map": MAP, "reduce": REDUCE, "out": {"inline": 1}})) == refused
    assert err(run.error({"mapReduce": "c", "map": MAP, "reduce": REDUCE, "out": "o"})) == refused
    assert run.find("o") == []
