"""matcher.positional(doc): the array index the positional `$` operator refers to."""
from ginkgodb.query.match import compile_filter


def positional(spec, doc):
    return compile_filter(spec).positional(doc)


def test_equality_on_array_element_reports_its_index():
    assert positional({"a": 5}, {"a": [1, 5, 5]}) == 1


def test_non_array_match_reports_none():
    assert positional({"a": 5}, {"a": 5}) is None


def test_no_match_reports_none():
    assert positional({"a": 7}, {"a": [1, 5]}) is None


def test_whole_array_match_reports_none():
    assert positional({"a": [1, 5]}, {"a": [1, 5]}) is None


def test_dotted_path_reports_outer_array_index():
    doc = {"a": [{"b": [1, 2]}, {"b": [3, 4]}]}
    assert positional({"a.b": 4}, doc) == 1
    assert positional({"a.b": 1}, doc) == 0


def test_range_reports_first_satisfying_element():
    assert positional({"a": {"$gt": 2}}, {"a": [1, 3, 5]}) == 1


def test_elem_match_reports_matching_element():
    spec = {"a": {"$elemMatch": {"b": 2, "c": 3}}}
    assert positional(spec, {"a": [{"b": 2}, {"b": 2, "c": 3}]}) == 1


def test_elem_match_under_array_of_documents_reports_outer_index():
    spec = {"a.b": {"$elemMatch": {"$gt": 5}}}
    assert positional(spec, {"a": [{"b": [1]}, {"b": [1, 9]}]}) == 1


def test_and_reports_the_last_array_condition():
    spec = {"x": 1, "a": {"$gte": 3}}
    assert positional(spec, {"x": 1, "a": [1, 4]}) == 1


def test_not_and_or_do_not_report():
    assert positional({"a": {"$ne": 5}}, {"a": [1, 2]}) is None
    assert positional({"$or": [{"a": 2}, {"b": 1}]}, {"a": [1, 2]}) is None


def test_single_clause_or_reports_like_its_clause():
    assert positional({"$or": [{"a": 2}]}, {"a": [1, 2]}) == 1


def test_numeric_path_component_is_not_an_implicit_offset():
    assert positional({"a.1": 2}, {"a": [1, 2]}) is None
