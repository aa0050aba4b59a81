"""Argument checks with pymongo's exception types and messages.

Callers catching pymongo's TypeError/ValueError messages must see the same text from us, so
every message here is the one pymongo raises for the same mistake.
"""
from __future__ import annotations

from collections import abc
from typing import Any

from bson.raw_bson import RawBSONDocument
from pymongo.errors import InvalidName


def validate_boolean(option: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise TypeError(f"{option} must be True or False, was: {option}={value}")


def validate_is_mapping(option: str, value: Any) -> None:
    if type(value) is not dict and not isinstance(value, abc.Mapping):
        raise TypeError(f"{option} must be an instance of dict, bson.son.SON, or any other type "
                        "that inherits from collections.Mapping")


def validate_is_document_type(option: str, value: Any) -> None:
    # RawBSONDocument first: a plain class check, where the MutableMapping one goes through abc
    # (a restore's or an import's insert_many asks it of every raw document)
    if type(value) is not dict and not isinstance(value, (RawBSONDocument, abc.MutableMapping)):
        raise TypeError(f"{option} must be an instance of dict, bson.son.SON, "
                        "bson.raw_bson.RawBSONDocument, or a type that inherits from "
                        "collections.MutableMapping")


def all_raw_documents(documents: list) -> bool:
    """True when every item is a RawBSONDocument (of any subclass): a restore's or an import's
    batch, which needs no per-document check and no `_id` added. One type test per distinct
    type, not per document."""
    return bool(documents) and all(issubclass(t, RawBSONDocument) for t in set(map(type, documents)))


def validate_list(option: str, value: Any) -> list:
    if not isinstance(value, list):
        raise TypeError(f"{option} must be a list, not {type(value)}")
    return value


def validate_list_or_none(option: str, value: Any) -> list | None:
    return None if value is None else validate_list(option, value)


def validate_non_negative_int_or_none(option: str, value: Any) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"Wrong type for {option}, value must be an integer, not {type(value)}")
    if value < 0:
        raise ValueError(f"The value of {option} must be a non negative integer")
    return value


def validate_ok_for_update(update: Any) -> None:
    """An update is a non-empty operator document or an aggregation pipeline."""
    if type(update) is not dict and not isinstance(update, (abc.Mapping, list)):
        raise TypeError("update must either be a list or an instance of dict, bson.son.SON, or any "
                        "other type that inherits from collections.Mapping")
    if not update:
        raise ValueError("update cannot be empty")
    first = next(iter(update))
    if not isinstance(update, list) and not first.startswith("$"):
        raise ValueError("update only works with $ operators")


def validate_ok_for_replace(replacement: Any) -> None:
    """A replacement is a plain document: no top-level update operators."""
    validate_is_mapping("replacement", replacement)
    if replacement and not isinstance(replacement, RawBSONDocument):
        if next(iter(replacement)).startswith("$"):
            raise ValueError("replacement can not include $ operators")


def check_database_name(name: Any) -> None:
    """Database names: pymongo's client-side rules (the server checks the rest)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be an instance of str, not {type(name)}")
    if not name:
        raise InvalidName("database name cannot be the empty string")
    for bad in (" ", ".", "$", "/", "\\", "\x00", '"'):
        if bad in name:
            raise InvalidName(f"database names cannot contain the character {bad!r}")


def check_collection_name(name: Any) -> None:
    """Collection names: pymongo's client-side rules (the server checks the rest)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be an instance of str, not {type(name)}")
    if not name or ".." in name:
        raise InvalidName("collection names cannot be empty")
    if "$" in name and not name.startswith(("oplog.$main", "$cmd")):
        raise InvalidName(f"collection names must not contain '$': {name!r}")
    if name[0] == "." or name[-1] == ".":
        raise InvalidName(f"collection names must not start or end with '.': {name!r}")
    if "\x00" in name:
        raise InvalidName("collection names must not contain the null character")
