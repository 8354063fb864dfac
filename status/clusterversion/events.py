"""Kubernetes Events for payload retrieval (started, loaded, failed) and the precondition checks, as
upstream's recorder emits them, and for updates that status leaves out (ours: upstream leaves
nothing out).

Pure part: which finished retrieval produces which Event (type, reason, message), the Event object
itself (core/v1, the shape client-go's recorder creates) and the key that makes two Events "the
same". I/O part: `EventRecorder`, which creates an Event, or bumps `count` and `lastTimestamp` on
the existing one when the same Event happens again (client-go's correlator does the same).

Events are recorded in the operator's namespace against ClusterVersion/<name>. A ClusterVersion is
cluster-scoped, but a core/v1 Event must live in its involved object's namespace, so the reference
names that namespace, as upstream's does.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cvo_py.runtime.errors import ClientError
from cvo_py.runtime.gotext.messages import clipped, one_line
from cvo_py.runtime.gotext.quoting import escape, go_quote
from cvo_py.runtime.gotext.times import metav1_time
from cvo_py.runtime.kube import CLUSTERVERSIONS, EVENTS, JSON, MERGE_PATCH, ApiError, KubeClient
from payload import acceptance as acc
from payload.acceptance import PreconditionOutcome, ReleaseAcceptance
from updateservice.retrieval import UPDATES_OMITTED

log = logging.getLogger(__name__)

COMPONENT = "cluster-version-operator"
WARNING, NORMAL = "Warning", "Normal"

# Failed load-payload steps (the ReleaseAccepted reason) → upstream's Warning Event reason.
FAILED_STEP_REASONS = {
    acc.RETRIEVE_PAYLOAD: "RetrievePayloadFailed",
    acc.LOAD_PAYLOAD: "LoadPayloadFailed",
    acc.VERIFY_PAYLOAD_VERSION: "VerifyPayloadVersionFailed",
    acc.PRECONDITION_CHECKS: "PreconditionBlock",
}
# The core/v1 API sets no limit on an Event's message; this keeps one Event small.
MAX_MESSAGE = 8192
# As client-go's correlator: how many distinct Events are remembered for bumping.
CACHE_SIZE = 4096


@dataclass(frozen=True)
class EventSpec:
    """What to record: an Event type, reason and message."""

    type: str
    reason: str
    message: str


def unwrapped_aggregate(exc: BaseException) -> str:
    """The error text with what its causes add, one per line (upstream's unwrapped aggregate).

    Walks the chain from the outermost exception inward (`__cause__`, else `__context__` unless
    suppressed; every member of an exception group); each inner text is added on a new line
    unless what has been collected already contains it.
    """
    collected = str(exc)
    seen = {id(exc)}
    pending: collections.deque[BaseException] = collections.deque(_inner(exc))
    while pending:
        current = pending.popleft()
        if id(current) in seen:
            continue
        seen.add(id(current))
        text = str(current)
        if text and text not in collected:
            collected = f"{collected}\n{text}" if collected else text
        pending.extend(_inner(current))
    return collected


def _inner(exc: BaseException) -> list[BaseException]:
    inner: list[BaseException] = []
    if isinstance(exc, BaseExceptionGroup):
        inner.extend(exc.exceptions)
    if exc.__cause__ is not None:
        inner.append(exc.__cause__)
    elif exc.__context__ is not None and not exc.__suppress_context__:
        inner.append(exc.__context__)
    return inner


def retrieval_event(
    version: str, image: str, final: ReleaseAcceptance, error: BaseException | None = None
) -> EventSpec | None:
    """The Event a retrieval of (`version`, `image`) as requested produces, or None.

    As upstream: an attempt starting gives a Normal `RetrievePayload`, a newly loaded payload a
    Normal `PayloadLoaded`, and a failed step a Warning with the condition's text, line breaks
    included (`PreconditionBlock`'s "Multiple precondition checks failed:\n* …"). Only
    `RetrievePayloadFailed` is one line (each line break ` // `, as upstream), and its `failure=`
    part is the unwrapped aggregate of `error` when the failure came with an exception chain;
    retrieval's own failures carry their whole text in the condition already.
    """
    if final == acc.retrieving(version, image):
        return EventSpec(NORMAL, acc.RETRIEVE_PAYLOAD, final.message)  # an attempt starts
    if final.status == "True" and final.reason == acc.PAYLOAD_LOADED and " architecture=" in final.message:
        return EventSpec(NORMAL, acc.PAYLOAD_LOADED, final.message)  # a new payload (not a reset)
    if final.status != "False":
        return None
    reason = FAILED_STEP_REASONS.get(final.reason)
    if reason is None:
        return None
    if final.reason != acc.RETRIEVE_PAYLOAD:
        return EventSpec(WARNING, reason, clipped(final.message, MAX_MESSAGE))
    text = final.message
    if error is not None:
        text = (
            f"Retrieving payload failed version={go_quote(version)} image={go_quote(image)} "
            f"failure={unwrapped_aggregate(error)}"
        )
    return EventSpec(WARNING, reason, one_line(text, MAX_MESSAGE))


def local_payload_events(version: str, image: str, architecture: str, refused: str = "") -> list[EventSpec]:
    """The Events of loading the running release's own payload, as upstream records them at each
    start: Normal `RetrievePayload` and `LoadPayload`, then Normal `PayloadLoaded`, or, when the
    payload could not be loaded (`refused`), Warning `LoadPayloadFailed`."""
    ids = f"version={go_quote(version)} image={go_quote(image)}"
    found = [
        EventSpec(NORMAL, acc.RETRIEVE_PAYLOAD, acc.retrieving(version, image).message),
        EventSpec(NORMAL, acc.LOAD_PAYLOAD, f"Loading payload {ids}"),
    ]
    if refused:
        failed = acc.load_failed(version, image, refused)
        return [*found, EventSpec(WARNING, FAILED_STEP_REASONS[acc.LOAD_PAYLOAD], clipped(failed.message, MAX_MESSAGE))]
    return [*found, EventSpec(NORMAL, acc.PAYLOAD_LOADED, acc.payload_loaded(version, image, architecture).message)]


def precondition_events(version: str, image: str, outcome: PreconditionOutcome) -> list[EventSpec]:
    """The Events of precondition checks that let the update go ahead: a Warning `PreconditionWarn`
    with the warning (forced blocking failures included; line breaks kept, as upstream), then a
    Normal `PreconditionsPassed`. A refusal is the failed `PreconditionChecks` step (`retrieval_event`)."""
    found = []
    if outcome.message:
        text = acc.precondition_warning(version, image, outcome.message)
        found.append(EventSpec(WARNING, "PreconditionWarn", clipped(text, MAX_MESSAGE)))
    found.append(EventSpec(NORMAL, "PreconditionsPassed", acc.preconditions_passed(version, image)))
    return found


def updates_omitted_event(condition: Mapping[str, Any] | None) -> EventSpec | None:
    """A Warning when status leaves out updates the update service offered (the written
    `RetrievedUpdates` says what, with reason `UpdatesOmitted`); None otherwise."""
    if not condition or condition.get("reason") != UPDATES_OMITTED:
        return None
    return EventSpec(WARNING, UPDATES_OMITTED, clipped(str(condition.get("message") or ""), MAX_MESSAGE))


def involved_object(name: str, namespace: str) -> JSON:
    """The ClusterVersion as upstream's recorder names it (no uid: Events outlive a recreation)."""
    return {
        "apiVersion": CLUSTERVERSIONS.api_version,
        "kind": CLUSTERVERSIONS.kind,
        "name": name,
        "namespace": namespace,
    }


def new_event(involved: Mapping[str, Any], spec: EventSpec, component: str, now: datetime) -> JSON:
    """A core/v1 Event as client-go's recorder makes it: named `<object>.<unix nanoseconds, hex>`."""
    namespace = str(involved.get("namespace") or "default")
    nanos = int(now.timestamp()) * 1_000_000_000 + now.microsecond * 1000
    ts = metav1_time(now)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{involved.get('name')}.{nanos:x}", "namespace": namespace},
        "involvedObject": dict(involved),
        "reason": spec.reason,
        "message": spec.message,
        "type": spec.type,
        "source": {"component": component},
        "firstTimestamp": ts,
        "lastTimestamp": ts,
        "count": 1,
        "reportingComponent": component,
        "reportingInstance": "",
    }


EventKey = tuple[str, ...]


def event_key(event: Mapping[str, Any]) -> EventKey:
    """What makes two Events the same one (client-go's getEventKey): source, object, type, reason,
    message."""
    ref = event.get("involvedObject") or {}
    source = event.get("source") or {}
    return (
        str(source.get("component") or ""),
        str(source.get("host") or ""),
        str(ref.get("kind") or ""),
        str(ref.get("namespace") or ""),
        str(ref.get("name") or ""),
        str(ref.get("uid") or ""),
        str(ref.get("apiVersion") or ""),
        str(event.get("type") or ""),
        str(event.get("reason") or ""),
        str(event.get("message") or ""),
    )


def find_same(events: Sequence[Mapping[str, Any]], key: EventKey) -> Mapping[str, Any] | None:
    """The most recently seen Event among `events` that is the same as `key`, or None."""
    same = [e for e in events if event_key(e) == key]
    if not same:
        return None
    return max(same, key=lambda e: (str(e.get("lastTimestamp") or ""), int(e.get("count") or 0)))


def bump(event: Mapping[str, Any], now: datetime) -> JSON:
    """The merge patch that records one more occurrence of `event`."""
    return {"count": int(event.get("count") or 1) + 1, "lastTimestamp": metav1_time(now)}


class EventRecorder:
    """Records Events in `namespace`; the same Event again bumps the existing one.

    Best effort, as client-go's recorder: a failure is logged, never raised. Used from one thread
    (the status loop).
    """

    def __init__(
        self,
        client: KubeClient,
        namespace: str,
        *,
        component: str = COMPONENT,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        if not namespace:
            raise ValueError("an Event namespace is required")
        self.client = client
        self.namespace = namespace
        self.component = component
        self.now = now
        self._known: collections.OrderedDict[EventKey, JSON] = collections.OrderedDict()
        self.created = 0
        self.bumped = 0
        self.failed = 0

    def record(self, involved: Mapping[str, Any], spec: EventSpec) -> JSON | None:
        """Create or bump the Event; returns it as stored, or None when it could not be written."""
        ref = {**involved, "namespace": self.namespace}
        event = new_event(ref, spec, self.component, self.now())
        log.info(
            "Event(%s/%s): type: '%s' reason: '%s' %s",
            ref.get("kind"),
            ref.get("name"),
            spec.type,
            spec.reason,
            escape(spec.message),  # one log line, whatever the message holds (line breaks show as \n)
        )
        key = event_key(event)
        try:
            existing = self._known.get(key) or self._lookup(ref, spec, key)
            stored = self._bump(existing) if existing is not None else None
            if stored is None:
                stored = self.client.create(EVENTS, event, self.namespace)
                self.created += 1
        except ClientError as exc:
            self.failed += 1
            log.warning("Could not record Event %s for %s/%s: %s", spec.reason, ref["kind"], ref["name"], exc)
            return None
        self._known[key] = stored
        self._known.move_to_end(key)
        while len(self._known) > CACHE_SIZE:
            self._known.popitem(last=False)
        return stored

    def _lookup(self, ref: Mapping[str, Any], spec: EventSpec, key: EventKey) -> JSON | None:
        """An Event recorded before this process (or cache entry) existed, to bump instead."""
        selector = ",".join(
            (
                f"involvedObject.kind={ref.get('kind')}",
                f"involvedObject.name={ref.get('name')}",
                f"reason={spec.reason}",
                f"type={spec.type}",
            )
        )
        items = self.client.list(EVENTS, self.namespace, field_selector=selector).get("items") or []
        found = find_same(items, key)
        return dict(found) if found is not None else None

    def _bump(self, existing: Mapping[str, Any]) -> JSON | None:
        """The bumped Event, or None when it is gone (expired or deleted): then create anew."""
        name = str((existing.get("metadata") or {}).get("name") or "")
        try:
            patched: JSON = self.client.patch(
                EVENTS, name, bump(existing, self.now()), self.namespace, content_type=MERGE_PATCH
            )
        except ApiError as exc:
            if exc.is_not_found():
                return None
            raise
        self.bumped += 1
        return patched
