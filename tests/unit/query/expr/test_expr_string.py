"""String operators: byte/code point offsets, ASCII case mapping, regexes, errors."""
import pytest
from exprkit import code_of, ev


def test_concat_and_null():
    assert ev({"$concat": ["a", "b", "c"]}) == "abc"
    assert ev({"$concat": ["a", None]}) is None
    assert code_of({"$concat": ["a", 1]}) == 16702


def test_case_mapping_is_ascii_only_and_coerces():
    assert ev({"$toUpper": "straße"}) == "STRAßE"
    assert ev({"$toLower": "ÀB"}) == "Àb"
    assert ev({"$toLower": None}) == ""
    assert ev({"$toUpper": 1.5}) == "1.5"


def test_substr_bytes_and_code_points():
    assert ev({"$substrBytes": ["héllo", 0, 3]}) == "hé"
    assert ev({"$substrCP": ["héllo", 1, 3]}) == "éll"
    assert ev({"$substr": ["hello", 1, -1]}) == "ello"
    assert code_of({"$substrBytes": ["héllo", 2, 1]}) == 28656
    assert code_of({"$substrCP": ["x", -1, 1]}) == 34455


def test_lengths():
    assert ev({"$strLenBytes": "héllo"}) == 6
    assert ev({"$strLenCP": "héllo"}) == 5
    assert code_of({"$strLenCP": "$nope"}) == 34471


def test_split_trim_index_of():
    assert ev({"$split": ["a,b,,c", ","]}) == ["a", "b", "", "c"]
    assert code_of({"$split": ["a", ""]}) == 40087
    assert ev({"$trim": {"input": "  x \n"}}) == "x"
    assert ev({"$ltrim": {"input": "xxay", "chars": "x"}}) == "ay"
    assert ev({"$rtrim": {"input": "ayy", "chars": "y"}}) == "a"
    assert ev({"$indexOfCP": ["héllo", "l"]}) == 2
    assert ev({"$indexOfBytes": ["héllo", "l"]}) == 3
    assert ev({"$indexOfCP": ["abc", "z"]}) == -1
    assert ev({"$indexOfCP": [None, "z"]}) is None
    assert code_of({"$indexOfCP": ["abc", "b", -1]}) == 40097


def test_strcasecmp():
    assert ev({"$strcasecmp": ["abc", "ABC"]}) == 0
    assert ev({"$strcasecmp": ["b", "A"]}) == 1


def test_replace_one_and_all():
    assert ev({"$replaceOne": {"input": "aaa", "find": "a", "replacement": "b"}}) == "baa"
    assert ev({"$replaceAll": {"input": "aaa", "find": "a", "replacement": "b"}}) == "bbb"
    assert ev({"$replaceAll": {"input": None, "find": "a", "replacement": "b"}}) is None


def test_regex_match_find_and_find_all():
    assert ev({"$regexMatch": {"input": "Hello", "regex": "^h", "options": "i"}}) is True
    found = ev({"$regexFind": {"input": "a1b22", "regex": "([0-9]+)"}})
    assert found == {"match": "1", "idx": 1, "captures": ["1"]}
    all_found = ev({"$regexFindAll": {"input": "a1b22", "regex": "[0-9]+"}})
    assert [m["match"] for m in all_found] == ["1", "22"]
    assert ev({"$regexMatch": {"input": None, "regex": "x"}}) is False
    assert ev({"$regexFindAll": {"input": "$nope", "regex": "x"}}) == []


@pytest.mark.parametrize("spec,code", [
    ({"$regexMatch": 1}, 51103), ({"$regexMatch": {"regex": "x"}}, 31022),
    ({"$regexMatch": {"input": "x"}}, 31023), ({"$regexMatch": {"input": 1, "regex": "x"}}, 51104),
    ({"$regexMatch": {"input": "x", "regex": "x", "options": "q"}}, 51108),
    ({"$trim": {"chars": "x"}}, 50695), ({"$trim": {"input": 1}}, 50699),
])
def test_string_operator_errors(spec, code):
    assert code_of(spec) == code
