"""Key specifications as pymongo accepts them: sort orders, hints, index keys, projections.

A key spec may be a field name, a list of names or (name, direction) pairs, or a mapping; the
command document always carries the mapping form ({field: direction}).
"""
from __future__ import annotations

from collections import abc
from typing import Any, Optional

from pymongo import ASCENDING


def index_list(key_or_list: Any, direction: Optional[Any] = None) -> list:
    """A key spec as a list of (key, direction) pairs."""
    if direction is not None:
        if not isinstance(key_or_list, str):
            raise TypeError(f"Expected a string and a direction, not {type(key_or_list)}")
        return [(key_or_list, direction)]
    if isinstance(key_or_list, str):
        return [(key_or_list, ASCENDING)]
    if isinstance(key_or_list, abc.ItemsView):
        return list(key_or_list)
    if isinstance(key_or_list, abc.Mapping):
        return list(key_or_list.items())
    if not isinstance(key_or_list, (list, tuple)):
        raise TypeError("if no direction is specified, key_or_list must be an instance of list, "
                        f"not {type(key_or_list)}")
    return [(item, ASCENDING) if isinstance(item, str) else item for item in key_or_list]


def index_document(index_list_: Any) -> dict:
    """A list of pairs (or a mapping) as the {key: direction} document commands carry."""
    if not isinstance(index_list_, (list, tuple, abc.Mapping)):
        raise TypeError("must use a dictionary or a list of (key, direction) pairs, not: "
                        + repr(index_list_))
    if not len(index_list_):
        raise ValueError("key_or_list must not be empty")
    index: dict = {}
    if isinstance(index_list_, abc.Mapping):
        for key in index_list_:
            _check_pair(key, index_list_[key])
            index[key] = index_list_[key]
        return index
    for item in index_list_:
        key, value = (item, ASCENDING) if isinstance(item, str) else item
        _check_pair(key, value)
        index[key] = value
    return index


def _check_pair(key: Any, value: Any) -> None:
    if not isinstance(key, str):
        raise TypeError(f"first item in each key pair must be an instance of str, not {type(key)}")
    if not isinstance(value, (str, int, abc.Mapping)):
        raise TypeError("second item in each key pair must be 1, -1, '2d', or another valid "
                        f"MongoDB index specifier., not {type(value)}")


def hint_document(hint: Any) -> Any:
    """A hint is an index name (kept) or a key spec (made a document)."""
    if hint is None or isinstance(hint, str):
        return hint
    return index_document(hint)


def gen_index_name(keys: list) -> str:
    """The default index name: key_direction pairs joined by underscores."""
    return "_".join(f"{key}_{direction}" for key, direction in keys)


def fields_to_dict(fields: Any, option_name: str) -> abc.Mapping:
    """A projection given as a list of field names becomes {name: 1, ...}."""
    if isinstance(fields, abc.Mapping):
        return fields
    if isinstance(fields, (abc.Sequence, abc.Set)):
        if not all(isinstance(field, str) for field in fields):
            raise TypeError(f"{option_name} must be a list of key names, each an instance of str")
        return dict.fromkeys(fields, 1)
    raise TypeError(f"{option_name} must be a mapping or list of key names")
