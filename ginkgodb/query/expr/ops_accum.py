"""Accumulators used as expressions ($sum: [..] or $sum: "$array"), the N-forms, and misc."""
from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import bson
from bson.binary import Binary

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query import metadata

from .accumulate import avg_values, extreme, std_dev, sum_values
from .compiler import Fn, Scope, compile_node, const, nary, operator
from .operands import is_doc, unary
from .ops_logic import cmp_values
from .values import MISSING, as_int64, bson_repr, nullish, type_name


def _accumulator(name: str, fold: Callable[[list], Any]) -> None:
    @nary(name)
    def build(args: list[Fn]) -> Fn:
        if len(args) == 1:
            (arg,) = args

            def ev1(doc: Any, vars: Any) -> Any:
                v = arg(doc, vars)
                return fold(v if type(v) is list else [v])
            return ev1
        return lambda doc, vars: fold([fn(doc, vars) for fn in args])


_accumulator("$sum", sum_values)
_accumulator("$avg", avg_values)
_accumulator("$min", lambda vs: extreme(vs, -1))
_accumulator("$max", lambda vs: extreme(vs, 1))
_accumulator("$stdDevPop", lambda vs: std_dev(vs, False))
_accumulator("$stdDevSamp", lambda vs: std_dev(vs, True))


# ---- $firstN / $lastN / $maxN / $minN over arrays --------------------------------------------


def validate_n(name: str, n: Any) -> int:
    i = as_int64(n) if not isinstance(n, bool) and not nullish(n) else None
    if i is None:
        raise CommandError(ErrorCode.NOperatorNNotIntegral,
                           f"Value for 'n' must be of integral type, but found "
                           f"{bson_repr(n)}")
    if i <= 0:
        raise CommandError(ErrorCode.NOperatorNNotPositive,
                           f"'n' must be greater than 0, found {i}")
    return i


def _n_operator(name: str, pick: Callable[[list, int], list]) -> None:
    @operator(name)
    def parse(spec: Any, scope: Scope) -> Fn:
        if not isinstance(spec, dict):
            raise CommandError(ErrorCode.NOperatorSpecNotObject,
                               f"specification must be an object; found {bson_repr(spec)}")
        for key in spec:
            if key not in ("n", "input"):
                raise CommandError(ErrorCode.NOperatorUnknownArgument,
                                   f"Unknown argument for 'n' operator: {key}")
        if "n" not in spec:
            raise CommandError(ErrorCode.NOperatorMissingN, "Missing value for 'n'")
        if "input" not in spec:
            raise CommandError(ErrorCode.NOperatorMissingInput, "Missing value for 'input'")
        n_fn, inp = compile_node(spec["n"], scope), compile_node(spec["input"], scope)

        def ev(doc: Any, vars: Any) -> Any:
            n = validate_n(name, n_fn(doc, vars))
            arr = inp(doc, vars)
            if type(arr) is not list:
                raise CommandError(ErrorCode.NOperatorInputNotArray, "Input must be an array")
            return pick(arr, n)
        return ev


def _top(arr: list, n: int, sign: int) -> list:
    import functools
    vals = [v for v in arr if not nullish(v)]
    vals.sort(key=functools.cmp_to_key(cmp_values), reverse=sign > 0)
    return vals[:n]


_n_operator("$firstN", lambda arr, n: arr[:n])
_n_operator("$lastN", lambda arr, n: arr[-n:] if n < len(arr) else arr[:])
_n_operator("$maxN", lambda arr, n: _top(arr, n, 1))
_n_operator("$minN", lambda arr, n: _top(arr, n, -1))


# ---- misc --------------------------------------------------------------------------------------


@operator("$rand")
def _rand(spec: Any, scope: Scope) -> Fn:
    if not isinstance(spec, (dict, list)):
        raise CommandError(ErrorCode.ExpectedObjectParameter,
                           "invalid parameter: expected an object ($rand)")
    if spec:
        raise CommandError(ErrorCode.RandTakesNoArguments,
                           "$rand does not currently accept arguments")
    return lambda doc, vars: random.random()


@nary("$binarySize", 1, 1)
def _binary_size(args: list[Fn]) -> Fn:
    (arg,) = args

    def ev(doc: Any, vars: Any) -> Any:
        v = arg(doc, vars)
        if nullish(v):
            return None
        if type(v) is str:
            return len(v.encode())
        if isinstance(v, (bytes, Binary)):
            return len(v)
        raise CommandError(ErrorCode.BinarySizeBadArg,
                           f"$binarySize requires a string or BinData argument, found: "
                           f"{type_name(v)}")
    return ev


@unary("$bsonSize", is_doc, ErrorCode.BsonSizeArgNotObject,
       "$bsonSize requires a document input, found: ")
def _bson_size(v: dict) -> int:
    return len(bson.encode(v))


META_NAMES = ("textScore", "randVal", "searchScore", "searchHighlights", "geoNearDistance",
              "geoNearPoint", "recordId", "indexKey", "sortKey", "searchScoreDetails",
              "searchSequenceToken", "vectorSearchScore", "score", "scoreDetails")


@operator("$meta")
def _meta(spec: Any, scope: Scope) -> Fn:
    if type(spec) is not str:
        raise CommandError(ErrorCode.MetaArgNotString, "$meta only supports string arguments")
    if spec not in META_NAMES:
        raise CommandError(ErrorCode.MetaUnsupportedArg, f"Unsupported argument to $meta: {spec}")
    if spec in metadata.FIELDS and metadata.available(spec):
        field = metadata.FIELDS[spec]
        return lambda doc, vars: doc.get(field, MISSING) if isinstance(doc, dict) else MISSING
    if spec in ("textScore", "geoNearDistance", "geoNearPoint"):
        raise CommandError(ErrorCode.MetadataNotAvailable,
                           f"query requires {spec} metadata, but it is not available")
    return const(MISSING)


def _unsupported(name: str) -> None:
    @operator(name)
    def parse(spec: Any, scope: Scope) -> Fn:
        raise CommandError(ErrorCode.NotImplemented, f"{name} is not supported")


_unsupported("$toHashedIndexKey")


@operator("$function")
def parse_function(spec: Any, scope: Scope) -> Fn:
    """{$function: {body, args, lang: "js"}}: a JavaScript function (query/js)."""
    from ginkgodb.query.js import call_function
    from ginkgodb.query.js import parse_function as parse_js_function
    fn, args = parse_js_function(spec, lambda v: compile_node(v, scope), type_name)

    def ev(doc: Any, vars: Any) -> Any:
        return call_function(fn, args(doc, vars))
    return ev

