"""Operators that bind variables per element: $map, $filter, $reduce; plus $zip, $sortArray."""
from __future__ import annotations

from typing import Any

from ginkgodb.errors import CommandError, ErrorCode

from ..operation import interruptible
from .compiler import Fn, Scope, compile_node, operator, validate_var_write
from .operands import all_operands, is_list, nullable
from .values import as_int32, bson_repr, nullish, num_kind, to_double, truthy, type_name


def _fields(name: str, spec: Any, allowed: tuple[str, ...], not_object: ErrorCode,
            unknown: ErrorCode) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise CommandError(not_object, f"{name} only supports an object as its argument")
    for key in spec:
        if key not in allowed:
            raise CommandError(unknown, f"Unrecognized parameter to {name}: {key}")
    return spec


def _var_name(spec: dict, default: str) -> str:
    name = spec.get("as", default)
    if not isinstance(name, str) or not name:
        raise CommandError(ErrorCode.FailedToParse, "'as' must be a non-empty string, got "
                                                    f"{type_name(name)}")
    validate_var_write(name)
    return name


@operator("$map")
def _map(spec: Any, scope: Scope) -> Fn:
    spec = _fields("$map", spec, ("input", "as", "in"), ErrorCode.MapArgNotObject,
                   ErrorCode.MapUnknownParameter)
    if "input" not in spec:
        raise CommandError(ErrorCode.MapMissingInput, "Missing 'input' parameter to $map")
    if "in" not in spec:
        raise CommandError(ErrorCode.MapMissingIn, "Missing 'in' parameter to $map")
    name = _var_name(spec, "this")
    inp = compile_node(spec["input"], scope)
    body = compile_node(spec["in"], scope.bind(name))

    def ev(doc: Any, vars: Any) -> Any:
        arr = nullable(inp(doc, vars), is_list, ErrorCode.MapInputNotArray,
                       "input to $map must be an array not ")
        if arr is None:
            return None
        inner = dict(vars) if vars else {}
        out = []
        for x in interruptible(arr):
            inner[name] = x
            v = body(doc, inner)
            out.append(None if v is _MISSING else v)
        return out
    return ev


from .values import MISSING as _MISSING  # noqa: E402


@operator("$filter")
def _filter(spec: Any, scope: Scope) -> Fn:
    spec = _fields("$filter", spec, ("input", "as", "cond", "limit"), ErrorCode.FilterArgNotObject,
                   ErrorCode.FilterUnknownParameter)
    if "input" not in spec:
        raise CommandError(ErrorCode.FilterMissingInput, "Missing 'input' parameter to $filter")
    if "cond" not in spec:
        raise CommandError(ErrorCode.FilterMissingCond, "Missing 'cond' parameter to $filter")
    name = _var_name(spec, "this")
    inp = compile_node(spec["input"], scope)
    cond = compile_node(spec["cond"], scope.bind(name))
    limit_fn = compile_node(spec["limit"], scope) if "limit" in spec else None

    def ev(doc: Any, vars: Any) -> Any:
        arr = nullable(inp(doc, vars), is_list, ErrorCode.FilterInputNotArray,
                       "input to $filter must be an array not ")
        if arr is None:
            return None
        limit = _limit(limit_fn(doc, vars)) if limit_fn is not None else None
        inner = dict(vars) if vars else {}
        out = []
        for x in interruptible(arr):
            if limit is not None and len(out) >= limit:
                break
            inner[name] = x
            if truthy(cond(doc, inner)):
                out.append(x)
        return out
    return ev


def _limit(v: Any) -> int | None:
    if nullish(v):
        return None
    n = as_int32(v) if num_kind(v) >= 0 else None
    if n is None:
        raise CommandError(ErrorCode.FilterLimitNotInt32,
                           "$filter: limit must be represented as a 32-bit integral "
                           f"value: {bson_repr(v)}")
    if n < 1:
        raise CommandError(ErrorCode.FilterLimitNotPositive,
                           f"$filter: limit must be greater than 0: {n}")
    return n


@operator("$reduce")
def _reduce(spec: Any, scope: Scope) -> Fn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.ReduceArgNotObject,
                           f"$reduce requires an object as an argument, found: "
                           f"{type_name(spec)}")
    for key in spec:
        if key not in ("input", "initialValue", "in"):
            raise CommandError(ErrorCode.ReduceUnknownArgument,
                               f"$reduce found an unknown argument: {key}")
    for key, code in (("input", ErrorCode.ReduceMissingInput),
                      ("initialValue", ErrorCode.ReduceMissingInitialValue),
                      ("in", ErrorCode.ReduceMissingIn)):
        if key not in spec:
            raise CommandError(code, f"$reduce requires '{key}' to be specified")
    inp = compile_node(spec["input"], scope)
    init = compile_node(spec["initialValue"], scope)
    body = compile_node(spec["in"], scope.bind("this", "value"))

    def ev(doc: Any, vars: Any) -> Any:
        arr = nullable(inp(doc, vars), is_list, ErrorCode.ReduceInputNotArray,
                       "$reduce requires that 'input' be an array, found: ", bson_repr)
        if arr is None:
            return None
        acc = init(doc, vars)
        inner = dict(vars) if vars else {}
        for x in interruptible(arr):
            inner["this"], inner["value"] = x, acc
            acc = body(doc, inner)
        return acc
    return ev


@operator("$zip")
def _zip(spec: Any, scope: Scope) -> Fn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.ZipArgNotObject,
                           f"$zip only supports an object as an argument, found "
                           f"{type_name(spec)}")
    inputs: list[Fn] = []
    defaults: list[Fn] = []
    longest = False
    for key, value in spec.items():
        if key == "inputs":
            if type(value) is not list:
                raise CommandError(ErrorCode.ZipInputsNotArray,
                                   "inputs must be an array of expressions, found "
                                   f"{type_name(value)}")
            inputs = [compile_node(v, scope) for v in value]
        elif key == "defaults":
            if type(value) is not list:
                raise CommandError(ErrorCode.ZipDefaultsNotArray,
                                   "defaults must be an array of expressions, found "
                                   f"{type_name(value)}")
            defaults = [compile_node(v, scope) for v in value]
        elif key == "useLongestLength":
            if type(value) is not bool:
                raise CommandError(ErrorCode.ZipUseLongestLengthNotBool,
                                   f"useLongestLength must be a bool, found "
                                   f"{type_name(value)}")
            longest = value
        else:
            raise CommandError(ErrorCode.ZipUnknownArgument,
                               f"$zip found an unknown argument: {key}")
    if not inputs:
        raise CommandError(ErrorCode.ZipMissingInputs, "$zip requires at least one input array")
    if defaults and not longest:
        raise CommandError(ErrorCode.ZipDefaultsWithoutLongest,
                           "cannot specify defaults unless useLongestLength is true")
    if defaults and len(defaults) != len(inputs):
        raise CommandError(ErrorCode.ZipDefaultsLengthMismatch,
                           "defaults and inputs must have the same length")
    return _zip_fn(inputs, defaults, longest)


def _zip_fn(inputs: list[Fn], defaults: list[Fn], longest: bool) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        arrays = all_operands((fn(doc, vars) for fn in inputs), is_list, ErrorCode.ZipInputNotArray,
                              "$zip found a non-array expression in input: ", bson_repr)
        if arrays is None:
            return None
        fill = [d(doc, vars) for d in defaults] or [None] * len(arrays)
        n = max(map(len, arrays)) if longest else min(map(len, arrays))
        return [[a[i] if i < len(a) else fill[j] for j, a in enumerate(arrays)]
                for i in range(n)]
    return ev


@operator("$sortArray")
def _sort_array(spec: Any, scope: Scope) -> Fn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.SortArrayArgNotObject,
                           "$sortArray requires an object as an argument, found: "
                           f"{type_name(spec)}")
    for key in spec:
        if key not in ("input", "sortBy"):
            raise CommandError(ErrorCode.SortArrayUnknownArgument,
                               f"$sortArray found an unknown argument: {key}")
    if "input" not in spec:
        raise CommandError(ErrorCode.SortArrayMissingInput,
                           "$sortArray requires 'input' to be specified")
    if "sortBy" not in spec:
        raise CommandError(ErrorCode.SortArrayMissingSortBy,
                           "$sortArray requires 'sortBy' to be specified")
    inp = compile_node(spec["input"], scope)
    key = _sort_by(spec["sortBy"])

    def ev(doc: Any, vars: Any) -> Any:
        arr = nullable(inp(doc, vars), is_list, ErrorCode.SortArrayInputNotArray,
                       "The input argument to $sortArray must be an array, but was of type: ")
        if arr is None:
            return None
        return sorted(arr, key=key)
    return ev


def _direction(v: Any, code: ErrorCode, what: str) -> int:
    if num_kind(v) >= 0:
        x = to_double(v)
        if x in (1.0, -1.0):
            return 1 if x == 1 else -1
    raise CommandError(code, f"$sortArray {what} must be either 1 or -1, found: {bson_repr(v)}")


def _sort_by(sort_by: Any) -> Any:
    """A key function for $sortArray: whole values are compared (arrays are not traversed)."""
    from ginkgodb.bsonutil.keycodec import encode_key
    if num_kind(sort_by) >= 0:
        direction = [_direction(sort_by, ErrorCode.SortArraySortByDirectionInvalid, "sortBy")]
        return lambda v: encode_key([v], direction)
    if not isinstance(sort_by, dict):
        raise CommandError(ErrorCode.SortArraySortByNotObjectOrNumber,
                           "$sortArray sortBy must be either a document or a number, "
                           f"found: {type_name(sort_by)}")
    if not sort_by:
        raise CommandError(ErrorCode.SortArraySortByPatternInvalid,
                           "$sortArray sortBy pattern must not be empty")
    paths = [p.split(".") for p in sort_by]
    directions = [_direction(v, ErrorCode.SortArraySortByPatternInvalid, "sortBy pattern values")
                  for v in sort_by.values()]

    def key(v: Any) -> bytes:
        values = [_field(v, parts) for parts in paths]
        return encode_key(values, directions)
    return key


def _field(v: Any, parts: list[str]) -> Any:
    for p in parts:
        if not isinstance(v, dict) or p not in v:
            return None
        v = v[p]
    return v
