"""The channel between the retrieval coordinator and the ClusterVersion status loop: immutable
snapshots in order, outcomes kept until a write acknowledges them, and the wait that holds a failed
retrieval's cleanup until its failure is written."""

from __future__ import annotations

import threading

from payload.acceptance import retrieval_failed, retrieving
from payload.channel import Outcome, RetrievalChannel, RetrievalSnapshot
from payload.release import Acceptance, Release

WAIT = 10.0  # generous bound for thread hand-offs; the tests assert outcomes, not timings
A = Release("4.14.2", "img-a")
RETRIEVING = Acceptance(A, retrieving("4.14.2", "img-a"))
FAILED = Acceptance(A, retrieval_failed("4.14.2", "img-a", "signature rejected"))
STARTED = Outcome(A, retrieving("4.14.2", "img-a"))
ENDED = Outcome(A, retrieval_failed("4.14.2", "img-a", "signature rejected"))


def test_nothing_published_reads_as_an_empty_snapshot() -> None:
    assert RetrievalChannel().latest() == RetrievalSnapshot(0, None, ())


def test_each_publication_is_a_new_snapshot_and_earlier_ones_do_not_change() -> None:
    channel = RetrievalChannel()
    channel.publish(RETRIEVING, (STARTED,))
    first = channel.latest()
    channel.publish(FAILED, (ENDED,))
    assert first == RetrievalSnapshot(1, RETRIEVING, (STARTED,))
    assert channel.latest() == RetrievalSnapshot(2, FAILED, (STARTED, ENDED))


def test_acknowledging_drops_only_the_outcomes_the_written_snapshot_carried() -> None:
    channel = RetrievalChannel()
    channel.publish(RETRIEVING, (STARTED,))
    written = channel.latest()
    channel.publish(FAILED, (ENDED,))  # published while the status loop wrote `written`
    channel.acknowledge(written)
    assert channel.latest().outcomes == (ENDED,)  # not lost: the next write carries it
    channel.acknowledge(channel.latest())
    assert channel.latest().outcomes == ()
    channel.acknowledge(written)  # an older acknowledgement changes nothing
    assert channel.latest() == RetrievalSnapshot(2, FAILED, ())


def test_only_the_newest_outcomes_are_kept_when_no_write_acknowledges_them() -> None:
    channel = RetrievalChannel(max_outcomes=3)
    outcomes = [Outcome(Release(f"4.14.{i}", f"img-{i}"), retrieving(f"4.14.{i}", f"img-{i}")) for i in range(5)]
    for outcome in outcomes:
        channel.publish(None, (outcome,))
    assert channel.latest().outcomes == tuple(outcomes[2:])


def test_a_publication_tells_the_listener_unless_it_is_quiet() -> None:
    channel = RetrievalChannel()
    told: list[int] = []
    channel.listen(lambda: told.append(channel.latest().serial))
    channel.publish(RETRIEVING)
    channel.publish(None, quiet=True)  # the caller reads the channel next itself
    channel.publish(FAILED)
    assert told == [1, 3]


def test_a_wait_ends_when_the_snapshot_or_a_later_one_is_acknowledged() -> None:
    channel = RetrievalChannel()
    channel.publish(RETRIEVING)
    before = channel.latest()
    serial = channel.publish(FAILED)
    result: list[bool] = []
    waiter = threading.Thread(target=lambda: result.append(channel.wait_acknowledged(serial, WAIT)))
    waiter.start()
    channel.acknowledge(before)  # a status computed before the failure: still waiting
    waiter.join(0.05)
    assert waiter.is_alive()
    channel.acknowledge(channel.latest())
    waiter.join(WAIT)
    assert result == [True]


def test_a_wait_ends_unacknowledged_on_a_later_publication_on_close_or_at_its_timeout() -> None:
    channel = RetrievalChannel()
    serial = channel.publish(FAILED)
    assert channel.wait_acknowledged(serial, 0.01) is False  # never written: the cleanup goes ahead
    later = RetrievalChannel()
    serial = later.publish(FAILED)
    later.publish(None, quiet=True)  # the target is no longer wanted
    assert later.wait_acknowledged(serial, WAIT) is False
    closed = RetrievalChannel()
    serial = closed.publish(FAILED)
    closed.close()  # the coordinator is stopping
    assert closed.wait_acknowledged(serial, WAIT) is False
