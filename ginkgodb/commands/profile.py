"""profile: the slow-operation threshold (`slowms`, `sampleRate`) that the server's slow-query
log uses. Levels 1 and 2 (recording operations in `system.profile`) are not supported.

Like mongod's, the settings are process-wide; `ginkgodb serve --slowms` seeds them.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import Args, command, on_database, unimplemented, value
from .fields import is_number


@dataclass
class ProfileSettings:
    level: int = 0
    slowms: int = 100
    sample_rate: float = 1.0


PROFILE = ProfileSettings()
_LOCK = threading.Lock()


@command("profile", help="controls the behaviour of the performance profiler, the fraction of eligible "
                         "operations which are sampled for logging/profiling, and the threshold "
                         "duration at which ops become eligible. See "
                         "http://docs.mongodb.org/manual/reference/command/profile",
         fields=(value("slowms"), value("sampleRate"), unimplemented("filter", "profile filters")),
         privileges=(on_database("enableProfiler"),))
def profile(ctx: CommandContext, args: Args) -> dict:
    cmd = args.cmd
    level = cmd["profile"]
    if not is_number(level) or int(level) not in (-1, 0, 1, 2):
        raise CommandError(ErrorCode.BadValue, "Invalid profiling level")
    level = int(level)
    if level in (1, 2):
        raise CommandError(ErrorCode.NotImplemented,
                           "profiling levels 1 and 2 (recording to system.profile) are not supported")
    if cmd.get("filter") is not None:
        raise CommandError(ErrorCode.NotImplemented, "profile filters are not supported")
    slowms, rate = cmd.get("slowms"), cmd.get("sampleRate")
    if slowms is not None and not is_number(slowms):
        raise CommandError(ErrorCode.TypeMismatch, "'slowms' must be a number")
    if rate is not None and (not is_number(rate) or not 0 <= float(rate) <= 1):
        raise CommandError(ErrorCode.BadValue, "'sampleRate' must be between 0.0 and 1.0 inclusive")
    with _LOCK:
        reply = {"was": PROFILE.level, "slowms": PROFILE.slowms, "sampleRate": PROFILE.sample_rate}
        if level == 0:
            if slowms is not None:
                PROFILE.slowms = int(slowms)
            if rate is not None:
                PROFILE.sample_rate = float(rate)
    return reply
