"""What `upgrade-status` builds for each of its sources: live, the cluster's objects (as `oc adm
upgrade status` reads them) or the update status controller's publication (`--source`: `auto`
takes the publication when it is there and current, else the objects, and says so on stderr);
`--watch` on either (`auto` decides when the watch starts); an oc snapshot
(`--mock-clusterversion`) or a dump (`--from`).
Whichever it is, the text comes from the insights alone (`status.updatestatus.client.render`),
computed from objects by the same pure functions the controller runs.

The fast path. A live one-shot run is a process of a tenth of a second, most of it start-up, so
what it loads is declared and held:

- this module is the one place that imports by source: each branch imports, inside the function
  that runs it, what only that source reads (the live reads leave before the renderer and the
  insight classes load, and a snapshot or dump run loads no API client);
- `status.updatestatus.client.details` is a module without imports, so `--details` is checked
  before anything heavy loads;
- everything else a live run loads imports at module level, and may not import pydantic, PyYAML,
  urllib3, the kubernetes package or the insight models (import-linter's contract "upgrade-status'
  fast path", whose `ignore_imports` names the few lazy fallbacks that a good run never takes);
- `tests/status/updatestatus/client/test_imports.py` lists, module by module, what a live run
  (from the publication, and from the cluster's objects), a snapshot, a must-gather and an
  Insights archive load, and what they must not. A run from the objects loads the insight
  computation too (its records NamedTuples and plain classes: no dataclasses), once its reads
  have left, and msgspec only for a Node LIST large enough to be worth it
  (`client.cluster.TRIMMED_FROM`).

What these cost and saved is measured in bench/README.md (`upgrade_status_client.py`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NamedTuple, TextIO

from status.updatestatus.api.names import CONFIGMAP, NAMESPACE

if TYPE_CHECKING:
    from cvo_py.runtime.kube import ApiError, KubeClient
    from status.updatestatus.client.cluster import ClusterReads
    from status.updatestatus.client.live import PublishedReads
    from status.updatestatus.client.routealerts import AlertsFetch
    from status.updatestatus.insights.incremental import IncrementalNodes

# The exit code of a command that SIGTERM ended, as a shell reports it (128 + 15).
TERMINATED = 143
SOURCES = ("auto", "controller", "cluster")  # --source
USER_AGENT = "cvo-py (upgrade-status)"
# Requests a one-shot run has in flight at once, each on its own connection. oc sends all its reads
# on one HTTP/2 connection; here each connection is a TLS handshake of 1-2 ms on the one core a
# short run has (measured in bench/README.md), and three keep the Node LIST going while the other
# reads are answered.
ONE_SHOT_CONNECTIONS = 3


class Options(NamedTuple):
    kubeconfig: str | None
    mock_clusterversion: str | None  # PATH/NAME-cv.yaml
    dump: str | None  # --from
    dump_format: str  # --format
    details: str
    now: int | None  # ns since the epoch; None: the snapshot's rule, or the wall clock
    namespace: str = NAMESPACE  # where the controller publishes (its --namespace); live reads only
    watch: bool = False  # --watch: shown again whenever the insights change, until Ctrl-C
    source: str = "auto"  # live: one of SOURCES


def run(options: Options) -> int:
    out = sys.stdout
    if out is None:  # started with stdout closed (`>&-`): nothing could be shown
        return _fail([], "write /dev/stdout: bad file descriptor", 1)
    if options.watch:
        return _watch(options, out)
    from cvo_py.runtime import gcpause

    # One short burst of building (documents, insights, text) that leaves no garbage cycles behind.
    with gcpause.paused():
        if options.dump is not None or options.mock_clusterversion is not None:
            return _run_files(options, out)
        from cvo_py.runtime.kube import connect

        client = connect(options.kubeconfig, user_agent=USER_AGENT, max_requests=ONE_SHOT_CONNECTIONS)
        if options.source == "cluster":
            return _run_cluster(options, out, client)
        # the requests leave first: the server answers while the models and the renderer load
        reads = _start_live_reads(client, options)
        try:
            return _run_published(options, out, client, reads)
        finally:
            reads.close()  # also when the imports in between fail or are interrupted


def _run_published(options: Options, out: TextIO, client: KubeClient, reads: PublishedReads) -> int:
    """The controller's publication; with `--source auto`, the objects instead when it is absent,
    unreadable or not current (said in one line on stderr)."""
    from cvo_py.runtime.kube import ApiError
    from status.updatestatus.api import staleness
    from status.updatestatus.client.live import ReadError
    from status.updatestatus.client.render import RenderError, render
    from status.updatestatus.insights.objects import InputError

    auto = options.source == "auto"
    warnings: list[str] = []
    try:
        now = options.now if options.now is not None else _wall_clock()
        try:
            insights, warnings = reads.result(now)
        except ReadError:
            if auto:
                return _run_cluster(options, out, client, because=_not_published(options))
            raise
        except ApiError as exc:
            if auto and exc.status == 403:
                return _run_cluster(options, out, client, because=_unreadable(exc))
            raise
        if auto and warnings:
            return _run_cluster(options, out, client, because=_not_current(warnings))
        text = render(insights, now, options.details, caveat=staleness.health_caveat(warnings))
    except InputError as exc:  # from the cluster's ConfigMap
        return _fail(warnings, str(exc), 2)
    except (RenderError, ReadError) as exc:
        return _fail(warnings, str(exc).rstrip(), 1)
    return _print(warnings, text, out)


def _run_cluster(options: Options, out: TextIO, client: KubeClient, because: str = "") -> int:
    """The insights computed from the cluster's objects, as oc computes them, alerts included;
    `because`: why `auto` came here, said in one line on stderr."""
    reads = _start_cluster_reads(client)
    try:
        fetch = _start_alerts(client, reads)
        if because:
            _note(because)
        return _computed(options, out, client, reads, fetch)
    finally:
        reads.close()


def _computed(options: Options, out: TextIO, client: KubeClient, reads: ClusterReads, fetch: AlertsFetch) -> int:
    from cvo_py.runtime.gotext.quoting import escape
    from status.updatestatus.client.cluster import ClusterReadError
    from status.updatestatus.client.render import RenderError, render, shows_update
    from status.updatestatus.client.routealerts import AlertsFetch
    from status.updatestatus.insights import compute
    from status.updatestatus.insights.alerts import alert_insights
    from status.updatestatus.insights.controlplane import update_started_at
    from status.updatestatus.insights.incremental import IncrementalNodes
    from status.updatestatus.insights.objects import InputError
    from status.updatestatus.insights.plain import Insight

    nodes_assessed = IncrementalNodes()
    try:
        _assess_while_listed(reads, nodes_assessed)
        objects = reads.objects()
    except ClusterReadError as exc:
        sys.stderr.write(_one_line(exc.line) + "\n")
        return 1
    except InputError as exc:  # an object whose shape cannot be read at all (the MCO Deployment's)
        return _fail([], f"the cluster's objects: {exc}", 2)
    now = options.now if options.now is not None else _wall_clock()
    cv = objects.clusterversion
    try:
        controlplane = compute.controlplane_insights(cv, objects.operators, now, mco_image=objects.mco_image)
        # what `compute.node_insights` gives, the nodes assessed while they were listed kept
        assessor = compute.NodeAssessor(objects.pools, objects.machineconfig_versions, cv)
        entries = nodes_assessed.update(assessor, objects.nodes)
        pool_insights, health = assessor.pools_and_health(nodes_assessed.by_pool, now)
        nodes: list[Insight] = [*pool_insights, *(entry.insight for entry in entries), *health]
        insights = compute.in_collection_order(controlplane, nodes)
        line = ""
        if shows_update(insights):  # as oc, the alerts only for a cluster that is updating
            response, line = fetch.result()
            if not fetch.asked:  # not Progressing, yet updating (its nodes, say): asked for now
                response, line = AlertsFetch(client).result()
            if response is not None:
                alerts = alert_insights(response, update_started_at(cv))
                insights = compute.in_collection_order(controlplane, nodes, alerts)
        text = render(insights, now, options.details)  # once: a render of 5,000 nodes is 15-20 ms
    except InputError as exc:  # an object whose shape cannot be read at all (a ClusterVersion's)
        return _fail([], f"the cluster's objects: {exc}", 2)
    except RenderError as exc:
        return _fail([], str(exc).rstrip(), 1)
    return _print([], (escape(line) + "\n" if line else "") + text, out)


def _assess_while_listed(reads: ClusterReads, assessed: IncrementalNodes) -> None:
    """Assess each batch of Nodes as it is decoded, while the API server writes the rest: with the pools
    and MachineConfig versions known by then, which the final assessment (`assessed.update`
    with every object read) checks, keeping these only where nothing they depend on changed."""
    from status.updatestatus.insights import compute

    early = reads.early_inputs()
    if early is None:
        return
    cv, pools, versions = early
    try:
        assessor = compute.NodeAssessor(pools, versions, cv)
        for batch in reads.node_batches():
            assessed.assess_ahead(assessor, batch)
    except compute.InputError:  # said by the final assessment, from every object
        return


def _one_line(text: str) -> str:
    from cvo_py.runtime.gotext.quoting import escape

    return escape(" ".join(text.split()))


def _run_files(options: Options, out: TextIO) -> int:
    from status.updatestatus.client import snapshot
    from status.updatestatus.client.render import RenderError, render
    from status.updatestatus.insights.objects import InputError

    try:
        if options.dump is not None:
            text = _from_dump(options)
        else:
            assert options.mock_clusterversion is not None
            snap = snapshot.load(options.mock_clusterversion)
            insights, now = snap.insights(options.now, wall_clock=_wall_clock())
            text = render(insights, now, options.details)
    except (snapshot.SnapshotError, InputError) as exc:
        return _fail([], str(exc), 2)
    except RenderError as exc:
        return _fail([], str(exc).rstrip(), 1)
    return _print([], text, out)


def _fail(warnings: list[str], message: str, code: int) -> int:
    from cvo_py.runtime.gotext.quoting import escape
    from status.updatestatus.client.render.warnings import warning_text

    sys.stderr.write(warning_text(warnings) + f"error: {escape(message)}\n")
    return code


def _print(warnings: list[str], text: str, out: TextIO) -> int:
    """Write the warnings and the text; a reader that left (`| head -1`) is no error, a stdout that
    cannot be written is (one line, exit 1), as oc's write would fail."""
    from status.updatestatus.client.render.warnings import emit

    try:
        emit(warnings, text, out, sys.stderr)
        out.flush()
    except BrokenPipeError:  # the reader has what it wanted and left: nothing more to say
        pass
    except OSError as exc:
        return _fail([], f"write /dev/stdout: {_os_reason(exc)}", 1)
    return 0


def _os_reason(exc: OSError) -> str:
    from cvo_py.runtime.connections import os_text

    return os_text(exc.strerror or str(exc))


def _watch(options: Options, out: TextIO) -> int:
    """`--watch`: the publication, or the cluster's objects (`cluster`, and `auto` when the
    publication is absent, unreadable or not current when the watch starts: said on stderr)."""
    from cvo_py.runtime.kube import connect
    from status.updatestatus.client import watch as watching
    from status.updatestatus.client.cluster import ClusterReadError

    client = connect(options.kubeconfig, user_agent="cvo-py (upgrade-status --watch)")
    objects = options.source == "cluster"
    if options.source == "auto":
        why = _publication_unusable(client, options)
        if why:
            _note(why)
            objects = True
    try:
        return watching.watch(
            client,
            options.details,
            out,
            namespace=options.namespace,
            tty=out.isatty(),
            size=watching.terminal_size,
            objects=objects,
        )
    except watching.Terminated:
        return TERMINATED
    except ClusterReadError as exc:
        sys.stderr.write(_one_line(exc.line) + "\n")
        return 1
    except OSError as exc:  # BrokenPipeError is handled where frames are written
        return _fail([], f"write /dev/stdout: {_os_reason(exc)}", 1)


def _publication_unusable(client: KubeClient, options: Options) -> str:
    """Why `auto` takes the cluster's objects rather than the publication ("": it takes the
    publication), as a one-shot run decides it."""
    from cvo_py.runtime.kube import ApiError
    from status.updatestatus.client.live import ReadError
    from status.updatestatus.insights.objects import InputError

    reads = _start_live_reads(client, options)
    try:
        _, warnings = reads.result(_wall_clock())
    except ReadError:
        return _not_published(options)
    except InputError as exc:  # a one-shot run stops there (exit 2); a watch follows the objects
        return f"the update status controller's ConfigMap cannot be read ({exc})"
    except ApiError as exc:
        if exc.status == 403:
            return _unreadable(exc)
        raise
    finally:
        reads.close()
    return _not_current(warnings) if warnings else ""


def _note(why: str) -> None:
    """Why `auto` computes from the cluster's objects, in one line on stderr (stdout stays oc's)."""
    sys.stderr.write(f"note: {_one_line(why)}: computing the status from the cluster's objects, as oc does\n")


# Why `auto` computes from the cluster's objects.
def _not_published(options: Options) -> str:
    return f"no update status controller publishes in {options.namespace} (no ConfigMap {CONFIGMAP})"


def _unreadable(exc: ApiError) -> str:
    return f"the update status controller's ConfigMaps cannot be read ({exc.message})"


def _not_current(warnings: list[str]) -> str:
    return f"the update status controller's insights are not current ({warnings[0]})"


def _start_live_reads(client: KubeClient, options: Options) -> PublishedReads:
    from status.updatestatus.client.live import PublishedReads

    return PublishedReads(client, options.namespace)


def _start_alerts(client: KubeClient, reads: ClusterReads) -> AlertsFetch:
    """The alerts, asked for as soon as the ClusterVersion says Progressing (updating, most likely):
    their reads then overlap the Node LIST instead of following it."""
    from status.updatestatus.client.routealerts import AlertsFetch

    return AlertsFetch(client, wanted=reads.progressing)


def _start_cluster_reads(client: KubeClient) -> ClusterReads:
    from status.updatestatus.client.cluster import ClusterReads

    return ClusterReads(client)


def _from_dump(options: Options) -> str:
    from pathlib import Path

    from status.updatestatus.client.dump import layouts as dumps
    from status.updatestatus.client.render import NOT_UPDATING, render

    assert options.dump is not None
    d = dumps.load(Path(options.dump), options.dump_format)
    if d.layout == "snapshot":  # exactly what --mock-clusterversion prints
        insights, now = d.snapshot.insights(options.now, wall_clock=_wall_clock())
        return render(insights, now, options.details)
    at = options.now if options.now is not None else d.gathered_at
    insights, now = d.snapshot.insights(at)  # None: the snapshot rule (newest condition time)
    text = render(insights, now, options.details)
    return dumps.preamble(d, now, explicit_now=options.now is not None, updating=text != NOT_UPDATING) + text


def _wall_clock() -> int:
    import time

    return time.time_ns()
