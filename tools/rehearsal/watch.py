"""What a rehearsal reads at each step boundary, and its report: memory against the device, compiled graphs.

The trainer's loop asks for the next step's data right after a step's optimizer was queued: that call is the step
boundary the watch reads at (memory counters are the allocator's, kept on the host; nothing waits for the GPU).
The loop's own metrics give the times, tokens and MFU; the report puts the timed steps beside the planner's
memory for the same rank and the reserve it adds for what lives outside torch's allocator.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import torch
from torch._dynamo.utils import counters

from lineage.training.compiling import graphs_compiled
from planning.memory import GIB, H100_GIB

HEADROOM_GOAL_GIB = 4.0  # what a rank should keep free at the full scale's defaults (issue of the rehearsal)


@dataclass
class Reading:
    allocated: float | None  # max_memory_allocated so far, bytes
    reserved: float | None  # max_memory_reserved so far
    outside: float | None  # the device's total less free less reserved: context, kernels, other processes
    graphs: int  # frames Dynamo compiled so far (a new one after warm-up: a recompile or a new graph)
    breaks: int  # graph breaks so far


def capacity_bytes(device: torch.device, capacity_gib: float | None) -> float:
    """The GPU the job will run on: `capacity_gib` where it is not this one, else this device's memory."""
    return capacity_gib * GIB if capacity_gib else torch.cuda.get_device_properties(device).total_memory


def cap_allocator(device: torch.device, capacity_gib: float | None, reserve: float, hold_back_gib: float) -> float:
    """Cap torch's allocator at capacity - reserve - hold_back (bytes; returned): the reserved peak of an uncapped
    run counts cached blocks the allocator would free and retry with before failing, so a run that completes
    under the cap shows the headroom that its reserved peak understates."""
    cap = capacity_bytes(device, capacity_gib) - reserve - hold_back_gib * GIB
    torch.cuda.set_per_process_memory_fraction(cap / torch.cuda.get_device_properties(device).total_memory, device)
    return cap


class StepWatch:
    def __init__(self, device: torch.device, capacity_gib: float | None = None, cap: float | None = None):
        self.device = device
        self.capacity_gib = capacity_gib  # the GPU the job will run on, where it is not this one
        self.cap = cap  # torch's allocator's cap, bytes (cap_allocator), or None
        self.readings: list[Reading] = []

    def read(self) -> Reading:
        graphs = graphs_compiled()
        breaks = int(sum(counters["graph_break"].values()))
        if self.device.type != "cuda":
            return Reading(None, None, None, graphs, breaks)
        free, total = torch.cuda.mem_get_info(self.device)
        reserved = torch.cuda.memory_reserved(self.device)
        return Reading(
            torch.cuda.max_memory_allocated(self.device),
            torch.cuda.max_memory_reserved(self.device),
            total - free - reserved,
            graphs,
            breaks,
        )

    def wrap(self, step_data, prof=None):
        """step_data that reads the watch at each step boundary (the first call is the start) and moves the
        profiler's schedule on (its steps are the optimizer's)."""

        def watched(step: int):
            self.readings.append(self.read())
            if prof is not None and step > 0:
                prof.step()
            return step_data(step)

        return watched

    def per_step(self) -> list[Reading]:
        """One reading after each step (the last taken now), and the start's before them."""
        return [*self.readings, self.read()]

    def table(self, steps: list[dict], world_size: int) -> str:
        readings = self.per_step()
        lines = [
            "| step | s | tokens/s (rank) | MFU | peak GiB | reserved GiB | outside torch GiB | graphs compiled | "
            "graph breaks |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for row, (before, after) in zip(steps, zip(readings, readings[1:])):
            lines.append(
                f"| {row['step']} | {row['step_time_s']:.2f} | {row['tok_per_s'] / world_size:,.0f} | "
                f"{_percent(row.get('mfu'))} | {_gib(after.allocated)} | {_gib(after.reserved)} | "
                f"{_gib(after.outside)} | +{after.graphs - before.graphs} | +{after.breaks - before.breaks} |"
            )
        return "\n".join(lines)

    def summary(self, steps, timed: tuple[int, int], world_size, held, planned, degree, wall_s) -> dict:
        """The medians of the timed steps (first, last), memory against the device and the plan, compile counts."""
        readings = self.per_step()
        timed = [r for r in steps if timed[0] <= r["step"] <= timed[1]] or steps
        after = readings[-1]
        out = {
            "steps": [timed[0]["step"], timed[-1]["step"]],
            "tokens_per_s_rank": statistics.median(r["tok_per_s"] for r in timed) / world_size,
            "step_s": statistics.median(r["step_time_s"] for r in timed),
            "mfu": _median(r.get("mfu") for r in timed),
            "mfu_without_attention": _median(r.get("mfu_without_attention") for r in timed),
            "held_gib": {k: v / GIB for k, v in held.items()},
            "graphs_after_warmup": after.graphs - readings[min(2, len(readings) - 1)].graphs,
            "breaks_per_step": _breaks_per_step(readings),
            "wall_s": wall_s,
        }
        lines = [
            f"summary: steps {out['steps'][0]}-{out['steps'][1]} (median): {out['step_s']:.2f} s a step, "
            f"{out['tokens_per_s_rank']:,.0f} tokens/s on this rank, MFU {_percent(out['mfu'])} "
            f"({_percent(out['mfu_without_attention'])} without attention)",
            f"summary: state held {sum(held.values()) / GIB:.1f} GiB (weights {out['held_gib']['weights']:.1f}, "
            f"gradients {out['held_gib']['gradients']:.1f}, optimizer {out['held_gib']['optimizer']:.1f})",
            f"summary: compiled graphs after step 2: {out['graphs_after_warmup']}; graph breaks a step from step 3: "
            f"{out['breaks_per_step']}",
        ]
        if after.allocated is not None:
            own = torch.cuda.get_device_properties(self.device).total_memory
            capacity = capacity_bytes(self.device, self.capacity_gib)
            planned_plan, reserve = planned
            out |= {
                "peak_gib": after.allocated / GIB,
                "reserved_gib": after.reserved / GIB,
                "outside_gib": after.outside / GIB,
                "capacity_gib": capacity / GIB,
                "planned_tensors_gib": planned_plan.tensors / GIB,
                "reserve_gib": reserve / GIB,
                "headroom_gib": (capacity - reserve - after.reserved) / GIB,
            }
            error = 100 * (planned_plan.tensors - after.allocated) / after.allocated
            lines += [
                f"summary: peak {out['peak_gib']:.2f} GiB allocated, {out['reserved_gib']:.2f} GiB reserved, "
                f"{out['outside_gib']:.2f} GiB outside torch's allocator, of {out['capacity_gib']:.2f} GiB "
                f"(an H100 80GB gives {H100_GIB}; this device {own / GIB:.2f})",
                f"summary: the planner: {out['planned_tensors_gib']:.2f} GiB in torch's allocator ({error:+.1f}% of "
                f"the peak; static {planned_plan.static / GIB:.1f}, gathered {planned_plan.gathered / GIB:.1f}, "
                f"activations {planned_plan.activations / GIB:.1f}, head and loss {planned_plan.logits / GIB:.1f}), "
                f"{out['reserve_gib']:.2f} GiB reserve at world {world_size}, E {degree} (CUDA context and NCCL)",
                f"summary: headroom {out['headroom_gib']:.2f} GiB = capacity - reserve - reserved peak "
                f"(goal >= {HEADROOM_GOAL_GIB:g} GiB: {'met' if out['headroom_gib'] >= HEADROOM_GOAL_GIB else 'NOT met'})",
            ]
        if self.cap is not None and after.reserved is not None:
            retries = torch.cuda.memory_stats(self.device).get("num_alloc_retries", 0)
            out |= {"cap_gib": self.cap / GIB, "alloc_retries": retries}
            kept = "kept" if after.reserved <= self.cap else "NOT kept (the cap was not enforced)"
            lines.append(
                f"summary: under the allocator's cap of {self.cap / GIB:.2f} GiB all {len(steps)} steps ran, reserved "
                f"peak {after.reserved / GIB:.2f} GiB, {retries} allocation retries (cache freed, then retried): "
                f"{(capacity - reserve - self.cap) / GIB:.2f} GiB {kept} free beside the reserve"
            )
        out["text"] = "\n".join(lines)
        return out


def _breaks_per_step(readings: list[Reading]) -> list[int]:
    return [b.breaks - a.breaks for a, b in zip(readings[3:], readings[4:])]


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _percent(value) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _gib(value) -> str:
    return "n/a" if value is None else f"{value / GIB:.2f}"
