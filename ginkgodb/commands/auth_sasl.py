"""Authentication commands: saslStart, saslContinue (SCRAM), authenticate (MONGODB-X509: the
user is the subject of the connection's validated TLS client certificate, a user of $external),
logout, and what hello carries for them (speculativeAuthenticate, saslSupportedMechs). The
conversation state is the connection's (`ctx.auth`, an AuthSession); without one (the embedded
client) there is nobody to log in.
"""
from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Optional

from bson.binary import Binary

from ..errors import CommandError, ErrorCode
from .auth_scram import AUTH_FAILED, MECHANISMS, ScramConversation, keys_of
from .auth_state import AuthSession
from .auth_users import find_user
from .context import CommandContext
from .declare import Args, command, doc, ignored, integer, string, value

_NO_SESSION = "authentication is not available on this connection (the embedded client is trusted)"


def _session(ctx: CommandContext) -> AuthSession:
    session = getattr(ctx, "auth", None)
    if not isinstance(session, AuthSession):
        raise CommandError(ErrorCode.IllegalOperation, _NO_SESSION)
    return session


def _payload_bytes(payload: Any) -> bytes:
    if isinstance(payload, (bytes, Binary)):
        return bytes(payload)
    if isinstance(payload, str):  # legacy clients send base64 text
        try:
            return base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise CommandError(ErrorCode.BadValue, "Invalid base64 in SASL payload") from None
    raise CommandError(ErrorCode.BadValue, "Missing or invalid SASL payload")


def _start(ctx: CommandContext, session: AuthSession, db: str, mechanism: Any, payload: Any,
           options: Any, speculative: bool) -> dict:
    if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
        raise CommandError(ErrorCode.MechanismUnavailable,
                           f"Received authentication for mechanism {mechanism} which is unknown or not enabled")
    engine = ctx.engine

    def lookup(user: str) -> Optional[tuple[bytes, bytes, bytes, int]]:
        found = find_user(engine, db, user)
        return keys_of(found.get("credentials", {}), mechanism) if found is not None else None

    skip_empty = isinstance(options, Mapping) and bool(options.get("skipEmptyExchange"))
    conversation = ScramConversation(mechanism, lookup, db=db, speculative=speculative, skip_empty=skip_empty)
    try:
        first = conversation.start(_payload_bytes(payload))
    except CommandError as exc:
        _report_failure(session, conversation, db, exc)
        raise
    cid = session.new_conversation(conversation)
    return {"conversationId": cid, "done": False, "payload": Binary(first)}


def _report_failure(session: AuthSession, conversation: ScramConversation, db: str, exc: CommandError) -> None:
    session.security.event(False, mechanism=conversation.mechanism,
                           speculative=conversation.speculative,
                           principalName=conversation.user or "", authenticationDatabase=db,
                           remote=session.remote, error=conversation.failure or exc.errmsg)


@command("saslStart", help="Begin a SASL authentication conversation (SCRAM-SHA-1, SCRAM-SHA-256)",
         fields=(string("mechanism", required=True), value("payload"), doc("options"),
                 ignored("autoAuthorize", "a successful authentication always authorizes the connection")),
         requires_auth=False, inline=True)
def sasl_start(ctx: CommandContext, args: Args) -> dict:
    return _start(ctx, _session(ctx), args.db, args.mechanism, args.payload, args.options, False)


@command("saslContinue", help="Continue a SASL authentication conversation",
         fields=(integer("conversationId", required=True), value("payload")),
         requires_auth=False, inline=True)
def sasl_continue(ctx: CommandContext, args: Args) -> dict:
    session = _session(ctx)
    cid = args.conversation_id
    conversation = session.conversations.get(cid)
    if conversation is None:
        raise CommandError(ErrorCode.ProtocolError, "No SASL session state found")
    db = conversation.db or args.db
    if conversation.done:  # the empty exchange of clients that do not skip it
        session.conversations.pop(cid, None)
        return {"conversationId": cid, "done": True, "payload": Binary(b"")}
    try:
        final = conversation.finish(_payload_bytes(args.payload))
    except CommandError as exc:
        session.conversations.pop(cid, None)
        _report_failure(session, conversation, db, exc)
        raise CommandError(ErrorCode.AuthenticationFailed, AUTH_FAILED) from None
    user = conversation.user or ""
    session.conversations.pop(cid, None)
    session.log_in(ctx.engine, user, db)
    session.conversations[cid] = conversation
    session.security.event(True, mechanism=conversation.mechanism,
                           speculative=conversation.speculative,
                           principalName=user, authenticationDatabase=db, remote=session.remote)
    done = conversation.skip_empty
    if done:
        session.conversations.pop(cid, None)
    return {"conversationId": cid, "done": done, "payload": Binary(final)}


EXTERNAL = "$external"
X509 = "MONGODB-X509"


def _x509(ctx: CommandContext, session: AuthSession, db: str, mechanism: Any, user: Any,
          speculative: bool) -> dict:
    if mechanism != X509:
        raise CommandError(ErrorCode.MechanismUnavailable,
                           f"Unsupported mechanism {mechanism} on authenticate command")
    subject = session.certificate_subject

    def failed(why: str, message: str = AUTH_FAILED) -> CommandError:
        session.security.event(False, mechanism=X509, speculative=speculative,
                               principalName=user if isinstance(user, str) else (subject or ""),
                               authenticationDatabase=db, remote=session.remote, error=why)
        return CommandError(ErrorCode.AuthenticationFailed, message)
    if db != EXTERNAL:
        raise failed("BadValue: X.509 authentication must always use the $external database.",
                     "X.509 authentication must always use the $external database.")
    if subject is None:
        raise failed("AuthenticationFailed: No verified subject name available from client",
                     "No verified subject name available from client")
    if user is not None and user != subject:
        raise failed("AuthenticationFailed: There is no x.509 client certificate matching the user.",
                     "There is no x.509 client certificate matching the user.")
    if find_user(ctx.engine, EXTERNAL, subject) is None:
        raise failed(f"UserNotFound: Could not find user \"{subject}\" for db \"{EXTERNAL}\"")
    session.log_in(ctx.engine, subject, EXTERNAL)
    session.security.event(True, mechanism=X509, speculative=speculative, principalName=subject,
                           authenticationDatabase=EXTERNAL, remote=session.remote)
    return {"dbname": EXTERNAL, "user": subject}


@command("authenticate", help="internal: authenticate as the subject of the client's TLS certificate "
                              "(MONGODB-X509)",
         fields=(string("mechanism", required=True), string("user")), requires_auth=False, inline=True)
def authenticate(ctx: CommandContext, args: Args) -> dict:
    return _x509(ctx, _session(ctx), args.db, args.mechanism, args.user, False)


@command("logout", help="de-authenticate", inline=True, requires_auth=False)
def logout(ctx: CommandContext, args: Args) -> dict:
    session = getattr(ctx, "auth", None)
    if isinstance(session, AuthSession) and session.user is not None and session.user[1] == args.db:
        session.log_out()
    return {}


def handshake_fields(ctx: CommandContext, cmd: Mapping[str, Any], reply: dict) -> None:
    """hello's authentication fields: the mechanisms a named user has (saslSupportedMechs)
    and the first step of a speculative authentication (a failure there only omits it: the
    driver then authenticates the ordinary way and sees the error)."""
    session = getattr(ctx, "auth", None)
    if not isinstance(session, AuthSession):
        return
    named = cmd.get("saslSupportedMechs")
    if isinstance(named, str) and "." in named:
        db, _, user = named.partition(".")
        found = find_user(ctx.engine, db, user)
        if found is not None:
            reply["saslSupportedMechs"] = [m for m in MECHANISMS if m in found.get("credentials", {})]
    spec = cmd.get("speculativeAuthenticate")
    if isinstance(spec, Mapping) and spec.get("authenticate"):
        x509_db = spec.get("db", EXTERNAL)
        try:
            reply["speculativeAuthenticate"] = _x509(ctx, session, x509_db if isinstance(x509_db, str) else "",
                                                     spec.get("mechanism"), spec.get("user"), True)
        except CommandError:
            pass
    elif isinstance(spec, Mapping) and spec.get("saslStart"):
        named_db = spec.get("db")
        db = named_db if isinstance(named_db, str) else "admin"
        try:
            reply["speculativeAuthenticate"] = _start(ctx, session, db, spec.get("mechanism"), spec.get("payload"),
                                                      spec.get("options"), True)
        except CommandError:
            pass


def auth_info(ctx: CommandContext, show_privileges: bool) -> dict:
    """connectionStatus' authInfo."""
    session = getattr(ctx, "auth", None)
    info: dict = {"authenticatedUsers": [], "authenticatedUserRoles": []}
    if isinstance(session, AuthSession) and session.user is not None:
        session.refresh(ctx.engine)
        if session.user is not None:
            info["authenticatedUsers"] = [{"user": session.user[0], "db": session.user[1]}]
            info["authenticatedUserRoles"] = [dict(r) for r in session.roles]
    if show_privileges:
        grants = session.grants if isinstance(session, AuthSession) else []
        info["authenticatedUserPrivileges"] = [g.as_document() for g in grants]
    return info


__all__ = ["auth_info", "handshake_fields"]
