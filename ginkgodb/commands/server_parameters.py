"""getParameter / setParameter over the server parameters ginkgodb honours.

Parameters are process-wide, as in mongod. Only parameters that change something are
registered: accepting a name we ignore would let a client believe it tuned the server.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ..engine import SETTINGS, monitor_sleep, set_monitor_sleep
from ..errors import CommandError, ErrorCode
from ..query.js import ScriptSettings
from ..query.knobs import KNOBS
from .auth_scram import ITERATIONS, MIN_ITERATIONS, SHA1, SHA256
from .context import CommandContext
from .declare import Args, command, on_cluster
from .fields import is_number
from .generic import GENERIC as GENERIC_ARGUMENTS

_HELP_SUFFIX = ", use help:true to see options "


@dataclass
class Parameter:
    name: str
    value: Any
    settable_at_runtime: bool = True
    coerce: Optional[Callable[[Any], Any]] = None   # raises ValueError on a bad value
    on_change: Optional[Callable[[Any], None]] = None


def _log_level(value: Any) -> int:
    if not is_number(value) or int(value) < 0:
        raise ValueError
    return int(value)


def _boolean(value: Any) -> bool:
    if isinstance(value, bool) or is_number(value):
        return bool(value)
    raise ValueError


def _seconds(value: Any) -> int:
    if isinstance(value, bool) or not is_number(value) or int(value) != value or int(value) < 1:
        raise ValueError
    return int(value)


def _from_text(text: str) -> Any:
    """A --setParameter value: numbers and true/false as such, anything else as the string."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


#: the components mongod's logComponentVerbosity lists at the top level (-1: inherit verbosity)
_LOG_COMPONENTS = ("accessControl", "command", "control", "executor", "index", "network", "query",
                   "replication", "storage", "transaction", "write")


def _default_verbosity() -> dict:
    return {"verbosity": 0, **{c: {"verbosity": -1} for c in _LOG_COMPONENTS}}


def _apply_log_level(level: int) -> None:
    """logLevel > 0 (or a command component above 0) logs every operation, as in mongod."""
    verbosity = PARAMETERS.value("logComponentVerbosity")
    verbosity["verbosity"] = level
    _apply_verbosity(verbosity)


def _merge_verbosity(value: Any) -> dict:
    """setParameter logComponentVerbosity merges into the current settings, component by component."""
    if not isinstance(value, Mapping):
        raise ValueError
    merged = {k: dict(v) if isinstance(v, dict) else v for k, v in PARAMETERS.value("logComponentVerbosity").items()}
    for key, setting in value.items():
        if key == "verbosity":
            merged["verbosity"] = _log_level(setting)
        elif key in _LOG_COMPONENTS and isinstance(setting, Mapping) and is_number(setting.get("verbosity")):
            merged[key] = {"verbosity": int(setting["verbosity"])}
        else:
            raise ValueError
    return merged


def _apply_verbosity(verbosity: dict) -> None:
    PARAMETERS.param("logLevel").value = verbosity["verbosity"]
    level = max(verbosity["verbosity"], verbosity["command"]["verbosity"])
    logging.getLogger("ginkgodb").setLevel(logging.DEBUG if level > 0 else logging.INFO)


class ParameterTable:
    """Thread-safe name -> Parameter map, sorted by name as mongod lists them."""

    def __init__(self, params: list[Parameter]) -> None:
        self._params = {p.name: p for p in sorted(params, key=lambda p: p.name)}
        self._lock = threading.Lock()

    def value(self, name: str) -> Any:
        return self._params[name].value

    def get(self, name: str) -> Optional[Parameter]:
        return self._params.get(name)

    def param(self, name: str) -> Parameter:
        """A parameter known to exist."""
        return self._params[name]

    def names(self) -> list[str]:
        return list(self._params)

    def set_at_startup(self, name: str, text: str) -> None:
        """`--setParameter name=value`: any known parameter, runtime-settable or not. Raises
        CommandError for an unknown name or a bad value."""
        if name not in self._params:
            raise CommandError(ErrorCode.BadValue, f"Illegal --setParameter parameter: \"{name}\"")
        try:
            self.set(name, _from_text(text))
        except CommandError as exc:
            raise CommandError(ErrorCode.BadValue, f"Bad value for parameter \"{name}\": {exc.errmsg}") from None

    def set(self, name: str, raw: Any) -> Any:
        """Set a parameter from a command value; returns the previous value."""
        param = self._params[name]
        try:
            value = param.coerce(raw) if param.coerce else raw
        except (ValueError, TypeError):
            raise CommandError(ErrorCode.BadValue, f"Invalid value for {name}: {name}: {raw!r}") from None
        with self._lock:
            previous, param.value = param.value, value
        if param.on_change:
            param.on_change(value)
        return previous


def _positive_int(value: Any) -> int:
    if isinstance(value, bool) or not is_number(value) or int(value) != value or int(value) <= 0:
        raise ValueError
    return int(value)


def _rate_limit(value: Any) -> int:
    """internalQueryStatsRateLimit: an integer, -1 (no limit) or more."""
    if isinstance(value, bool) or not is_number(value) or int(value) != value or int(value) < -1:
        raise ValueError
    return int(value)


def _iterations(value: Any) -> int:
    """mongod's floor for SCRAM iteration counts."""
    count = _positive_int(value)
    if count < MIN_ITERATIONS:
        raise ValueError
    return count


def _iteration_count(name: str, mechanism: str) -> Parameter:
    """The iterations a new password's SCRAM keys take (auth_scram.ITERATIONS holds the live value)."""
    return Parameter(name, ITERATIONS[mechanism], coerce=_iterations,
                     on_change=lambda value: ITERATIONS.__setitem__(mechanism, value))


def _knob(name: str, attribute: str, coerce: Callable[[Any], Any] = _positive_int) -> Parameter:
    """A query-execution limit: its value lives in query.knobs, where every operation reads it."""
    return Parameter(name, getattr(KNOBS, attribute), coerce=coerce,
                     on_change=lambda value: setattr(KNOBS, attribute, value))


#: the process-wide table; the server seeds `quiet` and `logLevel` from its command line
PARAMETERS = ParameterTable([
    Parameter("enableTestCommands", False, settable_at_runtime=False, coerce=_boolean),
    Parameter("featureCompatibilityVersion", {"version": "7.0"}, settable_at_runtime=False),
    # server-side JavaScript ($where, $function, $accumulator, mapReduce): the time one call may
    # run and the memory of an operation's sandbox, as mongod's parameters of the same names
    Parameter("internalQueryJavaScriptFnTimeoutMillis", 60_000, coerce=_positive_int),
    Parameter("internalQueryJavaScriptHeapSizeLimitMB", 100, coerce=_positive_int),
    # the queries $queryStats records: -1 all (ginkgodb's default: statistics stay on; mongod's is 0),
    # 0 none, N at most N a second
    Parameter("internalQueryStatsRateLimit", SETTINGS.query_stats_rate_limit, coerce=_rate_limit,
              on_change=lambda value: setattr(SETTINGS, "query_stats_rate_limit", value)),
    Parameter("logComponentVerbosity", _default_verbosity(), coerce=_merge_verbosity,
              on_change=_apply_verbosity),
    Parameter("logLevel", 0, coerce=_log_level, on_change=_apply_log_level),
    # a replica set's idle primary writes a no-op entry every periodicNoopIntervalSecs (repl/noop_writer.py)
    Parameter("periodicNoopIntervalSecs", 10, settable_at_runtime=False, coerce=_seconds),
    Parameter("quiet", False, coerce=_boolean),
    _knob("allowDiskUseByDefault", "allow_disk_use_by_default", _boolean),
    _knob("internalDocumentSourceGroupMaxMemoryBytes", "group_max_memory_bytes"),
    _knob("internalQueryMaxAddToSetBytes", "max_add_to_set_bytes"),
    _knob("internalQueryMaxBlockingSortMemoryUsageBytes", "max_blocking_sort_bytes"),
    _knob("internalQueryMaxPushBytes", "max_push_bytes"),
    _knob("internalQueryMaxRangeBytes", "max_range_bytes"),
    _knob("internalQueryRegexMatchTimeoutMS", "regex_match_timeout_ms"),  # ginkgodb's own
    _iteration_count("scramIterationCount", SHA1),
    _iteration_count("scramSHA256IterationCount", SHA256),
    # the TTL monitor's pause between passes, in seconds
    Parameter("writePeriodicNoops", True, coerce=_boolean),
    Parameter("ttlMonitorSleepSecs", int(monitor_sleep()), coerce=_seconds, on_change=set_monitor_sleep),
])


def test_commands_enabled() -> bool:
    return bool(PARAMETERS.value("enableTestCommands"))


@command("getParameter", admin_only=True,
         help="get administrative option(s)\nexample:\n{ getParameter:1, notablescan:1 }\n"
              "{ getParameter:'*' } to get everything\n", open_fields="the fields name the parameters to read",
         inline=True, privileges=(on_cluster("getParameter"),))
def get_parameter(ctx: CommandContext, args: Args) -> dict:
    cmd = args.cmd
    selector = cmd["getParameter"]
    details = isinstance(selector, Mapping) and bool(selector.get("showDetails"))
    everything = selector == "*" or (isinstance(selector, Mapping) and bool(selector.get("allParameters")))
    reply: dict = {}
    for name in PARAMETERS.names():
        if everything or name in cmd:
            param = PARAMETERS.param(name)
            reply[name] = ({"value": param.value, "settableAtRuntime": param.settable_at_runtime,
                            "settableAtStartup": True} if details else param.value)
    if not reply:
        raise CommandError(ErrorCode.InvalidOptions, "no option found to get")
    return reply


@command("setParameter", admin_only=True,
         help="set administrative option(s)\n{ setParameter:1, <param>:<value> }\n",
         open_fields="the fields name the parameters to set (unknown ones are refused)", inline=True,
         privileges=(on_cluster("setParameter"),))
def set_parameter(ctx: CommandContext, args: Args) -> dict:
    cmd = args.cmd
    requested = [(k, v) for i, (k, v) in enumerate(cmd.items()) if i and k not in GENERIC_ARGUMENTS]
    for name, _ in requested:  # validate all before changing any
        param = PARAMETERS.get(name)
        if param is None:
            raise CommandError(ErrorCode.InvalidOptions,
                               f"attempted to set unrecognized parameter [{name}]{_HELP_SUFFIX}")
        if not param.settable_at_runtime:
            raise CommandError(ErrorCode.IllegalOperation, f"not allowed to change [{name}] at runtime")
    if not requested:
        raise CommandError(ErrorCode.InvalidOptions, f"no option found to set{_HELP_SUFFIX}")
    reply: dict = {}
    for index, (name, value) in enumerate(requested):
        previous = PARAMETERS.set(name, value)
        if index == 0:
            reply["was"] = previous  # mongod reports the first parameter's previous value
    return reply


_SCRIPT_SETTINGS: dict = {}


def script_settings(ctx: CommandContext) -> ScriptSettings:
    """The JavaScript settings an operation of `ctx` runs with (its front end's switch, the
    process-wide parameters)."""
    key = (ctx.javascript_enabled, PARAMETERS.value("internalQueryJavaScriptFnTimeoutMillis"),
           PARAMETERS.value("internalQueryJavaScriptHeapSizeLimitMB"))
    settings = _SCRIPT_SETTINGS.get(key)
    if settings is None:
        settings = _SCRIPT_SETTINGS[key] = ScriptSettings(*key)
    return settings
