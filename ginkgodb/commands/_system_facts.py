"""Facts about this machine and process for hostInfo and serverStatus (Linux /proc, with
portable fallbacks)."""
from __future__ import annotations

import datetime
import os
import platform
import resource
import socket
import sys

from bson.int64 import Int64


def target_os() -> str:
    """mongod's buildEnvironment.target_os spelling."""
    system = platform.system()
    return {"Linux": "linux", "Darwin": "macOS", "Windows": "windows"}.get(system, system.lower())


def _meminfo_mb() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        return 0


def process_memory_mb() -> tuple[int, int]:
    """(resident, virtual) memory of this process in MiB."""
    try:
        fields = {}
        with open("/proc/self/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                fields[key] = rest
        return int(fields["VmRSS"].split()[0]) // 1024, int(fields["VmSize"].split()[0]) // 1024
    except (OSError, KeyError, ValueError, IndexError):
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rss_mb = rss // (1024 * 1024) if sys.platform == "darwin" else rss // 1024
        return rss_mb, rss_mb


def host_info() -> dict:
    """hostInfo's reply body."""
    uname = platform.uname()
    cores = os.cpu_count() or 1
    mem = _meminfo_mb()
    libc = platform.libc_ver()[1]
    try:
        page_size = os.sysconf("SC_PAGE_SIZE")
        max_files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ValueError, OSError, AttributeError):
        page_size, max_files = 4096, 0
    return {
        "system": {
            "currentTime": datetime.datetime.now(datetime.UTC),
            "hostname": socket.gethostname(),
            "cpuAddrSize": 64 if sys.maxsize > 2 ** 32 else 32,
            "memSizeMB": Int64(mem),
            "memLimitMB": Int64(mem),
            "numCores": cores,
            "numCoresAvailableToProcess": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores,
            "cpuArch": uname.machine,
            "numaEnabled": False,
        },
        "os": {"type": uname.system, "name": f"{uname.system} {uname.release}",
               "version": f"Kernel {uname.release}"},
        "extra": {
            "versionString": f"{uname.system} version {uname.release} {uname.version}",
            "libcVersion": libc,
            "kernelVersion": uname.release,
            "pageSize": Int64(page_size),
            "maxOpenFiles": max_files,
        },
    }
