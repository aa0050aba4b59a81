"""PCRE patterns (what mongod runs) compiled with Python's `re`, differences translated away.

mongod compiles with PCRE in UTF mode without Unicode properties, so `\\d \\w \\s \\b` are ASCII;
`\\Z` allows a final newline while `\\z` does not; named groups are `(?<name>...)`; `\\Q...\\E`
quotes; `\\x{263A}`, `\\h`, `\\v`, `\\R`, `\\N`, `\\e` and POSIX classes (`[[:alpha:]]`) exist;
an inline flag such as `(?i)` in mid-pattern applies to the rest of its group; `x{,3}` is
literal. `translate` rewrites those into Python syntax. What Python cannot express (\\p{..},
recursion, \\K, branch reset, backtracking verbs) raises NotImplemented.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bson.regex import Regex

from ginkgodb.bsonutil.compare import regex_parts
from ginkgodb.errors import CommandError, ErrorCode

VALID_OPTIONS = frozenset("imsxu")
_OPTION_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}

_ASCII_CLASS = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\\t\\n\\x0b\\x0c\\r\\x20"}
_HSPACE = "\\t\\x20\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000"
_VSPACE = "\\n\\x0b\\x0c\\r\\x85\\u2028\\u2029"
_POSIX = {
    "alpha": "A-Za-z", "digit": "0-9", "alnum": "0-9A-Za-z", "upper": "A-Z", "lower": "a-z",
    "space": _ASCII_CLASS["s"], "blank": "\\x20\\t", "xdigit": "0-9A-Fa-f",
    "word": "0-9A-Za-z_", "cntrl": "\\x00-\\x1f\\x7f", "print": "\\x20-\\x7e",
    "graph": "\\x21-\\x7e", "ascii": "\\x00-\\x7f",
    "punct": "!-/:-@\\[-`{-~",
}
_SIMPLE_ESCAPES = {
    "Z": "(?=\\n?\\Z)", "z": "\\Z", "G": "\\A", "e": "\\x1b", "N": "[^\\n]",
    "h": f"[{_HSPACE}]", "H": f"[^{_HSPACE}]", "v": f"[{_VSPACE}]", "V": f"[^{_VSPACE}]",
    "R": f"(?:\\r\\n|[{_VSPACE}])",
    "d": "(?a:\\d)", "D": "(?a:\\D)", "w": "(?a:\\w)", "W": "(?a:\\W)",
    "s": "(?a:\\s)", "S": "(?a:\\S)", "b": "(?a:\\b)", "B": "(?a:\\B)",
}
_UNSUPPORTED_ESCAPES = frozenset("pPXCK")
_PCRE_REJECTS = frozenset("uUlLF")
_QUANTIFIER = re.compile(r"\{\d+(,\d*)?\}")
_PLAIN_GROUPS = ("(?:", "(?=", "(?!", "(?>", "(?<=", "(?<!")


def compile_pcre(pattern: str, options: str) -> re.Pattern:
    """Validate mongod-style (pattern, options) and compile the Python equivalent."""
    for ch in options:
        if ch not in VALID_OPTIONS:
            raise CommandError(ErrorCode.RegexInvalidFlag, f"invalid flag in regex options: {ch}")
    if "\0" in pattern:
        raise CommandError(ErrorCode.BadValue,
                           "Regular expression cannot contain an embedded null byte")
    flags = 0
    for ch in options:
        flags |= _OPTION_FLAGS.get(ch, 0)
    source = _Translator(pattern, "x" in options).run()
    try:
        return re.compile(source, flags)
    except (re.error, OverflowError, RecursionError) as exc:
        raise CommandError(ErrorCode.RegexInvalid,
                           f"Regular expression is invalid: {exc}") from None


def regex_operand(value: Any) -> tuple[str, str]:
    """(pattern, options) of a Regex / re.Pattern operand, options as the driver sends them."""
    if isinstance(value, re.Pattern):
        value = Regex.from_native(value)
    if isinstance(value.flags, str):
        return value.pattern, value.flags
    return regex_parts(value)


def not_supported(what: str) -> CommandError:
    return CommandError(ErrorCode.NotImplemented,
                        f"regular expression feature not supported by ginkgodb: {what}")


class _Frame:
    __slots__ = ("extended", "scoped")

    def __init__(self, extended: bool) -> None:
        self.extended = extended
        self.scoped: list[str] = []  # inline flag groups opened in this group, still open


class _Translator:
    """One left-to-right pass over a PCRE pattern, emitting Python `re` syntax."""

    def __init__(self, pattern: str, extended: bool) -> None:
        self.p = pattern
        self.i = 0
        self.out: list[str] = []
        self.frames = [_Frame(extended)]

    def run(self) -> str:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            if c == "\\":
                self.out.append(self._escape(in_class=False))
            elif c == "[":
                self._char_class()
            elif c == "(":
                self._open_group()
            elif c == ")":
                self._close_group()
            elif c == "|":
                frame = self.frames[-1]
                self.out.append(")" * len(frame.scoped) + "|"
                                + "".join(f"(?{f}:" for f in frame.scoped))
                self.i += 1
            elif c == "{":
                m = _QUANTIFIER.match(p, self.i)
                self.out.append(m.group(0) if m else "\\{")
                self.i = m.end() if m else self.i + 1
            elif c == "#" and self.frames[-1].extended:
                end = p.find("\n", self.i)
                self.i = len(p) if end < 0 else end
            else:
                self.out.append(c)
                self.i += 1
        for frame in reversed(self.frames):
            self.out.append(")" * len(frame.scoped))
        return "".join(self.out)

    def _escape(self, in_class: bool) -> str:
        """Translate the escape at self.i (a backslash); advances past it."""
        p, i = self.p, self.i
        if i + 1 >= len(p):
            raise CommandError(ErrorCode.RegexInvalid,
                               "Regular expression is invalid: \\ at end of pattern")
        c = p[i + 1]
        self.i = i + 2
        if c == "Q":
            end = p.find("\\E", self.i)
            end = len(p) if end < 0 else end
            text, self.i = p[self.i:end], min(len(p), end + 2)
            return "".join(_escape_char(ch) for ch in text)
        if c == "E":
            return ""
        if c in "xo" or c == "c":
            return _escape_char(self._code_point(c))
        if c in _UNSUPPORTED_ESCAPES:
            raise not_supported(f"\\{c}")
        if c in _PCRE_REJECTS:
            raise CommandError(ErrorCode.RegexInvalid,
                               "Regular expression is invalid: PCRE2 does not support "
                               "\\F, \\L, \\l, \\N{name}, \\U, or \\u")
        if c in "kg":
            return self._backreference(c)
        if in_class:
            return _class_escape(c)
        return _SIMPLE_ESCAPES.get(c, "\\" + c)

    def _code_point(self, kind: str) -> str:
        p = self.p
        if kind == "c":
            if self.i >= len(p):
                raise CommandError(ErrorCode.RegexInvalid,
                                   "Regular expression is invalid: \\c at end of pattern")
            self.i += 1
            return chr(ord(p[self.i - 1].upper()) ^ 0x40)
        base = 16 if kind == "x" else 8
        if self.i < len(p) and p[self.i] == "{":
            end = p.find("}", self.i)
            if end < 0:
                raise CommandError(ErrorCode.RegexInvalid,
                                   "Regular expression is invalid: missing }")
            digits, self.i = p[self.i + 1:end], end + 1
        else:
            if kind == "o":
                raise CommandError(ErrorCode.RegexInvalid,
                                   "Regular expression is invalid: missing { after \\o")
            m = re.compile(r"[0-9A-Fa-f]{0,2}").match(p, self.i)
            digits, self.i = m.group(0), m.end()
        try:
            return chr(int(digits or "0", base))
        except (ValueError, OverflowError):
            raise CommandError(ErrorCode.RegexInvalid,
                               "Regular expression is invalid: bad character code") from None

    def _backreference(self, kind: str) -> str:
        m = re.compile(r"<([^>]*)>|'([^']*)'|\{([^}]*)\}|(-?\d+)").match(self.p, self.i)
        if not m:
            raise CommandError(ErrorCode.RegexInvalid,
                               f"Regular expression is invalid: bad \\{kind} reference")
        self.i = m.end()
        ref = next(g for g in m.groups() if g is not None)
        if kind == "g" and m.group(1) is not None:
            raise not_supported("subroutine calls")
        if ref.lstrip("-").isdigit():
            if ref.startswith("-"):
                raise not_supported("relative back references")
            return f"(?:\\{int(ref)})"
        return f"(?P={ref})"

    def _char_class(self) -> None:
        p = self.p
        out = ["["]
        self.i += 1
        if self.i < len(p) and p[self.i] == "^":
            out.append("^")
            self.i += 1
        first = True
        while self.i < len(p):
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                out.append("]")
                self.out.append("".join(out))
                return
            first = False
            if c == "\\":
                out.append(self._escape(in_class=True))
            elif c == "[" and p.startswith("[:", self.i):
                out.append(self._posix_class())
            else:
                out.append("\\" + c if c in "[]&~|" else c)
                self.i += 1
        raise CommandError(ErrorCode.RegexInvalid,
                           "Regular expression is invalid: missing terminating ] for "
                           "character class")

    def _posix_class(self) -> str:
        end = self.p.find(":]", self.i + 2)
        name = self.p[self.i + 2:end] if end >= 0 else ""
        if name not in _POSIX:
            if name.startswith("^"):
                raise not_supported("negated POSIX classes")
            raise CommandError(ErrorCode.RegexInvalid,
                               "Regular expression is invalid: unknown POSIX class name")
        self.i = end + 2
        return _POSIX[name]

    def _open_group(self) -> None:
        p, i = self.p, self.i
        extended = self.frames[-1].extended
        if not p.startswith("(?", i):
            if p.startswith("(*", i):
                raise not_supported("backtracking control verbs")
            self._push("(", extended)
            return
        if p.startswith("(?#", i):
            end = p.find(")", i)
            self.i = len(p) if end < 0 else end + 1
            return
        for prefix in _PLAIN_GROUPS:
            if p.startswith(prefix, i):
                self._push(prefix, extended)
                return
        if p.startswith("(?<", i) or p.startswith("(?'", i) or p.startswith("(?P<", i):
            self._named_group()
            return
        if p.startswith("(?P=", i):
            end = p.find(")", i)
            self.out.append(p[i:end + 1])
            self.i = end + 1
            return
        self._inline_flags()

    def _push(self, text: str, extended: bool) -> None:
        self.out.append(text)
        self.i += len(text)
        self.frames.append(_Frame(extended))

    def _named_group(self) -> None:
        p, i = self.p, self.i
        start = i + (4 if p.startswith("(?P<", i) else 3)
        close = "'" if p[i + 2] == "'" else ">"
        end = p.find(close, start)
        if end < 0:
            raise CommandError(ErrorCode.RegexInvalid,
                               "Regular expression is invalid: bad group name")
        self.out.append(f"(?P<{p[start:end]}>")
        self.i = end + 1
        self.frames.append(_Frame(self.frames[-1].extended))

    def _inline_flags(self) -> None:
        """(?flags) applies to the rest of the group; (?flags:...) opens a scoped group."""
        m = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])").match(self.p, self.i)
        if not m:
            raise not_supported(self.p[self.i:self.i + 4] + "...")
        on, off, kind = m.group(1), m.group(2) or "", m.group(3)
        if set(on + off) - set("imsx"):
            raise not_supported(f"inline option {m.group(0)}")
        frame = self.frames[-1]
        extended = ("x" in on) or (frame.extended and "x" not in off)
        spec = on + (f"-{off}" if off else "")
        self.i = m.end()
        if kind == ":":
            self.out.append(f"(?{spec}:")
            self.frames.append(_Frame(extended))
        elif spec:
            self.out.append(f"(?{spec}:")
            frame.scoped.append(spec)
            frame.extended = extended

    def _close_group(self) -> None:
        if len(self.frames) == 1:
            raise CommandError(ErrorCode.RegexInvalid,
                               "Regular expression is invalid: unmatched closing "
                               "parenthesis")
        frame = self.frames.pop()
        self.out.append(")" * len(frame.scoped) + ")")
        self.i += 1


def _class_escape(c: str) -> str:
    if c in _ASCII_CLASS:
        return _ASCII_CLASS[c]
    if c == "h":
        return _HSPACE
    if c == "v":
        return _VSPACE
    if c == "e":
        return "\\x1b"
    if c in "HVRN":
        raise not_supported(f"\\{c} inside a character class")
    return "\\" + c


def _escape_char(ch: str) -> str:
    return re.escape(ch)


def regex_predicate(pattern: str, options: str) -> Callable[[Any], bool]:
    """RegexMatchExpression: strings that match, and regex values with the same source/options."""
    search = compile_pcre(pattern, options).search
    source = (pattern, options)

    def regex_matches(v: Any) -> bool:
        t = type(v)
        if t is str:
            return search(v) is not None
        if t is Regex:
            return regex_parts(v) == source
        return False

    return regex_matches
