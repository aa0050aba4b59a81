"""Test-only commands: registered as mongod's are, but they exist only when the server starts
with `--setParameter enableTestCommands=1` (the enableTestCommands parameter); otherwise they
answer 59 CommandNotFound and listCommands leaves them out.
"""
from __future__ import annotations

import contextlib
import time

from ..errors import CommandError, ErrorCode
from . import fields as P
from .context import CommandContext
from .declare import Args, command, on_cluster, value

#: lock modes of mongod's sleep: the ones that make writers wait (S and X locks) hold the
#: engine's writer for the duration; the intent modes and "none" do not (readers never wait here)
_HOLDS_WRITERS = {"r": True, "w": True, "ir": False, "iw": False, "none": False}
_DEFAULT_MILLIS = 10_000


@command("sleep", help="internal testing command. Run a no-op command for an arbitrary amount of time. "
                       "If neither 'secs' nor 'millis' is set, command will sleep for 10 seconds. If both "
                       "are set, command will sleep for the sum of 'secs' and 'millis.'\n"
                       "    w:<bool> (deprecated: use 'lock' instead) if true, takes a write lock.\n"
                       "    lock: r, ir, w, iw, none. If r or w, db will block under a lock.\n"
                       "    secs:<seconds> Amount of time to sleep, in seconds.\n"
                       "    millis:<milliseconds> Amount of time to sleep, in ms.\n",
         fields=(value("secs"), value("seconds"), value("millis"), value("lock"), value("w")),
         admin_only=True, test_only=True, privileges=(on_cluster("sleep"),))
def sleep(ctx: CommandContext, args: Args) -> dict:
    cmd = args.cmd
    if "secs" in cmd and "seconds" in cmd:
        raise CommandError(ErrorCode.SleepSecondsTwice, "Only one of 'secs' and 'seconds' may be specified")
    if "w" in cmd and "lock" in cmd:
        raise CommandError(ErrorCode.SleepLockAndW, "Only one of 'w' and 'lock' may be set.")
    millis = _DEFAULT_MILLIS
    if any(k in cmd for k in ("secs", "seconds", "millis")):
        millis = 1000 * (P.get_int(cmd, "secs", 0, command="sleep") or P.get_int(cmd, "seconds", 0, command="sleep")
                         or 0) + (P.get_int(cmd, "millis", 0, command="sleep") or 0)
    lock = cmd.get("lock")
    if lock is None:
        lock = "w" if P.get_bool(cmd, "w", command="sleep") else "r"
    if lock not in _HOLDS_WRITERS:
        raise CommandError(ErrorCode.BadValue, "'lock' must be one of 'r', 'ir', 'w', 'iw', 'none'")
    with ctx.engine.writers_paused() if _HOLDS_WRITERS[lock] else contextlib.nullcontext():
        _interruptible_sleep(ctx, millis / 1000.0)
    return {}


def _interruptible_sleep(ctx: CommandContext, seconds: float) -> None:
    end = time.monotonic() + seconds
    while True:
        ctx.check_interrupt()
        left = end - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 0.05))
