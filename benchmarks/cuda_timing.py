"""The CUDA-event timer the kernel benchmarks share (a module of its own: importing it loads torch only)."""

from __future__ import annotations

import statistics

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
