"""The floor of payload-failure reporting as a process: `gofloor/main.go` (see its comment), built
by the toolkit and run against a local cluster, next to which `start` is measured.

    binary = goprogram.compile_program(goprogram.FLOOR, workdir)
    floor = FloorProcess(binary, kube.config, namespace)   # returns once both its watches listed
    ...
    floor.stop()

The bench creates the version Pods the floor watches (`version_pod`): the floor only reports.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from cvo_py.runtime.clientconfig import ClientConfig
from payload.podspec import PodSpecOptions, build_version_pod, random_suffix


class FloorProcess:
    """The floor program watching `namespace`'s version Pods and writing ClusterVersion `name`."""

    def __init__(
        self, binary: Path, config: ClientConfig, namespace: str, name: str = "version", *, timeout: float = 60.0
    ) -> None:
        if not (config.ca_file or config.ca_data) or not config.token:
            raise ValueError("the floor program needs a kubeconfig with a CA and a bearer token")
        self._ca = tempfile.NamedTemporaryFile(prefix="floor-ca-", suffix=".crt")  # noqa: SIM115 (closed in stop)
        self._ca.write(config.ca_data if config.ca_data is not None else Path(str(config.ca_file)).read_bytes())
        self._ca.flush()
        argv = [
            str(binary),
            f"-server={config.host}",
            f"-ca-file={self._ca.name}",
            f"-namespace={namespace}",
            f"-name={name}",
        ]
        env = {**os.environ, "FLOOR_TOKEN": config.token}
        self._errors: str | None = None
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        # "ready" once both watches listed; EOF when it died (its stderr says why).
        line = _readline(self.proc.stdout, timeout)
        if line.strip() != "ready":
            self.stop()
            raise RuntimeError(f"the floor program did not start: {self.errors() or repr(line)}")

    def errors(self) -> str:
        """What the program wrote on stderr, once it has ended ("" while it runs)."""
        if self._errors is None and self.proc.poll() is not None and self.proc.stderr is not None:
            self._errors = self.proc.stderr.read().strip()
        return self._errors or ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.errors()  # kept for the caller: the stream is closed below
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        self._ca.close()


def _readline(stream: Any, timeout: float) -> str:
    import selectors

    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(timeout):
            return f"<nothing within {timeout:.0f} s>"
    return str(stream.readline())


def version_pod(image: str, namespace: str, node: str) -> dict[str, Any]:
    """A version Pod for `image` as `start` would create it, for the floor to watch."""
    return build_version_pod(
        image,
        "",
        node,
        PodSpecOptions(namespace=namespace),
        name_suffix=random_suffix(),
        tmp_suffix=random_suffix(),
    )
