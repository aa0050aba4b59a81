"""Server-side JavaScript in a sandbox: $where, $function, $accumulator and mapReduce.

The engine is QuickJS (quickjs-ng's bindings): one sandbox per operation (operation.py), no host
access (sandbox.py), BSON <-> JS values by mongod's rules (convert.py). Commands bind the
operation's settings and deadline with `bind`; the operators find it with `current()`.
"""
from __future__ import annotations

from .functions import AccumulatorState, JsFunction, call_function, parse_function
from .functions import parse_accumulator as parse_js_accumulator
from .mapreduce import MapReduce, MapReduceSpec
from .operation import Operation, ScriptSettings, bind, current, operating
from .where import compile_where

ENGINE_NAME = "quickjs"  # buildInfo.javascriptEngine (mongod: "mozjs")

__all__ = ["AccumulatorState", "ENGINE_NAME", "JsFunction", "MapReduce", "MapReduceSpec", "Operation",
           "ScriptSettings", "bind", "call_function", "compile_where", "current", "operating", "parse_function",
           "parse_js_accumulator"]
