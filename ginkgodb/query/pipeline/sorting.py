"""$sort (with a top-k path when a $limit follows) and $unwind."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bson.int64 import Int64

from ginkgodb.errors import CommandError, ErrorCode
from ginkgodb.query.expr import MISSING
from ginkgodb.query.expr.values import type_name
from ginkgodb.query.external_sort import ITEM_OVERHEAD, SortBuffer, Spill
from ginkgodb.query.knobs import KNOBS
from ginkgodb.query.operation import checked
from ginkgodb.query.sort import SortSpec, compile_sort

from .core import Env, Runtime, StageFn, stage
from .doc_size import DocSizer
from .fields import get_doc_path, set_doc_path, validate_path


def sort_stage(spec: Any, limit: int | None = None) -> StageFn:
    sort = compile_sort(spec)

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        if limit is not None:
            return iter(sort.top(checked(docs), limit))
        return blocking_sort(sort, docs, rt.ctx.spill)
    run.sort_spec = spec  # type: ignore[attr-defined]
    return run


def sort_exceeded(limit: int) -> CommandError:
    return CommandError(ErrorCode.QueryExceededMemoryLimitNoDiskUseAllowed,
                        f"Sort exceeded memory limit of {limit} bytes, but did not opt in to "
                        "external sorting.")


def blocking_sort(sort: SortSpec, docs: Iterator[dict], spill: Spill) -> Iterator[dict]:
    """All documents in order, in memory while they fit internalQueryMaxBlockingSortMemoryUsageBytes;
    past it spilled to sorted runs on disk (allowDiskUse) or refused with 292."""
    limit = KNOBS.max_blocking_sort_bytes
    size_of = DocSizer()
    held: list[dict] = []
    used = 0
    docs = iter(docs)
    for doc in checked(docs):
        held.append(doc)
        used += size_of(doc) + ITEM_OVERHEAD
        if used > limit:
            break
    else:
        return iter(sort.sort(held))
    if not spill.allowed:
        raise sort_exceeded(limit)
    return _external_sort(sort, held, docs, spill, limit, size_of)


def _external_sort(sort: SortSpec, held: list[dict], docs: Iterator[dict], spill: Spill, limit: int,
                   size_of: DocSizer) -> Iterator[dict]:
    buffer = SortBuffer(limit, spill, lambda: sort_exceeded(limit))
    key = sort.key
    try:
        for doc in held:
            buffer.add(key(doc), doc, size_of(doc))
        del held[:]
        for doc in checked(docs):
            buffer.add(key(doc), doc, size_of(doc))
        for _, doc in buffer:
            yield doc
    finally:
        buffer.close()


@stage("$sort")
def parse_sort(spec: Any, env: Env) -> StageFn:
    return sort_stage(spec)


# ---- $unwind ------------------------------------------------------------------------------------


@stage("$unwind")
def parse_unwind(spec: Any, env: Env) -> StageFn:
    index_field = None
    preserve = False
    if type(spec) is str:
        path = spec
    elif isinstance(spec, dict):
        path = None
        for key, value in spec.items():
            if key == "path":
                if type(value) is not str:
                    raise CommandError(ErrorCode.UnwindPathNotString,
                                       "expected a string as the path for $unwind stage, "
                                       f"got {type_name(value)}")
                path = value
            elif key == "preserveNullAndEmptyArrays":
                if not isinstance(value, bool):
                    raise CommandError(ErrorCode.UnwindPreserveNotBool,
                                       "expected a boolean for the "
                                       "preserveNullAndEmptyArrays option to $unwind "
                                       f"stage, got {type_name(value)}")
                preserve = value
            elif key == "includeArrayIndex":
                if type(value) is not str or not value:
                    raise CommandError(ErrorCode.UnwindIncludeArrayIndexNotString,
                                       "expected a non-empty string for the "
                                       "includeArrayIndex  option to $unwind stage, got "
                                       f"{type_name(value)}")
                if value.startswith("$"):
                    raise CommandError(ErrorCode.UnwindIncludeArrayIndexDollarPrefixed,
                                       "includeArrayIndex option to $unwind stage should "
                                       f"not be prefixed with a '$': {value}")
                index_field = value
            else:
                raise CommandError(ErrorCode.UnwindUnknownOption,
                                   f"unrecognized option to $unwind stage: {key}")
        if path is None:
            raise CommandError(ErrorCode.UnwindMissingPath, "no path specified to $unwind stage")
    else:
        raise CommandError(ErrorCode.UnwindSpecNotStringOrObject,
                           "expected either a string or an object as specification for "
                           f"$unwind stage, got {type_name(spec)}")
    if not path:
        raise CommandError(ErrorCode.UnwindMissingPath, "no path specified to $unwind stage")
    if "\0" in path:
        raise CommandError(ErrorCode.UnwindPathContainsNull,
                           "field path must not contain embedded null characters")
    if not path.startswith("$"):
        raise CommandError(ErrorCode.UnwindPathWithoutDollar,
                           "path option to $unwind stage should be prefixed with a '$': "
                           f"{path}")
    parts = validate_path(path[1:])
    index_parts = validate_path(index_field) if index_field else None
    return _unwind(parts, index_parts, preserve)


def _unwind(parts: list[str], index_parts: list[str] | None, preserve: bool) -> StageFn:
    top = parts[0] if len(parts) == 1 else None

    def emit(doc: dict, value: Any, index: Any) -> dict:
        out = set_doc_path(doc, parts, value) if value is not MISSING else doc
        if index_parts is not None:
            out = set_doc_path(out, index_parts, index)
        return out

    def run(docs: Iterator[dict], rt: Runtime) -> Iterator[dict]:
        for doc in docs:
            value = doc.get(top, MISSING) if top is not None else get_doc_path(doc, parts)
            if type(value) is list:
                if value:
                    if top is not None and index_parts is None:
                        for elem in value:
                            out = dict(doc)
                            out[top] = elem
                            yield out
                    else:
                        for i, elem in enumerate(value):
                            yield emit(doc, elem, Int64(i))
                elif preserve:
                    yield _without(doc, parts) if index_parts is None else \
                        set_doc_path(_without(doc, parts), index_parts, None)
            elif value is None or value is MISSING:
                if preserve:
                    yield doc if index_parts is None else set_doc_path(doc, index_parts, None)
            else:
                yield doc if index_parts is None else set_doc_path(doc, index_parts, None)
    return run


def _without(doc: dict, parts: list[str]) -> dict:
    """An empty array is removed from a preserved document, as mongod does."""
    if len(parts) == 1:
        return {k: v for k, v in doc.items() if k != parts[0]}
    sub = doc.get(parts[0])
    if not isinstance(sub, dict):
        return doc
    out = dict(doc)
    out[parts[0]] = _without(sub, parts[1:])
    return out
