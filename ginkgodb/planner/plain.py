"""Values whose equality is plain value equality: no array, document, null or regex rules.

The shortcut planner and IDHACK may answer equality on such values by one key probe.
"""
from __future__ import annotations

import datetime
import math
from typing import Any

from bson.int64 import Int64
from bson.objectid import ObjectId

_PLAIN = (int, float, str, ObjectId, datetime.datetime, Int64, bool)
_PLAIN_TYPES = frozenset(_PLAIN)


def plain_value(v: Any) -> bool:
    """True for values whose equality is plain value equality (no array/null/regex rules)."""
    t = type(v)
    if t in _PLAIN_TYPES:
        return t is not float or v == v
    return isinstance(v, _PLAIN) and not (isinstance(v, float) and math.isnan(v))
