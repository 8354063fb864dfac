"""Pure pieces of the plumbing: relist diffs, backoff, klog lines, listen addresses, API errors,
lease decisions."""

from __future__ import annotations

import io
import json
import logging
import random
import re
import threading
import time
from typing import Any

import pytest

from cvo_py.runtime import klog
from cvo_py.runtime.informer import ADDED, DELETED, MODIFIED, Backoff, apply_event, diff_relist, object_key
from cvo_py.runtime.kube import ApiError, Resource
from cvo_py.runtime.leader import lease_free_for
from cvo_py.runtime.loop import TokenBucket
from cvo_py.runtime.serving.options import ListenAddressError, parse_listen


def obj(name: str, rv: str, namespace: str | None = None) -> dict:
    meta = {"name": name, "resourceVersion": rv}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta}


def test_relist_diff_reports_only_real_changes() -> None:
    old = {"a": obj("a", "1"), "b": obj("b", "2"), "gone": obj("gone", "3")}
    new, events = diff_relist(old, [obj("a", "1"), obj("b", "5"), obj("new", "6")])
    assert set(new) == {"a", "b", "new"}
    assert sorted((t, o["metadata"]["name"]) for t, o, _ in events) == [
        (ADDED, "new"),
        (DELETED, "gone"),
        (MODIFIED, "b"),
    ]
    modified = next(e for e in events if e[0] == MODIFIED)
    assert modified[2] == obj("b", "2")


def test_a_watch_event_is_stored_and_an_added_object_already_cached_is_told_as_modified() -> None:
    cache = {"ns/a": obj("a", "1", "ns")}
    assert apply_event(cache, ADDED, obj("b", "2", "ns")) == (ADDED, None)
    assert apply_event(cache, ADDED, obj("a", "3", "ns")) == (MODIFIED, obj("a", "1", "ns"))
    assert apply_event(cache, MODIFIED, obj("b", "4", "ns")) == (MODIFIED, obj("b", "2", "ns"))
    assert cache == {"ns/a": obj("a", "3", "ns"), "ns/b": obj("b", "4", "ns")}
    assert apply_event(cache, DELETED, obj("a", "5", "ns")) == (DELETED, obj("a", "3", "ns"))
    assert apply_event(cache, DELETED, obj("gone", "6", "ns")) == (DELETED, None)
    assert cache == {"ns/b": obj("b", "4", "ns")}


def test_object_key_is_namespace_slash_name_or_name() -> None:
    assert object_key(obj("x", "1", "ns")) == "ns/x"
    assert object_key(obj("version", "1")) == "version"


@pytest.mark.parametrize("attempt, low, high", [(0, 0.1, 0.3), (3, 0.8, 2.4), (20, 15.0, 45.0)])
def test_backoff_grows_is_capped_and_jittered(attempt: int, low: float, high: float) -> None:
    backoff = Backoff(base=0.2, cap=30.0, jitter=0.5, attempt=attempt)
    delays = {round(Backoff(base=0.2, cap=30.0, jitter=0.5, attempt=attempt).next(), 6) for _ in range(20)}
    assert all(low <= d <= high for d in delays)
    assert len(delays) > 1  # jittered
    backoff.next()
    backoff.reset()
    assert backoff.attempt == 0


def test_klog_line_format_and_verbosity() -> None:
    stream = io.StringIO()
    klog.setup(2, stream)
    try:
        logging.getLogger("cvo_py.test").warning("disk %s", "full")
        klog.v(2).info("shown at -v 2")
        klog.v(4).info("hidden at -v 2")
    finally:
        klog.setup(0)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    pattern = r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ [\w.]+\.py:\d+\] "
    assert re.match(pattern + "disk full$", lines[0]) and lines[0].startswith("W")
    assert re.match(pattern + "shown at -v 2$", lines[1]) and "test_foundation.py" in lines[1]


def test_klog_lines_escape_what_the_values_in_them_hold() -> None:
    """A version from a release's metadata, a kubelet message, a key anyone may write: whatever a
    logged value holds, the record is one line and no control character reaches the terminal."""
    stream = io.StringIO()
    klog.setup(2, stream)
    try:
        forged = "4.14.1\x1b]0;x\x07\nI0101 00:00:00.000000 1 forged.go:1] x"
        logging.getLogger("cvo_py.test").info("version %s", forged)
        try:
            raise ValueError("bad\x1b[2J value")
        except ValueError:
            logging.getLogger("cvo_py.test").exception("failed on %s", "\u202ename")
    finally:
        klog.setup(0)
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith("] version 4.14.1\\x1b]0;x\\a\\nI0101 00:00:00.000000 1 forged.go:1] x"), lines[0]
    assert lines[1].endswith("] failed on \\u202ename")
    assert lines[2] == "Traceback (most recent call last):" and lines[-1] == "ValueError: bad\\x1b[2J value"
    assert not any(ch in stream.getvalue() for ch in "\x1b\x07\u202e")


@pytest.mark.parametrize(
    "text, expected",
    [("0.0.0.0:9099", ("0.0.0.0", 9099)), (":8443", ("0.0.0.0", 8443)), ("[::1]:9099", ("::1", 9099))],
)
def test_parse_listen(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize("text", ["9099", "host:", "host:port", "1.2.3.4:70000"])
def test_parse_listen_rejects(text: str) -> None:
    with pytest.raises(ListenAddressError, match="invalid --listen address"):
        parse_listen(text)


def test_api_error_parses_status_and_causes() -> None:
    body = json.dumps(
        {
            "kind": "Status",
            "status": "Failure",
            "reason": "Invalid",
            "code": 422,
            "message": 'ClusterVersion.config.openshift.io "version" is invalid: ...',
            "details": {
                "name": "version",
                "kind": "ClusterVersion",
                "causes": [
                    {"reason": "FieldValueNotSupported", "message": "Unsupported value", "field": "status.x[0]"}
                ],
            },
        }
    )
    error = ApiError(422, body, "PUT", "/apis/x")
    assert error.is_invalid() and not error.is_conflict()
    assert error.reason == "Invalid"
    assert error.causes[0]["field"] == "status.x[0]"
    assert ApiError(409, json.dumps({"reason": "AlreadyExists"})).is_already_exists()
    assert ApiError(409, json.dumps({"reason": "Conflict"})).is_conflict()
    garbage = ApiError(502, "<html>bad gateway</html>")
    assert garbage.message == "<html>bad gateway</html>" and garbage.causes == []


def test_resource_paths() -> None:
    pods = Resource("v1", "Pod", "pods", True)
    cv = Resource("config.openshift.io/v1", "ClusterVersion", "clusterversions", False)
    assert pods.path("ns", "p", "status") == "/api/v1/namespaces/ns/pods/p/status"
    assert pods.path() == "/api/v1/pods"
    assert (
        cv.path(name="version", subresource="status") == "/apis/config.openshift.io/v1/clusterversions/version/status"
    )
    assert str(cv) == "clusterversions.config.openshift.io"


def test_lease_decisions_count_from_when_the_record_was_seen_to_change() -> None:
    def spec(holder: str, duration: int = 137) -> dict[str, Any]:
        # A renewTime an hour old: the holder's clock is behind ours, which must not matter.
        return {"holderIdentity": holder, "renewTime": "2026-11-21T09:00:00.000000Z", "leaseDurationSeconds": duration}

    seen = 1000.0
    assert lease_free_for(spec("me"), "me", seen, seen)
    assert lease_free_for(spec(""), "me", seen, seen)
    assert not lease_free_for(spec("other"), "me", seen, seen + 10)
    assert not lease_free_for(spec("other"), "me", seen, seen + 137)
    assert lease_free_for(spec("other"), "me", seen, seen + 137.5)
    assert lease_free_for(spec("other", duration=1), "me", seen, seen + 2)


def test_backoff_survives_months_of_failures() -> None:
    backoff = Backoff(base=0.2, cap=30.0, jitter=0.5)
    delays = [backoff.next() for _ in range(5000)]
    assert max(delays) <= 45.0 and delays[-1] >= 15.0


def test_watch_errors_that_mean_relist() -> None:
    from cvo_py.runtime.clientconfig import ClientConfig
    from cvo_py.runtime.informer import Informer, WatchExpired
    from cvo_py.runtime.kube import CONFIGMAPS, KubeClient

    informer = Informer(KubeClient(ClientConfig(host="https://127.0.0.1:1")), CONFIGMAPS)
    too_large = {
        "kind": "Status",
        "code": 504,
        "reason": "Timeout",
        "details": {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]},
    }
    for status in (too_large, {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}):
        with pytest.raises(WatchExpired):
            informer._handle_event({"type": "ERROR", "object": status})
    with pytest.raises(ApiError) as other:
        informer._handle_event({"type": "ERROR", "object": {"code": 500, "reason": "InternalError"}})
    assert other.value.status == 500


def test_token_bucket_lets_a_burst_through_then_paces() -> None:
    bucket = TokenBucket(interval=0.2, burst=3, now=100.0)
    assert [bucket.reserve(100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve(100.0) == pytest.approx(0.2)  # the 4th waits for one interval
    assert bucket.reserve(100.2) == pytest.approx(0.2)  # the refill went to the 4th
    # After a quiet spell the burst is back, never more than `burst`.
    assert [bucket.reserve(110.0) for _ in range(4)] == [0.0, 0.0, 0.0, pytest.approx(0.2)]


def test_token_bucket_of_one_spaces_runs_by_the_interval() -> None:
    bucket = TokenBucket(interval=0.2, burst=1, now=0.0)
    assert bucket.reserve(0.0) == 0.0
    assert bucket.reserve(0.05) == pytest.approx(0.15)
    assert TokenBucket(interval=0.0).reserve(0.0) == 0.0  # no limit


@pytest.mark.parametrize("seed", range(40))
def test_token_bucket_bounds_runs_in_any_window(seed: int) -> None:
    """Under a storm of requests at random times (bursts, pauses, idle spells), the runs it
    schedules in any window of W seconds are at most `burst + W / interval`: the pacing that
    protects the API server holds whatever the timing."""
    rng = random.Random(seed)
    burst = rng.randint(1, 12)
    gaps = [rng.choice((0.0, 0.0, rng.uniform(0, 0.01), rng.uniform(0, 0.5))) for _ in range(rng.randint(1, 200))]
    interval = 0.05
    bucket = TokenBucket(interval=interval, burst=burst, now=0.0)
    now, scheduled = 0.0, []
    for gap in gaps:
        now += gap
        start = now + bucket.reserve(now)
        scheduled.append(start)
        now = start  # the loop runs it before asking again
    for i in range(len(scheduled)):
        for j in range(i, len(scheduled)):
            window = scheduled[j] - scheduled[i]
            assert j - i + 1 <= burst + window / interval + 1e-6


def test_sync_loop_under_a_storm_of_pokes_stays_within_the_bucket() -> None:
    """Pokes as fast as a thread can make them: syncs are bounded by burst + elapsed / interval."""
    from cvo_py.runtime.loop import SyncLoop

    runs: list[float] = []
    loop = SyncLoop("storm", lambda: runs.append(time.monotonic()), min_interval=0.05, burst=3)
    stop = threading.Event()

    def storm() -> None:
        while not stop.is_set():
            loop.poke()

    poker = threading.Thread(target=storm, daemon=True)
    loop.start()
    poker.start()
    try:
        assert not stop.wait(0.6)  # let the storm run
    finally:
        stop.set()
        poker.join(5)
        loop.stop()
    assert runs, "the loop never ran"
    elapsed = runs[-1] - runs[0]
    assert len(runs) <= 3 + elapsed / 0.05 + 1


def test_a_stop_that_comes_just_before_the_loop_clears_its_wake_ends_the_loop() -> None:
    """`stop()` between the loop's look at its stop flag and its clearing of the wake-up: the
    loop must still see the stop, not wait for a poke that never comes."""
    from cvo_py.runtime.loop import SyncLoop

    loop = SyncLoop("racing-stop", lambda: None)

    class StopLandsFirst(threading.Event):
        def clear(self) -> None:
            if not loop._stop.is_set():  # what stop() does, just before this clear
                loop._stop.set()
                self.set()
            super().clear()

    loop._wake = StopLandsFirst()
    loop.start()
    assert loop._thread is not None
    loop._thread.join(5)
    alive = loop._thread.is_alive()
    loop.poke()  # lets a loop that missed the stop end, so that no thread outlives the test
    loop._thread.join(5)
    assert not alive


@pytest.mark.parametrize(("error", "traceback"), [(ConnectionError("API server away"), False), (KeyError("bug"), True)])
def test_sync_loop_logs_expected_failures_in_one_line(
    error: Exception, traceback: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """An API server away for a moment is one line per retry; a bug keeps its traceback."""
    from cvo_py.runtime.loop import SyncLoop

    failed = threading.Event()

    def sync() -> None:
        failed.set()
        raise error

    loop = SyncLoop("flaky", sync, expected_errors=(ConnectionError,))
    with caplog.at_level(logging.ERROR, logger="cvo_py.runtime.loop"):
        loop.start()
        loop.poke()
        try:
            assert failed.wait(10)
        finally:
            loop.stop()
    [record] = [r for r in caplog.records if "flaky: sync failed" in r.getMessage()][:1]
    assert (record.exc_info is not None) == traceback
    if not traceback:
        assert "API server away" in record.getMessage() and "\n" not in record.getMessage()


def test_sync_loop_runs_at_a_deadline_not_before_and_a_poke_takes_its_place() -> None:
    """`poke_in` asks for one sync at a time to come (the earliest deadline wins); a sync for any
    reason meanwhile takes the deadline's place."""
    from cvo_py.runtime.loop import SyncLoop

    runs: list[float] = []
    ran = threading.Semaphore(0)

    def sync() -> None:
        runs.append(time.monotonic())
        ran.release()

    loop = SyncLoop("deadline", sync, resync=None).start()
    try:
        asked = time.monotonic()
        loop.poke_in(300.0)
        loop.poke_in(0.3)  # the earlier deadline wins
        loop.poke_in(200.0)
        assert ran.acquire(timeout=10)
        assert runs[0] >= asked + 0.3
        loop.poke_in(300.0)
        loop.poke()  # runs now, and stands for the deadline
        assert ran.acquire(timeout=10)
        assert runs[1] < asked + 300.0
        loop.poke_in(0.0)  # a deadline that has come: at once
        assert ran.acquire(timeout=10)
    finally:
        loop.stop()
    assert len(runs) == 3
