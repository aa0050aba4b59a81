"""The literal prefix of an anchored regex, as mongod's analyze_regex finds it.

`^abc` and `\\Aabc` give ("abc", exact=True): a string matches if and only if it starts with the
prefix. `^abc?` or `^ab.c` give a prefix that must be re-checked (exact=False). Unanchored
patterns, alternation, and flags other than m (with \\A), s and x give no prefix.
"""
from __future__ import annotations

_METACHARACTERS = "^$.[()+{"
_SPACE = " \t\n\v\f\r"


def regex_prefix(pattern: str, flags: str) -> tuple[str, bool]:
    """(prefix every match starts with, whether matching is exactly "starts with prefix")."""
    if pattern.startswith("\\A"):
        multiline_ok, rest = True, pattern[2:]
    elif pattern.startswith("^"):
        multiline_ok, rest = False, pattern[1:]
    else:
        return "", False
    if _may_have_unescaped_pipe(rest):
        return "", False
    extended = False
    for flag in flags:
        if flag == "m" and not multiline_ok:
            return "", False
        if flag == "x":
            extended = True
        elif flag not in "ms":
            return "", False
    return _literal_prefix(rest, multiline_ok, extended)


def _literal_prefix(rest: str, multiline_ok: bool, extended: bool) -> tuple[str, bool]:
    out: list[str] = []
    i, n = 0, len(rest)
    while i < n:
        c = rest[i]
        i += 1
        if c in "*?":
            return "".join(out[:-1]), False  # the last character was optional
        if c == "\\":
            if i >= n:
                return "".join(out), False
            c = rest[i]
            i += 1
            if c == "Q":
                i = _quoted(rest, i, out)
            elif c.isascii() and c.isalnum():
                return "".join(out), False  # \d, \w, \1, ...: stop here
            else:
                out.append(c)
        elif c in _METACHARACTERS:
            if c == "." and not multiline_ok and rest[i:] == "*":
                return "".join(out), True  # ^abc.* means "starts with abc"
            return "".join(out), False
        elif extended and c == "#":
            return "".join(out), False
        elif extended and c in _SPACE:
            continue
        else:
            out.append(c)
    prefix = "".join(out)
    return prefix, bool(prefix)


def _quoted(rest: str, i: int, out: list[str]) -> int:
    """Copy \\Q...\\E literally; returns the index after \\E (or the end)."""
    while i < len(rest):
        c = rest[i]
        i += 1
        if c == "\\" and rest[i:i + 1] == "E":
            return i + 1
        out.append(c)
    return i


def _may_have_unescaped_pipe(s: str) -> bool:
    """True when s may contain a '|' that is not escaped (false positives allowed)."""
    if s[:1] == "|" or (len(s) > 1 and s[1] == "|" and s[0] != "\\"):
        return True
    for i in range(2, len(s)):
        if s[i] == "|" and (s[i - 1] != "\\" or s[i - 2] == "\\"):
            return True
    return False
