"""When a requested target is retrieved again: never after a success, after a growing delay after
failures, at once when what a failure depended on changed."""

from __future__ import annotations

from payload.acceptance import precondition_blocked, retrieval_failed
from payload.release import Release
from payload.retries import RetryBook

A = (Release("4.14.2", "img-a"), False)
FAILED = retrieval_failed("4.14.2", "img-a", "registry down")
REFUSED = precondition_blocked("4.14.2", "img-a", "no")


def book() -> RetryBook:
    return RetryBook(60.0, lambda: 1.0)


def test_what_the_checks_read_is_computed_only_for_a_refused_target() -> None:
    retries = book()
    retries.failed(A, FAILED, 0.0, at_once=False)

    def never() -> str:
        raise AssertionError("computed for a target that was not refused")

    assert not retries.recheck(A, never)


def test_a_target_never_tried_is_due_and_a_retrieved_one_never_again() -> None:
    retries = book()
    assert retries.due(A, 0.0) and not retries.failed_last(A)
    retries.succeeded(A)
    assert not retries.due(A, 1e9) and retries.wait(A, 0.0) == 60.0


def test_failures_in_a_row_wait_longer_and_a_new_request_starts_afresh() -> None:
    retries = book()
    for failures, delay in enumerate((7.5, 15.0, 30.0, 60.0, 60.0), start=1):
        retries.failed(A, FAILED, 100.0, at_once=False)
        assert retries.failed_last(A) and retries.wait(A, 100.0) == delay, failures
        assert not retries.due(A, 100.0 + delay - 0.01) and retries.due(A, 100.0 + delay)
    retries.forget(A)  # asked for anew
    retries.failed(A, FAILED, 0.0, at_once=False)
    assert retries.wait(A, 0.0) == 7.5


def test_a_changed_input_makes_the_failures_it_applies_to_due_at_once() -> None:
    retries = book()
    retries.failed(A, FAILED, 0.0, at_once=False)
    retries.retry_now(lambda final: final.reason == "PreconditionChecks")
    assert not retries.due(A, 0.0)
    retries.retry_now(lambda final: final.reason == "RetrievePayload")
    assert retries.due(A, 0.0)


def test_a_refusal_is_due_at_once_when_what_the_checks_read_changed() -> None:
    retries = book()
    retries.failed(A, REFUSED, 0.0, at_once=False)
    retries.refused(A, "Upgradeable=False")
    assert not retries.recheck(A, lambda: "Upgradeable=False") and not retries.due(A, 0.0)
    assert retries.recheck(A, lambda: "Upgradeable=True") and retries.due(A, 0.0)
    assert not retries.recheck(A, lambda: "Upgradeable=False")  # once: the next refusal is booked anew
