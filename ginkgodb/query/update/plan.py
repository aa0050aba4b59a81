"""`compile_update`: an update specification compiled once, applied to many documents.

Three kinds, as in mongod: operator updates (`{$set: ...}`), replacements (a document without
`$` keys, `{}` included) and pipeline updates (a list of stages).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from bson.timestamp import Timestamp

from ginkgodb.bsonutil.compare import compare
from ginkgodb.bsonutil.types import type_name
from ginkgodb.errors import CommandError, ErrorCode

from . import array_ops, field_ops
from .apply import apply_tree
from .array_filters import compile_array_filters, parse_array_filters
from .nodes import ApplyState, ObjectNode
from .parser import ParseContext, parse_operators
from .replacement import id_first, replace_document
from .upsert import upsert_seed
from .validity import check_document


class UpdatePlan:
    """Common interface; `apply` returns the input object itself when nothing changed."""

    is_replacement = False
    is_pipeline = False
    needs_position = False
    #: the top-level fields `apply` may change, every other field of its result being the input's
    #: own value (the oplog's diff compares only these); None when not known
    top_fields: frozenset | None = None

    def apply(self, doc: dict, *, position: int | None = None, inserting: bool = False) -> dict:
        raise NotImplementedError

    def changes(self, old: dict, new: dict) -> bool:
        """Whether `new` (from `apply(old)`) is a modification, i.e. counts in nModified."""
        return new is not old

    def upsert_seed(self, filter_spec: Mapping) -> dict:
        """The document an upsert applies this plan to."""
        return upsert_seed(filter_spec, only_id=self.is_replacement)


class OperatorPlan(UpdatePlan):
    def __init__(self, root: ObjectNode, ctx: ParseContext, filters: dict) -> None:
        self.root = root
        self.renames = ctx.renames
        self.filters = filters
        self.needs_position = ctx.positional
        # the operators' paths begin at these fields ($rename moves values between paths its
        # prepare step reads: not counted, so a plan with one walks every field)
        if not ctx.renames and root.positional is None:
            self.top_fields = frozenset(root.children)

    def apply(self, doc: dict, *, position: int | None = None, inserting: bool = False) -> dict:
        state = ApplyState(doc, position, inserting, self.filters)
        for rename in self.renames:
            rename.prepare(doc, state)
        new = apply_tree(self.root, doc, state)
        if inserting:
            new = id_first(new)
            check_document(new, allow_top_level_dollar=True)
        return new


class ReplacementPlan(UpdatePlan):
    is_replacement = True

    def __init__(self, replacement: Mapping) -> None:
        self.replacement = _fill_zero_timestamps(replacement)

    def apply(self, doc: dict, *, position: int | None = None, inserting: bool = False) -> dict:
        new = replace_document(doc, self.replacement, inserting=inserting)
        return id_first(new) if inserting else new


def _fill_zero_timestamps(replacement: Mapping) -> Mapping:
    """Top-level Timestamp(0, 0) values (other than `_id`) become the current time, as in
    mongod's ObjectReplaceExecutor."""
    if not any(isinstance(v, Timestamp) and v.time == 0 and v.inc == 0 and k != "_id"
               for k, v in replacement.items()):
        return replacement
    return {k: field_ops.next_timestamp()
            if isinstance(v, Timestamp) and v.time == 0 and v.inc == 0 and k != "_id" else v
            for k, v in replacement.items()}


class PipelinePlan(UpdatePlan):
    """Runs the stages on the document; the result replaces it (top-level `$` names allowed)."""

    is_pipeline = True
    ALLOWED = ("$addFields", "$set", "$project", "$unset", "$replaceRoot", "$replaceWith")

    def __init__(self, stages: list, variables: Mapping | None = None) -> None:
        for stage in stages:
            name = next(iter(stage), "") if isinstance(stage, Mapping) else ""
            if name not in self.ALLOWED:
                raise CommandError(ErrorCode.InvalidOptions,
                                   f"{name} is not allowed to be used within an update")
        try:
            from ginkgodb.query.expr.compiler import defer_fold_errors
            from ginkgodb.query.pipeline import PipelineContext, compile_pipeline
        except ImportError:
            raise CommandError(ErrorCode.NotImplemented,
                               "pipeline-style updates are not available") from None
        # mongod parses an update pipeline without optimizing it: a constant expression that
        # fails ({$divide: [1, 0]}) fails only when a document is updated, never when none matched
        with defer_fold_errors():
            self.pipeline = compile_pipeline(list(stages),
                                             PipelineContext(variables=dict(variables or {})))

    def apply(self, doc: dict, *, position: int | None = None, inserting: bool = False) -> dict:
        out = list(self.pipeline([doc]))
        result = out[0] if out else {}
        new = replace_document(doc, result, inserting=inserting, allow_top_level_dollar=True)
        return id_first(new) if inserting else new


def compile_update(spec: Any, *, array_filters: list | None = None, collation: Any = None,
                   variables: Mapping | None = None) -> UpdatePlan:
    """Compile an update specification; raises CommandError with mongod's codes.

    `variables` are the command's `let` values (visible to pipeline-style updates only).
    """
    if isinstance(spec, (list, tuple)):
        if array_filters:
            raise CommandError(ErrorCode.FailedToParse,
                               "arrayFilters may not be specified for pipeline-style updates")
        return PipelinePlan(list(spec), variables)
    if not isinstance(spec, Mapping):
        raise CommandError(ErrorCode.FailedToParse, "Update argument must be either an object "
                           f"or an array, not {type_name(spec)}")
    filters = parse_array_filters(array_filters, collation)
    if not spec or not next(iter(spec)).startswith("$"):
        return ReplacementPlan(spec)
    comparator = _comparator(collation)
    ctx = ParseContext(_factories(comparator, collation), filters)
    root = parse_operators(spec, ctx)
    matchers = compile_array_filters(filters, _compile_filter(), collation) if filters else {}
    return OperatorPlan(root, ctx, matchers)


def _comparator(collation: Any) -> Callable[[Any, Any], int]:
    """Value comparison for $min/$max/$addToSet/$pull/$push $sort (simple collation only)."""
    if collation and collation.get("locale") != "simple":
        raise CommandError(ErrorCode.NotImplemented,
                           "collations other than {locale: 'simple'} are not supported by "
                           "ginkgodb")
    return compare


def _compile_filter() -> Callable:
    from ginkgodb.query.match import compile_filter
    return compile_filter


def _factories(cmp: Callable[[Any, Any], int], collation: Any) -> dict[str, Callable]:
    """The node makers of each operator (made once for the simple collation: every update
    without one asks)."""
    if collation is None and cmp is compare:
        return _simple_factories()
    return _make_factories(cmp, collation)


@functools.cache
def _simple_factories() -> dict[str, Callable]:
    return _make_factories(compare, None)


def _make_factories(cmp: Callable[[Any, Any], int], collation: Any) -> dict[str, Callable]:
    def matcher(spec: Any) -> Callable[[Any], bool]:
        """The query matcher is imported only when a condition needs it."""
        if collation is not None:
            return _compile_filter()(spec, collation=collation)
        return _compile_filter()(spec)

    def pull(field: str, value: Any) -> array_ops.PullNode:
        return array_ops.PullNode(field, value, cmp, matcher)

    return {
        "$set": field_ops.SetNode,
        "$setOnInsert": field_ops.SetOnInsertNode,
        "$unset": field_ops.UnsetNode,
        "$inc": field_ops.IncNode,
        "$mul": field_ops.MulNode,
        "$min": lambda f, v: field_ops.min_node(f, v, cmp),
        "$max": lambda f, v: field_ops.max_node(f, v, cmp),
        "$currentDate": field_ops.CurrentDateNode,
        "$bit": field_ops.BitNode,
        "$push": lambda f, v: array_ops.PushNode(f, v, cmp),
        "$addToSet": lambda f, v: array_ops.AddToSetNode(f, v, cmp),
        "$pop": array_ops.PopNode,
        "$pull": pull,
        "$pullAll": lambda f, v: array_ops.PullAllNode(f, v, cmp),
        "$rename": None,
    }
