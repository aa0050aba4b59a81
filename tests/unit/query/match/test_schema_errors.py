"""$jsonSchema failure details (errInfo.details) in mongod 5.0+'s shape."""
from __future__ import annotations

import pytest

from ginkgodb.query.match.jsonschema import compile_schema
from ginkgodb.query.match.schema_errors import schema_details


def rules(schema, doc):
    assert not compile_schema(schema)(doc), "the document must fail the schema"
    details = schema_details(schema, doc)
    assert details["operatorName"] == "$jsonSchema"
    return details["schemaRulesNotSatisfied"]


def prop(name, *details, **extra):
    return {"operatorName": "properties",
            "propertiesNotSatisfied": [{"propertyName": name, **extra, "details": list(details)}]}


@pytest.mark.parametrize("sub, value, detail", [
    ({"bsonType": "int"}, "s", {"operatorName": "bsonType", "specifiedAs": {"bsonType": "int"},
                                "reason": "type did not match", "consideredValue": "s", "consideredType": "string"}),
    ({"bsonType": ["double"]}, 3, {"operatorName": "bsonType", "specifiedAs": {"bsonType": ["double"]},
                                   "reason": "type did not match", "consideredValue": 3, "consideredType": "int"}),
    ({"type": "string"}, 1.5, {"operatorName": "type", "specifiedAs": {"type": "string"},
                               "reason": "type did not match", "consideredValue": 1.5,
                               "consideredType": "double"}),
    ({"minimum": 5}, 1, {"operatorName": "minimum", "specifiedAs": {"minimum": 5}, "reason": "comparison failed",
                         "consideredValue": 1}),
    ({"maximum": 5, "exclusiveMaximum": True}, 5,
     {"operatorName": "maximum", "specifiedAs": {"maximum": 5, "exclusiveMaximum": True},
      "reason": "comparison failed", "consideredValue": 5}),
    ({"enum": [1, 2]}, 3, {"operatorName": "enum", "specifiedAs": {"enum": [1, 2]},
                           "reason": "value was not found in enum", "consideredValue": 3}),
    ({"minLength": 3}, "ab", {"operatorName": "minLength", "specifiedAs": {"minLength": 3},
                              "reason": "specified string length was not satisfied", "consideredValue": "ab"}),
    ({"maxLength": 1}, "ab", {"operatorName": "maxLength", "specifiedAs": {"maxLength": 1},
                              "reason": "specified string length was not satisfied", "consideredValue": "ab"}),
    ({"pattern": "^x"}, "ab", {"operatorName": "pattern", "specifiedAs": {"pattern": "^x"},
                               "reason": "regular expression did not match", "consideredValue": "ab"}),
    ({"items": {"bsonType": "int"}}, [1, "b"],
     {"operatorName": "items", "reason": "At least one item did not match the sub-schema", "itemIndex": 1,
      "details": [{"operatorName": "bsonType", "specifiedAs": {"bsonType": "int"}, "reason": "type did not match",
                   "consideredValue": "b", "consideredType": "string"}]}),
    ({"minItems": 2}, [1], {"operatorName": "minItems", "specifiedAs": {"minItems": 2},
                            "reason": "array did not match specified length", "consideredValue": [1]}),
])
def test_each_keyword_names_its_rule_and_the_failing_value(sub, value, detail):
    assert rules({"properties": {"a": sub}}, {"a": value}) == [prop("a", detail)]


def test_required_lists_the_missing_properties():
    assert rules({"required": ["b", "a", "c"]}, {"a": 1}) == [
        {"operatorName": "required", "specifiedAs": {"required": ["b", "a", "c"]},
         "missingProperties": ["b", "c"]}]


def test_additional_properties_false_lists_the_extra_fields():
    schema = {"properties": {"_id": {}, "a": {}}, "additionalProperties": False}
    assert rules(schema, {"_id": 1, "a": 1, "z": 2, "y": 3}) == [
        {"operatorName": "additionalProperties", "specifiedAs": {"additionalProperties": False},
         "additionalProperties": ["z", "y"]}]


def test_nested_properties_descriptions_and_title():
    schema = {"title": "people", "required": ["name"],
              "properties": {"address": {"bsonType": "object", "properties": {
                  "zip": {"bsonType": "string", "description": "zip must be a string"}}}}}
    details = schema_details(schema, {"address": {"zip": 12345}})
    assert details == {"operatorName": "$jsonSchema", "title": "people", "schemaRulesNotSatisfied": [
        prop("address", prop("zip", {"operatorName": "bsonType", "specifiedAs": {"bsonType": "string"},
                                     "reason": "type did not match", "consideredValue": 12345,
                                     "consideredType": "int"},
                             description="zip must be a string")),
        {"operatorName": "required", "specifiedAs": {"required": ["name"]}, "missingProperties": ["name"]}]}


def test_a_wrong_type_hides_the_keywords_of_other_types():
    assert rules({"properties": {"a": {"bsonType": "string", "minLength": 3}}}, {"a": 1}) == [
        prop("a", {"operatorName": "bsonType", "specifiedAs": {"bsonType": "string"},
                   "reason": "type did not match", "consideredValue": 1, "consideredType": "int"})]


def test_logical_keywords():
    schema = {"properties": {"a": {"anyOf": [{"bsonType": "string"}, {"minimum": 10}]}}}
    [entry] = rules(schema, {"a": 1})
    [failing] = entry["propertiesNotSatisfied"]
    assert failing["details"] == [{"operatorName": "anyOf", "schemasNotSatisfied": [
        {"index": 0, "details": [{"operatorName": "bsonType", "specifiedAs": {"bsonType": "string"},
                                  "reason": "type did not match", "consideredValue": 1, "consideredType": "int"}]},
        {"index": 1, "details": [{"operatorName": "minimum", "specifiedAs": {"minimum": 10},
                                  "reason": "comparison failed", "consideredValue": 1}]}]}]
    assert rules({"properties": {"a": {"not": {"bsonType": "int"}}}}, {"a": 1}) == [
        prop("a", {"operatorName": "not", "reason": "child expression matched"})]


def test_the_type_restriction_comes_after_the_other_keywords_and_enum_shows_the_value():
    details = rules({"properties": {"a": {"bsonType": "int", "enum": [1, 2]}}}, {"a": "x"})
    assert [d["operatorName"] for d in details[0]["propertiesNotSatisfied"][0]["details"]] == ["enum", "bsonType"]
    assert rules({"enum": [{"a": 1}]}, {"a": 0}) == [
        {"operatorName": "enum", "specifiedAs": {"enum": [{"a": 1}]}, "reason": "value was not found in enum",
         "consideredValue": {"a": 0}}]
