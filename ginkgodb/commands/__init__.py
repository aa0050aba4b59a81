"""Commands: MongoDB command documents in, reply documents out. The internal API of ginkgodb.

Importing this package registers every command family. Front ends use `dispatch`, the
declarations' scheduling (`runs_inline`) and the ServerView protocol they implement.
"""
from __future__ import annotations

import importlib
import pkgutil

from .context import CommandContext
from .declare import COMMANDS, CommandSpec, command, runs_inline, writes_data
from .dispatch import dispatch
from .generic import deadline_from
from .server_view import OpInfo, ServerView

_INFRASTRUCTURE = {"context", "declare", "dispatch", "fields", "generic", "replies", "server_view"}


def _load_families() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name not in _INFRASTRUCTURE and not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_load_families()

# the connection's authentication state and the server's (auth_state.py)
from .auth_state import AuthSession, Security  # noqa: E402

# process-wide settings the server seeds from its command line, and the op namespace its logs show
from .current_op import namespace_of  # noqa: E402

# what the wire server needs of a replica-set member, the awaitable hello and the fail points
from .fail_points import CLOSE_CONNECTION  # noqa: E402
from .inline_writes import hold_for_inline  # noqa: E402
from .member_requests import track_commits  # noqa: E402
from .profile import PROFILE  # noqa: E402
from .replica_set import ReplicaSetMember  # noqa: E402
from .replicated_member import ReplicatedMember  # noqa: E402
from .server_parameters import PARAMETERS  # noqa: E402
from .topology import TopologyWatch, awaitable_wait  # noqa: E402

__all__ = ["AuthSession", "CLOSE_CONNECTION", "COMMANDS", "CommandContext", "CommandSpec", "OpInfo", "PARAMETERS",
           "PROFILE", "ReplicaSetMember", "ReplicatedMember", "Security", "ServerView", "TopologyWatch",
           "awaitable_wait", "command", "deadline_from", "dispatch", "hold_for_inline", "namespace_of", "runs_inline",
           "track_commits", "writes_data"]
