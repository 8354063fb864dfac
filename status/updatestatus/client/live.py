"""Reading the published insights from the cluster: the ConfigMap, its shards and the controller's Lease.

    reads = PublishedReads(client, namespace)   # the requests leave now
    ...                                 # load the models and the renderer meanwhile
    insights, warnings = reads.result(now)

The ConfigMaps come from one LIST of the namespace: one request instead of one per shard, and one
consistent view (every ConfigMap as it was at one resourceVersion, rather than each read at another
moment while the controller rewrites them). A reader who may not list ConfigMaps there (403), or a
namespace holding more ConfigMaps than one page of `LIST_PAGE`, gets what the page lacks by name,
at most `SHARD_READERS` at a time; those reads are separate views again. The Lease is read
meanwhile.

Each read runs on a thread of its own (the GETs by name at most `SHARD_READERS` at a time);
`close()` cancels those that have not started. A read already in flight when the command ends
early finishes within the client's timeouts (an interrupted command does not wait for it: see
`cvo_py.cli.main.entry`). Plain threads, not `concurrent.futures`, whose import loads `logging`,
which nothing here needs.

Only the client and names are imported at module level: the requests are in flight while the caller imports the
readers and the renderer. Those read the values as the controller writes them without pydantic
(`status.updatestatus.api.wire`), which is loaded only for a value they do not take.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from cvo_py.runtime.kube import CONFIGMAPS, LEASES, ApiError, KubeClient
from status.updatestatus.api.names import CONFIGMAP, LEASE

if TYPE_CHECKING:
    from status.updatestatus.api.staleness import LeaseState, PublicationMetadataShape
    from status.updatestatus.insights.kinds import InsightShape

# One page holds the main ConfigMap, every shard (at most 32) and the namespace's few others
# (its CA bundles); a busier namespace is read by name for what the page lacks.
LIST_PAGE = 64
SHARD_READERS = 4  # GETs in flight together when ConfigMaps are read by name, at most (the client may allow fewer)


MISSING_SHARD = "(a listed shard) does not exist"
LOST = "the insights it holds are not shown"


def missing_shard(namespace: str, name: str) -> str:
    """The warning about a listed shard that does not exist."""
    return f"ConfigMap {namespace}/{name} {MISSING_SHARD}: {LOST}"


class ReadError(Exception):
    """The insights cannot be read: no ConfigMap (not opted in). A shard it lists that cannot be
    read is a warning: the rest is shown."""


class PublishedReads:
    """The reads of the published insights in `namespace` (where the controller publishes: its
    `--namespace`), in flight from construction until `result()`."""

    def __init__(self, client: KubeClient, namespace: str) -> None:
        self._client = client
        self._namespace = namespace
        self._closed = threading.Event()
        self._by_name = threading.Semaphore(SHARD_READERS)
        # the LIST and the Lease first, then any GETs by name that `result()` finds it needs
        self._listed = Read(self._list, closed=self._closed)
        self._lease = Read(lambda: client.get(LEASES, LEASE, namespace=namespace), closed=self._closed)

    def close(self) -> None:
        """Cancel the reads not started yet; those in flight end on their own."""
        self._closed.set()

    def result(self, now: int) -> tuple[list[InsightShape], list[str]]:
        """The insights of every readable key, and the warnings about them (age, Lease, omissions,
        unreadable keys, listed shards that cannot be read); `ReadError` or the client's errors when
        nothing can be shown."""
        listed, complete = self._listed.result()
        main = listed.get(CONFIGMAP)
        if main is None:
            main = self._get(
                CONFIGMAP, complete, "does not exist: no update status insights are published (create it to opt in)"
            )
        layout = read_main(data_of(main))
        by_name = {
            name: Read(functools.partial(self._shard, name, complete), closed=self._closed, gate=self._by_name)
            for name in layout.shards
            if name not in listed
        }
        shards = [(listed[name], "") if name in listed else by_name[name].result() for name in layout.shards]
        self.close()
        lease = _lease_state(self._lease, self._namespace)
        return assemble(layout, [(data_of(shard), problem) for shard, problem in shards], lease, now)

    def _list(self) -> tuple[dict[str, Any], bool]:
        """The namespace's ConfigMaps by name, and whether that is all of them (one complete page)."""
        try:
            page = self._client.list(CONFIGMAPS, namespace=self._namespace, limit=LIST_PAGE)
        except ApiError as exc:
            if exc.status == 403:  # may read them by name only
                return {}, False
            raise
        items = page.get("items") if isinstance(page, dict) else None
        if not isinstance(items, list):
            return {}, False
        listed = {_name(cm): cm for cm in items if _name(cm)}
        meta = page.get("metadata")
        more = meta.get("continue") if isinstance(meta, dict) else None
        return listed, not more

    def _shard(self, name: str, complete: bool) -> tuple[Any, str]:
        """A listed shard, or None and why it cannot be read: partial data, a warning, not a failure
        (the main ConfigMap's insights and the other shards' are still shown)."""
        try:
            return self._get(name, complete, MISSING_SHARD), ""
        except ReadError as exc:
            return None, f"{exc}: {LOST}"
        except ApiError as exc:
            why = f"{exc.status} {exc.reason}".strip()
            return None, f"ConfigMap {self._namespace}/{name} (a listed shard) cannot be read ({why}): {LOST}"

    def _get(self, name: str, complete: bool, missing: str) -> Any:
        """ConfigMap `name`, known missing when a complete LIST did not have it."""
        if complete:
            raise ReadError(f"ConfigMap {self._namespace}/{name} {missing}")
        try:
            return self._client.get(CONFIGMAPS, name, namespace=self._namespace)
        except ApiError as exc:
            if exc.is_not_found():
                raise ReadError(f"ConfigMap {self._namespace}/{name} {missing}") from None
            raise


class MainLayout(NamedTuple):
    """What the main ConfigMap says: its data, the publication metadata (or why it cannot be read),
    and the shards to read with it (or why they are not known)."""

    data: dict[str, Any]
    meta: PublicationMetadataShape | None
    meta_problem: str
    shards: list[str]
    shard_problem: str


def read_main(data: Mapping[str, Any]) -> MainLayout:
    from status.updatestatus.api import wire
    from status.updatestatus.api.staleness import META_KEY

    meta, meta_problem = read_metadata(data[META_KEY]) if META_KEY in data else (None, "")
    try:
        return MainLayout(dict(data), meta, meta_problem, wire.shard_names(data), "")
    except wire.DecodeError as exc:
        return MainLayout(dict(data), meta, meta_problem, [], f"unreadable, node insights in shards not shown: {exc}")


def assemble(
    layout: MainLayout,
    shards: Sequence[tuple[Mapping[str, Any], str]],
    lease: LeaseState,
    now: int,
    decode: Callable[[Mapping[str, Any]], tuple[list[InsightShape], Sequence[Exception]]] | None = None,
) -> tuple[list[InsightShape], list[str]]:
    """The insights of the main ConfigMap and its shards (`shards`: each listed shard's data, in
    `layout.shards` order, and why it could not be read, if so) and the warnings a reader prints
    about them at `now`. `decode` reads the union of their data (default `wire.decode_readable`)."""
    insights, problems = gather(layout, shards, decode)
    return insights, warnings_at(layout, lease, now) + problems


def gather(
    layout: MainLayout,
    shards: Sequence[tuple[Mapping[str, Any], str]],
    decode: Callable[[Mapping[str, Any]], tuple[list[InsightShape], Sequence[Exception]]] | None = None,
) -> tuple[list[InsightShape], list[str]]:
    """The insights (see `assemble`), and what was not read: the warnings that do not change with time."""
    from status.updatestatus.api import wire

    problems = [layout.shard_problem] if layout.shard_problem else []
    data = dict(layout.data)
    for shard_data, problem in shards:
        data.update(shard_data)
        if problem:
            problems.append(problem)
    insights, errors = (decode or wire.decode_readable)(data)
    problems.extend(f"unreadable, not shown: {exc}" for exc in errors)
    return insights, problems


def warnings_at(layout: MainLayout, lease: LeaseState, now: int) -> list[str]:
    """The warnings about the insights' age, the Lease and what the controller left out, at `now`."""
    from status.updatestatus.api import staleness

    return staleness.warnings(layout.meta, now, lease, meta_problem=layout.meta_problem)


def read_metadata(value: str) -> tuple[PublicationMetadataShape | None, str]:
    """The publication metadata (`usc-meta`), or None and why it cannot be read."""
    from status.updatestatus.api import wire

    meta = wire.read_metadata_plain(value)
    if meta is not None:
        return meta, ""
    from status.updatestatus.api import metadata  # judges what the plain reader does not take

    try:
        return metadata.decode(value), ""
    except metadata.MetadataError as exc:
        return None, str(exc)


class Read:
    """`call()` on a thread of its own, started now (once the `gate` lets it, unless `closed` is
    set by then: cancelled); `result()` waits for it and returns what it returned or raises what
    it raised."""

    def __init__(
        self,
        call: Callable[[], Any],
        *,
        closed: threading.Event,
        gate: threading.Semaphore | None = None,
    ) -> None:
        self._call = call
        self._closed = closed
        self._gate = gate
        self._done = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None
        with signals_left_to_main():
            threading.Thread(target=self._run, name="upgrade-status-read", daemon=True).start()

    def _run(self) -> None:
        try:
            if self._gate is not None:
                self._gate.acquire()
            try:
                if self._closed.is_set():
                    raise ReadCancelled("the command ended before this read started")
                self._value = self._call()
            finally:
                if self._gate is not None:
                    self._gate.release()
        except BaseException as exc:  # handed to whoever waits in result()
            self._error = exc
        finally:
            self._done.set()

    def result(self) -> Any:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value


class ReadCancelled(Exception):
    """A read that `PublishedReads.close()` cancelled before it started."""


# The signals the commands act on; Python runs their handlers on the main thread only.
MAIN_THREAD_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGWINCH}


@contextlib.contextmanager
def signals_left_to_main() -> Iterator[None]:
    """Threads started inside (a reader's, an informer's) block Ctrl-C, SIGTERM and SIGWINCH: a
    new thread inherits the mask of the thread that starts it, so no signal reaches one before
    it is blocked. The kernel gives a process's signal to any thread that does not block it;
    taken by another thread, it would not wake the main thread where it waits, and Ctrl-C would
    wait for that wait to end. A signal that comes meanwhile is held for the main thread."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, MAIN_THREAD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _name(obj: Any) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def data_of(configmap: Any) -> dict[str, Any]:
    """A ConfigMap's `data` ({} for anything that is not a ConfigMap with data)."""
    data = configmap.get("data") if isinstance(configmap, dict) else None
    return data if isinstance(data, dict) else {}


def _lease_state(read: Read, namespace: str) -> LeaseState:
    """The controller's leader-election Lease in `namespace`, or a one-line reason why it could not be read."""
    from status.updatestatus.api import staleness

    where = f"{namespace}/{LEASE}"
    try:
        lease = read.result()
    except ApiError as exc:
        if exc.is_not_found():
            return staleness.LeaseState(missing=True)
        if exc.status in (401, 403):
            return staleness.LeaseState(
                problem=f"cannot read the update status controller's Lease {where} ({exc.status} {exc.reason}): "
                "whether the controller is running is not known"
            )
        return staleness.LeaseState(problem=f"cannot read the update status controller's Lease {where}: {exc.status}")
    return staleness.lease_state(lease)
