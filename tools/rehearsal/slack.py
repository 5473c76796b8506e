"""Does the GPU wait for the host at FSDP's hooks? Busy host time added before each FSDP module's forward.

A rank's GPU idles part of a step (benchmarks/RESULTS.md): the host's Python between kernel launches did not keep
ahead of the GPU somewhere. Whether a given stretch of host work is that somewhere shows by making it longer: a
step that grows by about the added time (calls a step x delay) waits for the host there; a step that does not has
the host ahead of the GPU at that point, and speeding it up gains nothing. The delay spins (sleeping would free the
core, not occupy the host as its work does) and runs before FSDP2's own pre-forward hook, so it lengthens that hook
as seen from the GPU; a checkpoint's rerun calls the forward again, and the delay with it.
"""

from __future__ import annotations

import time

import torch
from torch.distributed.fsdp import FSDPModule


class HostDelay:
    """`microseconds` of spinning before every FSDP module's forward; counts the calls."""

    def __init__(self, model: torch.nn.Module, microseconds: float):
        self.microseconds = microseconds
        self.calls = 0
        self.modules = [m for m in model.modules() if isinstance(m, FSDPModule)]
        for module in self.modules:
            module.register_forward_pre_hook(self._spin, prepend=True)  # before FSDP's own hook

    @torch.compiler.disable  # host time, never a graph: an expert module's hook runs inside its compiled mixer
    def _spin(self, module, args) -> None:
        self.calls += 1
        end = time.perf_counter() + self.microseconds * 1e-6
        while time.perf_counter() < end:
            pass

    def report(self, steps: int) -> tuple[dict, str]:
        """The calls a step and the host time they added a step, as the summary's entry and its line."""
        per_step = self.calls / steps if steps else 0.0
        added = per_step * self.microseconds * 1e-6
        entry = {
            "us": self.microseconds,
            "fsdp_modules": len(self.modules),
            "calls_per_step": per_step,
            "added_s_per_step": added,
        }
        line = (
            f"summary: host delay {self.microseconds:g} us before each of {len(self.modules)} FSDP modules' forward: "
            f"{per_step:,.0f} calls a step (reruns included), {added:.2f} s of host time added a step"
        )
        return entry, line
