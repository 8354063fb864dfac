"""cvo-py's errors: one root, a branch for each side that can fail.

    CvoError
      ClientError   a request cvo-py made did not succeed: the server answered with an error
                    (`kube.ApiError`, with its status and reason; `promapi.APIError`; the update
                    service's `FetchError`) or could not be reached or read (`kube.ServerUnreachable`,
                    `httpget.GetError`, an expired watch)
      ServerError   cvo-py's own serving side cannot serve: an address it cannot listen on, a
                    request it refuses, a connection it closes to keep its bounds
      ConfigError   a configuration cvo-py cannot use: a kubeconfig, a flag, a file a flag names,
                    the environment (also a ValueError: a value that cannot be used)

Each error's str() is one line fit for a log, a condition or a command's last words: a command
that one of them ends prints that line and exits 1, never a traceback (`cvo_py.cli.main`). The
classes of each branch live with the code that raises them; they only add what their callers
read (a status, a reason, a phase).
"""

from __future__ import annotations


class CvoError(Exception):
    """An error cvo-py reports as one line."""


class ClientError(CvoError):
    """A request to another server (the API server, Prometheus, the update service, a signature
    store) did not succeed."""


class ServerError(CvoError):
    """cvo-py's own serving side (`/metrics`, `/healthz`, `/readyz`) cannot serve, or refuses what
    it was sent."""


class ConfigError(CvoError, ValueError):
    """A configuration that cannot be used; `field` names the setting when its caller asks which
    (e.g. "url", "ca_file", "token_file" of a Prometheus API client), else ""."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field
