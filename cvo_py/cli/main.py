"""`cluster-version-operator`: cobra-style subcommands, each thin (options → validate → run).

A bad flag or value exits 2 with a one-line reason; an unreachable API server or a missing
kubeconfig is one clear line naming it, exit 1.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import NoReturn

from cvo_py import __version__, klog
from cvo_py.cli import start, update_status_controller, upgrade_status, version  # noqa: F401
from cvo_py.cli.common import UsageError
from cvo_py.kube import ApiError, ConfigError, ServerUnreachable

log = logging.getLogger(__name__)

SUBCOMMANDS = {
    "start": start,
    "update-status-controller": update_status_controller,
    "upgrade-status": upgrade_status,
    "version": version,
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        raise SystemExit(2)


# Subcommands that serve /metrics, /healthz and /readyz on --listen.
SERVING = frozenset({"start", "update-status-controller"})


def common_flags(serves_endpoints: bool = True) -> _Parser:
    common = _Parser(add_help=False)
    common.add_argument(
        "--kubeconfig",
        default=None,
        help="kubeconfig file (default: in-cluster configuration, then $KUBECONFIG, then ~/.kube/config)",
    )
    common.add_argument(
        "-v",
        "--v",
        dest="v",
        type=_verbosity,
        default=0,
        metavar="N",
        help="log verbosity, as klog: 2 normal, 4 debug, 6 trace, 8 everything (default 0)",
    )
    common.add_argument(
        "--listen",
        default="0.0.0.0:9099",
        metavar="HOST:PORT",
        help=(
            "address for /metrics, /healthz and /readyz; empty disables it (default 0.0.0.0:9099)"
            if serves_endpoints
            else "accepted like on every subcommand; this one serves no endpoints"
        ),
    )
    return common


def _verbosity(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"invalid verbosity {text!r}: want a number >= 0")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="cluster-version-operator",
        description="Run Cluster Version Controller (cvo-py): payload retrieval, ClusterVersion status "
        "and update status insights for OpenShift.",
    )
    parser.add_argument("--version", action="version", version=f"ClusterVersionOperator cvo-py v{__version__}")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module in SUBCOMMANDS.items():
        common = common_flags(serves_endpoints=name in SERVING)
        sub = subs.add_parser(name, parents=[common], help=module.SHORT_HELP, description=module.SHORT_HELP)
        module.add_arguments(sub)
        sub.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    klog.setup(args.v)
    module = args._module
    try:
        options = module.validate(args)
    except UsageError as exc:
        sys.stderr.write(f"cluster-version-operator {args.command}: error: {exc}\n")
        return 2
    try:
        return int(module.run(options) or 0)
    except (ConfigError, ServerUnreachable) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    except ApiError as exc:
        sys.stderr.write(f"error: the API server at {exc.path or '?'} answered {exc.status}: {exc.message}\n")
        return 1
    except KeyboardInterrupt:
        return 130
