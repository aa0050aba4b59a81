"""Error hierarchy carrying MongoDB's codes.

Our exception tree:
* GinkgoError
  * StorageError      -- raised by storage engines; a closed set of kinds, never shown to clients as-is
  * CommandError      -- what a client sees as {ok: 0, errmsg, code, codeName}
    * WriteError      -- a per-document failure that a write command reports in writeErrors

Only `commands` turns exceptions into replies; everything below raises.
"""
from __future__ import annotations

import enum
from typing import Any


class ErrorCode(enum.IntEnum):
    """Server error codes. Names and numbers are MongoDB's (error_codes.yml). DO NOT renumber."""

    InternalError = 1
    BadValue = 2
    NoSuchKey = 4
    GraphContainsCycle = 5
    Unauthorized = 13
    TypeMismatch = 14
    Overflow = 15
    InvalidLength = 16
    ProtocolError = 17
    AuthenticationFailed = 18
    IllegalOperation = 20
    EmptyArrayOperation = 21
    InvalidBSON = 22
    Interrupted = 11601
    FailedToParse = 9
    ConflictingUpdateOperators = 40
    CursorNotFound = 43
    NotAReplicaSet = 123
    NamespaceNotFound = 26
    IndexNotFound = 27
    PathNotViable = 28
    NonExistentPath = 29
    InvalidPath = 30
    RoleNotFound = 31
    UserNotFound = 11
    NamespaceExists = 48
    MaxTimeMSExpired = 50
    DollarPrefixedFieldName = 52
    InvalidIdField = 53
    NotSingleValueField = 54
    InvalidDBRef = 55
    EmptyFieldName = 56
    DottedFieldName = 57
    CommandNotFound = 59
    ImmutableField = 66
    CannotCreateIndex = 67
    IndexAlreadyExists = 68
    InvalidOptions = 72
    InvalidNamespace = 73
    IndexOptionsConflict = 85
    IndexKeySpecsConflict = 86
    ShutdownInProgress = 91
    OperationFailed = 96
    WriteConflict = 112
    CommandNotSupported = 115
    DocumentValidationFailure = 121
    NotImplemented = 238
    CappedPositionLost = 136
    QueryPlanKilled = 175
    PipelineStageNotOneField = 40323
    CommandNotSupportedOnView = 166
    ViewDepthLimitExceeded = 149
    OptionNotSupportedOnView = 167
    CannotIndexParallelArrays = 171
    InvalidIndexSpecificationOption = 197
    NoSuchTransaction = 251
    TransactionCommitted = 256
    ExceededTimeLimit = 262
    OperationNotSupportedInTransaction = 263
    InvalidPipelineOperator = 168
    UnsupportedOpQueryCommand = 352
    NotWritablePrimary = 10107
    BSONObjectTooLarge = 10334
    DuplicateKey = 11000
    InterruptedAtShutdown = 11600
    IDLFailedToParse = 40414
    IDLUnknownField = 40415
    QueryFeatureNotAllowed = 224
    ConversionFailure = 241
    CannotBackfillArray = 34
    NotExactValueField = 111
    ClientMetadataCannotBeMutated = 186
    IllegalOpMsgFlag = 223
    TooManyDocumentSequences = 233
    ChecksumMismatch = 288
    LoadBalancerSupportMismatch = 354
    NoReplicationEnabled = 76
    UnknownReplWriteConcern = 79
    APIVersionError = 322
    APIStrictError = 323


_CODE_NAMES = {c.value: c.name for c in ErrorCode}


def code_name(code: int) -> str:
    """mongod's codeName for a numeric code; 'Location<N>' for assertion ids without a name."""
    return _CODE_NAMES.get(int(code), f"Location{int(code)}")


class GinkgoError(Exception):
    """Root of every error ginkgodb raises on purpose."""


class StorageError(GinkgoError):
    """Storage-layer failure; `kind` is one of KINDS. Commands map these to CommandError."""

    KINDS = frozenset({"map_full", "locked", "corrupt", "closed", "io"})

    def __init__(self, kind: str, message: str) -> None:
        assert kind in self.KINDS, kind
        super().__init__(f"{kind}: {message}")
        self.kind, self.message = kind, message


class CommandError(GinkgoError):
    """A failure the client sees as {ok: 0, errmsg, code, codeName}; raise from commands/ down."""

    def __init__(self, code: int, errmsg: str, *, labels: tuple[str, ...] = (),
                 info: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code_name(code)} ({int(code)}): {errmsg}")
        self.code = int(code)
        self.errmsg = errmsg
        self.labels = labels
        self.info = info or {}  # extra reply fields (keyPattern/keyValue, errInfo, ...)

    @property
    def code_name(self) -> str:
        return code_name(self.code)

    def to_reply(self) -> dict[str, Any]:
        reply: dict[str, Any] = {"ok": 0.0, "errmsg": self.errmsg, "code": self.code,
                                 "codeName": self.code_name}
        reply.update(self.info)
        if self.labels:
            reply["errorLabels"] = list(self.labels)
        return reply

    def to_write_error(self, index: int) -> dict[str, Any]:
        entry: dict[str, Any] = {"index": index, "code": self.code, "errmsg": self.errmsg}
        entry.update(self.info)
        return entry


class WriteError(CommandError):
    """A per-document write failure (reported in writeErrors, the command itself succeeds)."""


def bad_value(msg: str) -> CommandError:
    return CommandError(ErrorCode.BadValue, msg)


def failed_to_parse(msg: str) -> CommandError:
    return CommandError(ErrorCode.FailedToParse, msg)


def type_mismatch(msg: str) -> CommandError:
    return CommandError(ErrorCode.TypeMismatch, msg)
