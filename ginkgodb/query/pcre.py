"""PCRE patterns (what mongod runs) on the `regex` package, bounded in time.

Translation: mongod compiles with PCRE2 in UTF mode without UCP, so `\\d \\w \\s \\b` are ASCII;
`\\Z` allows a final newline while `\\z` does not; named groups are `(?<name>...)`; `\\Q...\\E`
quotes; `\\x{263A}`, `\\h`, `\\v`, `\\R`, `\\N`, `\\e` and POSIX classes (`[[:alpha:]]`) exist;
an inline flag such as `(?i)` in mid-pattern applies to the rest of its group; `x{,3}` is
literal; `\\g{-1}` counts groups backwards. `_Translator` rewrites those into the syntax of
`regex` (version 0, Python's `re` dialect), which itself has what `re` lacks: Unicode properties
`\\p{..}`, variable-width look-behind, atomic groups and possessive quantifiers, `\\K`, `\\X`,
recursion and subroutine calls, branch reset, conditionals and the verbs (*FAIL), (*SKIP),
(*PRUNE). What it cannot express (other verbs, `\\C`, PCRE2 start-of-pattern options) answers 238.

Matching: every match runs with `concurrent=True` (the interpreter lock is released, so other
connections keep being served) and a timeout: the time left before the operation's maxTimeMS
deadline (then 50 MaxTimeMSExpired), or the server-wide safety limit
`internalQueryRegexMatchTimeoutMS` (then 51156, the code mongod gives a match that hits PCRE's
match limit). `regex` counts the timeout in process CPU time.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Optional

import regex

from ginkgodb.errors import CommandError, ErrorCode

from .knobs import KNOBS
from .operation import regex_time_budget

VALID_OPTIONS = frozenset("imsxu")
_OPTION_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL,
                 "x": regex.VERBOSE}
#: PCRE2's limits as mongod sets them: pattern length and parenthesis nesting
MAX_PATTERN_LENGTH = 16384
MAX_NESTING = 250

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
    "K": "\\K", "X": "\\X",
}
#: PCRE's own properties, in the Unicode properties `regex` knows
_PCRE_PROPERTIES = {"xan": "\\p{L}\\p{N}", "xwd": "\\p{L}\\p{N}_",
                    "xsp": "\\p{Z}\\t\\n\\x0b\\x0c\\r", "xps": "\\p{Z}\\t\\n\\x0b\\x0c\\r"}
_UNSUPPORTED_ESCAPES = frozenset("C")
_PCRE_REJECTS = frozenset("uUlLF")
#: see _Translator._atom
_RUN_BREAK = 32
_BREAK = "(?:|(*FAIL))"
_VERBS = frozenset({"FAIL", "F", "SKIP", "PRUNE"})
_QUANTIFIER = re.compile(r"\{\d+(,\d*)?\}")
_PLAIN_GROUPS = ("(?:", "(?=", "(?!", "(?>", "(?<=", "(?<!", "(?|")
_SUBROUTINE = re.compile(r"\(\?(?:R|[+-]?\d+|&\w+|P>\w+)\)")
_CONDITION = re.compile(r"\(\?\((?:(\d+)|<(\w+)>|'(\w+)'|(DEFINE)|(\w+))\)")


class Pattern:
    """A compiled pattern whose every match is bounded in time and releases the interpreter lock.

    `op` names the operator in error messages ("$regex" for filters, "$regexFind", ...)."""

    __slots__ = ("_rx", "op", "groups")

    def __init__(self, rx: Any, op: str) -> None:
        self._rx, self.op, self.groups = rx, op, rx.groups

    def search(self, s: str, pos: int = 0) -> Optional[Any]:
        timeout, by_deadline = regex_time_budget()
        try:
            return self._rx.search(s, pos, concurrent=True, timeout=timeout)
        except TimeoutError:
            raise _timed_out(self.op, by_deadline) from None


def _timed_out(op: str, by_deadline: bool) -> CommandError:
    if by_deadline:
        return CommandError(ErrorCode.MaxTimeMSExpired, "operation exceeded time limit")
    return CommandError(ErrorCode.RegexMatchFailed,
                        f"Error occurred while executing the regular expression in {op}. "
                        "Result code: match limit exceeded (the match ran longer than "
                        f"internalQueryRegexMatchTimeoutMS, {KNOBS.regex_match_timeout_ms} ms)")


def compile_pcre(pattern: str, options: str, op: str = "$regex") -> Pattern:
    """Validate mongod-style (pattern, options) and compile it.

    Filters (`op` "$regex") answer mongod's match-expression errors (51108, BadValue for a
    null byte, 51091); expressions (`op` "$regexFind", ...) theirs (51108, 51111)."""
    for ch in options:
        if ch not in VALID_OPTIONS:
            prefix = "" if op == "$regex" else f"{op} "
            raise CommandError(ErrorCode.RegexInvalidFlag, f"{prefix}invalid flag in regex options: {ch}")
    if "\0" in pattern and op == "$regex":
        raise CommandError(ErrorCode.BadValue,
                           "Regular expression cannot contain an embedded null byte")
    return _compile(pattern, options, op)


@lru_cache(maxsize=1024)
def _compile(pattern: str, options: str, op: str) -> Pattern:
    flags = regex.VERSION0
    for ch in options:
        flags |= _OPTION_FLAGS.get(ch, 0)
    try:
        if len(pattern) > MAX_PATTERN_LENGTH:
            raise _Invalid("pattern string is longer than the limit set by the application")
        source = _Translator(pattern, "x" in options).run()
        try:
            rx = regex.compile(source, flags)
        except (regex.error, OverflowError, RecursionError, ValueError) as exc:
            raise _Invalid(str(exc)) from None
    except _Invalid as exc:
        if op == "$regex":
            raise CommandError(ErrorCode.RegexInvalid,
                               f"Regular expression is invalid: {exc}") from None
        raise CommandError(ErrorCode.RegexCompileFailed, f"Invalid Regex in {op}: {exc}") from None
    return Pattern(rx, op)


class _Invalid(Exception):
    """A pattern PCRE would refuse; the message is what follows mongod's prefix."""


def not_supported(what: str) -> CommandError:
    return CommandError(ErrorCode.NotImplemented,
                        f"regular expression feature not supported by ginkgodb: {what}")


class _Frame:
    __slots__ = ("extended", "scoped")

    def __init__(self, extended: bool) -> None:
        self.extended = extended
        self.scoped: list[str] = []  # inline flag groups opened in this group, still open


class _Translator:
    """One left-to-right pass over a PCRE pattern, emitting `regex` (version 0) syntax."""

    def __init__(self, pattern: str, extended: bool) -> None:
        self.p = pattern
        self.i = 0
        self.out: list[str] = []
        self.frames = [_Frame(extended)]
        self.groups = 0  # capturing groups opened so far (for relative references)
        self.atoms = 0   # atoms emitted so far (see _atom)

    def run(self) -> str:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            if c == "\\":
                if p.startswith("\\Q", self.i):
                    for ch in self._quoted():
                        self._atom(_escape_char(ch))
                else:
                    self._atom(self._escape(in_class=False))
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
                if m:
                    self.out.append(m.group(0))
                else:
                    self._atom("\\{")
                self.i = m.end() if m else self.i + 1
            elif c == "#" and self.frames[-1].extended:
                end = p.find("\n", self.i)
                self.i = len(p) if end < 0 else end
            elif c in "*+?":
                self.out.append(c)
                self.i += 1
            else:
                self._atom(c)
                self.i += 1
        for frame in reversed(self.frames):
            self.out.append(")" * len(frame.scoped))
        return "".join(self.out)

    def _atom(self, text: str) -> None:
        """Emit one atom. Every _RUN_BREAK atoms an empty group that matches nothing goes
        first: `regex` builds a search table for a long run of literals in time that grows
        with the cube of its length and ignores the match timeout (a 16 KiB literal would take
        hours), and it merges literals across groups, classes and look-arounds, but not across
        an alternation. Placed before an atom, the group never separates one from its
        quantifier."""
        self.atoms += 1
        if not self.atoms % _RUN_BREAK:
            self.out.append(_BREAK)
        self.out.append(text)

    def _quoted(self) -> str:
        """The text of \\Q...\\E (to the end of the pattern when there is no \\E)."""
        p = self.p
        start = self.i + 2
        end = p.find("\\E", start)
        end = len(p) if end < 0 else end
        self.i = min(len(p), end + 2)
        return p[start:end]

    def _escape(self, in_class: bool) -> str:
        """Translate the escape at self.i (a backslash); advances past it."""
        p, i = self.p, self.i
        if i + 1 >= len(p):
            raise _Invalid("\\ at end of pattern")
        c = p[i + 1]
        self.i = i + 2
        if c == "Q":
            self.i = i
            return "".join(_escape_char(ch) for ch in self._quoted())
        if c == "E":
            return ""
        if c in "xo" or c == "c":
            return _escape_char(self._code_point(c))
        if c in _UNSUPPORTED_ESCAPES:
            raise not_supported(f"\\{c}")
        if c in "pP":
            return self._property(c, in_class)
        if c in _PCRE_REJECTS:
            raise _Invalid("PCRE2 does not support \\F, \\L, \\l, \\N{name}, \\U, or \\u")
        if c in "kg":
            return self._backreference(c)
        if in_class:
            return _class_escape(c)
        return _SIMPLE_ESCAPES.get(c, "\\" + c)

    def _code_point(self, kind: str) -> str:
        p = self.p
        if kind == "c":
            if self.i >= len(p):
                raise _Invalid("\\c at end of pattern")
            self.i += 1
            return chr(ord(p[self.i - 1].upper()) ^ 0x40)
        base = 16 if kind == "x" else 8
        if self.i < len(p) and p[self.i] == "{":
            end = p.find("}", self.i)
            if end < 0:
                raise _Invalid("missing }")
            digits, self.i = p[self.i + 1:end], end + 1
        else:
            if kind == "o":
                raise _Invalid("missing { after \\o")
            m = re.compile(r"[0-9A-Fa-f]{0,2}").match(p, self.i)
            digits, self.i = m.group(0), m.end()
        try:
            return chr(int(digits or "0", base))
        except (ValueError, OverflowError):
            raise _Invalid("bad character code") from None

    def _backreference(self, kind: str) -> str:
        """\\k<name>, \\g{n}, \\g{-n}, \\gn: back references; \\g<..>, \\g'..': subroutine calls."""
        m = re.compile(r"<([^>]*)>|'([^']*)'|\{([^}]*)\}|([+-]?\d+)").match(self.p, self.i)
        if not m:
            raise _Invalid(f"bad \\{kind} reference")
        self.i = m.end()
        ref = next(g for g in m.groups() if g is not None)
        numeric = ref.lstrip("+-").isdigit()
        if kind == "g" and (m.group(1) is not None or m.group(2) is not None):
            if not numeric:
                return f"(?&{ref})"
            return f"(?{self._absolute(ref)})"
        if numeric:
            return f"(?:\\{self._absolute(ref)})"
        return f"(?P={ref})"

    def _absolute(self, ref: str) -> int:
        """A group number, relative ones (-1: the last group opened, +1: the next) resolved."""
        n = int(ref)
        if ref.startswith("-"):
            n = self.groups + n + 1
        elif ref.startswith("+"):
            n = self.groups + n
        if n <= 0:
            raise _Invalid("reference to non-existent subpattern")
        return n

    def _property(self, kind: str, in_class: bool) -> str:
        """\\p{Name}, \\pL, \\p{^Name}, \\P{Name}: Unicode properties, PCRE's X.. ones mapped."""
        p = self.p
        if self.i < len(p) and p[self.i] == "{":
            end = p.find("}", self.i)
            if end < 0:
                raise _Invalid("malformed \\P or \\p sequence")
            name, self.i = p[self.i + 1:end], end + 1
        elif self.i < len(p):
            name, self.i = p[self.i], self.i + 1
        else:
            raise _Invalid("malformed \\P or \\p sequence")
        negated = kind == "P"
        if name.startswith("^"):
            negated, name = not negated, name[1:]
        members = _PCRE_PROPERTIES.get(name.lower())
        if members is None:
            return f"\\{'P' if negated else 'p'}{{{name}}}"
        if in_class:
            if negated:
                raise not_supported(f"\\P{{{name}}} inside a character class")
            return members
        return f"[{'^' if negated else ''}{members}]"

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
        raise _Invalid("missing terminating ] for character class")

    def _posix_class(self) -> str:
        end = self.p.find(":]", self.i + 2)
        name = self.p[self.i + 2:end] if end >= 0 else ""
        if name not in _POSIX:
            if name.startswith("^"):
                raise not_supported("negated POSIX classes")
            raise _Invalid("unknown POSIX class name")
        self.i = end + 2
        return _POSIX[name]

    def _open_group(self) -> None:
        p, i = self.p, self.i
        extended = self.frames[-1].extended
        if not p.startswith("(?", i):
            if p.startswith("(*", i):
                self._verb()
                return
            self.groups += 1
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
        m = _SUBROUTINE.match(p, i)
        if m:
            self.out.append(m.group(0))
            self.i = m.end()
            return
        if p.startswith("(?(", i):
            self._condition()
            return
        self._inline_flags()

    def _verb(self) -> None:
        end = self.p.find(")", self.i)
        name = self.p[self.i + 2:end] if end >= 0 else ""
        if name not in _VERBS:
            raise not_supported(f"(*{name})")
        self.out.append(f"(*{name})")
        self.i = end + 1

    def _condition(self) -> None:
        """(?(1)..|..), (?(<name>)..), (?('name')..), (?(name)..), (?(DEFINE)..)."""
        m = _CONDITION.match(self.p, self.i)
        if not m:
            raise not_supported("this kind of conditional group")
        number, name = m.group(1), next((g for g in m.groups()[1:] if g is not None), None)
        self.out.append(f"(?({number or name})")
        self.i = m.end()
        self._check_depth()
        self.frames.append(_Frame(self.frames[-1].extended))

    def _check_depth(self) -> None:
        if len(self.frames) > MAX_NESTING:
            raise _Invalid("parentheses are too deeply nested")

    def _push(self, text: str, extended: bool) -> None:
        self.out.append(text)
        self.i += len(text)
        self._check_depth()
        self.frames.append(_Frame(extended))

    def _named_group(self) -> None:
        p, i = self.p, self.i
        start = i + (4 if p.startswith("(?P<", i) else 3)
        close = "'" if p[i + 2] == "'" else ">"
        end = p.find(close, start)
        if end < 0:
            raise _Invalid("bad group name")
        self.out.append(f"(?P<{p[start:end]}>")
        self.i = end + 1
        self.groups += 1
        self._check_depth()
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
            self._check_depth()
            self.frames.append(_Frame(extended))
        elif spec:
            self.out.append(f"(?{spec}:")
            frame.scoped.append(spec)
            frame.extended = extended

    def _close_group(self) -> None:
        if len(self.frames) == 1:
            raise _Invalid("unmatched closing parenthesis")
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
