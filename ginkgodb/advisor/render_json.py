"""`--format json`: the report as one JSON document (schema in docs/advisor.md)."""
from __future__ import annotations

import datetime
import json
from typing import Any

from .findings import Report


def _plain(v: Any) -> Any:
    if isinstance(v, (datetime.datetime, datetime.date)):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.hex()
    return str(v)


def render(report: Report) -> str:
    return json.dumps(report.to_dict(), default=_plain, indent=2, sort_keys=False)
