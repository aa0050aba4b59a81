"""The codec's one exception type: the peer sent bytes we cannot accept.

Rule (as in h11): every public function of `ginkgodb.wire` either returns or raises
ProtocolError; any other exception escaping the codec is a bug (the fuzz test checks it).
"""
from __future__ import annotations

from ..errors import ErrorCode, code_name


class ProtocolError(Exception):
    """A malformed or unacceptable message.

    `code`/`errmsg` are what mongod reports for the same input. `fatal` means the byte stream can
    no longer be trusted (bad framing, or a ConnectionFatalMessageParseError code in mongod): the
    server must close the connection instead of replying. Otherwise the message was consumed
    whole and `request_id`, `legacy` and `more_to_come` say how (and whether) to send the error
    reply that `WireConnection.encode_error` builds.
    """

    def __init__(self, code: ErrorCode, errmsg: str, *, fatal: bool = False) -> None:
        super().__init__(f"{code_name(code)} ({int(code)}): {errmsg}")
        self.code = int(code)
        self.errmsg = errmsg
        self.fatal = fatal
        self.request_id = 0
        self.legacy = False          # the request was OP_QUERY: reply with OP_REPLY
        self.legacy_err = False      # reply with a legacy {$err, code} document
        self.more_to_come = False    # the client expects no reply
        self.compressor_id: int | None = None

    def reply_document(self) -> dict:
        """The error as a reply document ({ok: 0, errmsg, code, codeName} or legacy $err)."""
        if self.legacy_err:
            return {"$err": self.errmsg, "code": self.code, "ok": 0.0}
        return {"ok": 0.0, "errmsg": self.errmsg, "code": self.code, "codeName": code_name(self.code)}


def fatal(errmsg: str, code: ErrorCode = ErrorCode.ProtocolError) -> ProtocolError:
    """A framing error: the connection must be closed."""
    return ProtocolError(code, errmsg, fatal=True)
