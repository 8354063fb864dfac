"""`upgrade-status`: print what `oc adm upgrade status` prints, from the insights alone.

Options → validate → run; what runs for each source (the controller's publication, live or
`--watch`; an oc snapshot, `--mock-clusterversion`; a must-gather or Insights archive, `--from`)
is built by the composition root, `cvo_py.compose.upgrade_status`, which also declares the fast
path a live run takes.
"""

from __future__ import annotations

import argparse

from cvo_py.cli.common import UsageError, checked_namespace
from cvo_py.compose import upgrade_status
from cvo_py.compose.upgrade_status import Options
from cvo_py.runtime.gotext.durations import TimeFormatError
from cvo_py.runtime.gotext.times import parse_time
from status.updatestatus.api.names import NAMESPACE
from status.updatestatus.client.details import DETAILS, DUMP_FORMATS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--details",
        default="none",
        metavar="SECTION",
        help="Show detailed output in selected section. One of: none, all, nodes, health, operators",
    )
    parser.add_argument(
        "--mock-clusterversion",
        default=None,
        metavar="PATH/NAME-cv.yaml",
        help="Read an oc-style snapshot instead of the cluster: NAME-co.yaml, -mc.yaml, -mcp.yaml and "
        "-node.yaml beside it are required, -alerts.json and -mco-deployment.yaml optional",
    )
    parser.add_argument(
        "--from",
        dest="from_path",
        default=None,
        metavar="PATH",
        help="Read a dump instead of the cluster: a must-gather (directory, .tar, .tar.gz, .tar.xz or .zip), "
        "an Insights Operator archive (.tar.gz or extracted) or an oc snapshot (NAME-cv.yaml)",
    )
    parser.add_argument(
        "--format",
        dest="dump_format",
        default="auto",
        metavar="FORMAT",
        help="the layout of --from: auto, must-gather, insights or snapshot (default auto: detected)",
    )
    parser.add_argument(
        "--source",
        default="auto",
        metavar="SOURCE",
        help="what a live run reads: auto (default: the update status controller's insights when it publishes "
        "them and they are current, else the cluster's objects, said on stderr), controller (its insights "
        "only) or cluster (the objects oc adm upgrade status reads, the insights computed here)",
    )
    parser.add_argument(
        "--namespace",
        default=None,
        help="the namespace the update status controller publishes in: the value of its --namespace "
        f"(default {NAMESPACE}). Live cluster only",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="Keep watching: show the insights again whenever they are published anew (no polling), in "
        "place on a terminal and as appended blocks otherwise, with their age and every staleness warning "
        "kept current; Ctrl-C to stop. Live cluster only",
    )
    parser.add_argument(
        "--now",
        default=None,
        metavar="RFC3339",
        help="the time to assess at (default: for a dump its gather time; for a snapshot its newest "
        "ClusterVersion/ClusterOperator condition time + 368975ns, as oc; otherwise the current time)",
    )


def logs(args: argparse.Namespace) -> bool:
    """Whether the command logs (klog is set up): with -v, or while it watches (the informers
    log what goes wrong); reading once, it says everything on stdout and stderr itself."""
    return bool(args.v or args.watch)


def validate(args: argparse.Namespace) -> Options:
    if args.details not in DETAILS:
        raise UsageError(
            f"invalid value for --details: {args.details} (must be one of none, all, nodes, health, operators)"
        )
    now = None
    if args.now is not None:
        try:
            now = parse_time(args.now)
        except TimeFormatError as exc:
            raise UsageError(f"--now: {exc}") from None
    mock = args.mock_clusterversion
    if mock is not None and not mock.rstrip("/").rpartition("/")[2].endswith("-cv.yaml"):
        raise UsageError(f"--mock-clusterversion: {mock} must name a NAME-cv.yaml file")
    if args.dump_format not in DUMP_FORMATS:
        raise UsageError(f"invalid value for --format: {args.dump_format} (must be one of {', '.join(DUMP_FORMATS)})")
    if args.from_path == "":
        raise UsageError("--from: empty path: name a must-gather, an Insights archive or a NAME-cv.yaml file")
    dump = args.from_path
    if dump is not None and mock is not None:
        raise UsageError("--from and --mock-clusterversion cannot be used together")
    if dump is None and args.dump_format != "auto":
        raise UsageError("--format applies to --from only")
    if args.watch and (dump is not None or mock is not None):
        raise UsageError("--watch follows a live cluster: it cannot be used with --from or --mock-clusterversion")
    if args.namespace is not None and (dump is not None or mock is not None):
        raise UsageError(
            "--namespace names where a live cluster publishes: it cannot be used with --from or --mock-clusterversion"
        )
    if args.source not in upgrade_status.SOURCES:
        raise UsageError(f"invalid value for --source: {args.source} (must be one of auto, controller, cluster)")
    if args.source != "auto" and (dump is not None or mock is not None):
        raise UsageError(
            "--source chooses what a live run reads: it cannot be used with --from or --mock-clusterversion"
        )
    if args.source == "cluster" and args.namespace is not None:
        raise UsageError("--namespace names where the controller publishes: it cannot be used with --source cluster")
    namespace = checked_namespace(NAMESPACE if args.namespace is None else args.namespace)
    if args.watch and now is not None:
        raise UsageError("--watch shows the insights as time goes by: it cannot be used with --now")
    return Options(
        kubeconfig=args.kubeconfig,
        mock_clusterversion=mock,
        dump=dump,
        dump_format=args.dump_format,
        details=args.details,
        now=now,
        namespace=namespace,
        watch=args.watch,
        source=args.source,
    )


def run(options: Options) -> int:
    return upgrade_status.run(options)
