"""The JavaScript sandbox: no host access, limits, and BSON <-> JS values by mongod's rules."""
from __future__ import annotations

import datetime
import math
import time

import pytest
from bson.binary import Binary
from bson.code import Code
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from ginkgodb.errors import CommandError
from ginkgodb.query.js import JsFunction, ScriptSettings, bind
from ginkgodb.query.operation import running


def js(body, *args, this=None):
    return JsFunction(body).call(this, list(args))


@pytest.mark.parametrize("probe", [
    "require('fs').readFileSync('/etc/passwd')",
    "process.env.HOME",
    "std.loadFile('/etc/passwd')",
    "os.exec(['id'])",
    "fetch('http://127.0.0.1/')",
    "new XMLHttpRequest()",
    "load('/etc/passwd')",
    "readFile('/etc/passwd')",
    "setTimeout(function(){}, 1)",
])
def test_scripts_cannot_reach_the_host(probe):
    assert js(f"function() {{ try {{ {probe}; return 'reached'; }} catch (e) {{ return e.name; }} }}") == \
        "ReferenceError"


def test_dynamic_import_of_host_modules_fails():
    body = "function() { var r = 'pending'; import('os').then(function(){ r = 'loaded' }, function(e){ r = 'refused' }); return r; }"
    assert js(body) in ("pending", "refused")


def test_the_global_object_holds_only_the_language_and_the_bson_types():
    names = set(js("function() { return Object.getOwnPropertyNames(globalThis); }"))
    assert {"ObjectId", "NumberLong", "emit", "JSON", "Math"} <= names
    assert not names & {"require", "process", "std", "os", "fetch", "setTimeout", "print"}


def test_each_operation_gets_a_fresh_sandbox():
    with bind(ScriptSettings()):
        js("function() { globalThis.leak = 42; }")
        assert js("function() { return typeof leak; }") == "number"
    with bind(ScriptSettings()):
        assert js("function() { return typeof leak; }") == "undefined"


def test_a_runaway_script_stops_at_the_function_time_limit():
    with bind(ScriptSettings(fn_timeout_ms=200)):
        start = time.monotonic()
        with pytest.raises(CommandError) as info:
            js("function() { while (true) {} }")
        assert info.value.code == 139 and time.monotonic() - start < 5
        assert js("function() { return 1 }") == 1.0  # a new sandbox replaces the interrupted one


class _Ctx:
    def __init__(self, deadline=None):
        self.deadline, self.killed = deadline, False

    def check_interrupt(self):
        if self.killed:
            raise CommandError(11601, "operation was interrupted")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise CommandError(50, "operation exceeded time limit")


def test_the_operation_deadline_bounds_a_call_and_reports_max_time():
    with running(_Ctx(time.monotonic() + 0.2)), bind(ScriptSettings()):
        with pytest.raises(CommandError) as info:
            js("function() { while (true) {} }")
    assert info.value.code == 50


def test_a_killed_operation_stops_before_the_next_call():
    ctx = _Ctx()
    with running(ctx), bind(ScriptSettings()):
        assert js("function() { return 1 }") == 1.0
        ctx.killed = True
        with pytest.raises(CommandError) as info:
            js("function() { return 1 }")
    assert info.value.code == 11601


def test_memory_limit():
    with bind(ScriptSettings(heap_limit_mb=16)):
        with pytest.raises(CommandError) as info:
            js("function() { var a = []; while (true) a.push('x'.repeat(1000) + a.length); }")
        assert (info.value.code, info.value.errmsg) == (139, "Out of memory")
        assert js("function() { return 2 }") == 2.0


def test_script_errors_read_as_mongod_prints_them():
    with pytest.raises(CommandError) as info:
        js("function() { return nope.x; }")
    assert info.value.code == 31439
    assert info.value.errmsg.startswith("js function failed to execute: ReferenceError: nope is not defined :\n")


OID = ObjectId("5f0c3c3c3c3c3c3c3c3c3c3c")
WHEN = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000)


@pytest.mark.parametrize("value,expression,expected", [
    (1, "typeof x", "number"),
    (2.5, "typeof x", "number"),
    (Int64(7), "x instanceof NumberLong && x.toNumber() === 7 && typeof x", "object"),
    (Int64(2 ** 62), "x.toString()", 'NumberLong("4611686018427387904")'),
    (Decimal128("1.10"), "x.toString()", 'NumberDecimal("1.10")'),
    (OID, "x.str", str(OID)),
    (OID, "x.toString()", f'ObjectId("{OID}")'),
    (WHEN, "x instanceof Date && x.getTime()", 1714979289123),
    (b"\x01\x02", "x.subtype() + ':' + x.hex() + ':' + x.length()", "0:0102:2"),
    (Binary(b"\xff", 4), "x.subtype() + ':' + x.base64()", "4:/w=="),
    (Regex("^a.c", "im"), "x instanceof RegExp && x.flags", "im"),
    (Timestamp(5, 6), "x.t + ',' + x.i", "5,6"),
    (DBRef("c", 3, "d"), "x.$ref + x.$id + x.$db", "c3d"),
    (MinKey(), "x === MinKey", True),
    (MaxKey(), "x === MaxKey", True),
    (None, "x === null", True),
    (float("nan"), "isNaN(x)", True),
    ({"a": [1, {"b": "c"}]}, "x.a[1].b", "c"),
])
def test_bson_values_in(value, expression, expected):
    out = js(f"function(x) {{ return {expression}; }}", value)
    assert out == expected or (isinstance(expected, int) and out == float(expected))


@pytest.mark.parametrize("expression,expected", [
    ("1", 1.0),
    ("NumberInt(5)", 5),
    ("NumberLong('9007199254740993')", Int64(9007199254740993)),
    ("NumberDecimal('2.50')", Decimal128("2.50")),
    ("new ObjectId('5f0c3c3c3c3c3c3c3c3c3c3c')", OID),
    ("new Date(0)", datetime.datetime(1970, 1, 1)),
    ("/a+b/i", Regex("a+b", "i")),
    ("BinData(0, 'AQI=')", b"\x01\x02"),
    ("Timestamp(1, 2)", Timestamp(1, 2)),
    ("DBRef('c', 1)", DBRef("c", 1.0)),
    ("MinKey", MinKey()),
    ("undefined", None),
    ("[1, 'a', null, {b: true}]", [1.0, "a", None, {"b": True}]),
])
def test_js_values_out(expression, expected):
    out = js(f"function() {{ return {expression}; }}")
    assert out == expected and type(out) is type(expected)


def test_non_finite_and_negative_zero_doubles_survive_both_ways():
    out = js("function(a, b, c) { return [a, b, c, -0, 1/0]; }", float("inf"), float("-inf"), float("nan"))
    assert out[0] == math.inf and out[1] == -math.inf and math.isnan(out[2])
    assert math.copysign(1.0, out[3]) < 0 and out[4] == math.inf


def test_functions_come_back_as_code_and_dates_keep_milliseconds():
    assert isinstance(js("function() { return function(){ return 1 }; }"), Code)
    assert js("function(d) { return new Date(d.getTime() + 1); }", WHEN) == WHEN + datetime.timedelta(milliseconds=1)
