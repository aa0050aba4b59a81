"""Array operators: element access, slicing, membership, construction and conversion."""
from __future__ import annotations

from typing import Any

from ginkgodb.errors import CommandError, ErrorCode

from .compiler import Fn, nary
from .memory import check_array_length, check_range
from .operands import all_operands, is_doc, is_list, nullable, unary
from .ops_logic import cmp_values
from .values import MISSING, as_int32, bson_repr, nullish, num_kind, number_str, to_double, truthy, type_name

unary("$size", is_list, ErrorCode.SizeArgNotArray,
      "The argument to $size must be an array. Type of argument was: ", null_to_null=False)(len)


def element_at(name: str, arr: Any, idx: Any) -> Any:
    if nullish(arr) or nullish(idx):
        return None
    if type(arr) is not list:
        raise CommandError(ErrorCode.ArrayElemAtFirstArgNotArray,
                           f"{name}'s first argument must be an array, but is "
                           f"{type_name(arr)}")
    if num_kind(idx) < 0:
        raise CommandError(ErrorCode.ArrayElemAtIndexNotNumeric,
                           f"{name}'s second argument must be a numeric value, but is "
                           f"{type_name(idx)}")
    i = as_int32(idx)
    if i is None:
        raise CommandError(ErrorCode.ArrayElemAtIndexNotInt32,
                           f"{name}'s second argument must be representable as a 32-bit "
                           f"integer: {number_str(to_double(idx))}")
    if i < 0:
        i += len(arr)
        if i < 0:
            return MISSING
    return arr[i] if i < len(arr) else MISSING


@nary("$arrayElemAt", 2, 2)
def _array_elem_at(args: list[Fn]) -> Fn:
    a, i = args
    return lambda doc, vars: element_at("$arrayElemAt", a(doc, vars), i(doc, vars))


def _first_last(name: str, index: int) -> None:
    @unary(name, is_list, ErrorCode.ArrayElemAtFirstArgNotArray,
           f"{name}'s argument must be an array, but is ")
    def compute(v: list) -> Any:
        return v[index] if v else MISSING


_first_last("$first", 0)
_first_last("$last", -1)


@nary("$in", 2, 2)
def _in(args: list[Fn]) -> Fn:
    needle_fn, arr_fn = args

    def ev(doc: Any, vars: Any) -> Any:
        needle, arr = needle_fn(doc, vars), arr_fn(doc, vars)
        if type(arr) is not list:
            raise CommandError(ErrorCode.InSecondArgNotArray,
                               "$in requires an array as a second argument, found: "
                               f"{type_name(arr)}")
        return any(cmp_values(needle, x) == 0 for x in arr)
    return ev


@nary("$indexOfArray", 2, 4)
def _index_of_array(args: list[Fn]) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        arr = nullable(args[0](doc, vars), is_list, ErrorCode.IndexOfArrayFirstArgNotArray,
                       "$indexOfArray requires an array as a first argument, found: ")
        if arr is None:
            return None
        needle = args[1](doc, vars)
        lo = _index_arg(args[2](doc, vars), "starting") if len(args) > 2 else 0
        hi = _index_arg(args[3](doc, vars), "ending") if len(args) > 3 else len(arr)
        for i in range(lo, min(hi, len(arr))):
            if cmp_values(arr[i], needle) == 0:
                return i
        return -1
    return ev


def _index_arg(v: Any, which: str) -> int:
    i = None if isinstance(v, bool) else as_int32(v)
    if i is None:
        raise CommandError(ErrorCode.IndexOfIndexNotIntegral,
                           f"$indexOfArray requires an integral {which} index, found a "
                           f"value of type: {type_name(v)}, with value: {bson_repr(v)}")
    if i < 0:
        raise CommandError(ErrorCode.IndexOfIndexNegative,
                           f"$indexOfArray requires a nonnegative {which} index, found: {i}")
    return i


@nary("$slice", 2, 3)
def _slice(args: list[Fn]) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        arr = args[0](doc, vars)
        a2 = args[1](doc, vars)
        if nullish(arr) or nullish(a2):
            return None
        if type(arr) is not list:
            raise CommandError(ErrorCode.SliceFirstArgNotArray,
                               "First argument to $slice must be an array, but is of "
                               f"type: {type_name(arr)}")
        if num_kind(a2) < 0:
            raise CommandError(ErrorCode.SliceSecondArgNotNumeric,
                               "Second argument to $slice must be a numeric value, but is "
                               f"of type: {type_name(a2)}")
        pos = as_int32(a2)
        if pos is None:
            raise CommandError(ErrorCode.SliceSecondArgNotInt32,
                               "Second argument to $slice can't be represented as a "
                               f"32-bit integer: {number_str(to_double(a2))}")
        if len(args) == 2:
            return arr[pos:] if pos < 0 else arr[:pos]
        a3 = args[2](doc, vars)
        if nullish(a3):
            return None
        if num_kind(a3) < 0:
            raise CommandError(ErrorCode.SliceThirdArgNotNumeric,
                               "Third argument to $slice must be numeric, but is of type: "
                               f"{type_name(a3)}")
        n = as_int32(a3)
        if n is None:
            raise CommandError(ErrorCode.SliceThirdArgNotInt32,
                               "Third argument to $slice can't be represented as a 32-bit "
                               f"integer: {number_str(to_double(a3))}")
        if n <= 0:
            raise CommandError(ErrorCode.SliceThirdArgNotPositive,
                               f"Third argument to $slice must be positive: {n}")
        start = max(0, len(arr) + pos) if pos < 0 else min(pos, len(arr))
        return arr[start:start + n]
    return ev


@nary("$concatArrays")
def _concat_arrays(args: list[Fn]) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        arrays = all_operands((fn(doc, vars) for fn in args), is_list, ErrorCode.ConcatArraysNonArray,
                              "$concatArrays only supports arrays, not ")
        if arrays is None:
            return None
        check_array_length("$concatArrays", sum(map(len, arrays)))  # before building it
        return [x for v in arrays for x in v]
    return ev


@unary("$reverseArray", is_list, ErrorCode.ReverseArrayArgNotArray,
       "The argument to $reverseArray must be an array, but was of type: ")
def _reverse_array(v: list) -> list:
    return v[::-1]


_RANGE_ERRORS = {"starting": (ErrorCode.RangeStartNotNumeric, ErrorCode.RangeStartNotInt32),
                 "ending": (ErrorCode.RangeEndNotNumeric, ErrorCode.RangeEndNotInt32),
                 "step": (ErrorCode.RangeStepNotNumeric, ErrorCode.RangeStepNotInt32)}


def _range_arg(v: Any, which: str) -> int:
    not_num, not_int = _RANGE_ERRORS[which]
    if num_kind(v) < 0:
        raise CommandError(not_num, f"$range requires a numeric {which} value, found value of "
                                    f"type: {type_name(v)}")
    i = as_int32(v)
    if i is None:
        article = "an" if which == "ending" else "a"
        raise CommandError(not_int, f"$range requires {article} {which} value that can be "
                                    f"represented as a 32-bit integer, found value: "
                                    f"{number_str(v)}")
    return i


@nary("$range", 2, 3)
def _range(args: list[Fn]) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        start = _range_arg(args[0](doc, vars), "starting")
        end = _range_arg(args[1](doc, vars), "ending")
        step = _range_arg(args[2](doc, vars), "step") if len(args) > 2 else 1
        if step == 0:
            raise CommandError(ErrorCode.RangeStepZero, "$range requires a non-zero step value")
        check_range(start, end, step)
        values = range(start, end, step)
        if len(values) <= _RANGE_CHUNK:
            return list(values)
        out: list = []
        for i in range(0, len(values), _RANGE_CHUNK):  # in pieces: other threads run between them
            out.extend(values[i:i + _RANGE_CHUNK])
        return out
    return ev


#: elements built per step of a large $range (one C call each, so short enough not to hold the
#: interpreter lock for more than about a millisecond)
_RANGE_CHUNK = 50_000


@unary("$anyElementTrue", is_list, ErrorCode.AnyElementTrueArgNotArray,
       "$anyElementTrue's argument must be an array, but is ", null_to_null=False)
def _any_true(v: list) -> bool:
    return any(truthy(x) for x in v)


@unary("$allElementsTrue", is_list, ErrorCode.AllElementsTrueArgNotArray,
       "$allElementsTrue's argument must be an array, but is ", null_to_null=False)
def _all_true(v: list) -> bool:
    return all(truthy(x) for x in v)


# ---- object <-> array -----------------------------------------------------------------------


@unary("$objectToArray", is_doc, ErrorCode.ObjectToArrayInputNotObject,
       "$objectToArray requires a document input, found: ")
def _object_to_array(v: dict) -> list:
    return [{"k": k, "v": x} for k, x in v.items()]


@nary("$arrayToObject", 1, 1)
def _array_to_object(args: list[Fn]) -> Fn:
    (arg,) = args
    return lambda doc, vars: array_to_object(arg(doc, vars))


def array_to_object(v: Any) -> Any:
    v = nullable(v, is_list, ErrorCode.ArrayToObjectInputNotArray,
                 "$arrayToObject requires an array input, found: ")
    if v is None:
        return None
    out: dict = {}
    if not v:
        return out
    pairs = type(v[0]) is list
    if not pairs and not isinstance(v[0], dict):
        raise CommandError(ErrorCode.ArrayToObjectBadElementType,
                           "Unrecognised input type format for $arrayToObject: "
                           f"{type_name(v[0])}")
    for elem in v:
        key, value = _pair(elem) if pairs else _kv(elem)
        if "\0" in key:
            raise CommandError(ErrorCode.ArrayToObjectArrayKeyContainsNull if pairs
                               else ErrorCode.ArrayToObjectObjectKeyContainsNull,
                               "Key field cannot contain an embedded null byte")
        out[key] = value
    return out


def _pair(elem: Any) -> tuple[str, Any]:
    if type(elem) is not list:
        raise CommandError(ErrorCode.ArrayToObjectMixedArrayFirst,
                           "$arrayToObject requires a consistent input format. Elements "
                           "must all be arrays or all be objects. Array was detected, now "
                           f"found: {type_name(elem)}")
    if len(elem) != 2:
        raise CommandError(ErrorCode.ArrayToObjectPairNotSize2,
                           "$arrayToObject requires an array of size 2 arrays,found array "
                           f"of size: {len(elem)}")
    if type(elem[0]) is not str:
        raise CommandError(ErrorCode.ArrayToObjectArrayKeyNotString,
                           "$arrayToObject requires an array of key-value pairs, where the "
                           f"key must be of type string. Found key type: "
                           f"{type_name(elem[0])}")
    return elem[0], elem[1]


def _kv(elem: Any) -> tuple[str, Any]:
    if not isinstance(elem, dict):
        raise CommandError(ErrorCode.ArrayToObjectMixedObjectFirst,
                           "$arrayToObject requires a consistent input format. Elements "
                           "must all be arrays or all be objects. Object was detected, now "
                           f"found: {type_name(elem)}")
    if len(elem) != 2:
        raise CommandError(ErrorCode.ArrayToObjectPairWrongKeyCount,
                           "$arrayToObject requires an object keys of 'k' and 'v'. Found "
                           f"incorrect number of keys:{len(elem)}")
    if "k" not in elem or "v" not in elem:
        raise CommandError(ErrorCode.ArrayToObjectPairMissingKOrV,
                           "$arrayToObject requires an object with keys 'k' and 'v'. "
                           f"Missing either or both keys from: {bson_repr(elem)}")
    if type(elem["k"]) is not str:
        raise CommandError(ErrorCode.ArrayToObjectObjectKeyNotString,
                           "$arrayToObject requires an object with keys 'k' and 'v', where "
                           f"the value of 'k' must be of type string. Found type: "
                           f"{type_name(elem['k'])}")
    return elem["k"], elem["v"]
