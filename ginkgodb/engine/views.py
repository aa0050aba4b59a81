"""Read-only views: a name for an aggregation pipeline over another collection (or view).

A view is a catalog entry with options {viewOn, pipeline} and no data. Reads on it run as an
aggregation over its source, the view's pipeline first; writes and index builds are refused
with 166 CommandNotSupportedOnView, as in mongod.
"""
from __future__ import annotations

from typing import Optional

from ..errors import CommandError, ErrorCode

MAX_DEPTH = 20  # mongod's limit on views defined on views


def is_view(meta) -> bool:
    return meta is not None and "viewOn" in meta.options


def refuse_write(state) -> None:
    """Raise 166 when a write or an index build targets a view, 20 when it targets the oplog
    (which only the server writes: docs/design/oplog.md)."""
    if state is not None and "viewOn" in state.meta.options:
        raise CommandError(ErrorCode.CommandNotSupportedOnView,
                           f"Namespace {state.meta.ns} is a view, not a collection")
    if state is not None and state.meta.ns == OPLOG_NS:
        raise CommandError(ErrorCode.IllegalOperation,
                           f"cannot write to '{OPLOG_NS}': the oplog is written by the server")


OPLOG_NS = "local.oplog.rs"


def resolve(catalog, db: str, name: str) -> Optional[tuple[str, list]]:
    """(the underlying collection, the whole pipeline) for a view, or None for a collection."""
    pipeline: list = []
    meta = catalog.get(db, name)
    if not is_view(meta):
        return None
    for _ in range(MAX_DEPTH):
        pipeline = list(meta.options.get("pipeline") or []) + pipeline
        name = meta.options["viewOn"]
        meta = catalog.get(db, name)
        if not is_view(meta):
            return name, pipeline
    raise CommandError(ErrorCode.ViewDepthLimitExceeded,
                       f"View depth too deep or view cycle detected; maximum depth is {MAX_DEPTH}")


def pipeline_references(pipeline: list) -> list[str]:
    """Collections of the same database a pipeline reads besides its source: $lookup,
    $graphLookup, $unionWith (and their sub-pipelines), $facet's branches (mongod's view graph
    counts them all)."""
    names: list[str] = []
    for stage in pipeline or []:
        if not isinstance(stage, dict) or len(stage) != 1:
            continue
        name, spec = next(iter(stage.items()))
        if name in ("$lookup", "$graphLookup") and isinstance(spec, dict):
            source = spec.get("from")
            if isinstance(source, str):
                names.append(source)
            elif isinstance(source, dict) and isinstance(source.get("coll"), str):
                names.append(source["coll"])
            names += pipeline_references(spec.get("pipeline") or [])
        elif name == "$unionWith":
            if isinstance(spec, str):
                names.append(spec)
            elif isinstance(spec, dict):
                if isinstance(spec.get("coll"), str):
                    names.append(spec["coll"])
                names += pipeline_references(spec.get("pipeline") or [])
        elif name == "$facet" and isinstance(spec, dict):
            for branch in spec.values():
                names += pipeline_references(branch if isinstance(branch, list) else [])
    return names


def check_view_graph(catalog, db: str, name: str, options: dict) -> None:
    """Refuse a view definition (at create or collMod) that would close a cycle of views
    (5 GraphContainsCycle, mongod's message) or nest views deeper than MAX_DEPTH (10)."""
    def children(view: str) -> list[str]:
        if view == name:
            spec = options
        else:
            meta = catalog.get(db, view)
            if not is_view(meta):
                return []
            spec = meta.options
        return [spec["viewOn"], *pipeline_references(spec.get("pipeline") or [])]

    path: list[str] = []
    checked: set[str] = set()

    def visit(view: str, depth: int) -> None:
        path.append(view)
        if depth > 0 and view == name:
            trail = list(reversed(path))  # mongod names the start twice, then walks back
            raise CommandError(ErrorCode.GraphContainsCycle, "View cycle detected: " + f"{db}.{trail[0]}"
                               + "".join(f" => {db}.{v}" for v in trail))
        if depth > MAX_DEPTH:
            raise CommandError(ErrorCode.ViewDepthLimitExceeded,
                               f"View depth limit exceeded; maximum depth is {MAX_DEPTH}")
        for child in children(view):
            if child not in checked:
                visit(child, depth + 1)
        path.pop()
        checked.add(view)

    visit(name, 0)


def find_pipeline(filt: dict, sort: Optional[dict], skip: int, limit: int,
                  projection: Optional[dict]) -> list:
    """A find on a view, as the stages appended to the view's pipeline."""
    stages: list = []
    if filt:
        stages.append({"$match": filt})
    if sort:
        stages.append({"$sort": sort})
    if skip:
        stages.append({"$skip": skip})
    if limit:
        stages.append({"$limit": limit})
    if projection:
        stages.append({"$project": projection})
    return stages
