"""The flags that name the platform's Prometheus/Thanos query API, shared by the subcommands that
read it: `update-status-controller` (`--alerts-*`: firing alerts for Update Health) and `start`
(`--promql-*`: conditional-update risks). One client, `cvo_py.runtime.promapi.PrometheusAPI`, serves both.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cvo_py.runtime.promapi import PrometheusAPI

SA_TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"
SA_SERVICE_CA_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/service-ca.crt"
# The in-cluster Thanos Querier (where `oc adm upgrade status` reads alerts and the CVO evaluates risks).
DEFAULT_URL = "https://thanos-querier.openshift-monitoring.svc:9091"
# The same, as upstream's CVO names it (its TLS server name when it connects to the cluster IP).
CVO_DEFAULT_URL = "https://thanos-querier.openshift-monitoring.svc.cluster.local:9091"


def add_arguments(parser: argparse.ArgumentParser, prefix: str, purpose: str, default_url: str = DEFAULT_URL) -> None:
    """`--PREFIX-url`, `--PREFIX-ca-file` and `--PREFIX-token-file`."""
    parser.add_argument(
        f"--{prefix}-url",
        default=default_url,
        help=f"Prometheus/Thanos API {purpose} (http:// or https://; empty: none; default {default_url})",
    )
    parser.add_argument(
        f"--{prefix}-ca-file",
        default=None,
        help=f"CA bundle to verify that API with (default {SA_SERVICE_CA_FILE} when it exists, else the system's)",
    )
    parser.add_argument(
        f"--{prefix}-token-file",
        default=None,
        help=f"bearer token for that API, re-read at each request (default {SA_TOKEN_FILE} when it exists; "
        "empty: none)",
    )


def api(args: argparse.Namespace, prefix: str) -> PrometheusAPI | None:
    """The client the flags describe (None when the URL is empty); a UsageError for bad values."""
    from cvo_py.cli.common import UsageError
    from cvo_py.runtime.errors import ConfigError
    from cvo_py.runtime.promapi import PrometheusAPI

    attr = prefix.replace("-", "_")
    url: str = getattr(args, f"{attr}_url")
    ca_file: str | None = getattr(args, f"{attr}_ca_file")
    token_file: str | None = getattr(args, f"{attr}_token_file")
    if not url:
        return None
    if ca_file is None:
        ca_file = SA_SERVICE_CA_FILE if Path(SA_SERVICE_CA_FILE).is_file() else ""
    if token_file is None:
        token_file = SA_TOKEN_FILE if Path(SA_TOKEN_FILE).is_file() else ""
    try:
        client = PrometheusAPI(url, ca_file=ca_file, token_file=token_file)
        client.check_files()  # the CA loads and the token reads as one, now rather than at the first poll
    except ConfigError as exc:
        flag = {"url": "url", "ca_file": "ca-file", "token_file": "token-file"}[exc.field]
        raise UsageError(f"--{prefix}-{flag}: {exc}") from None
    return client
