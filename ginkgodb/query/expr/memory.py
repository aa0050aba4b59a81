"""What one value may cost while a query computes it: mongod's limits on strings, arrays and
accumulators, with mongod's approximate sizes (a `Value` is 16 bytes, a vector 24).

These bound the work of one request: without them `{$range: [0, 2e7]}` builds a 20-million-element
list and `$reduce` with `$concat` a string of hundreds of megabytes, holding a worker (and much of
the interpreter) for seconds.
"""
from __future__ import annotations

from typing import Any

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.limits import MAX_BSON_OBJECT_SIZE

from ..knobs import KNOBS

VALUE_SIZE = 16   # mongod's sizeof(Value)
VECTOR_SIZE = 24  # sizeof(std::vector<Value>)
_STRING_TOO_LONG = f"Tried to create string longer than {MAX_BSON_OBJECT_SIZE // (1024 * 1024)}MB"


def check_string(s: str) -> str:
    """mongod refuses to create a string value of 16 MiB or more (16493)."""
    if len(s) * 4 >= MAX_BSON_OBJECT_SIZE and len(s.encode("utf-8", "surrogatepass")) >= MAX_BSON_OBJECT_SIZE:
        raise CommandError(ErrorCode.StringTooLong, _STRING_TOO_LONG)
    return s


def range_length(start: int, end: int, step: int) -> int:
    """mongod's estimate of a $range's length (C++ division, truncating toward zero)."""
    steps = abs(end - start) // abs(step)
    if (end - start < 0) != (step < 0) and end != start:
        steps = -steps
    return 1 + steps if steps >= 0 else 0


def check_range(start: int, end: int, step: int) -> None:
    """$range's memory check, as mongod: the vector plus one int Value per element (146)."""
    needed = VECTOR_SIZE + range_length(start, end, step) * VALUE_SIZE
    limit = KNOBS.max_range_bytes
    if needed >= limit:
        raise CommandError(ErrorCode.ExceededMemoryLimit,
                           f"$range would use too much memory ({needed} bytes) and cannot spill to "
                           f"disk. Memory limit: {limit} bytes")


def approximate_size(v: Any) -> int:
    """A value's approximate size in memory, whole (for accumulators, which add values once)."""
    t = type(v)
    if t is str or t is bytes:
        return VALUE_SIZE + len(v)
    if t is list:
        return VALUE_SIZE + VECTOR_SIZE + sum(approximate_size(x) for x in v)
    if isinstance(v, dict):
        return VALUE_SIZE + VECTOR_SIZE + sum(len(k) + approximate_size(x) for k, x in v.items())
    return VALUE_SIZE


def check_array_length(op: str, length: int) -> None:
    """An array an expression builds out of others ($concatArrays) may not hold more elements
    than the array-building memory limit allows $range (internalQueryMaxRangeBytes): its
    elements are shared with the arrays it was built from, so what it costs is one Value each."""
    needed = VECTOR_SIZE + VALUE_SIZE * length
    limit = KNOBS.max_range_bytes
    if needed >= limit:
        raise CommandError(ErrorCode.ExceededMemoryLimit,
                           f"{op} would use too much memory ({needed} bytes) and cannot spill to "
                           f"disk. Memory limit: {limit} bytes")


def accumulator_limit_error(op: str, limit: int) -> CommandError:
    """$push / $addToSet beyond internalQueryMaxPushBytes / internalQueryMaxAddToSetBytes."""
    return CommandError(ErrorCode.ExceededMemoryLimit,
                        f"{op} used too much memory and cannot spill to disk. Memory limit: "
                        f"{limit} bytes")
