"""Python's collector between optimizer steps: off inside a step, a step's cycles freed at its end, the
interpreter's own policy back afterwards, every collection counted."""

from __future__ import annotations

import gc
import weakref

import pytest

from lineage.training.python_gc import FULL_EVERY, CollectionTimer, StepCollector


class Node:
    """An object in a reference cycle: only the cycle collector frees it."""

    def __init__(self) -> None:
        self.me = self


def cycle() -> weakref.ref:
    return weakref.ref(Node())


@pytest.fixture
def restore_gc():
    enabled, thresholds = gc.isenabled(), gc.get_threshold()
    yield
    gc.set_threshold(*thresholds)
    gc.enable() if enabled else gc.disable()


def test_a_step_s_cycles_live_until_the_step_ends_then_are_freed(restore_gc):
    gc.enable()
    gc.set_threshold(1)  # automatic collection would start at every allocation
    with StepCollector("between-steps") as collector:
        assert not gc.isenabled()
        made = cycle()
        for _ in range(2000):
            Node()  # garbage enough for many automatic passes
        assert made() is not None, "a collection ran inside the step"
        collector.after_step()
        assert made() is None
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_later_steps_collect_the_young_generations_and_a_full_pass_every_so_often(restore_gc, monkeypatch):
    passes = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: passes.append(generation) or 0)
    with StepCollector("between-steps") as collector:
        for _ in range(FULL_EVERY):
            collector.after_step()
    # setup, the first step (the compiler's objects), then young ones until step FULL_EVERY's full pass
    assert passes == [2, 2] + [1] * (FULL_EVERY - 2) + [2]


def test_automatic_keeps_python_s_policy_and_still_counts_its_passes(restore_gc):
    gc.enable()
    with StepCollector("automatic") as collector:
        assert gc.isenabled()
        made = cycle()
        gc.collect()
        assert made() is None
        collector.after_step()  # nothing of its own
        taken = collector.timer.take()
    assert taken["python_gc_collections"] == 1 and taken["python_gc_ms"] >= taken["python_gc_longest_ms"] > 0
    assert collector.timer not in gc.callbacks


def test_the_timer_starts_over_at_each_read():
    timer = CollectionTimer()
    gc.callbacks.append(timer)
    try:
        gc.collect()
        gc.collect()
        first, second = timer.take(), timer.take()
    finally:
        gc.callbacks.remove(timer)
    assert first["python_gc_collections"] == 2
    assert second == {"python_gc_collections": 0, "python_gc_ms": 0.0, "python_gc_longest_ms": 0.0}


def test_an_unknown_mode_names_the_choices():
    with pytest.raises(ValueError, match="between-steps, automatic"):
        StepCollector("sometimes")
