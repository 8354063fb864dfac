"""`upgrade-status`: print what `oc adm upgrade status` prints, from the insights alone.

Live: reads the insights from the ConfigMap API (`status-api-cm-prototype` and its shards).
Snapshot (`--mock-clusterversion PATH/NAME-cv.yaml`): computes the insights from an oc-style
snapshot with the same functions the controller uses. Either way the text comes from the
insights only.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from status.updatestatus.insights.models import Insight

SHORT_HELP = "Display the status of the current cluster version update, from the update status insights"


@dataclass(frozen=True)
class Options:
    kubeconfig: str | None
    mock_clusterversion: Path | None
    details: str
    now: int | None  # ns since the epoch; None: the snapshot's rule, or the wall clock


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
        "--now",
        default=None,
        metavar="RFC3339",
        help="the time to assess at (default: for a snapshot its newest ClusterVersion/ClusterOperator "
        "condition time + 368975ns, as oc; otherwise the current time)",
    )


def validate(args: argparse.Namespace) -> Options:
    from cvo_py import gotext
    from cvo_py.cli.common import UsageError
    from status.updatestatus.render import DETAILS

    if args.details not in DETAILS:
        raise UsageError(
            f"invalid value for --details: {args.details} "
            "(must be one of none, all, nodes, health, operators)"
        )
    now = None
    if args.now is not None:
        try:
            now = gotext.parse_time(args.now)
        except gotext.TimeFormatError as exc:
            raise UsageError(f"--now: {exc}") from None
    mock = None
    if args.mock_clusterversion is not None:
        mock = Path(args.mock_clusterversion)
        if not mock.name.endswith("-cv.yaml"):
            raise UsageError(f"--mock-clusterversion: {mock} must name a NAME-cv.yaml file")
    return Options(kubeconfig=args.kubeconfig, mock_clusterversion=mock, details=args.details, now=now)


def run(options: Options) -> int:
    from status.updatestatus import snapshot
    from status.updatestatus.insights.objects import InputError
    from status.updatestatus.render import RenderError, render

    try:
        if options.mock_clusterversion is not None:
            snap = snapshot.load(options.mock_clusterversion)
            insights, now = snap.insights(options.now, wall_clock=_wall_clock())
        else:
            insights = _live_insights(options)
            now = options.now if options.now is not None else _wall_clock()
        text = render(insights, now, options.details)
    except snapshot.SnapshotError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except InputError as exc:  # from the cluster's ConfigMap (snapshot errors name their file)
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except RenderError as exc:
        sys.stderr.write(f"error: {str(exc).rstrip()}\n")
        return 1
    sys.stdout.write(text)
    return 0


def _wall_clock() -> int:
    import time

    return time.time_ns()


def _live_insights(options: Options) -> list[Insight]:
    from cvo_py.kube import CONFIGMAPS, ApiError, connect
    from status.updatestatus import configmap
    from status.updatestatus.render import RenderError

    client = connect(options.kubeconfig, user_agent="cvo-py (upgrade-status)")
    try:
        main = client.get(CONFIGMAPS, configmap.CONFIGMAP, namespace=configmap.NAMESPACE)
    except ApiError as exc:
        if exc.is_not_found():
            raise RenderError(
                f"ConfigMap {configmap.NAMESPACE}/{configmap.CONFIGMAP} does not exist: "
                "no update status insights "
                "are published (create it to opt in)"
            ) from None
        raise
    data: dict[str, str] = dict(main.get("data") or {})
    try:
        for name in configmap.shard_names(data):
            try:
                shard = client.get(CONFIGMAPS, name, namespace=configmap.NAMESPACE)
            except ApiError as exc:
                if exc.is_not_found():
                    raise RenderError(
                        f"ConfigMap {configmap.NAMESPACE}/{name} (a listed shard) does not exist"
                    ) from None
                raise
            data.update(shard.get("data") or {})
        return list(configmap.decode(data))
    except configmap.DecodeError as exc:
        raise RenderError(f"ConfigMap {configmap.NAMESPACE}/{configmap.CONFIGMAP}: {exc}") from None
