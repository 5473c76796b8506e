"""Python's garbage collector run between optimizer steps, never inside one.

A training process holds millions of Python objects (modules, compiled graphs and their guards, the
optimizer's state dicts). The collector's automatic passes start whenever enough container objects have
been allocated since the last one, which is wherever the host allocates most: inside a backward that is
Python-heavy (mamba-ssm's fused backward builds views and launches ~20 Triton kernels a call). A pass over
the older generations stops the host for milliseconds to tens of milliseconds while the GPU drains its
queue and idles; the profiler records no op during it.

So, in `between-steps` mode: whatever is alive once the model is built is collected and frozen (never
scanned again), automatic collection is off, and the young generations are collected once a step while
the GPU still runs the optimizer step; a full pass, followed by a new freeze, follows the first step (the
compiler's objects are made then) and every `FULL_EVERY` steps. Reference cycles made during a step are
therefore freed at its end, as before, only not in the middle of it. `automatic` leaves Python's own
policy. Either way every collection is timed (gc.callbacks), whatever started it, for the metrics.
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

    def __init__(self, mode: str = "between-steps") -> None:
        if mode not in GC_MODES:
            raise ValueError(f"python gc mode {mode!r}: expected one of {', '.join(GC_MODES)}")
        self.mode = mode
        self.timer = CollectionTimer()
        self._was_enabled = gc.isenabled()
        self._steps = 0

    def __enter__(self) -> StepCollector:
        gc.callbacks.append(self.timer)
        if self.mode == "between-steps":
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
