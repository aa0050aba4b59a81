"""Reading command fields with mongod's IDL errors (wrong type 14, unknown field 40415)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.raw_bson import RawBSONDocument

from ..bsonutil.types import is_number_instance as is_number
from ..bsonutil.types import type_name
from ..engine import check_collection_name, check_db_name
from ..errors import CommandError, ErrorCode

# Fields any command may carry that mongod accepts and, on a standalone, ignores or handles generically.
GENERIC_FIELDS = frozenset({
    "$db", "lsid", "$clusterTime", "$readPreference", "readConcern", "writeConcern", "comment",
    "maxTimeMS", "txnNumber", "autocommit", "startTransaction", "apiVersion", "apiStrict",
    "apiDeprecationErrors", "$audit", "mayBypassWriteBlocking", "$client", "$configServerState",
    "$topologyTime", "$oplogQueryData", "$replData", "databaseVersion", "shardVersion",
    "clientOperationKey", "readOnly", "$queryOptions", "$configTime", "let", "maxTimeMSOpOnly",
    "versionContext", "rawData",
})

_NUMBER_TYPES = "[long, int, decimal, double]"


def check_unknown(cmd: Mapping, allowed: frozenset | set, command: Optional[str] = None) -> None:
    command = command or next(iter(cmd))
    for key in cmd:
        if key not in allowed and key not in GENERIC_FIELDS and key != command:
            raise CommandError(ErrorCode.IDLUnknownField, f"BSON field '{command}.{key}' is an unknown field.")


def missing_field(command: str, field: str) -> CommandError:
    """mongod's IDL answer to a required field left out."""
    return CommandError(ErrorCode.IDLFailedToParse, f"BSON field '{command}.{field}' is missing but a required field")


def wrong_type(command: str, field: str, value: Any, expected: str) -> CommandError:
    return CommandError(ErrorCode.TypeMismatch,
                        f"BSON field '{command}.{field}' is the wrong type '{type_name(value)}', "
                        f"expected type{'s' if expected.startswith('[') else ''} '{expected}'")


def get_int(cmd: Mapping, field: str, default: Optional[int] = None, *, command: Optional[str] = None,
            minimum: Optional[int] = None) -> Optional[int]:
    command = command or next(iter(cmd))
    v = cmd.get(field)
    if v is None:
        return default
    if not is_number(v):
        raise wrong_type(command, field, v, _NUMBER_TYPES)
    if isinstance(v, Decimal128):
        v = v.to_decimal()
    n = int(v)
    if minimum is not None and n < minimum:
        # 51024 is the location of mongod's IDL `gte` validator, whichever field it checks
        raise CommandError(ErrorCode.BatchSizeNegative,
                           f"BSON field '{field}' value must be >= {minimum}, actual value '{n}'")
    return n


def get_bool(cmd: Mapping, field: str, default: bool = False, *, command: Optional[str] = None) -> bool:
    v = cmd.get(field)
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    if is_number(v):
        return bool(v)
    raise wrong_type(command or next(iter(cmd)), field, v, "bool")


def get_doc(cmd: Mapping, field: str, default: Any = None, *, command: Optional[str] = None) -> Any:
    v = cmd.get(field)
    if v is None:
        return default
    if isinstance(v, RawBSONDocument):
        import bson
        return bson.decode(v.raw)
    if not isinstance(v, Mapping):
        raise wrong_type(command or next(iter(cmd)), field, v, "object")
    return dict(v) if not isinstance(v, dict) else v


def get_array(cmd: Mapping, field: str, default: Any = None, *, command: Optional[str] = None) -> Any:
    v = cmd.get(field)
    if v is None:
        return default
    if not isinstance(v, list):
        raise wrong_type(command or next(iter(cmd)), field, v, "array")
    return v


def get_let(cmd: Mapping) -> Optional[dict]:
    """The command's `let` variables, each an expression evaluated once (as mongod does)."""
    spec = get_doc(cmd, "let")
    if not spec:
        return None
    from ..query.expr import compile_expr
    out: dict = {}
    for name, value in spec.items():
        if not name or not (name[0].islower() or not name[0].isascii()) or not all(
                c.isalnum() or c == "_" or not c.isascii() for c in name):
            raise CommandError(ErrorCode.FailedToParse,
                               f"'{name}' starts with an invalid character for a user variable name")
        out[name] = compile_expr(value)({}, out)
    return out


def get_str(cmd: Mapping, field: str, default: Optional[str] = None, *, command: Optional[str] = None) -> Optional[str]:
    v = cmd.get(field)
    if v is None:
        return default
    if not isinstance(v, str):
        raise wrong_type(command or next(iter(cmd)), field, v, "string")
    return v


#: mongod's virtual database of externally authenticated users (X.509): commands may name it,
#: nothing is stored in it (the engine refuses the name)
EXTERNAL_DB = "$external"


def database(cmd: Mapping) -> str:
    db = cmd.get("$db", "admin")
    return db if db == EXTERNAL_DB else check_db_name(db)


def collection(cmd: Mapping, db: Optional[str] = None) -> str:
    """The collection named by the command's first field (a string)."""
    name = next(iter(cmd))
    value = cmd[name]
    if not isinstance(value, str):
        raise CommandError(ErrorCode.InvalidNamespace,
                           f"collection name has invalid type {type_name(value)}")
    return check_collection_name(db or database(cmd), value)


def plain(doc: Any) -> Any:
    """A dict for RawBSONDocument inputs (the wire server hands sub-documents over raw)."""
    if isinstance(doc, RawBSONDocument):
        import bson
        return bson.decode(doc.raw)
    return doc


def int64(n: int) -> Int64:
    return Int64(n)
