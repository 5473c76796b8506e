"""The timers the benchmarks share (a module of its own: importing it loads torch only): CUDA events for
kernels, and a synchronized wall clock for one whole call on either device."""

from __future__ import annotations

import statistics
import time

import torch


def timed(fn, repeats: int, warmup: int = 3) -> float:
    """Median milliseconds of fn() over `repeats` runs, after `warmup` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def wall(fn, device: str):
    """(fn()'s result, its wall seconds), the GPU's queue drained before and after on CUDA."""
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    out = fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return out, time.perf_counter() - start
