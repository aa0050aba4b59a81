"""Dates as mongod sees them: milliseconds since the epoch, UTC, plus time zone lookup.

Decoded BSON dates are naive UTC `datetime`s (or `DatetimeMS` outside datetime's range); the
operators work on integer milliseconds and convert back with `from_millis`.
"""
from __future__ import annotations

import datetime
import re
from functools import lru_cache
from typing import Any

from bson.datetime_ms import DatetimeMS
from bson.objectid import ObjectId
from bson.timestamp import Timestamp

from ginkgodb.bsonutil.compare import date_millis
from ginkgodb.errors import CommandError, ErrorCode

from .values import type_name

EPOCH = datetime.datetime(1970, 1, 1)
_MIN_MS = date_millis(datetime.datetime(1, 1, 1))
_MAX_MS = date_millis(datetime.datetime(9999, 12, 31, 23, 59, 59, 999000))


def is_date(v: Any) -> bool:
    return type(v) is datetime.datetime or type(v) is DatetimeMS


def from_millis(ms: int) -> Any:
    """A BSON date value for `ms` (a naive UTC datetime when Python can represent it)."""
    if _MIN_MS <= ms <= _MAX_MS:
        return EPOCH + datetime.timedelta(milliseconds=ms)
    return DatetimeMS(ms)


def coerce_to_millis(v: Any) -> int:
    """mongod's coerceToDate: dates, timestamps (seconds) and ObjectIds (creation time)."""
    if is_date(v):
        return date_millis(v)
    if type(v) is Timestamp:
        return v.time * 1000
    if type(v) is ObjectId:
        return int.from_bytes(v.binary[:4], "big", signed=True) * 1000
    raise CommandError(ErrorCode.CannotConvertToDate,
                       f"can't convert from BSON type {type_name(v)} to Date")


def to_datetime(ms: int) -> datetime.datetime:
    """A naive UTC datetime for calendar arithmetic (raises for years outside 1..9999)."""
    return EPOCH + datetime.timedelta(milliseconds=ms)


# ---- time zones -----------------------------------------------------------------------------

_OFFSET = re.compile(r"^([+-])(\d{2})(?::?(\d{2}))?$")


class TimeZone:
    """UTC, a fixed offset or an Olson zone; `offset_ms(utc_ms)` is the zone's UTC offset then."""

    def __init__(self, name: str, fixed_ms: int | None, zone: Any = None) -> None:
        self.name, self.fixed_ms, self.zone = name, fixed_ms, zone

    def offset_ms(self, utc_ms: int) -> int:
        if self.fixed_ms is not None:
            return self.fixed_ms
        dt = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + \
            datetime.timedelta(milliseconds=utc_ms)
        off = dt.astimezone(self.zone).utcoffset()
        return int(off.total_seconds() * 1000) if off else 0

    def local_to_utc(self, local_ms: int) -> int:
        """The UTC instant whose local time is `local_ms` (earliest one on ambiguity)."""
        if self.fixed_ms is not None:
            return local_ms - self.fixed_ms
        guess = local_ms - self.offset_ms(local_ms)
        return local_ms - self.offset_ms(guess)

    @property
    def is_utc(self) -> bool:
        return self.fixed_ms == 0


UTC = TimeZone("UTC", 0)


@lru_cache(maxsize=256)
def parse_timezone(name: str) -> TimeZone:
    """'UTC', 'GMT', '+hh:mm', '-hhmm', '+hh' or an Olson identifier; else error 40485."""
    if name in ("UTC", "GMT", "Etc/UTC", "Etc/GMT"):
        return UTC
    m = _OFFSET.match(name)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        ms = (int(m.group(2)) * 60 + int(m.group(3) or 0)) * 60000
        return TimeZone(name, sign * ms)
    try:
        import zoneinfo
        return TimeZone(name, None, zoneinfo.ZoneInfo(name))
    except Exception:
        raise CommandError(ErrorCode.UnknownTimeZone,
                           f"unrecognized time zone identifier: \"{name}\"") from None


def eval_timezone(value: Any) -> TimeZone | None:
    """The zone named by an evaluated `timezone` argument; None when it is null/missing."""
    from .values import nullish
    if nullish(value):
        return None
    if type(value) is not str:
        raise CommandError(ErrorCode.TimeZoneNotString,
                           f"timezone must evaluate to a string, found {type_name(value)}")
    return parse_timezone(value)


def local_parts(ms: int, tz: TimeZone) -> datetime.datetime:
    """The wall-clock time of instant `ms` in `tz`, as a naive datetime."""
    return to_datetime(ms + tz.offset_ms(ms)) if not tz.is_utc else to_datetime(ms)


def local_millis(dt: datetime.datetime) -> int:
    return date_millis(dt)
