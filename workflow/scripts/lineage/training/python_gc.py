"""When Python's garbage collector runs during training, and what its passes cost.

The collector's automatic passes start whenever enough container objects have been allocated since the
last one, so inside forward and backward, where a pause leaves the GPU's queue to drain. Measured on one
H100 (a full-scale rank's step, its first 34 layers, benchmarks/RESULTS.md): 11 passes a step, 3.8 ms in
all, the longest 1.7 ms, against a 1.1 s step, so `automatic` (Python's own policy) is the default. With
many ranks a pause on one holds all of them at the next collective (the all-to-alls of every MoE layer at the
card's E = 8), which `between-steps` avoids: the objects alive after setup are collected and frozen (never
scanned again), automatic collection is off, the young generations are collected once a step while the GPU
still runs the optimizer step, and a full pass with a new freeze follows the first step (the compiler's
objects are made then; 0.3 s on that H100) and every FULL_EVERY steps. Either way every pass is timed
(gc.callbacks), whatever started it, and goes into the metrics.
"""

from __future__ import annotations

import gc
import time
from types import TracebackType

GC_MODES = ("between-steps", "automatic")
FULL_EVERY = 200  # steps between full passes (each one re-freezes what survived it)


class CollectionTimer:
    """Counts Python's collections and their time between two reads, whatever started them."""

    def __init__(self) -> None:
        self._started: float | None = None
        self.collections = 0
        self.seconds = 0.0
        self.longest = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            spent = time.perf_counter() - self._started
            self._started = None
            self.collections += 1
            self.seconds += spent
            self.longest = max(self.longest, spent)

    def take(self) -> dict[str, float]:
        """The collections since the last take (count, total and longest ms), then start over."""
        taken = {
            "python_gc_collections": self.collections,
            "python_gc_ms": 1e3 * self.seconds,
            "python_gc_longest_ms": 1e3 * self.longest,
        }
        self.collections, self.seconds, self.longest = 0, 0.0, 0.0
        return taken


class StepCollector:
    """Python's garbage collection for a training loop (see the module's docstring); a context manager
    that restores the interpreter's own policy on exit."""

    def __init__(self, mode: str) -> None:
        if mode not in GC_MODES:
            raise ValueError(f"python gc mode {mode!r}: expected one of {', '.join(GC_MODES)}")
        self.mode = mode
        self.timer = CollectionTimer()
        self._was_enabled = True
        self._steps = 0

    def __enter__(self) -> StepCollector:
        gc.callbacks.append(self.timer)
        if self.mode == "between-steps":
            self._was_enabled = gc.isenabled()  # as it is when the loop starts, restored at its end
            gc.disable()
            _collect_and_freeze()
            self.timer.take()  # the setup's pass is not a step's
        return self

    def after_step(self) -> None:
        """Collect at the step's end: the young generations, and everything after the first step and
        every FULL_EVERY steps."""
        if self.mode != "between-steps":
            return
        self._steps += 1
        if self._steps == 1 or self._steps % FULL_EVERY == 0:
            _collect_and_freeze()
        else:
            gc.collect(1)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        gc.callbacks.remove(self.timer)
        if self.mode == "between-steps":
            gc.unfreeze()  # what was frozen is scanned again from now on, as before training
            if self._was_enabled:
                gc.enable()


def _collect_and_freeze() -> None:
    gc.collect()
    gc.freeze()
