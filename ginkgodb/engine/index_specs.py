"""Index specifications: createIndexes' validation and normalisation, with mongod's errors.

What each index kind does is its access method's (engine/access/); this module checks the
parts every spec shares (key pattern, name, options) and asks the kind for its own rules.
"""
from __future__ import annotations

from typing import Any, Optional

from ..bsonutil.shell_format import format_document
from ..errors import CommandError, ErrorCode
from .access import check_kind, normalize_kind_spec
from .catalog_entries import IndexMeta

# ---------------------------------------------------------------------------------------- specs
#: the index plugin names mongod knows (whether ginkgodb serves them is check_kind's answer)
_PLUGINS = {"hashed", "text", "2dsphere", "2d", "geoHaystack"}


def default_index_name(key: dict) -> str:
    return "_".join(f"{field}_{direction}" for field, direction in key.items())


def validate_key_pattern(key: Any) -> dict:
    if not isinstance(key, dict) or not key:
        raise CommandError(ErrorCode.CannotCreateIndex, "Index keys cannot be an empty field.")
    for field, direction in key.items():
        if not field:
            raise CommandError(ErrorCode.CannotCreateIndex, "Index keys cannot be an empty field.")
        if isinstance(direction, bool) or not (isinstance(direction, (int, float)) or direction in _PLUGINS):
            if isinstance(direction, str):
                raise CommandError(ErrorCode.CannotCreateIndex, f"Unknown index plugin '{direction}'")
            raise CommandError(ErrorCode.CannotCreateIndex,
                               f"Values in index key pattern can't be of type {type(direction).__name__}")
        if isinstance(direction, (int, float)) and direction == 0:
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "Values in the index key pattern can't be 0 or -0")
        if field.startswith("$") and field != "$**" and not field.endswith("$**"):
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "Index key contains an illegal field name: field name starts with '$'.")
    return key


def is_id_pattern(key: dict) -> bool:
    """`{_id: 1}`: the key pattern of the _id index."""
    if len(key) != 1 or "_id" not in key:
        return False
    direction = key["_id"]
    return isinstance(direction, (int, float)) and not isinstance(direction, bool) and direction == 1


#: the only fields an _id index specification may hold (mongod's validateIdIndexSpec)
_ID_INDEX_FIELDS = frozenset({"key", "name", "v", "ns", "collation"})


def _check_id_index_spec(spec: dict) -> None:
    for field in spec:
        if field not in _ID_INDEX_FIELDS:
            shown = spec if "v" in spec else {**spec, "v": 2}
            raise CommandError(ErrorCode.InvalidIndexSpecificationOption,
                               f"The field '{field}' is not valid for an _id index specification. "
                               f"Specification: {format_document(shown)}")


def normalize_spec(spec: Any) -> tuple[str, dict, dict]:
    """(name, key, options) from a createIndexes entry, with mongod's validation errors."""
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.TypeMismatch, "Index specification must be an object")
    if "key" not in spec:
        raise CommandError(ErrorCode.FailedToParse, "The 'key' field is a required property of an index specification")
    key = validate_key_pattern(spec["key"])
    name = spec.get("name")
    if name is None:
        raise CommandError(ErrorCode.FailedToParse, "The 'name' field is a required property of an index specification")
    if not isinstance(name, str) or not name:
        raise CommandError(ErrorCode.CannotCreateIndex, "The index name cannot be empty")
    if is_id_pattern(key):
        _check_id_index_spec(spec)
        name = "_id_"  # mongod corrects the name of an _id index
    elif name == "_id_":
        raise CommandError(ErrorCode.BadValue, "The index name '_id_' is reserved for the _id index, which must "
                                               f"have key pattern {{_id: 1}}, found {format_document(key)}")
    options = {}
    for field, value in spec.items():
        if field in ("key", "name", "v", "ns"):
            continue
        # `synonyms` (a ginkgodb extension) belongs to text indexes only
        if field not in _ALLOWED_OPTIONS or (field in _TEXT_ONLY and "text" not in key.values()):
            raise CommandError(ErrorCode.InvalidIndexSpecificationOption,
                               f"The field '{field}' is not valid for an index specification. Specification: "
                               f"{format_document(spec)}")
        options[field] = value
    if options.get("sparse") is False:
        options.pop("sparse")
    if options.get("unique") is False:
        options.pop("unique")
    _check_options(key, name, options)
    key, options = normalize_kind_spec(name, dict(key), options)
    return name, dict(key), options


_ALLOWED_OPTIONS = {"unique", "sparse", "partialFilterExpression", "expireAfterSeconds", "hidden",
                    "collation", "weights", "default_language", "language_override", "textIndexVersion",
                    "2dsphereIndexVersion", "finestIndexedLevel", "coarsestIndexedLevel",
                    "bits", "min", "max", "wildcardProjection", "storageEngine",
                    "background", "prepareUnique", "dropDups", "synonyms", "textIndexBuild"}


_TEXT_ONLY = {"synonyms", "textIndexBuild"}


def _check_options(key: dict, name: str, options: dict) -> None:
    if name == "_id_" or list(key) == ["_id"]:
        if options.get("sparse") or "partialFilterExpression" in options:
            raise CommandError(ErrorCode.InvalidIndexSpecificationOption,
                               "The field 'sparse' is not valid for an _id index specification.")
    if "partialFilterExpression" in options:
        pfe = options["partialFilterExpression"]
        if not isinstance(pfe, dict):
            raise CommandError(ErrorCode.TypeMismatch, "'partialFilterExpression' for an index must be a document")
        if options.get("sparse"):
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "cannot mix \"partialFilterExpression\" and \"sparse\" options")
        from ..query.match import compile_filter
        compile_filter(pfe, where=False)
    if "expireAfterSeconds" in options:
        ttl = options["expireAfterSeconds"]
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl < 0 or ttl > 2**31 - 1:
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "TTL index 'expireAfterSeconds' option must be within an acceptable range, "
                               "try a lower number")
        if len(key) > 1:
            raise CommandError(ErrorCode.CannotCreateIndex,
                               "TTL indexes are single-field indexes, compound indexes do not support TTL.")
    check_kind(key, options)


def comparable_options(options: dict) -> dict:
    """Options that distinguish two indexes with the same key (mongod ignores the rest)."""
    return {k: v for k, v in options.items() if k in ("unique", "sparse", "partialFilterExpression",
                                                       "collation", "expireAfterSeconds", "hidden",
                                                       "weights", "default_language", "language_override",
                                                       "textIndexVersion", "synonyms")}


def find_index(indexes: list[IndexMeta], spec: Any) -> Optional[IndexMeta]:
    """An index by name (str) or by key pattern (dict)."""
    for ix in indexes:
        if isinstance(spec, str) and ix.name == spec:
            return ix
        if isinstance(spec, dict) and list(ix.key.items()) == list(spec.items()):
            return ix
    return None
