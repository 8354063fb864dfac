"""The leak check every test runs under (testkit/harness/leaks.py, the `no_leaks` fixture)."""

from __future__ import annotations

import subprocess
import sys
import threading

from testkit.harness import leaks


def test_a_thread_still_running_is_reported_with_its_name_and_stack() -> None:
    release = threading.Event()

    def blocked_in_here() -> None:
        release.wait(30)

    before = leaks.alive()
    thread = threading.Thread(target=blocked_in_here, name="forgotten-informer", daemon=True)
    thread.start()
    try:
        found = leaks.leaks(before, grace=0.2)
    finally:
        release.set()
        thread.join(5)
    assert len(found) == 1, found
    assert "daemon thread 'forgotten-informer'" in found[0] and "blocked_in_here" in found[0]


def test_a_thread_that_is_stopping_within_the_grace_period_is_not_a_leak() -> None:
    before = leaks.alive()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, args=(30,), name="stopping")
    thread.start()
    threading.Timer(0.1, stop.set).start()  # stops a moment after the test "ended"
    assert leaks.leaks(before, grace=10) == []
    assert not thread.is_alive()


def test_threads_from_before_the_test_are_not_the_tests() -> None:
    release = threading.Event()
    older = threading.Thread(target=release.wait, args=(30,), daemon=True)
    older.start()
    try:
        assert leaks.leaks(leaks.alive(), grace=0.1) == []
    finally:
        release.set()
        older.join(5)


def test_a_child_process_still_running_is_reported_and_killed() -> None:
    before = leaks.alive()
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    found = leaks.leaks(before, grace=0.2)
    assert len(found) == 1 and f"child process {proc.pid}" in found[0] and "time.sleep(60)" in found[0], found
    assert proc.wait(5) is not None  # killed by the check, so it cannot disturb later tests


def test_an_exited_child_is_not_a_leak_and_session_owned_processes_are_excluded() -> None:
    before = leaks.alive()
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait(30)
    owned = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    leaks.session_owned(lambda: [owned.pid] if owned.poll() is None else [])
    try:
        assert leaks.leaks(before, grace=0.2) == []
    finally:
        owned.kill()
        owned.wait(5)


def test_cancelled_timers_never_fire_and_leave_no_thread() -> None:
    from cvo_py.runtime.loop import Timers

    fired = threading.Event()
    timers = Timers("settle")
    before = leaks.alive()
    timers.add(20.0, fired.set)
    timers.add(30.0, fired.set)
    assert [t.name for t in threading.enumerate() if t not in before.threads] == ["settle", "settle"]
    timers.cancel()
    timers.add(0.0, fired.set)  # after cancel(): nothing is scheduled any more
    assert leaks.leaks(before, grace=0.0) == []
    assert not fired.wait(0.2)
