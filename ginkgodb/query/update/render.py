"""Values printed the way mongod's BSONElement::toString prints them inside update errors.

Update messages embed elements (`Cannot create field 'b' in element {a: 1.0}`): doubles keep a
trailing `.0`, objects print as `{ k: v }`, arrays as `[ v ]`, strings in double quotes.
"""
from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from typing import Any

from ginkgodb.bsonutil.shell_format import Style, format_document, format_element, format_value, quoted
from ginkgodb.bsonutil.types import Undefined


def render_double(v: float) -> str:
    """Up to 16 significant digits; integral values get '.0' so they still look like doubles."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = f"{v:.16g}"
    if "." not in text and "e" not in text and "n" not in text:
        text += ".0"
    return text


UPDATE = Style(render_double, quoted, ((uuid.UUID, lambda v: f'UUID("{v}")'),
                                       (Undefined, lambda v: "undefined")))


def render_element(name: str, value: Any) -> str:
    """`name: value`, as mongod prints one element."""
    return format_element(name, value, UPDATE)


def render_value(v: Any) -> str:
    return format_value(v, UPDATE)


def render_document(d: Mapping) -> str:
    return format_document(d, UPDATE)


def id_element(doc: Mapping) -> str:
    """`_id: <value>` of a document (mongod prints 'no id' when there is none)."""
    if "_id" in doc:
        return render_element("_id", doc["_id"])
    return "no id"


__all__ = ["render_element", "render_value", "render_document", "id_element"]
