"""Geo operators in filters: `$geoWithin` (`$within`), `$geoIntersects` and the near operators.

`$geoWithin`/`$geoIntersects` are leaf predicates answered exactly by the geo core
(`query.geo`), so they work without an index, as mongod's GeoMatchExpression does: each value
the path reaches is read as stored geometry (without validation, as mongod reads it) and a value
that is no geometry never matches.

A near operator (`$near`, `$nearSphere`, `$geoNear`) matches every document, as mongod's
GeoNearMatchExpression does: the GEO_NEAR stage that must answer it (engine/geo_near.py)
selects and orders the documents by distance. Its operand is parsed here so that a bad one
fails with mongod's error wherever the filter is compiled. `{$near: .., $maxDistance: ..}` is
one operand: the compiler hands the whole field document over when its first operator is a
near operator (`is_near_spec`), as mongod's parser does.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..geo import GeoError, GeoPredicate, parse_geo_predicate, parse_near, parse_stored
from ..geo.geojson import is_object
from .context import ParseContext
from .nodes import Node, leaf

NEAR_OPERATORS = ("$near", "$nearSphere", "$geoNear")
PREDICATE_OPERATORS = ("$geoWithin", "$within", "$geoIntersects")


def is_near_spec(spec: Mapping) -> bool:
    """Is a field's operator document one near operand (its first element a near operator
    whose argument is an object or array, mongod's GEO_NEAR special case)?"""
    for op, arg in spec.items():
        return op in NEAR_OPERATORS and is_object(arg)
    return False


def geo_elem(predicate: GeoPredicate) -> Any:
    """The single-value test of a parsed $geoWithin/$geoIntersects."""
    matches = predicate.matches

    def elem(value: Any) -> bool:
        if not is_object(value):
            return False
        try:
            geometry = parse_stored("", value, skip_validation=True)
        except GeoError:
            return False
        return matches(geometry)
    return elem


def parse_geo(ctx: ParseContext, path: str | None, op: str, arg: Any) -> Node:
    """`{path: {$geoWithin: ...}}` or `{path: {$geoIntersects: ...}}`."""
    predicate = parse_geo_predicate({op: arg})
    return leaf(path, geo_elem(predicate))


def _match_all(value: Any) -> bool:
    return True


def parse_near_operand(ctx: ParseContext, path: str | None, spec: Mapping) -> Node:
    """A whole near operand (`{$near: .., $maxDistance: ..}`): validated, matches everything."""
    parse_near(spec)
    return leaf(path, _match_all)
