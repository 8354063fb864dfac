#!/usr/bin/python3
"""The local node's OCI runtime: runc, with each container's capabilities limited to those this
machine lets its processes hold.

A privileged container (the version Pod's) asks for every capability the kernel knows; where the
node's own bounding set lacks one (this sandbox has no CAP_SYS_RESOURCE), runc then fails with
"unable to apply caps: operation not permitted". This filter drops, from the bundle's config.json
(`create`, `run`) or the process file (`exec --process`), the capabilities outside the bounding
set, and then runs runc with the same arguments. Standard library only: CRI-O runs it as
`python3 capfilter.py RUNC ARGS...` through the wrapper script the node writes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

CAP_NAMES = (
    "CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE "
    "NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT "
    "SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE "
    "AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ "
    "PERFMON BPF CHECKPOINT_RESTORE"
).split()


def bounding_set(status: str) -> set[str]:
    """The CAP_* names of the CapBnd line of /proc/<pid>/status (pure)."""
    for line in status.splitlines():
        if line.startswith("CapBnd:"):
            mask = int(line.split()[1], 16)
            return {f"CAP_{name}" for bit, name in enumerate(CAP_NAMES) if mask >> bit & 1}
    return set()


def limit(capabilities: dict[str, list[str]], allowed: set[str]) -> dict[str, list[str]]:
    """Each capability list of an OCI process without what is not `allowed` (pure)."""
    return {kind: [cap for cap in caps if cap in allowed] for kind, caps in capabilities.items()}


def _option(args: list[str], *names: str) -> str | None:
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(f"{name}="):
                return arg.split("=", 1)[1]
    return None


def spec_files(args: list[str]) -> list[Path]:
    """The OCI files a runc command line reads capabilities from."""
    if "create" in args or "run" in args:
        return [Path(_option(args, "--bundle", "-b") or ".") / "config.json"]
    if "exec" in args and (process := _option(args, "--process", "-p")):
        return [Path(process)]
    return []


def main(argv: list[str]) -> int:
    runc, args = argv[1], argv[2:]
    allowed = bounding_set(Path("/proc/self/status").read_text())
    for path in spec_files(args):
        if not path.exists():
            continue
        document = json.loads(path.read_text())
        process = document.get("process", document)  # config.json nests it; a process file is it
        if isinstance(process.get("capabilities"), dict):
            process["capabilities"] = limit(process["capabilities"], allowed)
            path.write_text(json.dumps(document))
    os.execv(runc, [runc, *args])
    return 127  # not reached


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
