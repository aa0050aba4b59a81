"""Document validation failures of a `$jsonSchema` validator carry mongod 5.0+'s errInfo.details."""
from __future__ import annotations


def test_json_schema_failures_name_the_rules_not_satisfied(run):
    run({"create": "s", "validator": {"$jsonSchema": {"required": ["name"], "properties": {
        "age": {"bsonType": "int", "minimum": 0, "description": "age is a non-negative int"}}}}})
    err = run({"insert": "s", "documents": [{"_id": 1, "age": -1}]})["writeErrors"][0]
    assert err["code"] == 121
    assert err["errInfo"] == {"failingDocumentId": 1, "details": {
        "operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [
            {"operatorName": "properties", "propertiesNotSatisfied": [
                {"propertyName": "age", "description": "age is a non-negative int", "details": [
                    {"operatorName": "minimum", "specifiedAs": {"minimum": 0}, "reason": "comparison failed",
                     "consideredValue": -1}]}]},
            {"operatorName": "required", "specifiedAs": {"required": ["name"]}, "missingProperties": ["name"]}]}}
    run.insert("s", {"_id": 2, "name": "n"})
    err = run({"update": "s", "updates": [{"q": {"_id": 2}, "u": {"$unset": {"name": 1}}}]})["writeErrors"][0]
    assert err["errInfo"]["details"]["schemaRulesNotSatisfied"] == [
        {"operatorName": "required", "specifiedAs": {"required": ["name"]}, "missingProperties": ["name"]}]


def test_query_operator_validators_name_the_failing_clause(run):
    run({"create": "t", "validator": {"a": {"$type": "string"}}})
    err = run({"insert": "t", "documents": [{"_id": 1, "a": 1}]})["writeErrors"][0]
    assert err["errInfo"]["details"] == {"operatorName": "$type", "specifiedAs": {"a": {"$type": "string"}},
                                         "reason": "type did not match", "consideredValue": 1,
                                         "consideredType": "int"}


def test_several_clauses_list_the_ones_not_satisfied(run):
    run({"create": "s", "validator": {"a": {"$gt": 5}, "b": "x", "c": {"$exists": True},
                                      "$jsonSchema": {"required": ["d"]}}})
    err = run({"insert": "s", "documents": [{"_id": 1, "a": 1, "b": "x"}]})["writeErrors"][0]
    assert err["errInfo"]["details"] == {"operatorName": "$and", "clausesNotSatisfied": [
        {"index": 0, "details": {"operatorName": "$gt", "specifiedAs": {"a": {"$gt": 5}},
                                 "reason": "comparison failed", "consideredValue": 1}},
        {"index": 2, "details": {"operatorName": "$exists", "specifiedAs": {"c": {"$exists": True}},
                                 "reason": "path does not exist"}},
        {"index": 3, "details": {"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [
            {"operatorName": "required", "specifiedAs": {"required": ["d"]}, "missingProperties": ["d"]}]}}]}
    err = run({"insert": "s", "documents": [{"_id": 2, "a": 9, "b": "y", "c": 1, "d": 1}]})["writeErrors"][0]
    assert err["errInfo"]["details"]["clausesNotSatisfied"] == [
        {"index": 1, "details": {"operatorName": "$eq", "specifiedAs": {"b": "x"}, "reason": "comparison failed",
                                 "consideredValue": "y"}}]


def test_validators_not_described_keep_the_generic_details(run):
    run({"create": "o", "validator": {"$or": [{"a": 1}, {"b": 1}]}})
    err = run({"insert": "o", "documents": [{"_id": 1}]})["writeErrors"][0]
    assert err["errInfo"]["details"] == {"operatorName": "$and", "schemaRulesNotSatisfied": []}
