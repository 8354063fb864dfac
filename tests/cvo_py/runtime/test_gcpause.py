"""cvo_py.runtime.gcpause: the collector is paused inside, restored after, and never thaws a freeze."""

from __future__ import annotations

import gc

import pytest

from cvo_py.runtime import gcpause


def test_pauses_nest_and_restore_the_collector() -> None:
    assert gc.isenabled()
    with gcpause.paused():
        assert not gc.isenabled()
        with gcpause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause leaves the outer one paused
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0  # handed over to the oldest generation, nothing left frozen


def test_an_error_inside_still_restores_the_collector() -> None:
    with pytest.raises(RuntimeError), gcpause.paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    try:
        with gcpause.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_what_a_process_froze_on_purpose_stays_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gcpause.paused():
            garbage = [[] for _ in range(1000)]
        del garbage
        assert gc.get_freeze_count() >= frozen
        assert gc.isenabled()
    finally:
        gc.unfreeze()
