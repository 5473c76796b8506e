"""train_sft.py's steps on a named shape with fresh random weights, and a profile of where the time goes.

The optimizer steps are the trainer's own (its flags, data, loss, FSDP2 sharding, loop and
metrics.jsonl); only the start differs. Instead of reading a checkpoint, every rank draws the
same random weights on its GPU and shards them: for a multi-billion-parameter shape,
init_model.py's CPU initialisation, the checkpoint write, its hash and the rank-0 read and
broadcast cost minutes that say nothing about step speed, and nothing is saved at the end.

With --profile-steps N the last N steps run under torch.profiler (rank 0, one profiler warm-up
step before them) and their GPU time is printed by kernel category and by op; the steps before
are the timed ones. The summary line gives medians over steps --timed-from .. the last unprofiled
step: tokens/s/GPU, MFU on active parameters, peak memory and the loss first -> last.

Run as (repository root, PYTHONPATH=workflow/scripts; any launcher that train_sft.py accepts):
    accelerate launch --config_file workflow/accelerate/fsdp2.yaml --num_processes 2 \
        benchmarks/sft_throughput.py --family qwen3_moe --size card_experts_4l --tokenizer OUT/tokenizer \
        --profile-steps 2 --data rows.jsonl --steps 12 --global-batch-rows 128 --packing --metrics m.jsonl
The flags not listed by --help are train_sft.py's (its --init and --out are filled in and unused).
A SIGTERM stops the ranks after the step that runs, and the steps done are summarised.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import sys
from pathlib import Path

import torch
import train_sft
from gpu_idle import idle_table
from transformers import AutoModelForCausalLM, AutoTokenizer

from lineage.chat import load_bundle
from lineage.families.nemotron_h import missing_mamba_kernels
from lineage.modeling import SHAPES, build_config, count_params
from lineage.training import dist as tdist
from lineage.training import packed_attention
from lineage.training.data import BatchPlan
from lineage.training.fsdp import build_options, shard
from lineage.training.loop import train
from lineage.training.optim import build_optimizer
from lineage.training.packing import boundary_inputs
from lineage.training.preemption import Preempted

# Kernel name -> category; the first match wins. NCCL runs on its own stream, overlapping the rest.
CATEGORIES = (
    ("communication (NCCL)", r"nccl"),
    ("host blocked: launch queue full (not a kernel)", r"command buffer full"),
    ("attention", r"flash|fmha|attention|attn"),
    ("Mamba-2 scan and conv (kernels)", r"chunk_scan|chunk_state|state_passing|bmm_chunk|chunk_cumsum|causal_conv1d"),
    ("grouped GEMM (experts)", r"grouped|GroupProblemShape|group_gemm"),
    ("GEMM", r"gemm|cutlass|xmma|nvjet|cublas|matmul|splitK"),
    ("optimizer and grad norm (foreach)", r"multi_tensor|adam|foreach"),
    ("reductions, sort, scatter/gather", r"reduce|sort|scatter|gather|index|histc|cumsum|radix|topk"),
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--family", required=True, choices=sorted({f for f, _ in SHAPES}))
    parser.add_argument("--size", required=True, choices=sorted({s for _, s in SHAPES}))
    parser.add_argument("--tokenizer", type=Path, required=True, help="directory from build_tokenizer.py")
    parser.add_argument("--init-seed", type=int, default=1234, help="seed of the random weights")
    parser.add_argument(
        "--vocab-size",
        type=int,
        default=None,
        help="embedding and head rows (a real vocabulary, e.g. 128256); the data's ids stay as they are",
    )
    parser.add_argument("--profile-steps", type=int, default=0, help="profile the last N steps (0 = no profile)")
    parser.add_argument("--profile-rows", type=int, default=20, help="ops listed in the profile table")
    parser.add_argument(
        "--profile-shapes",
        action="store_true",
        help="list ops per input shapes (which tensors the casts and copies move)",
    )
    parser.add_argument("--trace", type=Path, default=None, help="also write the profiled steps' Chrome trace")
    parser.add_argument("--timed-from", type=int, default=3, help="first step in the medians (allocator warm-up)")
    add_layers_flag(parser)
    own, rest = parser.parse_known_args(argv)
    rest = [a for a in rest if a != "--"]
    args, recipe = train_sft.parse_args(["--init", str(own.tokenizer), "--out", "/nonexistent/unused", *rest])
    if own.profile_steps and own.profile_steps + 2 > recipe.steps:
        parser.error(f"--profile-steps {own.profile_steps} needs --steps >= {own.profile_steps + 2}")
    return own, args, recipe


def add_layers_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--layers",
        type=int,
        default=None,
        help="keep the shape's first N layers, each unchanged (a deep shape's state then fits a smaller GPU)",
    )


def first_layers(config, layers: int | None):
    """The config with only its first `layers` layers (None: all); the label says so."""
    if layers is None:
        return config, ""
    types = list(config.layer_types)
    if not 0 < layers <= len(types):
        raise SystemExit(f"--layers {layers}: the shape has {len(types)} layers; give 1 to {len(types)}")
    config.layer_types = types[:layers]
    return config, f" (first {layers} of {len(types)} layers)"


def random_model(config, device: torch.device, seed: int, **options) -> torch.nn.Module:
    """fp32 random weights drawn on `device` from `seed`: the same draw for every rank and for train_trl_sft.py."""
    config.use_cache = False
    torch.manual_seed(seed)
    with device:
        return AutoModelForCausalLM.from_config(config, dtype=torch.float32, **options)


def random_sharded_model(config, env, recipe, seed: int, accumulate: str = "sharded") -> torch.nn.Module:
    """The same random draw on every rank (same seed), on its device, then sharded as the trainer shards."""
    options = build_options(config, packed_attention.attention_implementation(recipe, env.device), recipe.experts)
    model = random_model(config, env.device, seed, **options)
    shard(
        model,
        env,
        recipe.precision,
        recipe.compile,
        accumulate=accumulate,
        activation_checkpointing=recipe.activation_checkpointing,
    )
    model.train()
    if env.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(env.device)  # the unsharded draw is not the training peak
    return model


def step_profiler(env, profiled_from: int, steps: int, shapes: bool = False) -> torch.profiler.profile:
    """Records 1-based steps profiled_from.. (`steps` of them) after one warm-up step; prof.step() at each start."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if env.device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    schedule = torch.profiler.schedule(wait=profiled_from - 2, warmup=1, active=steps, repeat=1)
    return torch.profiler.profile(activities=activities, schedule=schedule, record_shapes=shapes)


def category(kernel: str) -> str:
    return next((name for name, pattern in CATEGORIES if re.search(pattern, kernel, re.I)), "other elementwise")


def gpu_times(prof) -> tuple[list[tuple[str, float]], dict[str, tuple[int, float]]]:
    """(GPU kernels as (name, us), {op: (calls, self GPU us)}) in one pass over the profiler's raw events.

    A kernel counts for the op (or record_function range) it is linked to, as key_averages() counts
    it, but without key_averages()' tree of Python events: for the eager experts' millions of events
    that took minutes (1M CPU events: 89 s against 3 s for this pass, on a CPU here).
    """
    cuda = torch.autograd.DeviceType.CUDA
    names: dict[int, str] = {}  # id -> name of the events kernels link to (ops, ranges)
    calls: dict[str, int] = {}
    linked_kernels = []
    for e in prof.profiler.kineto_results.events():
        link = e.linked_correlation_id()
        if e.device_type() == cuda:
            if not e.is_user_annotation():  # a range's span on the GPU's timeline is no kernel
                linked_kernels.append((e.name(), e.duration_ns() / 1e3, link))
        elif link == 0 and not e.is_async() and not e.name().startswith("ProfilerStep"):
            names[e.correlation_id()] = e.name()
            calls[e.name()] = calls.get(e.name(), 0) + 1
    self_us: dict[str, float] = {}
    for _, us, link in linked_kernels:
        if link in names:
            self_us[names[link]] = self_us.get(names[link], 0.0) + us
    return [(name, us) for name, us, _ in linked_kernels], {op: (calls[op], us) for op, us in self_us.items()}


def profile_tables(prof, steps: int, rows: int, wall_s: float, shapes: bool = False) -> str:
    """GPU time per profiled step by kernel category, then the ops that launched the most of it.

    Without GPU kernels (a CPU run) the ops are ranked by self CPU time, from key_averages().
    """
    kernels, ops = gpu_times(prof)
    on_gpu = bool(kernels)
    lines = [f"profile: {steps} steps on rank 0, {1e3 * wall_s / steps:,.0f} ms wall per step"]
    if on_gpu:
        by_category: dict[str, float] = {}
        for name, us in kernels:
            by_category[category(name)] = by_category.get(category(name), 0.0) + us
        busy = sum(v for k, v in by_category.items() if not k.startswith(("communication", "host blocked")))
        lines += [
            f"GPU kernels (not NCCL) busy {busy / 1e3 / steps:,.0f} ms per step "
            f"({100 * busy / 1e6 / wall_s:.0f}% of wall); NCCL kernels run alongside on their own stream",
            "",
            "| kernel category | ms/step | % of non-NCCL kernel time |",
            "|---|---|---|",
        ]
        for name, us in sorted(by_category.items(), key=lambda kv: -kv[1]):
            share = "-" if name.startswith(("communication", "host blocked")) else f"{100 * us / max(busy, 1):.1f}%"
            lines.append(f"| {name} | {us / 1e3 / steps:,.1f} | {share} |")
        lines += ["", idle_table(prof, steps, shapes=shapes)]
    if shapes or not on_gpu:  # input shapes (and CPU time) only come with key_averages()' tree
        attr = "self_device_time_total" if on_gpu else "self_cpu_time_total"
        ops = {
            f"{e.key} {e.input_shapes}" if shapes else e.key: (e.count, getattr(e, attr))
            for e in prof.key_averages(group_by_input_shape=shapes)
            if e.device_type == torch.autograd.DeviceType.CPU
            and getattr(e, attr) > 0
            and not e.key.startswith("ProfilerStep")
        }
    total = sum(us for _, us in ops.values()) or 1
    lines += [
        "",
        f"| op ({'self GPU' if on_gpu else 'self CPU'} time) | calls/step | ms/step | % |",
        "|---|---|---|---|",
    ]
    for name, (count, us) in sorted(ops.items(), key=lambda kv: -kv[1][1])[:rows]:  # names cut for the table only
        lines.append(
            f"| {name[:150] if shapes else name[:70]} | {count / steps:,.0f} | {us / 1e3 / steps:,.1f} | "
            f"{100 * us / total:.1f}% |"
        )
    return "\n".join(lines)


def local_bytes(tensors) -> int:
    """Bytes this rank holds of `tensors` (a DTensor's local shard)."""
    total = 0
    for t in tensors:
        t = t.to_local() if hasattr(t, "to_local") else t
        total += t.numel() * t.element_size()
    return total


def training_state(model, optimizer) -> dict[str, float]:
    """GiB of this rank's training state: fp32 weights, their gradients (the same size, held through the
    step's micro-batches) and the optimizer's moments. Peak minus these is the activation memory."""
    gib = 1024**3
    weights = local_bytes(model.parameters())
    gradients = local_bytes(p for p in model.parameters() if p.requires_grad)
    moments = local_bytes(v for state in optimizer.state.values() for v in state.values() if torch.is_tensor(v))
    return {"weights": weights / gib, "gradients": gradients / gib, "optimizer": moments / gib}


def allocator_line(device: torch.device) -> str:
    """The caching allocator's view: a retry frees every cached block (a device sync) and maps memory anew."""
    stats = torch.cuda.memory_stats(device)
    setting = next((f"{n}={os.environ[n]}" for n in tdist.ALLOCATOR_VARIABLES if os.environ.get(n)), "default")
    return (
        f"allocator ({setting}): reserved peak {stats.get('reserved_bytes.all.peak', 0) / 2**30:.1f} GiB, "
        f"{stats.get('num_device_alloc', 0):,} cudaMalloc, {stats.get('num_device_free', 0):,} cudaFree, "
        f"{stats.get('num_alloc_retries', 0):,} retries after a failed allocation"
    )


def summary(rows: list[dict], first: int, last: int, world_size: int, label: str) -> str:
    timed = [r for r in rows if first <= r["step"] <= last] or rows
    tps = statistics.median(r["tok_per_s"] for r in timed) / world_size
    mfus = [r["mfu"] for r in timed if r.get("mfu") is not None]
    matmul_mfus = [r["mfu_without_attention"] for r in timed if r.get("mfu_without_attention") is not None]
    mfu = f"{100 * statistics.median(mfus):.1f}%" if mfus else "n/a"
    if matmul_mfus:
        mfu += f" ({100 * statistics.median(matmul_mfus):.1f}% without attention)"
    mems = [r["peak_mem_gib"] for r in rows if r.get("peak_mem_gib") is not None]
    mem = f"{max(mems):.1f} GiB/GPU" if mems else "n/a"
    step_s = statistics.median(r["step_time_s"] for r in timed)
    return (
        f"summary {label}: steps {timed[0]['step']}-{timed[-1]['step']} of {len(rows)} | "
        f"loss {rows[0]['loss']:.3f} -> {rows[-1]['loss']:.3f} | tokens/s/GPU {tps:,.0f} | MFU {mfu} | "
        f"step {step_s:.2f} s | peak {mem}{gc_summary(timed)}"
    )


def gc_summary(timed: list[dict]) -> str:
    """Python's collections in the timed steps (the trainer's metrics count them, whatever started them)."""
    if not timed or "python_gc_ms" not in timed[0]:
        return ""
    median = statistics.median(r["python_gc_ms"] for r in timed)
    total = sum(r["python_gc_ms"] for r in timed)
    passes = sum(r["python_gc_collections"] for r in timed)
    longest = max(r["python_gc_longest_ms"] for r in timed)
    return (
        f" | python gc {median:.1f} ms a step (median), {total:.0f} ms in {len(timed)} steps "
        f"({passes} passes, longest {longest:.1f} ms)"
    )


def main(own, args, recipe) -> int:
    env = tdist.init_distributed(args.device, training=True)
    try:
        plan = BatchPlan(recipe.global_batch_rows, recipe.micro_batch_rows, env.world_size)
        tokenizer = AutoTokenizer.from_pretrained(own.tokenizer)
        config, depth = first_layers(
            build_config(own.family, own.size, tokenizer, vocab_size=own.vocab_size), own.layers
        )
        boundaries = boundary_inputs(config.model_type, env.device) if recipe.packing else ()
        step_data, _, _ = train_sft.prepare_data(args, recipe, env, plan, tokenizer, load_bundle(own.tokenizer))
        model = random_sharded_model(config, env, recipe, own.init_seed, args.accumulate)
        loss_path = train_sft.attach_head_loss(model, recipe)
        params = count_params(model)
        tdist.print0(
            f"model: {own.family}/{own.size}{depth} ({type(model).__name__}), {params.total:,} parameters "
            f"({params.active:,} active; FLOPs per token {params.step_flops(1, 1) / 1e9:.2f} G with the head, "
            f"{params.step_flops(1, 0) / 1e9:.2f} G without), vocabulary {config.vocab_size:,}, random init "
            f"on {env.device}, world size {env.world_size}, {recipe.precision}, head loss {loss_path}, "
            f"experts {recipe.experts}, accumulate {args.accumulate}, attention {recipe.packed_attention}, "
            f"mamba kernels {'missing' if missing_mamba_kernels() else 'on'}"
        )
        optimizer = build_optimizer(
            model, lr=recipe.lr, betas=recipe.adam_betas, weight_decay=recipe.weight_decay, eps=recipe.adam_eps
        )
        profiled_from = recipe.steps - own.profile_steps + 1  # 1-based, as in metrics.jsonl
        if not env.is_main:
            own.profile_steps = 0
        prof = (
            step_profiler(env, profiled_from, own.profile_steps, own.profile_shapes)
            if own.profile_steps
            else contextlib.nullcontext()
        )

        with prof:

            def data(step: int):
                if step > 0 and own.profile_steps:
                    prof.step()  # step boundaries of the schedule are the optimizer steps
                return step_data(step)

            try:
                loss_fn = train_sft.sft_loss(recipe, boundaries)
                train(
                    args,
                    recipe,
                    env,
                    model,
                    optimizer,
                    step_data=data,
                    loss_fn=loss_fn,
                    stat_names=(),
                    params=params,
                    recipe_hash="benchmark",
                )
            except Preempted as stop:  # SIGTERM from a time limit: report the steps that ran
                tdist.print0(f"stopped early: {stop}")
                own.profile_steps = 0
            if own.profile_steps:
                prof.step()  # closes the window that ends at the last step
        rows = []
        if env.is_main and args.metrics and Path(args.metrics).is_file():
            rows = [json.loads(line) for line in Path(args.metrics).read_text().splitlines() if line.strip()]
        if rows:
            last = profiled_from - 2 if own.profile_steps else recipe.steps  # the profiler's warm-up step is not timed
            print(summary(rows, own.timed_from, last, env.world_size, f"{own.family}/{own.size}{depth}"), flush=True)
            state = training_state(model, optimizer)
            peaks = [r["peak_mem_gib"] for r in rows if r.get("peak_mem_gib") is not None]
            if peaks:
                print(
                    f"memory: peak {max(peaks):.1f} GiB = state {sum(state.values()):.1f} (weights "
                    f"{state['weights']:.1f}, gradients {state['gradients']:.1f}, optimizer {state['optimizer']:.1f})"
                    f" + activations and workspace {max(peaks) - sum(state.values()):.1f} GiB",
                    flush=True,
                )
            if env.device.type == "cuda":
                print(allocator_line(env.device), flush=True)
            if own.profile_steps:
                wall = sum(r["step_time_s"] for r in rows if r["step"] >= profiled_from)
                print(profile_tables(prof, own.profile_steps, own.profile_rows, wall, own.profile_shapes), flush=True)
                if own.trace:
                    prof.export_chrome_trace(str(own.trace))
    finally:
        tdist.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*parse_args()))
