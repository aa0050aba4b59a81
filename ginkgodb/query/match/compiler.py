"""Filter documents -> compiled Matcher (mongod's MatchExpressionParser, compiled to closures).

A filter is read once: every operator becomes a node holding closures (see nodes.py), so
`matcher(doc)` runs plain Python calls and never looks at the spec again.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Optional

from bson.regex import Regex

from ginkgodb.errors import CommandError, ErrorCode

from . import array, bitwise, comparison, element, evaluation, geo, logical
from .context import FIELD_OPERATOR_NAMES, ParseContext, is_expression_document
from .fastpaths import fast_equality, fast_leaf, fast_range
from .jsonschema import compile_schema
from .nodes import ConstNode, DocumentNode, Node, NotNode, conjunction, leaf
from .numbers import parse_long
from .raw_prefilter import BytesTest, raw_prefilter
from .regex import regex_operand, regex_predicate
from .values import normalize

FieldParser = Callable[[ParseContext, "str | None", Any, Mapping, bool], "Node | None"]
TopParser = Callable[[ParseContext, str, Any, bool], "Node | None"]


def _comparison(op: str) -> FieldParser:
    return lambda ctx, path, arg, spec, in_sub: comparison.parse_comparison(ctx, path, op, arg)


def _membership(op: str) -> FieldParser:
    return lambda ctx, path, arg, spec, in_sub: comparison.parse_in(ctx, path, op, arg)


def _bits(op: str) -> FieldParser:
    return lambda ctx, path, arg, spec, in_sub: bitwise.parse_bits(ctx, path, op, arg, spec)


FIELD_OPERATORS: dict[str, FieldParser] = {
    "$eq": _comparison("$eq"), "$ne": _comparison("$ne"),
    "$gt": _comparison("$gt"), "$gte": _comparison("$gte"),
    "$lt": _comparison("$lt"), "$lte": _comparison("$lte"),
    "$in": _membership("$in"), "$nin": _membership("$nin"),
    "$exists": element.parse_exists, "$type": element.parse_type,
    "$mod": evaluation.parse_mod, "$regex": evaluation.parse_regex,
    "$options": evaluation.parse_options,
    "$size": array.parse_size, "$all": array.parse_all, "$elemMatch": array.parse_elem_match,
    "$not": logical.parse_not,
    "$bitsAllSet": _bits("$bitsAllSet"), "$bitsAnySet": _bits("$bitsAnySet"),
    "$bitsAllClear": _bits("$bitsAllClear"), "$bitsAnyClear": _bits("$bitsAnyClear"),
}
for _geo in geo.PREDICATE_OPERATORS:
    FIELD_OPERATORS[_geo] = (lambda op: lambda ctx, path, arg, spec, in_sub:
                             geo.parse_geo(ctx, path, op, arg))(_geo)
for _geo in geo.NEAR_OPERATORS:
    FIELD_OPERATORS[_geo] = (lambda op: lambda ctx, path, arg, spec, in_sub:
                             geo.parse_near_operand(ctx, path, {op: arg}))(_geo)
assert set(FIELD_OPERATORS) == FIELD_OPERATOR_NAMES | {"$not"}


def _always(result: bool) -> TopParser:
    name = "$alwaysTrue" if result else "$alwaysFalse"

    def parse(ctx: ParseContext, _: str, arg: Any, in_sub: bool) -> Node:
        if parse_long(name, arg) != 1:
            raise CommandError(ErrorCode.FailedToParse, f"{name} must be an integer value of 1")
        return ConstNode(result)

    return parse


def _dbref_field(ctx: ParseContext, name: str, arg: Any, in_sub: bool) -> Node:
    """$ref/$id/$db at the top of a (sub)filter: equality on that DBRef field."""
    return leaf(name, comparison.equality_predicate(arg))


def _json_schema(ctx: ParseContext, name: str, arg: Any, in_sub: bool) -> Node:
    if type(arg) is not dict:
        raise CommandError(ErrorCode.TypeMismatch, "$jsonSchema must be an object")
    return DocumentNode(compile_schema(arg))


TOP_LEVEL_OPERATORS: dict[str, TopParser] = {
    "$and": logical.parse_tree, "$or": logical.parse_tree, "$nor": logical.parse_tree,
    "$expr": evaluation.parse_expr, "$comment": lambda ctx, name, arg, in_sub: None,
    "$alwaysTrue": _always(True), "$alwaysFalse": _always(False),
    "$ref": _dbref_field, "$id": _dbref_field, "$db": _dbref_field,
    "$where": evaluation.parse_where, "$text": evaluation.parse_text,
    "$jsonSchema": _json_schema, "$sampleRate": evaluation.parse_sample_rate,
}


_UNSET: Any = object()   # Matcher's bytes test before it is worked out


class Matcher:
    """A compiled filter. `matcher(doc)` (or the bare closure `matcher.match`) -> bool.

    `paths`: the dotted paths the filter reads (not those inside $expr).
    `positional(doc)`: index of the array element the positional `$` refers to, or None.
    `raw_prefilter(raw)`: false for a document's BSON bytes the filter cannot match, or None
    (raw_prefilter.py): scans test it before decoding. Worked out on first use: most compiled
    filters (pipeline stages, validators, partial indexes) never meet stored bytes.
    """

    __slots__ = ("match", "paths", "_root", "_spec", "_prefilter")

    def __init__(self, root: Node, spec: Optional[Mapping] = None) -> None:
        self._root = root
        self.match = root.match
        self.paths = root.paths
        self._spec = spec
        self._prefilter: Any = _UNSET

    @property
    def raw_prefilter(self) -> Optional[BytesTest]:
        found = self._prefilter
        if found is _UNSET:
            found = self._prefilter = raw_prefilter(self._spec) if self._spec else None
        return found

    def __call__(self, doc: Mapping) -> bool:
        return self.match(doc)

    def positional(self, doc: Mapping) -> int | None:
        box: list = [None]
        if not self._root.record(doc, box):
            return None
        return box[0]


def compile_filter(spec: Mapping | None, *, collation: Mapping | None = None,
                   variables: Mapping[str, Any] | None = None, where: bool = True) -> Matcher:
    """Compile a query filter once; raises CommandError (mongod's code/message) if invalid.

    `variables` are the command's `let` values, visible to $expr. `where=False` refuses $where
    (validators, partial filters, listCollections and other non-query contexts).
    """
    _check_collation(collation)
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise CommandError(ErrorCode.TypeMismatch, "filter must be an object")
    parser = _Parser(variables, where)
    return Matcher(parser.document(normalize(spec), False), spec)


def _check_collation(collation: Mapping | None) -> None:
    if collation is None or not collation:
        return
    if collation.get("locale") == "simple":
        return
    raise CommandError(ErrorCode.NotImplemented,
                       "collations other than {locale: 'simple'} are not supported by ginkgodb")


class _Parser:
    """Recursive descent over a normalized filter (one instance per compile_filter call)."""

    def __init__(self, variables: Mapping[str, Any] | None, where: bool = True) -> None:
        self.ctx = ParseContext(self.document, self.operators, variables, where)

    def document(self, spec: Mapping, in_sub: bool) -> Node:
        """A filter document: implicit AND of its fields and top-level operators."""
        children: list[Node] = []
        for key, value in spec.items():
            if key.startswith("$"):
                node = self._top_level(key, value, in_sub)
            elif is_expression_document(value, allow_incomplete_dbref=False):
                nodes = self.operators(key, value, in_sub)
                fused = fast_range(key, value, nodes)
                children.extend([fused] if fused is not None else nodes)
                continue
            elif type(value) is Regex:
                node = leaf(key, regex_predicate(*regex_operand(value)))
            else:
                node = fast_equality(key, value) or leaf(key, comparison.equality_predicate(value))
            if node is not None:
                children.append(node)
        return conjunction(children) if children else _MATCH_ALL

    def _top_level(self, key: str, value: Any, in_sub: bool) -> Node | None:
        parse = TOP_LEVEL_OPERATORS.get(key)
        if parse is None:
            hint = (" If you are trying to negate an entire expression, use $nor." if key == "$not"
                    else " If you have a field name that starts with a '$' symbol, consider "
                         "using $getField or $setField.")
            raise CommandError(ErrorCode.BadValue, f"unknown top level operator: {key}.{hint}")
        return parse(self.ctx, key, value, in_sub)

    def operators(self, path: str | None, spec: Mapping, in_sub: bool) -> list[Node]:
        """`{$op: arg, ...}` applied to `path` (None: to single values, under $elemMatch)."""
        if geo.is_near_spec(spec):  # `{$near: .., $maxDistance: ..}` is one operand
            return [geo.parse_near_operand(self.ctx, path, spec)]
        nodes = []
        for op, arg in spec.items():
            parse = FIELD_OPERATORS.get(op)
            if parse is None:
                if op == "$where":
                    raise CommandError(ErrorCode.BadValue, "$where cannot be applied to a field")
                raise CommandError(ErrorCode.BadValue, f"unknown operator: {op}")
            node = _fast_node(path, op, arg) or parse(self.ctx, path, arg, spec, in_sub)
            if node is not None:
                nodes.append(node)
        return nodes


_MATCH_ALL = ConstNode(True)


def _fast_node(path: str | None, op: str, arg: Any) -> Node | None:
    """A fused node for the common comparisons (and $ne, their negation), else None."""
    if path is None:
        return None
    if op == "$ne":
        fast = fast_equality(path, arg)
        return NotNode(fast) if fast is not None else None
    if op == "$eq":
        return fast_equality(path, arg)
    return fast_leaf(path, op, arg)
