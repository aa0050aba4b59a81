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
