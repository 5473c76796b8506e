"""Host time against GPU time of mamba-ssm's fused Mamba-2 backward, per pack length, at the card's widths.

A full-scale rank's profile finds the GPU idle inside this backward for some pack lengths (the gap ends at
its `_layer_norm_bwd_kernel`) while the allocator reports no retries and Python's collector a few ms a step.
This isolates the call: the same fused forward the trainer runs (rmsnorm gate, packed rows by seq_idx, no
out_proj), then its backward timed on the host (the call's return, GPU queue empty before it) and on the GPU
(CUDA events), several times per length, so a cost paid on every call is told from one paid once (a Triton
specialisation compiled for a new integer divisibility, e.g. rows_per_program % 16).

Run as (one GPU, mamba-ssm and causal-conv1d importable):
    python benchmarks/mamba_backward_host.py --lengths 25344,27648,25600,26624 --repeats 6
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import pstats
import statistics
import time

import torch


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", default="25344,27648,25600,26624", help="pack lengths in tokens, comma-separated")
    parser.add_argument("--repeats", type=int, default=6, help="backward calls timed per length")
    parser.add_argument("--row-tokens", type=int, default=437, help="mean row length of a pack (the sample's)")
    parser.add_argument(
        "--host-profile",
        action="store_true",
        help="print where the host spends a length's first and slowest later call",
    )
    return parser.parse_args(argv)


def packed_seq_idx(length: int, mean_row: int, generator: torch.Generator) -> torch.Tensor:
    """Each token's row number (int32, 1 x length) for rows of random lengths around `mean_row`."""
    rows = []
    while sum(rows) < length:
        rows.append(int(torch.randint(mean_row // 2, mean_row * 3 // 2, (1,), generator=generator)))
    rows[-1] -= sum(rows) - length
    return torch.repeat_interleave(torch.arange(len(rows), dtype=torch.int32), torch.tensor(rows))[None].cuda()


def card_mixer_inputs(length: int, mean_row: int) -> dict:
    """Nemotron-H's Mamba-2 mixer at the card's widths: 64 heads of 64, 8 groups, state 128, conv 4, chunk 128."""
    heads, head_dim, groups, state = 64, 64, 8, 128
    inner = heads * head_dim
    channels = inner + 2 * groups * state
    generator = torch.Generator().manual_seed(length)
    cuda = dict(device="cuda")
    return dict(
        zxbcdt=(0.1 * torch.randn(1, length, inner + channels + heads, **cuda, dtype=torch.bfloat16)).requires_grad_(),
        conv1d_weight=(0.1 * torch.randn(channels, 4, **cuda)).requires_grad_(),
        conv1d_bias=torch.zeros(channels, **cuda, requires_grad=True),
        dt_bias=torch.zeros(heads, **cuda, requires_grad=True),
        A=-torch.rand(heads, **cuda).add(0.5).requires_grad_(),
        D=torch.ones(heads, **cuda, requires_grad=True),
        chunk_size=128,
        seq_idx=packed_seq_idx(length, mean_row, generator),
        activation="silu",
        rmsnorm_weight=torch.ones(inner, **cuda, requires_grad=True),
        rmsnorm_eps=1e-5,
        headdim=head_dim,
        ngroups=groups,
        norm_before_gate=False,
    )


def time_backward(inputs: dict, repeats: int, profiled: bool) -> tuple[list[tuple[float, float]], list]:
    """(host ms, GPU ms) of each backward call, the GPU idle before each, and (`profiled`) each call's host profile."""
    from mamba_ssm.ops.triton.ssd_combined import mamba_split_conv1d_scan_combined

    timings, profiles = [], []
    for _ in range(repeats):
        out = mamba_split_conv1d_scan_combined(**inputs)
        grad = torch.ones_like(out)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        profile = cProfile.Profile() if profiled else contextlib.nullcontext()
        began = time.perf_counter()
        start.record()
        with profile:
            out.backward(grad)
        end.record()
        host = time.perf_counter() - began
        torch.cuda.synchronize()
        timings.append((1e3 * host, start.elapsed_time(end)))
        profiles.append(profile)
    return timings, profiles


def hot_functions(profile: cProfile.Profile, top: int = 8) -> str:
    """The call's functions by own host time (cProfile), most first."""
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(top)
    return text.getvalue().split("\n\n", 2)[-1].rstrip()


def main() -> None:
    args = parse_args()
    print(f"{torch.cuda.get_device_name()}; {args.repeats} backward calls per length, the first listed apart")
    print(
        "| pack tokens | rows | first call host / GPU ms | later calls host ms (median, max) | later GPU ms (median) |"
    )
    print("|---|---|---|---|---|")
    for length in (int(n) for n in args.lengths.split(",")):
        inputs = card_mixer_inputs(length, args.row_tokens)
        timings, profiles = time_backward(inputs, args.repeats, args.host_profile)
        (first_host, first_gpu), *later = timings
        hosts, gpus = [h for h, _ in later], [g for _, g in later]
        if args.host_profile:
            slowest = 1 + hosts.index(max(hosts))
            for label, index in (("first call", 0), (f"slowest later call ({max(hosts):.2f} ms)", slowest)):
                print(f"\n{length:,} tokens, {label}:\n{hot_functions(profiles[index])}\n", flush=True)
        rows = int(inputs["seq_idx"].max()) + 1
        print(
            f"| {length:,} | {rows} | {first_host:.2f} / {first_gpu:.2f} | {statistics.median(hosts):.2f}, "
            f"{max(hosts):.2f} | {statistics.median(gpus):.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
