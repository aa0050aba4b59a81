"""`create`'s `clusteredIndex` and `expireAfterSeconds`, checked as mongod 7.0 checks them.

The spec is stored as listCollections shows it (`{v: 2, key: {_id: 1}, name, unique: true}`);
the engine keys the collection's records by `_id` (engine/clustered.py).
"""
from __future__ import annotations

from typing import Any

from ..bsonutil.shell_format import format_document
from ..bsonutil.types import is_bson_number, type_name
from ..errors import CommandError, ErrorCode

_SPEC_FIELDS = ("v", "key", "name", "unique")
MAX_EXPIRE_AFTER_SECONDS = 2**31 - 1


def check_clustered_options(options: dict, test_commands: bool) -> None:
    """Normalize `options["clusteredIndex"]` in place and check the options beside it; refuses
    `expireAfterSeconds` without clustering (time-series collections check their own)."""
    if "clusteredIndex" not in options:
        if "expireAfterSeconds" in options and "timeseries" not in options:
            raise CommandError(ErrorCode.InvalidOptions, "'expireAfterSeconds' requires clustering to be enabled")
        return
    options["clusteredIndex"] = _normalized_spec(options["clusteredIndex"])
    if "viewOn" in options:
        raise CommandError(ErrorCode.InvalidOptions, "option not supported on a view: clusteredIndex")
    if "size" in options:
        raise CommandError(ErrorCode.ClusteredCollectionWithSize,
                           "'size' field for capped collections is not allowed on clustered collections. "
                           "Did you mean 'capped: true' with 'expireAfterSeconds'?")
    if "max" in options:
        raise CommandError(ErrorCode.ClusteredCollectionWithMax,
                           "'max' field for capped collections is not allowed on clustered collections. "
                           "Did you mean 'capped: true' with 'expireAfterSeconds'?")
    if options.get("capped"):
        if not test_commands:
            raise CommandError(ErrorCode.ClusteredCappedNeedsTestCommands,
                               "Clustered capped collection only available with 'enableTestCommands' "
                               "server parameter")
        if "expireAfterSeconds" not in options:
            raise CommandError(ErrorCode.ClusteredCappedWithoutTTL,
                               "A capped clustered collection requires the 'expireAfterSeconds' field")
        raise CommandError(ErrorCode.NotImplemented, "capped clustered collections are not supported by ginkgodb")
    if "expireAfterSeconds" in options:
        check_expire_after_seconds(options["expireAfterSeconds"], "create.expireAfterSeconds")


def check_expire_after_seconds(value: Any, field: str) -> None:
    """A clustered collection's TTL, as mongod's validateExpireAfterSeconds (clustered mode)."""
    if isinstance(value, bool) or not is_bson_number(value):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field '{field}' is the wrong type '{type_name(value)}', expected types "
                           "'[long, int, decimal, double]'")
    if value < 0:
        raise CommandError(ErrorCode.InvalidOptions, "TTL index 'expireAfterSeconds' option cannot be less than 0")
    if value > MAX_EXPIRE_AFTER_SECONDS:
        raise CommandError(ErrorCode.InvalidOptions, "TTL index 'expireAfterSeconds' option must be within an "
                                                     "acceptable range, try a lower number")


def _normalized_spec(spec: Any) -> dict:
    if isinstance(spec, bool):
        raise CommandError(ErrorCode.InvalidOptions,
                           "The 'clusteredIndex' legacy format {clusteredIndex: <bool>} is only supported for "
                           "specific internal collections.")
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.ClusteredIndexWrongType, "'clusteredIndex' has to be a boolean or object.")
    for key in spec:
        if key not in _SPEC_FIELDS:
            raise CommandError(ErrorCode.IDLUnknownField, f"BSON field 'clusteredIndex.{key}' is an unknown field.")
    for key in ("key", "unique"):
        if key not in spec:
            raise CommandError(ErrorCode.IDLFailedToParse,
                               f"BSON field 'clusteredIndex.{key}' is missing but a required field")
    _typed(spec, "key", dict, "object")
    _typed(spec, "unique", bool, "bool")
    if "name" in spec:
        _typed(spec, "name", str, "string")
    version = spec.get("v", 2)
    if isinstance(version, bool) or not is_bson_number(version):
        raise CommandError(ErrorCode.TypeMismatch,
                           f"BSON field 'clusteredIndex.v' is the wrong type '{type_name(version)}', "
                           "expected types '[long, int, decimal, double]'")
    if not spec["unique"]:
        raise CommandError(ErrorCode.ClusteredIndexNotUnique,
                           "The clusteredIndex option requires unique: true to be specified")
    key = spec["key"]
    if list(key) != ["_id"] or not is_bson_number(key["_id"]) or key["_id"] != 1:
        raise CommandError(ErrorCode.InvalidIndexSpecificationOption,
                           "The clusteredIndex option is only supported for key: {_id: 1}")
    if version != 2:
        shown = {"v": version, "key": key, "unique": True, **({"name": spec["name"]} if "name" in spec else {})}
        raise CommandError(ErrorCode.ClusteredIndexWrongVersion,
                           f"Invalid clusteredIndex specification {format_document(shown)}; "
                           f"cannot create a clusteredIndex with v={int(version)}")
    return {"v": 2, "key": {"_id": 1}, "name": spec.get("name", "_id_"), "unique": True}


def _typed(spec: dict, key: str, kind: type, name: str) -> None:
    value = spec[key]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise CommandError(ErrorCode.TypeMismatch, f"BSON field 'clusteredIndex.{key}' is the wrong type "
                                                   f"'{type_name(value)}', expected type '{name}'")
