"""Sentinel objects shared by every layer."""
from __future__ import annotations

from typing import Any

#: "no value here": a dict.get default (or "nothing produced") that no stored or query value can
#: be or equal; compare it with `is`
ABSENT: Any = object()
