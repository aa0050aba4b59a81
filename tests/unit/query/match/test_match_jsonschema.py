"""$jsonSchema: keywords restrict only values of their type; properties apply when present."""
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from matchkit import compile_error, matches


def schema_matches(schema, doc):
    return matches({"$jsonSchema": schema}, doc)


def test_required_properties_must_exist():
    schema = {"required": ["a", "b"]}
    assert schema_matches(schema, {"a": 1, "b": None})
    assert not schema_matches(schema, {"a": 1})


def test_bson_type_of_properties():
    schema = {"properties": {"a": {"bsonType": "int"}, "b": {"bsonType": ["string", "null"]}}}
    assert schema_matches(schema, {"a": 1, "b": None})
    assert not schema_matches(schema, {"a": 1.5})
    assert not schema_matches(schema, {"b": 3})
    assert schema_matches(schema, {})


def test_json_type_keyword():
    schema = {"properties": {"a": {"type": "number"}, "b": {"type": "object"}}}
    assert schema_matches(schema, {"a": Int64(3), "b": {}})
    assert not schema_matches(schema, {"a": "3"})
    assert not schema_matches(schema, {"b": []})


def test_type_does_not_traverse_arrays():
    assert not schema_matches({"properties": {"a": {"bsonType": "int"}}}, {"a": [1]})


def test_numeric_bounds_ignore_other_types():
    schema = {"properties": {"n": {"minimum": 0, "maximum": 10, "exclusiveMaximum": True}}}
    assert schema_matches(schema, {"n": 0})
    assert schema_matches(schema, {"n": 9.5})
    assert not schema_matches(schema, {"n": 10})
    assert not schema_matches(schema, {"n": -1})
    assert schema_matches(schema, {"n": "not a number"})
    assert schema_matches(schema, {"n": [100]})


def test_string_keywords():
    schema = {"properties": {"s": {"minLength": 2, "maxLength": 3, "pattern": "^a"}}}
    assert schema_matches(schema, {"s": "ab"})
    assert not schema_matches(schema, {"s": "a"})
    assert not schema_matches(schema, {"s": "abcd"})
    assert not schema_matches(schema, {"s": "ba"})
    assert schema_matches(schema, {"s": 5})
    assert schema_matches({"properties": {"s": {"maxLength": 1}}}, {"s": "\U0001F600"})


def test_multiple_of():
    schema = {"properties": {"n": {"multipleOf": 0.1}}}
    assert schema_matches(schema, {"n": 0.3})
    assert not schema_matches(schema, {"n": 0.35})
    assert schema_matches({"properties": {"n": {"multipleOf": 3}}}, {"n": Decimal128("9")})
    assert not schema_matches({"properties": {"n": {"multipleOf": 3}}}, {"n": float("inf")})


def test_array_keywords():
    schema = {"properties": {"a": {"minItems": 1, "maxItems": 2, "uniqueItems": True,
                                   "items": {"bsonType": "int"}}}}
    assert schema_matches(schema, {"a": [1, 2]})
    assert not schema_matches(schema, {"a": []})
    assert not schema_matches(schema, {"a": [1, 2, 3]})
    assert not schema_matches(schema, {"a": [1, 1]})
    assert not schema_matches(schema, {"a": ["x"]})
    assert schema_matches(schema, {"a": "not an array"})


def test_unique_items_ignores_field_order_in_documents():
    schema = {"properties": {"a": {"uniqueItems": True}}}
    assert not schema_matches(schema, {"a": [{"x": 1, "y": 2}, {"y": 2, "x": 1}]})
    assert not schema_matches(schema, {"a": [1, 1.0]})


def test_positional_items_and_additional_items():
    schema = {"properties": {"a": {"items": [{"bsonType": "string"}, {"bsonType": "int"}],
                                   "additionalItems": False}}}
    assert schema_matches(schema, {"a": ["x", 1]})
    assert schema_matches(schema, {"a": ["x"]})
    assert not schema_matches(schema, {"a": [1, 1]})
    assert not schema_matches(schema, {"a": ["x", 1, 2]})


def test_nested_object_properties():
    schema = {"properties": {"o": {"bsonType": "object", "required": ["x"],
                                   "properties": {"x": {"enum": [1, 2]}}}}}
    assert schema_matches(schema, {"o": {"x": 2}})
    assert not schema_matches(schema, {"o": {"x": 3}})
    assert not schema_matches(schema, {"o": {}})
    assert not schema_matches(schema, {"o": 5})


def test_additional_and_pattern_properties():
    schema = {"properties": {"_id": {}, "a": {}}, "patternProperties": {"^x": {"bsonType": "int"}},
              "additionalProperties": False}
    assert schema_matches(schema, {"_id": 1, "a": 1, "x1": 5})
    assert not schema_matches(schema, {"_id": 1, "x1": "s"})
    assert not schema_matches(schema, {"_id": 1, "b": 1})


def test_min_and_max_properties_count_the_document_fields():
    assert schema_matches({"minProperties": 2}, {"_id": 1, "a": 1})
    assert not schema_matches({"maxProperties": 1}, {"_id": 1, "a": 1})


def test_dependencies():
    schema = {"dependencies": {"card": ["billing"], "vip": {"required": ["level"]}}}
    assert schema_matches(schema, {"card": 1, "billing": 1})
    assert not schema_matches(schema, {"card": 1})
    assert not schema_matches(schema, {"vip": True})
    assert schema_matches(schema, {"other": 1})


def test_logical_keywords():
    schema = {"properties": {"a": {"anyOf": [{"bsonType": "int"}, {"bsonType": "string"}],
                                   "not": {"enum": ["bad"]}}},
              "oneOf": [{"required": ["x"]}, {"required": ["y"]}]}
    assert schema_matches(schema, {"a": 1, "x": 1})
    assert not schema_matches(schema, {"a": "bad", "x": 1})
    assert not schema_matches(schema, {"a": 1.5, "x": 1})
    assert not schema_matches(schema, {"a": 1, "x": 1, "y": 1})


def test_enum_compares_documents_without_field_order():
    schema = {"properties": {"a": {"enum": [{"x": 1, "y": 2}]}}}
    assert schema_matches(schema, {"a": {"y": 2, "x": 1}})
    assert not schema_matches(schema, {"a": [{"x": 1, "y": 2}]})


def test_top_level_type_other_than_object_matches_nothing():
    assert not schema_matches({"bsonType": "array"}, {})
    assert schema_matches({"bsonType": "object", "minimum": 5}, {"a": 1})


def test_schema_combines_with_other_filters():
    assert matches({"$jsonSchema": {"required": ["a"]}, "a": {"$gt": 1}}, {"a": 2})
    assert not matches({"$jsonSchema": {"required": ["a"]}, "a": {"$gt": 1}}, {"a": 0})


def test_schema_errors():
    assert compile_error({"$jsonSchema": {"foo": 1}}) == (9, "Unknown $jsonSchema keyword: foo")
    assert compile_error({"$jsonSchema": {"format": "x"}}) == (
        9, "$jsonSchema keyword 'format' is not currently supported")
    assert compile_error({"$jsonSchema": {"type": "integer"}}) == (
        9, "$jsonSchema type 'integer' is not currently supported.")
    assert compile_error({"$jsonSchema": {"bsonType": "xyz"}}) == (2, "Unknown type name alias: xyz")
    assert compile_error({"$jsonSchema": {"type": "object", "bsonType": "object"}}) == (
        9, "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'")
    assert compile_error({"$jsonSchema": {"required": []}}) == (
        9, "$jsonSchema keyword 'required' cannot be an empty array")
    assert compile_error({"$jsonSchema": {"required": "a"}}) == (
        14, "$jsonSchema keyword 'required' must be an array, but found an element of type string")
    assert compile_error({"$jsonSchema": {"properties": {"a": 1}}}) == (
        14, "Nested schema for $jsonSchema property 'a' must be an object")
    assert compile_error({"$jsonSchema": {"minimum": "x"}}) == (
        14, "$jsonSchema keyword 'minimum' must be a number")
    assert compile_error({"$jsonSchema": {"exclusiveMinimum": True}}) == (
        9, "$jsonSchema keyword 'minimum' must be a present if exclusiveMinimum is present")
    assert compile_error({"$jsonSchema": {"minLength": -1}}) == (
        9, "Expected a positive number in: minLength: -1")
    assert compile_error({"$jsonSchema": {"enum": [1, 1.0]}}) == (
        9, "$jsonSchema keyword 'enum' array cannot contain duplicate values.")
    assert compile_error({"$jsonSchema": {"anyOf": []}}) == (
        2, "$jsonSchema keyword 'anyOf' must be a non-empty array")
    assert compile_error({"$jsonSchema": {"multipleOf": 0}}) == (
        9, "$jsonSchema keyword 'multipleOf' must have a positive value")
