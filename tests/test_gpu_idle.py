"""benchmarks/gpu_idle.py charges each idle gap of the GPU to the host op that launched the kernel ending it.

The events are the profiler's own event type's accessors, built by hand: a CPU run records no kernels.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import torch

# loaded by path: putting benchmarks/ on sys.path would shadow workflow/scripts/soup.py with benchmarks/soup.py
_SPEC = importlib.util.spec_from_file_location(
    "gpu_idle", Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_idle.py"
)
gpu_idle = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gpu_idle)

CUDA, CPU = torch.autograd.DeviceType.CUDA, torch.autograd.DeviceType.CPU
MS = 1_000_000


def Event(name, device, start, end, correlation=0, link=0, thread=1) -> SimpleNamespace:  # noqa: N802
    """An object with the accessors of torch's _KinetoEvent that gpu_idle reads."""
    values = {
        "name": name,
        "device_type": device,
        "start_ns": start,
        "end_ns": end,
        "duration_ns": end - start,
        "correlation_id": correlation,
        "linked_correlation_id": link,
        "start_thread_id": thread,
        "is_user_annotation": False,
        "is_async": False,
    }
    return SimpleNamespace(**{key: (lambda value=value: value) for key, value in values.items()})


def profile(events) -> SimpleNamespace:
    return SimpleNamespace(profiler=SimpleNamespace(kineto_results=SimpleNamespace(events=lambda: events)))


def test_gaps_are_charged_to_the_late_op_and_its_ranges():
    events = [
        Event("backward", CPU, 0, 40 * MS, correlation=1),
        Event("MmBackward0", CPU, 1 * MS, 2 * MS, correlation=2),
        Event("aten::mm", CPU, 1 * MS, 2 * MS, correlation=3),
        Event("MambaBackward", CPU, 10 * MS, 30 * MS, correlation=4),
        Event("cudaFree", CPU, 12 * MS, 17 * MS, correlation=5),
        Event("aten::fill_", CPU, 18 * MS, 19 * MS, correlation=8),  # an op inside it: its kernel is the call's too
        Event("optimizer", CPU, 40 * MS, 50 * MS, correlation=6),
        Event("aten::_fused_adamw_", CPU, 41 * MS, 42 * MS, correlation=7),
        Event("gemm", CUDA, 2 * MS, 10 * MS, link=3),
        Event("Command Buffer Full", CUDA, 10 * MS, 18 * MS),  # the host blocked: not a kernel
        Event("scan_bwd", CUDA, 18 * MS, 30 * MS, link=4),
        Event("fill", CUDA, 19 * MS, 20 * MS, link=8),  # on a second stream, within the scan: no gap
        Event("ncclKernel_AllGather", CUDA, 30 * MS, 45 * MS),  # its own stream: not compute
        Event("adam", CUDA, 30 * MS + 1_000, 33 * MS, link=7),  # 1 us after the scan: below MIN_GAP_NS
        Event("scan_bwd", CUDA, 35 * MS, 36 * MS, link=4),  # the same op late again: a second gap
    ]
    table = gpu_idle.idle_table(profile(events), steps=1)
    late_ops, ranges, during = (part.splitlines() for part in table.split("\n\n")[1:])
    assert "busy 24 ms per step, idle 10 ms" in table  # 2-10, 18-30, 30.001-33 and 35-36 of a 2-36 ms span
    # its scan waited 8 + 2 ms (adam in time); the call held the host 20 ms for 14 ms of its kernels: host-bound
    assert late_ops[2:] == ["| MambaBackward -> scan_bwd | 2 | 10.0 | 20.00 | 14.00 |"]
    assert ranges[2:] == ["| backward | 2 | 10.0 |"]
    assert "| cudaFree | 1 | 5.0 |" in during  # what the host did meanwhile
    assert not any("Command Buffer Full" in line or "nccl" in line for line in table.splitlines())
