"""Schema validation: a collection's `validator` checked on every insert and update."""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Optional

from ..errors import CommandError, ErrorCode

log = logging.getLogger("ginkgodb.validation")


def validator(bypass: bool = False) -> Optional[Callable]:
    """The `validate(state, new_doc, old_doc)` callback writes use (None when bypassed)."""
    return None if bypass else check_document


def check_document(state, new: dict, old: Optional[dict]) -> None:
    options = state.meta.options
    if not options.get("validator"):
        return
    level = options.get("validationLevel", "strict")
    if level == "off":
        return
    matcher = state.validator
    if level == "moderate" and old is not None and not matcher(old):
        return  # moderate: documents that already failed may keep failing
    if matcher(new):
        return
    if options.get("validationAction", "error") == "warn":
        log.warning("Document would fail validation: collection %s, _id %r", state.meta.ns, new.get("_id"))
        return
    raise CommandError(ErrorCode.DocumentValidationFailure, "Document failed validation",
                       info={"errInfo": {"failingDocumentId": new.get("_id"),
                                         "details": failure_details(options["validator"], new)}})


def failure_details(spec: dict, doc: dict) -> dict:
    """errInfo.details: the rules the document breaks, as mongod 5.0+ reports them
    (query/match/schema_errors.py for `$jsonSchema`, validation_errors.py for query operators);
    validators neither describes keep the generic form."""
    if list(spec) == ["$jsonSchema"] and isinstance(spec["$jsonSchema"], dict):
        from ..query.match.schema_errors import schema_details
        return schema_details(spec["$jsonSchema"], doc)
    from ..query.match.validation_errors import validator_details
    details = validator_details(spec, doc)
    return details if details is not None else {"operatorName": "$and", "schemaRulesNotSatisfied": []}
