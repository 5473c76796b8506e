"""Where the GPU waits for the host: idle gaps between kernels, charged to the host op that was late.

A step whose kernels add up to less than its wall time leaves the GPU idle somewhere. Each gap on the
compute streams (NCCL and the profiler's "Command Buffer Full" markers left out: the former overlaps on
its own stream, the latter marks the host blocked on a full queue, the GPU busy) ends with a kernel; the
host op that launched that kernel is what the GPU waited for. The gaps are summed per launching op and
per the ranges that enclosed it on the host (the training phase: forward, a block's rerun in backward,
FSDP's hooks, the optimizer), so the table points at host work to cut.

Each late op also gets its host time a call against the GPU time of the kernels it (and the ops inside it)
launched: where the host takes longer than the GPU, the op is host-bound and the GPU drains its queue there
whatever the allocator does; where it does not, the gap comes from a stall inside the call (the events
during the long gaps say which: cudaMalloc / cudaFree, a synchronisation).
"""

from __future__ import annotations

import bisect

import torch

NOT_KERNELS = ("nccl", "command buffer full", "memcpy", "memset")
MIN_GAP_NS = 2_000  # shorter gaps are the launch pipeline's own latency
LONG_GAP_NS = 500_000  # gaps this long: which host events ran during them
SHORT_EVENT_NS = 50_000_000  # longer host events are phases (forward, backward), not the cause


def _is_compute_kernel(event) -> bool:
    name = event.name().lower()
    return not event.is_user_annotation() and not any(word in name for word in NOT_KERNELS)


def _gaps(events) -> tuple[list[tuple[int, str, int]], int, int, list[tuple[int, int]]]:
    """([(linked op correlation id, kernel, idle ns before it) a gap], busy ns, span ns, [(start, end) of the
    long gaps]) on the compute streams."""
    cuda = torch.autograd.DeviceType.CUDA
    kernels = sorted(
        (e.start_ns(), e.end_ns(), e.linked_correlation_id(), e.name())
        for e in events
        if e.device_type() == cuda and _is_compute_kernel(e)
    )
    if not kernels:
        return [], 0, 0, []
    gaps, long_gaps = [], []
    busy, busy_end = 0, kernels[0][0]
    for start, end, link, kernel in kernels:
        if start - busy_end >= MIN_GAP_NS:
            gaps.append((link, kernel, start - busy_end))
            if start - busy_end >= LONG_GAP_NS:
                long_gaps.append((busy_end, start))
        busy += max(0, end - max(start, busy_end))
        busy_end = max(busy_end, end)
    return gaps, busy, busy_end - kernels[0][0], long_gaps


def _host(events) -> list:
    """The host's ops and ranges (the profiler's per-step marks left out)."""
    cuda = torch.autograd.DeviceType.CUDA
    return [
        e for e in events if e.device_type() != cuda and not e.is_async() and not e.name().startswith("ProfilerStep")
    ]


def _timelines(host) -> list[list]:
    """The host events of each thread in start order, an enclosing range before what it encloses."""
    by_thread: dict[int, list] = {}
    for e in host:
        by_thread.setdefault(e.start_thread_id(), []).append(e)
    return [sorted(events, key=lambda e: (e.start_ns(), -e.duration_ns())) for events in by_thread.values()]


def _enclosing(timelines: list[list], wanted: set[int]) -> dict[int, tuple[str, ...]]:
    """{correlation id: names of the host ranges around that op, outermost first} for the `wanted` ops."""
    found: dict[int, tuple[str, ...]] = {}
    for thread_events in timelines:
        stack: list = []
        for e in thread_events:
            while stack and stack[-1].end_ns() <= e.start_ns():
                stack.pop()
            if e.correlation_id() in wanted:
                found[e.correlation_id()] = tuple(s.name() for s in stack)
            stack.append(e)
    return found


def _cost_per_call(
    timelines: list[list], kernels_by_link: dict[int, int], wanted: set[str]
) -> dict[str, tuple[float, float]]:
    """{op name: (host ns a call, GPU ns a call of the kernels it and the ops inside it launched)}."""
    totals: dict[str, list[float]] = {}
    for thread_events in timelines:
        starts = [e.start_ns() for e in thread_events]
        for index, e in enumerate(thread_events):
            if e.name() not in wanted:
                continue
            inside = thread_events[index : bisect.bisect_right(starts, e.end_ns(), lo=index)]
            gpu = sum(kernels_by_link.get(n.correlation_id(), 0) for n in inside if n.end_ns() <= e.end_ns())
            entry = totals.setdefault(e.name(), [0, 0.0, 0.0])
            entry[0] += 1
            entry[1] += e.duration_ns()
            entry[2] += gpu
    return {name: (host_ns / calls, gpu_ns / calls) for name, (calls, host_ns, gpu_ns) in totals.items()}


def _kernels_by_link(events) -> dict[int, int]:
    """{host op correlation id: ns of the compute kernels it launched}."""
    cuda = torch.autograd.DeviceType.CUDA
    found: dict[int, int] = {}
    for e in events:
        if e.device_type() == cuda and _is_compute_kernel(e):
            found[e.linked_correlation_id()] = found.get(e.linked_correlation_id(), 0) + e.duration_ns()
    return found


def _during(host, gaps: list[tuple[int, int]]) -> dict[str, list[float]]:
    """{host event name: [events, ns overlapping the long gaps]}: what the host did while the GPU waited."""
    host = sorted((e.start_ns(), e.end_ns(), e.name()) for e in host if e.duration_ns() < SHORT_EVENT_NS)
    starts = [start for start, _, _ in host]
    found: dict[str, list[float]] = {}
    for gap_start, gap_end in gaps:
        first = bisect.bisect_left(starts, gap_start - SHORT_EVENT_NS)
        for start, end, name in host[first : bisect.bisect_left(starts, gap_end)]:
            overlap = min(end, gap_end) - max(start, gap_start)
            if overlap > 0:
                entry = found.setdefault(name, [0, 0.0])
                entry[0] += 1
                entry[1] += overlap
    return found


def _phase(ranges: tuple[str, ...]) -> str:
    """A short name for where the host was: the outermost two ranges, autograd's node names trimmed."""
    trimmed = [name.removeprefix("autograd::engine::evaluate_function: ") for name in ranges]
    return " > ".join(trimmed[:2]) or "(top level)"


def idle_table(prof, steps: int, rows: int = 12, shapes: bool = False) -> str:
    """Markdown: the GPU's idle time per step and the host ops (and phases) it waited for; with `shapes`
    (a profile that recorded them) each op is listed per input shapes."""
    events = prof.profiler.kineto_results.events()
    gaps, busy, span, long_gaps = _gaps(events)
    if not span:
        return ""
    late = {link for link, _, _ in gaps}
    host = _host(events)
    names = {e.correlation_id(): e.name() for e in host}
    shown = {e.correlation_id(): f"{e.name()} {e.shapes()}" for e in host if shapes and e.correlation_id() in late}
    timelines = _timelines(host)
    ranges = _enclosing(timelines, late)
    by_op: dict[str, list[float]] = {}
    by_phase: dict[str, list[float]] = {}
    op_names: dict[str, str] = {}  # table key: the op's name
    for link, kernel, ns in gaps:
        op = shown.get(link) or names.get(link, "(unlinked)")
        if not op.startswith("aten::"):  # a Function or custom op launching its own kernels: which one was late
            op = f"{op} -> {kernel[:60]}"
        op_names[op] = names.get(link, "(unlinked)")
        for table, key in ((by_op, op), (by_phase, _phase(ranges.get(link, ())))):
            entry = table.setdefault(key, [0, 0.0])
            entry[0] += 1
            entry[1] += ns
    total_idle = span - busy
    lines = [
        f"GPU compute streams: busy {busy / 1e6 / steps:,.0f} ms per step, idle {total_idle / 1e6 / steps:,.0f} ms "
        f"({100 * total_idle / span:.1f}% of the profiled span); gaps of {MIN_GAP_NS // 1000} us or more: "
        f"{sum(ns for _, _, ns in gaps) / 1e6 / steps:,.1f} ms per step",
    ]
    worst = dict(sorted(by_op.items(), key=lambda kv: -kv[1][1])[:rows])
    cost = _cost_per_call(timelines, _kernels_by_link(events), {op_names[op] for op in worst})
    lines += [
        "",
        "| host op launching the kernel after a gap | count/step | ms/step | host ms a call | its GPU ms a call |",
        "|---|---|---|---|---|",
    ]
    for key, (count, ns) in worst.items():
        host_ns, gpu_ns = cost.get(op_names[key], (0.0, 0.0))
        lines.append(
            f"| {key[:150]} | {count / steps:,.0f} | {ns / 1e6 / steps:,.1f} | {host_ns / 1e6:,.2f} | "
            f"{gpu_ns / 1e6:,.2f} |"
        )
    during = _during(host, long_gaps)
    tables = (
        ("host ranges around it", by_phase),
        (f"host events during the gaps of {LONG_GAP_NS // 1000} us or more (nested ones overlap)", during),
    )
    for title, table in tables:
        lines += ["", f"| {title} | count/step | ms/step |", "|---|---|---|"]
        for key, (count, ns) in sorted(table.items(), key=lambda kv: -kv[1][1])[:rows]:
            lines.append(f"| {key[:150]} | {count / steps:,.0f} | {ns / 1e6 / steps:,.1f} |")
    return "\n".join(lines)
