"""The update language: operator updates, replacements, pipeline updates and upsert seeds.

    plan = compile_update({"$inc": {"n": 1}})
    new_doc = plan.apply(doc, position=matcher.positional(doc))
"""
from .plan import UpdatePlan, compile_update
from .replacement import validate_replacement
from .upsert import upsert_seed
from .validity import check_id_value

__all__ = ["UpdatePlan", "compile_update", "upsert_seed", "validate_replacement",
           "check_id_value"]
