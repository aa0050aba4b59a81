"""Diagnostic commands: ping, buildInfo, hostInfo, whatsmyuri, connectionStatus, listCommands,
getLog, getCmdLineOpts.

All of them answer without a server (`ctx.server is None`, the embedded client) from facts
about this process.
"""
from __future__ import annotations

import os
import platform
import ssl
import sys

from ..bsonutil.types import type_name
from ..errors import CommandError, ErrorCode
from ..limits import MAX_BSON_OBJECT_SIZE
from ..query.js import ENGINE_NAME as JS_ENGINE_NAME
from ..version import MONGODB_VERSION, __version__
from ._system_facts import host_info, target_os
from .auth_sasl import auth_info
from .context import CommandContext
from .declare import COMMANDS, Args, boolean, command, on_cluster
from .server_parameters import test_commands_enabled

_LOG_NAMES = ["global", "startupWarnings"]


@command("ping", help="a way to check that the server is alive. responds immediately even if server "
                      "is in a db lock.", open_fields="mongod ignores any other field of ping", inline=True,
         requires_auth=False, api_version_1=True)
def ping(ctx: CommandContext, args: Args) -> dict:
    return {}


def build_info() -> dict:
    """buildInfo's reply body: MongoDB's shape, describing this build of ginkgodb."""
    parts = [int(p) for p in MONGODB_VERSION.split(".")]
    machine = platform.machine() or "unknown"
    return {
        "version": MONGODB_VERSION,
        "gitVersion": f"ginkgodb-{__version__}",
        "modules": [],
        "allocator": "system",
        "javascriptEngine": JS_ENGINE_NAME,
        "sysInfo": "deprecated",
        "versionArray": parts + [0] * (4 - len(parts)),
        "openssl": {"running": ssl.OPENSSL_VERSION, "compiled": ssl.OPENSSL_VERSION},
        "buildEnvironment": {
            "distmod": "", "distarch": machine, "cc": platform.python_compiler(), "ccflags": "",
            "cxx": "", "cxxflags": "", "linkflags": "", "target_arch": machine,
            "target_os": target_os(), "cppdefines": "",
        },
        "bits": 64 if sys.maxsize > 2 ** 32 else 32,
        "debug": False,
        "maxBsonObjectSize": MAX_BSON_OBJECT_SIZE,
        "storageEngines": ["lmdb", "memory"],
        "ginkgodb": {"version": __version__, "python": platform.python_version()},
    }


@command("buildInfo", "buildinfo", help="get version #, etc.\n{ buildinfo:1 }",
         open_fields="mongod ignores any other field of buildInfo", inline=True, requires_auth=False)
def build_info_command(ctx: CommandContext, args: Args) -> dict:
    return build_info()


@command("hostInfo", help="returns information about the daemon's host", inline=True,
         privileges=(on_cluster("hostInfo"),))
def host_info_command(ctx: CommandContext, args: Args) -> dict:
    return host_info()


@command("whatsmyuri", help="{whatsmyuri:1}", inline=True, requires_auth=False)
def whatsmyuri(ctx: CommandContext, args: Args) -> dict:
    return {"you": ctx.client_address or "embedded"}


@command("connectionStatus", help="Returns connection-specific information such as logged-in users "
                                  "and their roles", fields=(boolean("showPrivileges"),), inline=True,
         requires_auth=False)
def connection_status(ctx: CommandContext, args: Args) -> dict:
    return {"authInfo": auth_info(ctx, bool(args.show_privileges))}


@command("listCommands", help="get a list of all db commands", inline=True, requires_auth=False)
def list_commands(ctx: CommandContext, args: Args) -> dict:
    commands = {}
    with_tests = test_commands_enabled()
    for name in sorted(COMMANDS):
        spec = COMMANDS[name]
        if spec.test_only and not with_tests:
            continue
        commands[name] = {"help": spec.help, "requiresAuth": spec.requires_auth,
                          "secondaryOk": not spec.write, "adminOnly": spec.admin_only,
                          "apiVersions": [], "deprecatedApiVersions": []}
    return {"commands": commands}


@command("getLog", admin_only=True, help="{ getLog : '*' }  OR { getLog : 'global' }", inline=True,
         privileges=(on_cluster("getLog"),))
def get_log(ctx: CommandContext, args: Args) -> dict:
    cmd = args.cmd
    name = cmd["getLog"]
    if not isinstance(name, str):
        raise CommandError(ErrorCode.TypeMismatch, f"Argument to getLog must be of type String; found "
                                                   f"{name!r} of type {type_name(name)}")
    if name == "*":
        return {"names": list(_LOG_NAMES)}
    if name not in _LOG_NAMES:
        raise CommandError(ErrorCode.OperationFailed, f"No log named '{name}'")
    lines = ctx.server.log_lines(name) if ctx.server is not None else None
    lines = list(lines or [])
    return {"totalLinesWritten": len(lines), "log": lines}


@command("getCmdLineOpts", admin_only=True, help="get argv", inline=True, privileges=(on_cluster("getCmdLineOpts"),))
def get_cmd_line_opts(ctx: CommandContext, args: Args) -> dict:
    if ctx.server is None:
        return {"argv": [os.path.basename(sys.argv[0] or "python")], "parsed": {}}
    return {"argv": list(ctx.server.argv), "parsed": dict(ctx.server.parsed_options)}
