"""PCRE semantics on top of the `regex` package: the constructs whose meaning differs."""
import pytest

from ginkgodb.errors import CommandError
from ginkgodb.query.match.regex import compile_pcre


def search(pattern, text, options=""):
    return compile_pcre(pattern, options).search(text) is not None


def test_shorthand_classes_are_ascii_only():
    assert search(r"^\d$", "7")
    assert not search(r"^\d$", "\u0663")  # ARABIC-INDIC DIGIT THREE
    assert not search(r"^\w$", "\u00e9")
    assert search(r"^[\d]$", "7") and not search(r"^[\d]$", "\u0663")
    assert search(r"^[^\d]$", "x")


def test_word_boundary_is_ascii():
    assert search(r"\bcafe\b", "a cafe b")
    assert search(r"\bx", "\u00e9x")  # é is not an ASCII word character


def test_case_insensitive_matching_covers_non_ascii_letters():
    assert search("^\u00e9$", "\u00c9", "i")


def test_big_z_allows_a_final_newline_small_z_does_not():
    assert search(r"abc\Z", "abc\n")
    assert not search(r"abc\z", "abc\n")
    assert search(r"abc$", "abc\n")


def test_named_groups_and_back_references():
    assert search(r"(?<w>ab)\k<w>", "abab")
    assert search(r"(?'w'ab)\k{w}", "abab")
    assert search(r"(?P<w>ab)(?P=w)", "abab")
    assert search(r"(a)\g{1}", "aa")


def test_quoted_sequences_are_literal():
    assert search(r"\Qa.b*\E$", "a.b*")
    assert not search(r"\Qa.b\E", "axb")


def test_hex_escapes_and_control_characters():
    assert search(r"\x{263A}", "\u263a")
    assert search(r"\x41", "A")
    assert search(r"\e", "\x1b")
    assert search(r"\cA", "\x01")


def test_horizontal_and_vertical_space_and_newline_sequences():
    assert search(r"a\hb", "a\tb")
    assert search(r"a\vb", "a\nb")
    assert search(r"^a\Rb$", "a\r\nb")
    assert search(r"^\N$", "x") and not search(r"^\N$", "\n")


def test_posix_classes():
    assert search(r"^[[:alpha:]]+$", "abcXYZ")
    assert not search(r"^[[:digit:]]+$", "12a")
    assert search(r"^[[:punct:][:space:]]+$", "!? .")


def test_inline_flags_apply_to_rest_of_group_and_later_branches():
    assert search(r"a(?i)b", "aB")
    assert not search(r"a(?i)b", "AB")
    assert search(r"x(?i)y|z", "Z")
    assert search(r"(a(?i)b)c", "aBc") and not search(r"(a(?i)b)c", "aBC")
    assert search(r"(?i)abc", "ABC")
    assert search(r"(?i:a)b", "Ab") and not search(r"(?i:a)b", "AB")


def test_brace_without_quantifier_is_literal():
    assert search(r"^x{,3}$", "x{,3}")
    assert search(r"^x{2}$", "xx")
    assert search(r"^a{b$", "a{b")


def test_extended_mode_ignores_whitespace_and_comments():
    assert search("a b # comment (\n c", "abc", "x")
    assert search(r"a\ b", "a b", "x")
    assert search(r"[ ]", " ", "x")


def test_atomic_groups_and_possessive_quantifiers():
    assert not search(r"^(?>a+)ab", "aaab")
    assert not search(r"^a++ab", "aaab")


def test_pcre_features_python_re_lacks():
    assert search(r"^\p{L}+$", "h\u00e9llo") and not search(r"^\p{L}+$", "h1")
    assert search(r"^\pL\P{L}$", "a1") and search(r"^\p{^Lu}$", "a")
    assert search(r"^[\p{Greek}\d]+$", "\u03b1\u03b21")
    assert search(r"^\p{Xan}+$", "a1") and not search(r"^\p{Xan}$", "_")
    assert search(r"(?<=a|bc)d", "bcd") and not search(r"(?<=a|bc)d", "cd")  # variable width
    assert search(r"a\Kb", "ab")
    assert search(r"^(?|(a)|(b))\1$", "bb")
    assert search(r"^(\((?:[^()]|(?1))*\))$", "(a(b))")
    assert search(r"^(a)(?-1)$", "aa") and search(r"^(?<n>a)\g<n>$", "aa")
    assert search(r"^(a)\g{-1}$", "aa") and search(r"^(a)(b)\g{-2}$", "aba")
    assert search(r"^(a)?(?(1)b|c)$", "ab") and search(r"^(a)?(?(1)b|c)$", "c")
    assert search(r"a(*FAIL)|b", "b") and not search(r"a(*F)", "a")
    assert search(r"^\X$", "e\u0301")


def test_unsupported_constructs_are_refused():
    for pattern in (r"a(*ACCEPT)b", r"(*UTF)a", r"\C", r"(?(?=a)a|b)"):
        with pytest.raises(CommandError) as e:
            compile_pcre(pattern, "")
        assert e.value.code == 238, pattern


def test_pcre2_limits_on_length_and_nesting():
    assert search("c" * 16384, "c" * 20000)
    with pytest.raises(CommandError) as e:
        compile_pcre("c" * 16385, "")
    assert e.value.code == 51091 and "longer than the limit" in e.value.errmsg
    assert search("(" * 250 + "e" + ")" * 250, "e")
    with pytest.raises(CommandError) as e:
        compile_pcre("(" * 251 + "e" + ")" * 251, "")
    assert e.value.code == 51091 and "too deeply nested" in e.value.errmsg


def test_escapes_pcre_rejects_are_invalid():
    with pytest.raises(CommandError) as e:
        compile_pcre(r"\u0041", "")
    assert e.value.code == 51091


def test_invalid_pattern_reports_51091():
    for pattern in ("(", "[a", "a)", "*a"):
        with pytest.raises(CommandError) as e:
            compile_pcre(pattern, "")
        assert e.value.code == 51091, pattern
        assert e.value.errmsg.startswith("Regular expression is invalid: ")


def test_u_option_is_accepted():
    assert search("a", "a", "u")
