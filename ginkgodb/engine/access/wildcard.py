"""The wildcard access method (`{"$**": 1}`, `{"a.$**": 1}`, with `wildcardProjection`): one key
`(path, value)` per leaf of the indexed paths (query/wildcard_keys.py), planned per queried path
(planner/wildcard_plans.py). Compound wildcard indexes (mongod 7.0) are not served (238).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import CommandError, ErrorCode
from ...planner.wildcard_plans import WildcardPlanning
from ...query.wildcard_keys import WildcardProjection, wildcard_keys
from ..catalog_entries import IndexMeta
from .entries import IndexEntries


class WildcardAccess(IndexEntries, WildcardPlanning):
    kind = "wildcard"

    def __init__(self, meta: IndexMeta, ns: str) -> None:
        super().__init__(meta, ns)
        field = next(iter(meta.key))
        self.projection = WildcardProjection(field, meta.options.get("wildcardProjection"), meta.key[field])
        if field == "$**" and self._roots is not None:
            self._roots = None   # every top-level field may hold keys

    def document_keys(self, doc: dict) -> tuple[list[bytes], set]:
        return wildcard_keys(doc, self.projection)

    @staticmethod
    def check_spec(key: dict, options: dict) -> None:
        """mongod's checks of a new wildcard index (index_key_validate, wildcard_key_generator)."""
        fields = [f for f in key if f == "$**" or f.endswith(".$**")]
        field = fields[0]
        if len(key) > 1:
            raise CommandError(ErrorCode.NotImplemented,
                               "compound wildcard indexes are not supported by ginkgodb yet")
        direction = key[field]
        if isinstance(direction, str) or isinstance(direction, bool):
            raise CommandError(ErrorCode.CannotCreateIndex,
                               f"Index key contains an illegal field name: '{field}' with plugin "
                               f"'{direction}'" if isinstance(direction, str) else
                               "Values in index key pattern can't be of type bool")
        if field.count("$**") > 1 or any(part.startswith("$") for part in field.split(".")[:-1]):
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "Index key contains an illegal field name: field name starts with '$'.")
        for option in ("unique", "sparse"):
            if options.get(option):
                raise CommandError(ErrorCode.CannotCreateIndex,
                                   f"Index type 'wildcard' does not support the {option} option")
        if "expireAfterSeconds" in options:
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "Index type 'wildcard' cannot be a TTL index")
        if "wildcardProjection" in options:
            _check_projection(field, options["wildcardProjection"])


def check_projection_placement(key: dict, options: dict) -> None:
    """`wildcardProjection` on an index that is not `{"$**": 1}` (mongod's BadValue)."""
    if "wildcardProjection" in options and not any(f == "$**" or f.endswith(".$**") for f in key):
        raise CommandError(ErrorCode.BadValue, "The field 'wildcardProjection' is only allowed in "
                                               "an '$**' index")
    if "wildcardProjection" in options and any(isinstance(d, str) for d in key.values()):
        raise CommandError(ErrorCode.BadValue, "The field 'wildcardProjection' is only allowed in "
                                               "an '$**' index")


def _check_projection(field: str, projection: Any) -> None:
    if not isinstance(projection, Mapping):
        from ...bsonutil.types import type_name
        raise CommandError(ErrorCode.TypeMismatch, "The field 'wildcardProjection' must be a non-empty "
                                                   f"object, but got {type_name(projection)}")
    if not projection:
        raise CommandError(ErrorCode.FailedToParse, "The field 'wildcardProjection' must be a non-empty "
                                                    "object, but got object")
    if field != "$**":
        raise CommandError(ErrorCode.FailedToParse, "The field 'wildcardProjection' is only allowed "
                                                    "when 'key' is {\"$**\": ±1}")
    kinds: dict[str, bool] = {}
    for path, value in projection.items():
        if isinstance(value, bool) or isinstance(value, (int, float)):
            include = bool(value)
        else:
            raise CommandError(ErrorCode.ProjectionComputedFieldsBanned, "Bad projection specification, cannot use "
                               "computed fields when parsing a spec in kBanComputedFields mode")
        if path.startswith("_id.") and kinds and include != next(iter(kinds.values())):
            raise CommandError(ErrorCode.CannotCreateIndex, f"Cannot use a mix of inclusion and exclusion "
                               f"on _id subfield {path}")
        if path == "_id":
            continue
        if kinds and include != next(iter(kinds.values())):
            what = "exclusion" if not include else "inclusion"
            other = "inclusion" if not include else "exclusion"
            code = ErrorCode.ProjectionExclusionInInclusion if not include else ErrorCode.ProjectionInclusionInExclusion
            raise CommandError(code, f"Cannot do {what} on field {path} in {other} projection")
        kinds[path] = include
