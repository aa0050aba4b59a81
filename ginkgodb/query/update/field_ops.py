"""Field modifiers: $set $setOnInsert $unset $inc $mul $min $max $currentDate $bit."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bson.timestamp import Timestamp

from ginkgodb.bsonutil.types import is_bson_number, type_name
from ginkgodb.errors import CommandError, ErrorCode

from . import numeric
from .nodes import NOOP, UNSET, ApplyState, LeafNode
from .render import id_element, render_element
from .values import binary_equal, copy_value

Comparator = Callable[[Any, Any], int]


class SetNode(LeafNode):
    __slots__ = ("value",)
    op = "$set"

    def __init__(self, field: str, value: Any) -> None:
        self.value = value

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        return NOOP if binary_equal(value, self.value) else copy_value(self.value)

    def create(self, path: list[str], state: ApplyState) -> Any:
        return copy_value(self.value)


class SetOnInsertNode(SetNode):
    __slots__ = ()
    op = "$setOnInsert"
    insert_only = True


class UnsetNode(LeafNode):
    """Removes a field; an array element becomes null instead (array positions are kept)."""

    __slots__ = ()
    op = "$unset"
    allow_creation = False
    allow_nonviable = True

    def __init__(self, field: str, value: Any) -> None:
        pass

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        return UNSET


class ArithmeticNode(LeafNode):
    __slots__ = ("operand",)
    verb = ""

    def __init__(self, field: str, value: Any) -> None:
        if not is_bson_number(value):
            raise CommandError(ErrorCode.TypeMismatch, f"Cannot {self.verb} with non-numeric "
                               f"argument: {{{render_element(field, value)}}}")
        self.operand = value

    def combine(self, current: Any) -> Any:
        raise NotImplementedError

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        if not is_bson_number(value):
            raise CommandError(ErrorCode.TypeMismatch,
                               f"Cannot apply {self.op} to a value of non-numeric type. "
                               f"{{{id_element(state.doc)}}} has the field '{path[-1]}' of "
                               f"non-numeric type {type_name(value)}")
        result = self.combine(value)
        if result is not None and numeric.identical(result, value):
            return NOOP
        if result is None:
            raise CommandError(ErrorCode.BadValue,
                               f"Failed to apply {self.op} operations to current value "
                               f"({numeric.debug_string(value)}) for document "
                               f"{{{id_element(state.doc)}}}")
        return result


class IncNode(ArithmeticNode):
    __slots__ = ()
    op = "$inc"
    verb = "increment"

    def combine(self, current: Any) -> Any:
        return numeric.add(self.operand, current)

    def create(self, path: list[str], state: ApplyState) -> Any:
        return self.operand


class MulNode(ArithmeticNode):
    __slots__ = ()
    op = "$mul"
    verb = "multiply"

    def combine(self, current: Any) -> Any:
        return numeric.multiply(self.operand, current)

    def create(self, path: list[str], state: ApplyState) -> Any:
        """A missing field becomes a zero of the operand's type."""
        return numeric.multiply(self.operand, 0)


class CompareNode(LeafNode):
    """$min / $max: replace when the operand sorts below / above the current value."""

    __slots__ = ("value", "compare", "want")

    def __init__(self, field: str, value: Any, compare: Comparator, want: int) -> None:
        self.value = value
        self.compare = compare
        self.want = want

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        if self.compare(self.value, value) == self.want:
            return copy_value(self.value)
        return NOOP

    def create(self, path: list[str], state: ApplyState) -> Any:
        return copy_value(self.value)


def min_node(field: str, value: Any, compare: Comparator) -> CompareNode:
    return CompareNode(field, value, compare, -1)


def max_node(field: str, value: Any, compare: Comparator) -> CompareNode:
    return CompareNode(field, value, compare, 1)


class CurrentDateNode(LeafNode):
    __slots__ = ("as_date",)
    op = "$currentDate"

    def __init__(self, field: str, value: Any) -> None:
        if isinstance(value, bool):
            self.as_date = True
        elif isinstance(value, dict):
            self.as_date = self._parse_type(value)
        else:
            raise CommandError(ErrorCode.BadValue,
                               f"{type_name(value)} is not valid type for $currentDate. Please "
                               "use a boolean ('true') or a $type expression "
                               "({$type: 'timestamp/date'}).")

    @staticmethod
    def _parse_type(spec: dict) -> bool:
        as_date = None
        for key, value in spec.items():
            if key != "$type":
                raise CommandError(ErrorCode.BadValue,
                                   f"Unrecognized $currentDate option: {key}")
            if value == "date" and isinstance(value, str):
                as_date = True
            elif value == "timestamp" and isinstance(value, str):
                as_date = False
        if as_date is None:
            raise CommandError(ErrorCode.BadValue,
                               "The '$type' string field is required to be 'date' or "
                               "'timestamp': {$currentDate: {field : {$type: 'date'}}}")
        return as_date

    def _now(self, state: ApplyState) -> Any:
        if self.as_date:
            return state.now()
        return next_timestamp()

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        return self._now(state)

    def create(self, path: list[str], state: ApplyState) -> Any:
        return self._now(state)


_last_timestamp = [0, 0]


def next_timestamp() -> Timestamp:
    """Strictly increasing timestamps (seconds, counter), like a cluster-time tick."""
    now = int(time.time())
    if now > _last_timestamp[0]:
        _last_timestamp[0], _last_timestamp[1] = now, 1
    else:
        _last_timestamp[1] += 1
    return Timestamp(_last_timestamp[0], _last_timestamp[1])


class BitNode(LeafNode):
    __slots__ = ("ops",)
    op = "$bit"

    def __init__(self, field: str, value: Any) -> None:
        if not isinstance(value, dict):
            raise CommandError(ErrorCode.BadValue,
                               f"The $bit modifier is not compatible with a {type_name(value)}. "
                               "You must pass in an embedded document: "
                               "{$bit: {field: {and/or/xor: #}}")
        self.ops = [self._parse_op(name, operand) for name, operand in value.items()]
        if not self.ops:
            raise CommandError(ErrorCode.BadValue,
                               "You must pass in at least one bitwise operation. The format is: "
                               "{$bit: {field: {and/or/xor: #}}")

    @staticmethod
    def _parse_op(name: str, operand: Any) -> tuple[str, Any]:
        if name not in ("and", "or", "xor"):
            raise CommandError(ErrorCode.BadValue,
                               "The $bit modifier only supports 'and', 'or', and 'xor', not "
                               f"'{name}' which is an unknown operator: "
                               f"{{{render_element(name, operand)}}}")
        if numeric.kind(operand) not in (numeric.INT32, numeric.INT64):
            raise CommandError(ErrorCode.BadValue,
                               "The $bit modifier field must be an Integer(32/64 bit); a "
                               f"'{type_name(operand)}' is not supported here: "
                               f"{{{render_element(name, operand)}}}")
        return name, operand

    def _apply_ops(self, value: Any) -> Any:
        for name, operand in self.ops:
            value = numeric.bitwise(value, operand, name)
        return value

    def update(self, value: Any, path: list[str], state: ApplyState) -> Any:
        if numeric.kind(value) not in (numeric.INT32, numeric.INT64):
            raise CommandError(ErrorCode.BadValue,
                               "Cannot apply $bit to a value of non-integral type."
                               f"{id_element(state.doc)} has the field {path[-1]} of "
                               f"non-integer type {type_name(value)}")
        result = self._apply_ops(value)
        return NOOP if numeric.identical(result, value) else result

    def create(self, path: list[str], state: ApplyState) -> Any:
        return self._apply_ops(0)


