"""`version`: this binary's version and, when a cluster is reachable, the API server's."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from cvo_py import __version__
from cvo_py.runtime.errors import ConfigError
from cvo_py.runtime.kube import ServerUnreachable, connect


@dataclass(frozen=True)
class Options:
    kubeconfig: str | None
    client_only: bool


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--client", action="store_true", help="print only this binary's version")


def validate(args: argparse.Namespace) -> Options:
    return Options(kubeconfig=args.kubeconfig, client_only=args.client)


def run(options: Options) -> int:
    print(f"ClusterVersionOperator cvo-py v{__version__}")
    if options.client_only:
        return 0
    try:
        client = connect(options.kubeconfig)
        info = client.server_version()
    except (ConfigError, ServerUnreachable) as exc:
        print(f"Server: unknown ({exc})")
        return 0 if options.kubeconfig is None else 1
    print(f"Server: Kubernetes {info.get('gitVersion', '?')} at {client.server}")
    return 0
