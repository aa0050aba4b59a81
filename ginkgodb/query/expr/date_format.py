"""$dateToString formatting and $dateFromString parsing (mongod's % directives)."""
from __future__ import annotations

import calendar
import datetime
import re
from typing import Any

from ginkgodb.errors import CommandError, ErrorCode

from .dates import EPOCH, UTC, TimeZone, local_parts, parse_timezone

ISO_FORMAT = "%Y-%m-%dT%H:%M:%S.%LZ"
ISO_FORMAT_LOCAL = "%Y-%m-%dT%H:%M:%S.%L"
_DIRECTIVES = set("dGHjLmMSwuUVYzZ%")


def validate_format(fmt: str) -> None:
    i = 0
    while i < len(fmt):
        if fmt[i] == "%":
            if i + 1 >= len(fmt):
                raise CommandError(ErrorCode.DateFormatUnmatchedPercent,
                                   "Unmatched '%' at end of format string")
            if fmt[i + 1] not in _DIRECTIVES:
                raise CommandError(ErrorCode.DateFormatInvalidChar,
                                   f"Invalid format character '%{fmt[i + 1]}' in format "
                                   "string")
            i += 2
        else:
            i += 1


def week_of_year(dt: datetime.datetime) -> int:
    """%U: weeks starting on Sunday; days before the first Sunday are week 0."""
    yday = dt.timetuple().tm_yday - 1
    wday = (dt.weekday() + 1) % 7
    return (yday + 7 - wday) // 7


def format_date(ms: int, fmt: str, tz: TimeZone = UTC) -> str:
    """Format instant `ms` in `tz` with mongod's directives (`fmt` already validated)."""
    dt = local_parts(ms, tz)
    out = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        out.append(_directive(fmt[i + 1], dt, ms, tz))
        i += 2
    return "".join(out)


_TWO_DIGIT_FIELDS = {"m": "month", "d": "day", "H": "hour", "M": "minute", "S": "second"}


def _directive(d: str, dt: datetime.datetime, ms: int, tz: TimeZone) -> str:
    if d == "Y":
        if not 0 <= dt.year <= 9999:
            raise CommandError(ErrorCode.DateToStringYearOutOfRange,
                               "Could not convert date to string: date component was "
                               f"outside the supported range of 0-9999: {dt.year}")
        return f"{dt.year:04d}"
    if d in _TWO_DIGIT_FIELDS:
        return f"{getattr(dt, _TWO_DIGIT_FIELDS[d]):02d}"
    if d == "L":
        return f"{dt.microsecond // 1000:03d}"
    if d == "j":
        return f"{dt.timetuple().tm_yday:03d}"
    if d == "w":
        return str((dt.weekday() + 1) % 7 + 1)
    if d == "u":
        return str(dt.isoweekday())
    if d == "U":
        return f"{week_of_year(dt):02d}"
    if d == "V":
        return f"{dt.isocalendar()[1]:02d}"
    if d == "G":
        return f"{dt.isocalendar()[0]:04d}"
    if d == "z":
        off = tz.offset_ms(ms) // 60000
        sign = "-" if off < 0 else "+"
        return f"{sign}{abs(off) // 60:02d}{abs(off) % 60:02d}"
    if d == "Z":
        return str(tz.offset_ms(ms) // 60000)
    return "%"


def format_date_iso(ms: int) -> str:
    return format_date(ms, ISO_FORMAT)


# ---- parsing ---------------------------------------------------------------------------------

_BLANK = "[ \t\n\r\v\f\x00\xa0]*"
_ISO = re.compile(
    "^" + _BLANK + r"(?P<Y>-?\d{4,6})-(?P<m>\d{1,2})-(?P<d>\d{1,2})"
    r"(?:(?:T|[ \t]+)(?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:[.,](?P<f>\d+))?)?)?"
    + _BLANK + r"(?P<tz>Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?|[A-Za-z_]+/[A-Za-z_/+-]+)?" + _BLANK + "$",
    re.ASCII)
_COMPACT = re.compile(r"^(?P<Y>\d{4})(?P<m>\d{2})(?P<d>\d{2})$", re.ASCII)


def _fail(s: str, why: str) -> CommandError:
    return CommandError(ErrorCode.ConversionFailure, f"Error parsing date string '{s}'; {why}")


def _zone_given_twice(s: str) -> CommandError:
    return CommandError(ErrorCode.ConversionFailure, "you cannot pass in a date/time string with "
                                                     f"time zone information ('{s}') together "
                                                     "with a timezone argument")


def parse_date_string(s: str, tz: TimeZone | None) -> int:
    """Milliseconds for an ISO-8601-like string; `tz` applies when the string names no zone."""
    m = _ISO.match(s) or _COMPACT.match(s)
    if not m:
        raise _fail(s, "0: Unexpected character")
    g = m.groupdict()
    year, month, day = int(g["Y"]), int(g["m"]), int(g["d"])
    hour, minute, sec = int(g.get("H") or 0), int(g.get("M") or 0), int(g.get("S") or 0)
    millis = int(((g.get("f") or "0") + "000")[:3])
    if not (1 <= month <= 12 and 1 <= day <= _month_days(year, month) and hour < 24 and
            minute < 60 and sec < 60):
        raise _fail(s, "The parsed date was invalid")
    zone_text = g.get("tz")
    if zone_text and tz is not None and zone_text[0] not in "+-":
        raise _zone_given_twice(s)
    if zone_text == "Z":
        zone = UTC
    else:
        zone = parse_timezone(zone_text) if zone_text else (tz or UTC)
    local = ((civil_days(year, month, day) * 24 + hour) * 60 + minute) * 60000 + sec * 1000 + millis
    return zone.local_to_utc(local)


def civil_days(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, including <= 0)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _month_days(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _millis(dt: datetime.datetime) -> int:
    delta = dt - EPOCH
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


_FORMAT_FIELDS = {
    "Y": r"(?P<Y>\d{4})", "m": r"(?P<m>\d{1,2})", "d": r"(?P<d>\d{1,2})",
    "H": r"(?P<H>\d{1,2})", "M": r"(?P<M>\d{1,2})", "S": r"(?P<S>\d{1,2})",
    "L": r"(?P<L>\d{1,3})", "j": r"(?P<j>\d{1,3})", "z": r"(?P<z>[+-]\d{2}:?\d{2})",
    "Z": r"(?P<Z>[+-]?\d+)", "G": r"(?P<G>\d{4})", "V": r"(?P<V>\d{1,2})",
    "u": r"(?P<u>\d)", "w": r"(?P<w>\d)", "U": r"(?P<U>\d{1,2})", "%": "%",
}


def validate_parse_format(fmt: str) -> None:
    """$dateFromString accepts fewer directives than $dateToString produces."""
    validate_format(fmt)
    for bad in ("%w", "%U"):
        if bad in fmt.replace("%%", ""):
            raise CommandError(ErrorCode.DateFormatInvalidChar,
                               f"Invalid format character '{bad}' in format string")


def parse_with_format(s: str, fmt: str, tz: TimeZone | None) -> int:
    pattern = []
    i = 0
    while i < len(fmt):
        if fmt[i] == "%" and i + 1 < len(fmt):
            pattern.append(_FORMAT_FIELDS.get(fmt[i + 1], re.escape(fmt[i + 1])))
            i += 2
        else:
            pattern.append(re.escape(fmt[i]))
            i += 1
    m = re.fullmatch("".join(pattern), s)
    if not m:
        raise _fail(s, "Format does not match")
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    try:
        if "G" in g:
            day = datetime.date.fromisocalendar(int(g["G"]), int(g.get("V", 1)), int(g.get("u", 1)))
        elif "j" in g:
            day = datetime.date(int(g.get("Y", 1970)), 1, 1) + \
                datetime.timedelta(days=int(g["j"]))
        else:
            day = datetime.date(int(g.get("Y", 1970)), int(g.get("m", 1)), int(g.get("d", 1)))
        local = datetime.datetime(day.year, day.month, day.day, int(g.get("H", 0)),
                                  int(g.get("M", 0)), int(g.get("S", 0)),
                                  int(g.get("L", "0").ljust(3, "0")) * 1000)
    except ValueError:
        raise _fail(s, "The parsed date was invalid") from None
    if "z" in g or "Z" in g:
        if tz is not None:
            raise _zone_given_twice(s)
        off = g.get("z")
        zone = parse_timezone(off) if off else TimeZone("", int(g["Z"]) * 60000)
    else:
        zone = tz or UTC
    return zone.local_to_utc(_millis(local))


def days_in_month(year: int, month: int) -> int:
    return calendar.monthrange(year, month)[1]


def format_any(v: Any) -> str:
    from ginkgodb.bsonutil.compare import date_millis
    return format_date_iso(date_millis(v))
