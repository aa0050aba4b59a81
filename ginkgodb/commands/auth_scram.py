"""SCRAM-SHA-1 and SCRAM-SHA-256 (RFC 5802, RFC 7677) as mongod speaks them, on `scramp`.

`scramp` holds the protocol (message parsing, nonces, proofs, SASLprep of passwords through the
standard library's stringprep); this module adds what is MongoDB's own: SCRAM-SHA-1's password
is the hex MD5 digest of "<user>:mongo:<password>" (the MONGODB-CR digest), the iteration counts
and salt lengths mongod uses, and the credentials document it stores (base64 salt, storedKey,
serverKey; never the password).
"""
from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable
from typing import Any, Optional

from scramp import ScramException, ScramMechanism

from ..errors import CommandError, ErrorCode

SHA1 = "SCRAM-SHA-1"
SHA256 = "SCRAM-SHA-256"
MECHANISMS = (SHA1, SHA256)
#: the iteration counts of new keys: mongod's scramIterationCount and scramSHA256IterationCount
#: (their defaults here; setParameter changes them, server_parameters.py)
ITERATIONS = {SHA1: 10_000, SHA256: 15_000}
MIN_ITERATIONS = 5000   # mongod's floor for both
#: mongod's salt lengths: the digest size minus the 4 bytes of PBKDF2's block counter
SALT_BYTES = {SHA1: 16, SHA256: 28}

AUTH_FAILED = "Authentication failed."

#: (salt, storedKey, serverKey, iterations) of a user for a mechanism, or None when unknown
KeyLookup = Callable[[str], Optional[tuple[bytes, bytes, bytes, int]]]


def mechanism_password(mechanism: str, user: str, password: str, *, digest: bool = True) -> str:
    """What SCRAM hashes as the password: SHA-1 takes mongod's MD5 digest of user:mongo:password
    (unless the client already sent the digest: digestPassword false)."""
    if mechanism == SHA1 and digest:
        return hashlib.md5(f"{user}:mongo:{password}".encode()).hexdigest()  # noqa: S324 (mongod's)
    return password


def make_credentials(user: str, password: str, mechanisms: tuple[str, ...], *, digest: bool = True) -> dict:
    """The `credentials` document of system.users for these mechanisms."""
    out: dict[str, Any] = {}
    for mech in mechanisms:
        try:
            salt, stored, server, iterations = ScramMechanism(mech).make_auth_info(
                mechanism_password(mech, user, password, digest=digest), iteration_count=ITERATIONS[mech],
                salt=os.urandom(SALT_BYTES[mech]))
        except ScramException as exc:  # SASLprep refused the password (prohibited characters)
            raise CommandError(ErrorCode.BadValue, f"Error preparing password: {exc}") from None
        out[mech] = {"iterationCount": iterations, "salt": _b64(salt), "storedKey": _b64(stored),
                     "serverKey": _b64(server)}
    return out


def keys_of(credentials: dict, mechanism: str) -> Optional[tuple[bytes, bytes, bytes, int]]:
    entry = credentials.get(mechanism) if isinstance(credentials, dict) else None
    if not isinstance(entry, dict):
        return None
    return (base64.b64decode(entry["salt"]), base64.b64decode(entry["storedKey"]),
            base64.b64decode(entry["serverKey"]), int(entry["iterationCount"]))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class ScramConversation:
    """The server side of one SCRAM exchange: start (client-first -> server-first), then
    finish (client-final -> server-final). Any failure is 18 AuthenticationFailed, whatever
    went wrong (an unknown user and a wrong password look the same to the client)."""

    def __init__(self, mechanism: str, lookup: KeyLookup, *, db: str = "", speculative: bool = False,
                 skip_empty: bool = False) -> None:
        self.mechanism = mechanism
        self.db = db                      # the authentication database
        self.speculative = speculative    # started by hello's speculativeAuthenticate
        self.skip_empty = skip_empty      # the client asked to skip the final empty exchange
        self.user: Optional[str] = None
        self.failure = ""          # why it failed, for the server log only
        self._lookup = lookup
        self._server: Any = None
        self.done = False

    def _keys(self, username: str) -> tuple[bytes, bytes, bytes, int]:
        self.user = username
        keys = self._lookup(username)
        if keys is None:
            raise ScramException("UserNotFound: Could not find user")
        return keys

    def start(self, payload: bytes) -> bytes:
        self._server = ScramMechanism(self.mechanism).make_server(self._keys)
        try:
            self._server.set_client_first(payload.decode("utf-8"))
            return self._server.get_server_first().encode("utf-8")
        except (ScramException, UnicodeDecodeError, ValueError) as exc:
            raise self._failed(exc) from None

    def finish(self, payload: bytes) -> bytes:
        if self._server is None or self.done:
            raise self._failed(ValueError("unexpected SCRAM message"))
        try:
            self._server.set_client_final(payload.decode("utf-8"))
            final = self._server.get_server_final().encode("utf-8")
        except (ScramException, UnicodeDecodeError, ValueError) as exc:
            raise self._failed(exc) from None
        self.done = True
        return final

    def _failed(self, exc: BaseException) -> CommandError:
        text = str(exc.args[0]) if exc.args else type(exc).__name__
        self.failure = text if text.startswith("UserNotFound") else f"AuthenticationFailed: SCRAM {text}"
        return CommandError(ErrorCode.AuthenticationFailed, AUTH_FAILED)


__all__ = ["AUTH_FAILED", "ITERATIONS", "MECHANISMS", "SHA1", "SHA256", "ScramConversation", "keys_of",
           "make_credentials", "mechanism_password"]
