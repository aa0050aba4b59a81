"""CSV/TSV columns for import: names, mongoimport's typed columns, and turning cells into values.

Without `--columnsHaveTypes` every cell is guessed as mongoimport does: an integer (int32 when it
fits, else int64), else a double, else the string. With it each field is `name.type(arg)`:
`auto()`, `string()`, `int32()`, `int64()`, `double()`, `decimal()`, `boolean()` (true/false/1/0),
`binary(base64|base32|hex)`, and dates: `date(<Go layout>)` = `date_go(...)`, `date_ms(<.NET
format>)`, `date_oracle(<Oracle format>)`, e.g. `created.date(2006-01-02 15:04:05)`. A dotted
name (`address.city`) builds a nested document.
"""
from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from bson.binary import Binary
from bson.decimal128 import Decimal128
from bson.int64 import Int64

from .log import ToolError

_TYPED = re.compile(r"^(.*)\.(\w+)\((.*)\)$", re.S)
_I32 = 2 ** 31
_I64 = 2 ** 63


class CellError(ValueError):
    """A cell that its column's type cannot parse."""


def auto_value(text: str) -> Any:
    try:
        n = int(text, 10) if text.strip() == text and text else None
    except ValueError:
        n = None
    if n is not None and -_I64 <= n < _I64 and "_" not in text:
        return n if -_I32 <= n < _I32 else Int64(n)
    try:
        if "_" not in text and text.strip() == text:
            return float(text)
    except ValueError:
        pass
    return text


def _int32(text: str) -> int:
    try:
        n = int(text, 10)
    except ValueError:
        raise CellError(f'strconv.ParseInt: parsing "{text}": invalid syntax') from None
    if not -_I32 <= n < _I32:
        raise CellError(f'strconv.ParseInt: parsing "{text}": value out of range')
    return n


def _int64(text: str) -> Int64:
    try:
        n = int(text, 10)
    except ValueError:
        raise CellError(f'strconv.ParseInt: parsing "{text}": invalid syntax') from None
    if not -_I64 <= n < _I64:
        raise CellError(f'strconv.ParseInt: parsing "{text}": value out of range')
    return Int64(n)


def _double(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CellError(f'strconv.ParseFloat: parsing "{text}": invalid syntax') from None


def _decimal(text: str) -> Decimal128:
    try:
        return Decimal128(text)
    except Exception:
        raise CellError(f"cannot parse {text!r} as a decimal") from None


def _boolean(text: str) -> bool:
    low = text.lower()
    if low == "true" or text == "1":
        return True
    if low == "false" or text == "0":
        return False
    raise CellError(f"failed to parse boolean: {text}")


def _binary(encoding: str) -> Callable[[str], Binary]:
    decoders = {"base64": base64.b64decode, "base32": base64.b32decode,
                "hex": bytes.fromhex}
    if encoding not in decoders:
        raise ToolError(f"invalid binary encoding: `{encoding}`")
    decode = decoders[encoding]

    def parse(text: str) -> Binary:
        try:
            return Binary(decode(text), 0)
        except (ValueError, binascii.Error) as exc:
            raise CellError(f"cannot decode {encoding}: {exc}") from None
    return parse


# ------------------------------------------------------------------------------ date layouts
_MS = [("dddd", "Monday"), ("ddd", "Mon"), ("dd", "02"), ("d", "2"), ("MMMM", "January"),
       ("MMM", "Jan"), ("MM", "01"), ("M", "1"), ("hh", "03"), ("h", "3"), ("HH", "15"),
       ("H", "15"), ("mm", "04"), ("m", "4"), ("ss", "05"), ("s", "5"), ("tt", "PM"),
       ("yyyy", "2006"), ("yyy", "2006"), ("yy", "06"), ("zzz", "-07:00"), ("zz", "-07")]
_ORACLE = [("AM", "PM"), ("DAY", "Monday"), ("DY", "Mon"), ("DD", "02"), ("HH12", "03"),
           ("HH24", "15"), ("HH", "03"), ("MI", "04"), ("MONTH", "January"), ("MON", "Jan"),
           ("MM", "01"), ("SS", "05"), ("TZD", "MST"), ("TZH:TZM", "-07:00"), ("TZH", "-07"),
           ("YYYY", "2006"), ("YY", "06")]


def _replace_tokens(layout: str, table: list[tuple[str, str]]) -> str:
    """Replace table entries left to right, trying them in order at each position (as Go's
    strings.Replacer with these lists does)."""
    out, i = [], 0
    while i < len(layout):
        for old, new in table:
            if layout.startswith(old, i):
                out.append(new)
                i += len(old)
                break
        else:
            out.append(layout[i])
            i += 1
    return "".join(out)


# Go reference-time tokens -> strptime directives, longest first
_GO = [("January", "%B"), ("Monday", "%A"), ("2006", "%Y"), ("Z07:00", "%z"), ("-07:00", "%z"),
       ("Z0700", "%z"), ("-0700", "%z"), ("Jan", "%b"), ("Mon", "%a"), ("MST", "%Z"),
       ("Z07", "%z"), ("-07", "%z"), ("01", "%m"), ("02", "%d"), ("_2", "%d"), ("03", "%I"),
       ("04", "%M"), ("05", "%S"), ("06", "%y"), ("15", "%H"), ("PM", "%p"), ("pm", "%p"),
       ("1", "%m"), ("2", "%d"), ("3", "%I"), ("4", "%M"), ("5", "%S")]
_GO_FRACTION = re.compile(r"[.,](0+|9+)")


def go_layout_to_strptime(layout: str) -> str:
    out, i = [], 0
    while i < len(layout):
        frac = _GO_FRACTION.match(layout, i)
        if frac and (i == 0 or layout[i - 1].isdigit() or out and out[-1] == "%S"):
            out.append(layout[i] + "%f")
            i = frac.end()
            continue
        for token, directive in _GO:
            if layout.startswith(token, i):
                out.append(directive)
                i += len(token)
                break
        else:
            out.append("%%" if layout[i] == "%" else layout[i])
            i += 1
    return "".join(out)


def _date(go_layout: str) -> Callable[[str], dt.datetime]:
    fmt = go_layout_to_strptime(go_layout)

    def parse(text: str) -> dt.datetime:
        value = text[:-1] + "+0000" if "%z" in fmt and text.endswith("Z") else text
        try:
            parsed = dt.datetime.strptime(value, fmt)
        except ValueError as exc:
            raise CellError(f'parsing time "{text}" as "{go_layout}": {exc}') from None
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
        return parsed.replace(microsecond=parsed.microsecond // 1000 * 1000)
    return parse


# ------------------------------------------------------------------------------------ columns
@dataclass
class Column:
    name: str
    parts: tuple[str, ...]
    type: str
    parse: Callable[[str], Any]


def _parser(kind: str, arg: str) -> Callable[[str], Any]:
    arg = arg.replace("\\\\", "\0").replace("\\(", "(").replace("\\)", ")").replace("\\", "").replace("\0", "\\")
    if kind not in ("binary", "date", "date_go", "date_ms", "date_oracle") and arg:
        raise ToolError(f"type {kind} does not support arguments")
    simple = {"auto": auto_value, "string": str, "int32": _int32, "int64": _int64,
              "double": _double, "decimal": _decimal, "boolean": _boolean}
    if kind in simple:
        return simple[kind]
    if kind == "binary":
        return _binary(arg)
    if kind in ("date", "date_go"):
        return _date(arg)
    if kind == "date_ms":
        return _date(_replace_tokens(arg, _MS))
    if kind == "date_oracle":
        return _date(_replace_tokens(arg.upper(), _ORACLE))
    raise ToolError(f"invalid type {kind!r}")


def split_fields(spec: str) -> list[str]:
    """`a.int32(),b.date(2006-01-02, Mon)` -> fields, commas inside parentheses kept."""
    out, level, current = [], 0, []
    for c in spec:
        if c == "(":
            level += 1
        elif c == ")" and level:
            level -= 1
        if c == "," and level == 0:
            out.append("".join(current))
            current = []
        else:
            current.append(c)
    out.append("".join(current))
    return out


def columns(names: list[str], typed: bool) -> list[Column]:
    cols = []
    for header in names:
        if typed:
            m = _TYPED.match(header)
            if not m:
                raise ToolError(f"could not parse type from header `{header}`")
            name, kind, arg = m.group(1), m.group(2), m.group(3)
            if kind not in ("auto", "binary", "boolean", "date", "date_go", "date_ms",
                            "date_oracle", "decimal", "double", "int32", "int64", "string"):
                raise ToolError(f"invalid type `{kind}` in header `{header}`")
            cols.append(Column(name, tuple(name.split(".")), kind, _parser(kind, arg)))
        else:
            cols.append(Column(header, tuple(header.split(".")), "auto", auto_value))
    check_names([c.name for c in cols])
    return cols


def check_names(names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if not name:
            raise ToolError("field names cannot be empty")
        if name.startswith("$"):
            raise ToolError(f"field '{name}' cannot start with '$'")
        for other in seen:
            if other == name:
                raise ToolError(f"fields cannot be identical: '{name}' and '{other}'")
            if name.startswith(other + ".") or other.startswith(name + "."):
                raise ToolError(f"fields '{other}' and '{name}' are incompatible")
        seen.add(name)


def set_path(doc: dict, parts: tuple[str, ...], value: Any) -> None:
    for part in parts[:-1]:
        sub = doc.get(part)
        if not isinstance(sub, dict):
            sub = doc[part] = {}
        doc = sub
    doc[parts[-1]] = value


def row_document(cols: list[Column], cells: list[str], ignore_blanks: bool, grace: str,
                 ) -> Optional[dict]:
    """The document of one row; None when --parseGrace skipRow drops it; CellError otherwise."""
    doc: dict = {}
    for i, text in enumerate(cells):
        if ignore_blanks and text == "":
            continue
        if i < len(cols):
            col = cols[i]
            try:
                value = col.parse(text)
            except CellError as exc:
                if grace == "autoCast":
                    value = auto_value(text)
                elif grace == "skipField":
                    continue
                elif grace == "skipRow":
                    return None
                else:
                    raise CellError(f"field '{col.name}' ({col.type}): {exc}") from None
            set_path(doc, col.parts, value)
        else:
            doc[f"field{i}"] = auto_value(text)
    return doc
