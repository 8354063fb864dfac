"""Runs commands in the built image with buildah (no container engine needed).

Every command runs as an arbitrary UID in group 0 (as OpenShift's restricted SCC assigns one),
with a read-only view of the image: each top-level directory of the image is bind-mounted
read-only over itself, which is what `readOnlyRootFilesystem` gives a Pod. `chroot` isolation
shares the host's network, so the local API server on 127.0.0.1 is reachable.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from testkit.harness import image as build

__all__ = ["ARBITRARY_USER", "ImageContainer", "build"]

ARBITRARY_USER = "4242:0"


@dataclass
class ImageContainer:
    ref: str
    name: str
    root: Path
    readonly: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, ref: str) -> ImageContainer:
        """A working container of `ref` (which must exist: `make image` builds it)."""
        made = subprocess.run(
            ["buildah", *build.STORAGE, "from", "--pull-never", ref], capture_output=True, text=True, check=False
        )
        if made.returncode != 0:
            raise RuntimeError(f"cannot use the image {ref} (make image builds it): {build.last_line(made.stderr)}")
        name = made.stdout.strip()
        mounted = subprocess.run(
            ["buildah", *build.STORAGE, "mount", name], capture_output=True, text=True, check=False
        )
        if mounted.returncode != 0:
            subprocess.run(["buildah", *build.STORAGE, "rm", name], capture_output=True, check=False)
            raise RuntimeError(f"cannot mount the image {ref}: {build.last_line(mounted.stderr)}")
        root = Path(mounted.stdout.strip())
        # Directories buildah itself mounts for a run (proc, sys, dev) stay as they are.
        tops = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink())
        readonly = [t for t in tops if t not in ("proc", "sys", "dev", "run")]
        return cls(ref, name, root, readonly)

    def argv(
        self, command: list[str], volumes: Sequence[str] = (), env: Mapping[str, str] | None = None
    ) -> list[str]:
        mounts = [f"{self.root / t}:/{t}:ro" for t in self.readonly] + list(volumes)
        return [
            "buildah",
            *build.STORAGE,
            "run",
            *build.ISOLATION,
            "--user",
            ARBITRARY_USER,
            *(arg for m in mounts for arg in ("-v", m)),
            *(arg for k, v in (env or {}).items() for arg in ("-e", f"{k}={v}")),
            self.name,
            "--",
            *command,
        ]

    def run(
        self, command: list[str], volumes: Sequence[str] = (), timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(command, volumes), capture_output=True, text=True, timeout=timeout, check=False
        )

    def start(
        self, command: list[str], log: Path, volumes: Sequence[str] = (), env: Mapping[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """A long-running command; stop it with `stop()`."""
        with log.open("wb") as out:
            return subprocess.Popen(
                self.argv(command, volumes, env), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    @staticmethod
    def stop(proc: subprocess.Popen[bytes], timeout: float = 30) -> int | None:
        """SIGTERM to the run's process group (buildah and the command in the container)."""
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
                return None
        return proc.returncode

    def size(self) -> str:
        """As `buildah images` shows it, e.g. "241 MB"."""
        return str(build.image_size(self.ref))

    def config(self) -> dict[str, object]:
        result = subprocess.run(
            ["buildah", *build.STORAGE, "inspect", "--type", "image", self.ref],
            capture_output=True,
            text=True,
            check=True,
        )
        data: dict[str, object] = json.loads(result.stdout)
        return data

    def remove(self) -> None:
        subprocess.run(["buildah", *build.STORAGE, "umount", self.name], capture_output=True, check=False)
        subprocess.run(["buildah", *build.STORAGE, "rm", self.name], capture_output=True, check=False)
