"""Date operators: parts, $dateToString/$dateFromString, $dateAdd/$dateDiff/$dateTrunc, parts."""
from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from bson.int64 import Int64

from ginkgodb.errors import CommandError, ErrorCode

from . import date_format as F
from .compiler import Fn, Scope, compile_node, const, operator
from .dates import UTC, TimeZone, coerce_to_millis, eval_timezone, from_millis, local_parts
from .values import INT64_MAX, INT64_MIN, as_int64, bson_repr, nullish, type_name

_UTC_FN = const("UTC")


def _millis(dt: datetime.datetime) -> int:
    return F._millis(dt)


# ---- $year, $month, ... ---------------------------------------------------------------------


def _date_part(name: str, extract: Callable[[datetime.datetime], int]) -> None:
    @operator(name)
    def parse(spec: Any, scope: Scope) -> Fn:
        tz_fn: Fn | None = None
        if isinstance(spec, list):
            if len(spec) != 1:
                raise CommandError(ErrorCode.DatePartOperatorArrayArgCount,
                                   f"{name} accepts exactly one argument if given an "
                                   f"array, but was given {len(spec)}")
            date_fn = compile_node(spec[0], scope)
        elif isinstance(spec, dict) and spec and not next(iter(spec)).startswith("$"):
            for key in spec:
                if key not in ("date", "timezone"):
                    raise CommandError(ErrorCode.DatePartOperatorUnknownOption,
                                       f"unrecognized option to {name}: \"{key}\"")
            if "date" not in spec:
                raise CommandError(ErrorCode.DatePartOperatorMissingDate,
                                   f"missing 'date' argument to {name}, provided: "
                                   f"{bson_repr(spec)}")
            date_fn = compile_node(spec["date"], scope)
            tz_fn = compile_node(spec["timezone"], scope) if "timezone" in spec else None
        else:
            date_fn = compile_node(spec, scope)

        def ev(doc: Any, vars: Any) -> Any:
            d = date_fn(doc, vars)
            tz = UTC
            if tz_fn is not None:
                tz = eval_timezone(tz_fn(doc, vars))
                if tz is None:
                    return None
            if nullish(d):
                return None
            return extract(local_parts(coerce_to_millis(d), tz))
        return ev


_date_part("$year", lambda dt: dt.year)
_date_part("$month", lambda dt: dt.month)
_date_part("$dayOfMonth", lambda dt: dt.day)
_date_part("$hour", lambda dt: dt.hour)
_date_part("$minute", lambda dt: dt.minute)
_date_part("$second", lambda dt: dt.second)
_date_part("$millisecond", lambda dt: dt.microsecond // 1000)
_date_part("$dayOfWeek", lambda dt: (dt.weekday() + 1) % 7 + 1)
_date_part("$dayOfYear", lambda dt: dt.timetuple().tm_yday)
_date_part("$week", F.week_of_year)
_date_part("$isoWeek", lambda dt: dt.isocalendar()[1])
_date_part("$isoWeekYear", lambda dt: Int64(dt.isocalendar()[0]))
_date_part("$isoDayOfWeek", lambda dt: dt.isoweekday())


# ---- helpers for object-style date operators ------------------------------------------------


def _object_args(name: str, spec: Any, allowed: tuple[str, ...], required: tuple[str, ...],
                 codes: tuple[ErrorCode, ...], scope: Scope) -> dict[str, Fn]:
    not_object, unknown, *missing_codes = codes
    if not isinstance(spec, dict):
        raise CommandError(not_object, f"{name} only supports an object as its argument")
    out = {}
    for key, value in spec.items():
        if key not in allowed:
            raise CommandError(unknown, f"Unrecognized argument to {name}: {key}")
        out[key] = compile_node(value, scope)
    for i, key in enumerate(required):
        if key not in out:
            code = missing_codes[min(i, len(missing_codes) - 1)]
            raise CommandError(code, f"Missing '{key}' parameter to {name}")
    return out


def _tz(args: dict[str, Fn], doc: Any, vars: Any) -> TimeZone | None:
    fn = args.get("timezone")
    return UTC if fn is None else eval_timezone(fn(doc, vars))


# ---- $dateToString / $dateFromString --------------------------------------------------------


@operator("$dateToString")
def _date_to_string(spec: Any, scope: Scope) -> Fn:
    args = _object_args("$dateToString", spec, ("date", "format", "timezone", "onNull"),
                        ("date",), (ErrorCode.DateToStringArgNotObject,
                                    ErrorCode.DateToStringUnknownArgument,
                                    ErrorCode.DateToStringMissingDate), scope)
    fmt_fn = args.get("format")

    def ev(doc: Any, vars: Any) -> Any:
        fmt = None
        if fmt_fn is not None:
            fmt = fmt_fn(doc, vars)
            if not nullish(fmt):
                if type(fmt) is not str:
                    raise CommandError(ErrorCode.DateToStringFormatNotString,
                                       "$dateToString requires that 'format' be a string, "
                                       f"found: {type_name(fmt)} with value "
                                       f"{bson_repr(fmt)}")
                F.validate_format(fmt)
        tz = _tz(args, doc, vars)
        d = args["date"](doc, vars)
        if nullish(d):
            on_null = args.get("onNull")
            return on_null(doc, vars) if on_null is not None else None
        if tz is None or (fmt_fn is not None and nullish(fmt)):
            return None
        if fmt is None:
            fmt = F.ISO_FORMAT if tz.is_utc else F.ISO_FORMAT_LOCAL
        return F.format_date(coerce_to_millis(d), fmt, tz)
    return ev


@operator("$dateFromString")
def _date_from_string(spec: Any, scope: Scope) -> Fn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.DateFromStringArgNotObject,
                           "$dateFromString only supports an object as an argument, "
                           f"found: {type_name(spec)}")
    args = {}
    for key, value in spec.items():
        if key not in ("dateString", "format", "timezone", "onNull", "onError"):
            raise CommandError(ErrorCode.DateFromStringUnknownArgument,
                               f"Unrecognized argument to $dateFromString: {key}")
        args[key] = compile_node(value, scope)
    if "dateString" not in args:
        raise CommandError(ErrorCode.DateFromStringMissingDateString,
                           "Missing 'dateString' parameter to $dateFromString")
    return _date_from_string_fn(args)


def _date_from_string_fn(args: dict[str, Fn]) -> Fn:
    def ev(doc: Any, vars: Any) -> Any:
        fmt = args["format"](doc, vars) if "format" in args else None
        if not nullish(fmt):
            if type(fmt) is not str:
                raise CommandError(ErrorCode.DateFromStringFormatNotString,
                                   "$dateFromString requires that 'format' be a string, "
                                   f"found: {type_name(fmt)} with value {bson_repr(fmt)}")
            F.validate_format(fmt)
        tz = eval_timezone(args["timezone"](doc, vars)) if "timezone" in args else UTC
        s = args["dateString"](doc, vars)
        if nullish(s):
            return args["onNull"](doc, vars) if "onNull" in args else None
        try:
            if type(s) is not str:
                raise CommandError(ErrorCode.ConversionFailure, "$dateFromString requires that "
                                   f"'dateString' be a string, found: {type_name(s)} with value "
                                   f"{bson_repr(s)}")
            if tz is None or ("format" in args and nullish(fmt)):
                return None
            explicit = tz if "timezone" in args else None
            if fmt is not None:
                F.validate_parse_format(fmt)
                return from_millis(F.parse_with_format(s, fmt, explicit))
            return from_millis(F.parse_date_string(s, explicit))
        except CommandError as exc:
            if exc.code == ErrorCode.ConversionFailure and "onError" in args:
                return args["onError"](doc, vars)
            raise
    return ev


# ---- units ------------------------------------------------------------------------------------

_UNIT_MS = {"millisecond": 1, "second": 1000, "minute": 60000, "hour": 3600000,
            "day": 86400000, "week": 7 * 86400000}
_UNITS = ("year", "quarter", "month", "week", "day", "hour", "minute", "second", "millisecond")
_DAYS = {"monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "wednesday": 2, "wed": 2,
         "thursday": 3, "thu": 3, "friday": 4, "fri": 4, "saturday": 5, "sat": 5,
         "sunday": 6, "sun": 6}


def _unit(name: str, v: Any) -> str:
    if type(v) is not str:
        raise CommandError(ErrorCode.DateUnitNotString,
                           f"{name} requires 'unit' to be a string, but got "
                           f"{type_name(v)}")
    if v not in _UNITS:
        raise CommandError(ErrorCode.FailedToParse, f"{name} parameter 'unit' value cannot be "
                                                    f"recognized as a time unit: {v}")
    return v


def _start_of_week(name: str, args: dict[str, Fn], doc: Any, vars: Any) -> int | None:
    fn = args.get("startOfWeek")
    if fn is None:
        return 6
    v = fn(doc, vars)
    if nullish(v):
        return None
    if type(v) is not str:
        raise CommandError(ErrorCode.StartOfWeekNotString,
                           f"{name} requires 'startOfWeek' to be a string, but got "
                           f"{type_name(v)}")
    day = _DAYS.get(v.lower())
    if day is None:
        raise CommandError(ErrorCode.StartOfWeekUnknownDay,
                           f"{name} parameter 'startOfWeek' value cannot be recognized "
                           f"as a day of a week: {v}")
    return day


def _date_arg(name: str, field: str, v: Any, code: ErrorCode) -> int:
    try:
        return coerce_to_millis(v)
    except CommandError:
        raise CommandError(code, f"{name} requires '{field}' to be a date, but got "
                                 f"{type_name(v)}") from None


# ---- $dateAdd / $dateSubtract ----------------------------------------------------------------


def add_to_date(ms: int, unit: str, amount: int, tz: TimeZone) -> int:
    if unit in _UNIT_MS and unit != "day" and unit != "week":
        return ms + amount * _UNIT_MS[unit]
    local = local_parts(ms, tz)
    if unit in ("day", "week"):
        moved = local + datetime.timedelta(days=amount * (7 if unit == "week" else 1))
    else:
        months = amount * {"month": 1, "quarter": 3, "year": 12}[unit]
        total = local.year * 12 + local.month - 1 + months
        year, month = divmod(total, 12)
        if not 1 <= year <= 9999:
            raise OverflowError
        day = min(local.day, F.days_in_month(year, month + 1))
        moved = local.replace(year=year, month=month + 1, day=day)
    return tz.local_to_utc(_millis(moved)) if not tz.is_utc else _millis(moved)


def _date_arith(name: str, sign: int) -> None:
    @operator(name)
    def parse(spec: Any, scope: Scope) -> Fn:
        if not isinstance(spec, dict):
            raise CommandError(ErrorCode.DateAddArgNotObject,
                               f"{name} expects an object as its argument")
        args = {}
        for key, value in spec.items():
            if key not in ("startDate", "unit", "amount", "timezone"):
                raise CommandError(ErrorCode.DateAddUnknownArgument,
                                   f"Unrecognized argument to {name}: {key}")
            args[key] = compile_node(value, scope)
        if not all(k in args for k in ("startDate", "unit", "amount")):
            raise CommandError(ErrorCode.DateAddMissingArgument,
                               f"{name} requires startDate, unit, and amount to be "
                               "present")

        def ev(doc: Any, vars: Any) -> Any:
            start = args["startDate"](doc, vars)
            unit = args["unit"](doc, vars)
            amount = args["amount"](doc, vars)
            tz = _tz(args, doc, vars)
            if nullish(start) or nullish(unit) or nullish(amount) or tz is None:
                return None
            try:
                ms = coerce_to_millis(start)
            except CommandError:
                raise CommandError(ErrorCode.DateAddStartDateNotDate,
                                   f"{name} requires startDate to be convertible to a "
                                   "date") from None
            u = _unit(name, unit)
            n = as_int64(amount) if not isinstance(amount, bool) else None
            if n is None:
                raise CommandError(ErrorCode.DateAddAmountNotInteger,
                                   f"{name} expects integer amount of time units")
            try:
                result = add_to_date(ms, u, sign * n, tz)
            except (OverflowError, ValueError):
                raise CommandError(ErrorCode.DateAddInvalidResult,
                                   f"invalid {name} result") from None
            if not INT64_MIN <= result <= INT64_MAX:
                raise CommandError(ErrorCode.DateAddOverflow, f"{name} overflowed")
            return from_millis(result)
        return ev


_date_arith("$dateAdd", 1)
_date_arith("$dateSubtract", -1)


# ---- $dateDiff --------------------------------------------------------------------------------


def date_diff(a: int, b: int, unit: str, tz: TimeZone, start_of_week: int) -> int:
    if unit in ("millisecond", "second", "minute", "hour"):
        size = _UNIT_MS[unit]
        return b // size - a // size
    da, db = local_parts(a, tz), local_parts(b, tz)
    if unit == "year":
        return db.year - da.year
    if unit == "quarter":
        return (db.year * 4 + (db.month - 1) // 3) - (da.year * 4 + (da.month - 1) // 3)
    if unit == "month":
        return (db.year * 12 + db.month) - (da.year * 12 + da.month)
    days = db.date().toordinal() - da.date().toordinal()
    if unit == "day":
        return days
    wa = (da.date().toordinal() - ((da.weekday() - start_of_week) % 7))
    wb = (db.date().toordinal() - ((db.weekday() - start_of_week) % 7))
    return (wb - wa) // 7


@operator("$dateDiff")
def _date_diff(spec: Any, scope: Scope) -> Fn:
    args = _object_args("$dateDiff", spec, ("startDate", "endDate", "unit", "timezone",
                                            "startOfWeek"),
                        ("startDate", "endDate", "unit"),
                        (ErrorCode.DateDiffArgNotObject, ErrorCode.DateDiffUnknownArgument,
                         ErrorCode.DateDiffMissingStartDate, ErrorCode.DateDiffMissingEndDate,
                         ErrorCode.DateDiffMissingUnit), scope)

    def ev(doc: Any, vars: Any) -> Any:
        a, b = args["startDate"](doc, vars), args["endDate"](doc, vars)
        unit = args["unit"](doc, vars)
        tz = _tz(args, doc, vars)
        if nullish(a) or nullish(b) or nullish(unit) or tz is None:
            return None
        ma = _date_arg("$dateDiff", "startDate", a, ErrorCode.DateArgNotDate)
        mb = _date_arg("$dateDiff", "endDate", b, ErrorCode.DateArgNotDate)
        u = _unit("$dateDiff", unit)
        sow = _start_of_week("$dateDiff", args, doc, vars) if u == "week" else 6
        if sow is None:
            return None
        from bson.int64 import Int64
        return Int64(date_diff(ma, mb, u, tz, sow))
    return ev


# ---- $dateTrunc --------------------------------------------------------------------------------

_REFERENCE = datetime.datetime(2000, 1, 1)


def truncate_date(ms: int, unit: str, bin_size: int, tz: TimeZone, start_of_week: int) -> int:
    local = local_parts(ms, tz)
    if unit in ("year", "quarter", "month"):
        per = {"month": 1, "quarter": 3, "year": 12}[unit] * bin_size
        months = (local.year - 2000) * 12 + local.month - 1
        start = months // per * per
        year, month = divmod(start, 12)
        out = datetime.datetime(2000 + year, month + 1, 1)
    else:
        ref = _REFERENCE
        if unit == "week":
            ref = ref + datetime.timedelta(days=(start_of_week - ref.weekday()) % 7)
        size = _UNIT_MS[unit] * bin_size
        elapsed = _millis(local) - _millis(ref)
        out = ref + datetime.timedelta(milliseconds=elapsed // size * size)
    return tz.local_to_utc(_millis(out)) if not tz.is_utc else _millis(out)


@operator("$dateTrunc")
def _date_trunc(spec: Any, scope: Scope) -> Fn:
    args = _object_args("$dateTrunc", spec, ("date", "unit", "binSize", "timezone",
                                             "startOfWeek"),
                        ("date", "unit"), (ErrorCode.DateTruncArgNotObject,
                                           ErrorCode.DateTruncUnknownArgument,
                                           ErrorCode.DateTruncMissingDate,
                                           ErrorCode.DateTruncMissingUnit), scope)

    def ev(doc: Any, vars: Any) -> Any:
        d, unit = args["date"](doc, vars), args["unit"](doc, vars)
        bin_size = args["binSize"](doc, vars) if "binSize" in args else 1
        tz = _tz(args, doc, vars)
        if nullish(d) or nullish(unit) or nullish(bin_size) or tz is None:
            return None
        ms = _date_arg("$dateTrunc", "date", d, ErrorCode.DateArgNotDate)
        u = _unit("$dateTrunc", unit)
        n = as_int64(bin_size) if not isinstance(bin_size, bool) else None
        if n is None:
            raise CommandError(ErrorCode.DateTruncBinSizeNotLong,
                               "$dateTrunc requires 'binSize' to be a 64-bit integer, "
                               f"but got value '{bson_repr(bin_size)}' of type "
                               f"{type_name(bin_size)}")
        if n <= 0:
            raise CommandError(ErrorCode.DateTruncBinSizeNotPositive,
                               "$dateTrunc requires 'binSize' to be greater than 0, but "
                               f"got value {n}")
        sow = _start_of_week("$dateTrunc", args, doc, vars)
        if sow is None:
            return None
        return from_millis(truncate_date(ms, u, n, tz, sow))
    return ev


# ---- $dateFromParts / $dateToParts ------------------------------------------------------------

_NATURAL = ("year", "month", "day", "hour", "minute", "second", "millisecond")
_ISO_PARTS = ("isoWeekYear", "isoWeek", "isoDayOfWeek", "hour", "minute", "second",
              "millisecond")


@operator("$dateFromParts")
def _date_from_parts(spec: Any, scope: Scope) -> Fn:
    if not isinstance(spec, dict):
        raise CommandError(ErrorCode.DateFromPartsArgNotObject,
                           "$dateFromParts only supports an object as its argument")
    args = {}
    for key, value in spec.items():
        if key not in set(_NATURAL) | set(_ISO_PARTS) | {"timezone"}:
            raise CommandError(ErrorCode.DateFromPartsUnknownArgument,
                               f"Unrecognized argument to $dateFromParts: {key}")
        args[key] = compile_node(value, scope)
    if "year" not in args and "isoWeekYear" not in args:
        raise CommandError(ErrorCode.DateFromPartsMissingYear,
                           "$dateFromParts requires either 'year' or 'isoWeekYear' to be "
                           "present")
    if "year" in args and any(k in args for k in ("isoWeekYear", "isoWeek", "isoDayOfWeek")):
        raise CommandError(ErrorCode.DateFromPartsNaturalWithIso,
                           "$dateFromParts does not allow mixing natural dates with ISO "
                           "dates")
    if "isoWeekYear" in args and any(k in args for k in ("year", "month", "day")):
        raise CommandError(ErrorCode.DateFromPartsIsoWithNatural,
                           "$dateFromParts does not allow mixing ISO dates with natural "
                           "dates")
    iso = "isoWeekYear" in args
    return _date_from_parts_fn(args, iso)


def _date_from_parts_fn(args: dict[str, Fn], iso: bool) -> Fn:
    names = _ISO_PARTS if iso else _NATURAL
    defaults = {"year": 1970, "isoWeekYear": 1970, "month": 1, "day": 1, "isoWeek": 1,
                "isoDayOfWeek": 1}

    def ev(doc: Any, vars: Any) -> Any:
        parts = {}
        for name in names:
            if name not in args:
                parts[name] = defaults.get(name, 0)
                continue
            v = args[name](doc, vars)
            if nullish(v):
                return None
            i = as_int64(v) if not isinstance(v, bool) else None
            if i is None:
                raise CommandError(ErrorCode.DatePartNotInteger,
                                   f"'{name}' must evaluate to an integer, found "
                                   f"{type_name(v)} with value {bson_repr(v)}")
            if name not in ("year", "isoWeekYear", "second", "millisecond") and \
                    not -32768 <= i <= 32767:
                raise CommandError(ErrorCode.DatePartOutOfShortRange,
                                   f"'{name}' must evaluate to a value in the range "
                                   f"[-32768, 32767]; value {i} is not in range")
            parts[name] = i
        tz = _tz(args, doc, vars)
        if tz is None:
            return None
        year = parts["isoWeekYear" if iso else "year"]
        if not 1 <= year <= 9999:
            field = "isoWeekYear" if iso else "year"
            raise CommandError(ErrorCode.DateYearOutOfRange if not iso
                               else ErrorCode.IsoWeekYearOutOfRange,
                               f"'{field}' must evaluate to an integer in the range 1 to 9999, "
                               f"found {year}")
        if iso:
            base = datetime.datetime.combine(datetime.date.fromisocalendar(year, 1, 1),
                                             datetime.time())
            days = (parts["isoWeek"] - 1) * 7 + parts["isoDayOfWeek"] - 1
        else:
            total = year * 12 + parts["month"] - 1
            y, m = divmod(total, 12)
            base = datetime.datetime(y, m + 1, 1)
            days = parts["day"] - 1
        local = _millis(base) + days * 86400000 + parts["hour"] * 3600000 + \
            parts["minute"] * 60000 + parts["second"] * 1000 + parts["millisecond"]
        return from_millis(tz.local_to_utc(local) if not tz.is_utc else local)
    return ev


@operator("$dateToParts")
def _date_to_parts(spec: Any, scope: Scope) -> Fn:
    args = _object_args("$dateToParts", spec, ("date", "timezone", "iso8601"), ("date",),
                        (ErrorCode.DateToPartsArgNotObject, ErrorCode.DateToPartsUnknownArgument,
                         ErrorCode.DateToPartsMissingDate), scope)

    def ev(doc: Any, vars: Any) -> Any:
        d = args["date"](doc, vars)
        tz = _tz(args, doc, vars)
        if tz is None:
            return None
        iso = args["iso8601"](doc, vars) if "iso8601" in args else False
        if nullish(iso):
            return None
        if type(iso) is not bool:
            raise CommandError(ErrorCode.DateToPartsIso8601NotBool,
                               f"iso8601 must evaluate to a bool, found {type_name(iso)}")
        if nullish(d):
            return None
        dt = local_parts(coerce_to_millis(d), tz)
        ms = dt.microsecond // 1000
        if iso:
            y, w, wd = dt.isocalendar()
            return {"isoWeekYear": y, "isoWeek": w, "isoDayOfWeek": wd, "hour": dt.hour,
                    "minute": dt.minute, "second": dt.second, "millisecond": ms}
        return {"year": dt.year, "month": dt.month, "day": dt.day, "hour": dt.hour,
                "minute": dt.minute, "second": dt.second, "millisecond": ms}
    return ev
