"""The project's one list/watch loop.

List, then watch from the list's resourceVersion with bookmarks; remember the newest
resourceVersion from every event (bookmarks too); relist on 410 Gone; reconnect with jittered
backoff on errors and on streams that stay silent past the inactivity timeout. Every controller
builds on `Informer`, for core types and custom resources alike: objects are plain dicts.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from cvo_py.runtime import klog
from cvo_py.runtime.errors import ClientError
from cvo_py.runtime.httpwire import HTTPError
from cvo_py.runtime.kube import JSON, ApiError, KubeClient, Resource, ServerUnreachable

log = logging.getLogger(__name__)

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"

# handler(event_type, new_or_deleted_object, previous_object_or_None)
Handler = Callable[[str, JSON, JSON | None], None]


def object_key(obj: JSON) -> str:
    meta = obj.get("metadata", {})
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))


def _first(pair: tuple[str, JSON]) -> str:
    return pair[0]


class WatchExpired(ClientError):
    """The server no longer has the requested resourceVersion (410 Gone): relist."""


@dataclass
class Backoff:
    """Jittered exponential backoff: base * 2^n, capped, with +-jitter fraction."""

    base: float = 0.2
    cap: float = 30.0
    jitter: float = 0.5
    attempt: int = 0

    def next(self) -> float:
        delay = min(self.cap, self.base * (2 ** min(self.attempt, 32)))
        # Capped, so that months of failures never overflow the exponent.
        self.attempt = min(self.attempt + 1, 64)
        return float(delay * (1 + self.jitter * (2 * random.random() - 1)))

    def reset(self) -> None:
        self.attempt = 0


@dataclass
class InformerStats:
    lists: int = 0
    watches: int = 0
    expired: int = 0
    errors: int = 0
    bookmarks: int = 0
    events: int = 0
    last_error: str = ""


def _too_large(status: JSON) -> bool:
    """The server is behind our resourceVersion (e.g. etcd restored from a backup): only a relist helps."""
    causes = (status.get("details") or {}).get("causes") or []
    return any(isinstance(c, dict) and c.get("reason") == "ResourceVersionTooLarge" for c in causes)


def diff_relist(old: dict[str, JSON], items: list[JSON]) -> tuple[dict[str, JSON], list[tuple[str, JSON, JSON | None]]]:
    """Replace the cache with a fresh list; return the events that tell handlers what changed.

    Unchanged objects (same resourceVersion) produce no event.
    """
    new = {object_key(item): item for item in items}
    events: list[tuple[str, JSON, JSON | None]] = []
    for key, obj in old.items():
        if key not in new:
            events.append((DELETED, obj, obj))
    for key, obj in new.items():
        prev = old.get(key)
        if prev is None:
            events.append((ADDED, obj, None))
        elif prev.get("metadata", {}).get("resourceVersion") != obj.get("metadata", {}).get("resourceVersion"):
            events.append((MODIFIED, obj, prev))
    return new, events


def apply_event(cache: dict[str, JSON], event_type: str, obj: JSON) -> tuple[str, JSON | None]:
    """Store a watch event's object in `cache`, or drop it for DELETED; return the event to tell
    handlers and the object it replaced. An ADDED of an object already cached is a MODIFIED."""
    key = object_key(obj)
    old = cache.get(key)
    if event_type == DELETED:
        cache.pop(key, None)
    else:
        cache[key] = obj
    return (MODIFIED if event_type == ADDED and old is not None else event_type), old


class Informer:
    """Keeps a local cache of one resource in sync and calls handlers on every change.

    Handlers run on the informer's thread, one event at a time; they must be quick (typically:
    mark something dirty for a controller's own worker).
    """

    def __init__(
        self,
        client: KubeClient,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        inactivity_timeout: float = 70.0,
        server_timeout_range: tuple[int, int] = (300, 600),
        backoff: Backoff | None = None,
        transform: Callable[[JSON], JSON] | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.inactivity_timeout = inactivity_timeout
        self.server_timeout_range = server_timeout_range
        self.backoff = backoff or Backoff()
        # Drops what the cache need not keep (e.g. MachineConfig bodies) before it is stored.
        self.transform = transform
        self.stats = InformerStats()
        # Why the last list or watch failed, until one succeeds again ("" while all is well): what
        # a reader that shows the data can say instead of logging it (see `failing`).
        self._failing = ""
        self._failing_handlers: list[Callable[[str], None]] = []
        self._handlers: list[Handler] = []
        self._cache: dict[str, JSON] = {}
        self._lock = threading.RLock()
        self._resource_version: str | None = None
        self._synced = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._active: Any = None
        self._reconnect_from: str | None = None
        self._reconnect_requested = False
        self.name = f"informer/{resource}" + (f"/{namespace}" if namespace else "")

    # -- public API --------------------------------------------------------------------------------

    def add_handler(self, handler: Handler) -> None:
        self._handlers.append(handler)

    def add_failing_handler(self, handler: Callable[[str], None]) -> None:
        """Call `handler(why)` on the informer's thread whenever `failing` changes: a list or watch
        starts failing, fails otherwise, or works again (why = ""). No object event says so."""
        self._failing_handlers.append(handler)

    @property
    def failing(self) -> str:
        """Why the last list or watch failed, until one succeeds again ("" while all is well)."""
        return self._failing

    @failing.setter
    def failing(self, why: str) -> None:
        if why == self._failing:
            return
        self._failing = why
        for handler in self._failing_handlers:
            handler(why)

    def start(self) -> Informer:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def request_stop(self) -> None:
        """Ask the informer to stop (closing its watch) without waiting for its thread."""
        self._stop.set()
        self._interrupt()

    def stop(self, timeout: float = 5.0) -> None:
        self.request_stop()
        if self._thread is not None:
            self._thread.join(timeout)

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    @property
    def resource_version(self) -> str | None:
        return self._resource_version

    def get(self, name: str, namespace: str | None = None) -> JSON | None:
        with self._lock:
            return self._cache.get(f"{namespace}/{name}" if namespace else name)

    def items(self) -> list[JSON]:
        with self._lock:
            return list(self._cache.values())

    def sorted_items(self) -> list[JSON]:
        """The objects in the order the API server lists them: by `namespace/name` (by name for
        cluster-scoped objects), whatever order the events came in."""
        with self._lock:
            pairs = list(self._cache.items())
        pairs.sort(key=_first)
        return [obj for _, obj in pairs]

    def __len__(self) -> int:
        return len(self._cache)

    def reconnect(self, from_resource_version: str | None = None) -> None:
        """Drop the current watch stream; the loop resumes (from the given version if any)."""
        self._reconnect_from = from_resource_version
        self._reconnect_requested = True
        self._interrupt()

    # -- loop --------------------------------------------------------------------------------------

    def _interrupt(self) -> None:
        resp = self._active
        if resp is not None:
            with contextlib.suppress(Exception):  # already closed
                resp.shutdown()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self._resource_version is None:
                    self._relist()
                self._watch()
                self.backoff.reset()
            except WatchExpired as exc:
                self.stats.expired += 1
                klog.v(2).info("%s: watch expired (%s); relisting", self.name, exc)
                self._resource_version = None
            except (ClientError, HTTPError, OSError, ValueError) as exc:
                if self._stop.is_set():
                    break
                self.stats.errors += 1
                self.stats.last_error = self.failing = str(exc)
                if isinstance(exc, ApiError) and exc.is_gone():
                    self._resource_version = None
                    continue
                delay = self.backoff.next()
                if isinstance(exc, ApiError) and exc.retry_after():
                    delay = max(delay, exc.retry_after() or 0)
                log.warning("%s: %s; retrying in %.1fs", self.name, exc, delay)
                self._stop.wait(delay)
            except Exception as exc:  # e.g. a transform failing on an odd object: the loop must not die
                self.stats.errors += 1
                self.failing = f"unexpected error: {exc}"
                delay = self.backoff.next()
                log.exception("%s: unexpected error; relisting in %.1fs", self.name, delay)
                self._resource_version = None
                self._stop.wait(delay)

    def _relist(self) -> None:
        items, resource_version = list_all(
            self.client, self.resource, self.namespace, self.label_selector, self.field_selector, self.transform
        )
        self.stats.lists += 1
        self.failing = ""
        with self._lock:
            self._cache, events = diff_relist(self._cache, items)
        self._resource_version = resource_version
        klog.v(4).info("%s: listed %d objects at resourceVersion %s", self.name, len(items), resource_version)
        for event_type, obj, old in events:
            if self._stop.is_set():
                return
            self._dispatch(event_type, obj, old)
        self._synced.set()

    def _watch(self) -> None:
        self._reconnect_requested = False
        if self._reconnect_from is not None:
            self._resource_version, self._reconnect_from = self._reconnect_from, None
        query: dict[str, Any] = {
            "watch": True,
            "allowWatchBookmarks": True,
            "resourceVersion": self._resource_version,
            "timeoutSeconds": random.randint(*self.server_timeout_range),
            **({"labelSelector": self.label_selector} if self.label_selector else {}),
            **({"fieldSelector": self.field_selector} if self.field_selector else {}),
        }
        self.stats.watches += 1
        stream: Generator[bytes, None, None] = self.client.stream_lines(
            self.resource.path(self.namespace),
            query,
            read_timeout=self.inactivity_timeout,
            on_open=self._set_active,
        )
        try:
            for line in stream:
                if self._stop.is_set():
                    return
                self._handle_event(json.loads(line))
        except TimeoutError:
            klog.v(2).info("%s: no event for %.0fs; reconnecting", self.name, self.inactivity_timeout)
        except (HTTPError, OSError) as exc:
            if self._stop.is_set() or self._reconnect_requested:
                return
            raise ServerUnreachable(self.client.server, exc) from exc
        finally:
            self._active = None
            stream.close()

    def _set_active(self, resp: Any) -> None:
        self._active = resp
        if resp.status < 300:
            self.failing = ""
        if self._stop.is_set():  # stop() came while the watch was being opened
            self._interrupt()

    def _handle_event(self, event: JSON) -> None:
        event_type = event.get("type")
        obj = event.get("object") or {}
        if event_type == "ERROR":
            raise watch_error(obj, self.resource.path(self.namespace))
        rv = obj.get("metadata", {}).get("resourceVersion")
        if event_type == "BOOKMARK":
            self.stats.bookmarks += 1
            if rv:
                self._resource_version = rv
            return
        if event_type not in (ADDED, MODIFIED, DELETED):
            log.warning("%s: ignoring unknown watch event type %r", self.name, event_type)
            return
        self.stats.events += 1
        obj.setdefault("apiVersion", self.resource.api_version)
        obj.setdefault("kind", self.resource.kind)
        if self.transform:
            obj = self.transform(obj)
        with self._lock:
            event_type, old = apply_event(self._cache, event_type, obj)
        if rv:
            self._resource_version = rv
        self._dispatch(event_type, obj, old)

    def _dispatch(self, event_type: str, obj: JSON, old: JSON | None) -> None:
        for handler in self._handlers:
            try:
                handler(event_type, obj, old)
            except Exception:
                log.exception("%s: handler failed on %s %s", self.name, event_type, object_key(obj))


def watch_error(status: JSON, path: str) -> ClientError:
    """What an ERROR event of a watch of `path` says: the watch expired (relist), or the server's error."""
    code = status.get("code")
    if code == 410 or status.get("reason") in ("Expired", "Gone") or _too_large(status):
        return WatchExpired(status.get("message", "resource version too old"))
    return ApiError(int(code or 500), json.dumps(status), "WATCH", path)


def list_all(
    client: KubeClient,
    resource: Resource,
    namespace: str | None,
    label_selector: str | None,
    field_selector: str | None,
    transform: Callable[[JSON], JSON] | None,
) -> tuple[list[JSON], str]:
    """Every object of `resource` (in pages of 500), each with its apiVersion and kind and through
    `transform`, and the resourceVersion of the list."""
    items: list[JSON] = []
    continue_token: str | None = None
    resource_version = ""
    while True:
        page = client.list(
            resource,
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            limit=500,
            continue_token=continue_token,
        )
        for item in page.get("items") or []:
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", resource.kind)
            items.append(transform(item) if transform else item)
        meta = page.get("metadata", {})
        resource_version = meta.get("resourceVersion", resource_version)
        continue_token = meta.get("continue")
        if not continue_token:
            return items, resource_version


@dataclass
class InformerSet:
    """Several informers started and stopped together."""

    informers: list[Informer] = field(default_factory=list)

    def add(self, informer: Informer) -> Informer:
        self.informers.append(informer)
        return informer

    def start(self) -> None:
        for informer in self.informers:
            informer.start()

    def wait_for_sync(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        return all(i.wait_for_sync(max(0.0, deadline - time.monotonic())) for i in self.informers)

    def wait_for_sync_or_stop(
        self, stop: threading.Event, waiting: Callable[[], None], every: float = 5.0, step: float = 0.1
    ) -> bool:
        """Waits until every informer synced (True) or `stop` is set (False), whichever comes
        first; `waiting()` is called each `every` seconds meanwhile. Ends within `step` of a stop."""
        next_note = time.monotonic() + every
        while not stop.is_set():
            if self.wait_for_sync(step):
                return True
            if time.monotonic() >= next_note:
                waiting()
                next_note = time.monotonic() + every
        return False

    def stop(self) -> None:
        for informer in self.informers:
            informer.request_stop()  # all at once: their watches close in parallel
        for informer in self.informers:
            informer.stop()
