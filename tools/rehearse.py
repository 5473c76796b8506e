"""Rehearse one rank of a run's training job on one device, before the queue: its shard, its memory, its step.

The run's recipe and layout come from config.yaml at the chosen scale (overlays merged as --configfile does);
one process plays rank r of the job's N ranks in torch's fake process group (tools/rehearsal/world.py): FSDP2
shards the real model over N, the experts split over the expert group as the job splits them, the blocks are
compiled and checkpointed as the recipe says, and the optimizer holds the rank's own state. The steps are the
trainer's own (lineage.training.loop) on rows of the planner's lengths (tools/rehearsal/rows.py). What the
collectives would move is not moved: each gets a stated rule (world.py), routing is balanced, and the network
is not measured. Per step it prints time, tokens/s, MFU of the rank's compute, peak and reserved memory against
the device's capacity, and the graphs compiled and broken; then the timed steps beside the planner's figures.

Run as (repository root; a GPU for the full scale, the CPU for the embedded one):
    python tools/rehearse.py sftw2 --scale full --rank 0
    python tools/rehearse.py dpo1 --scale full --steps 9 --profile-steps 1   # + where the step's time goes
    python tools/rehearse.py sftw2 --scale full --hold-back-gib 4          # does it run with 4 GiB kept free?
    python tools/rehearse.py sftw2 --scale full --host-delay-us 500        # does the GPU wait on FSDP's hooks?
    python tools/rehearse.py sftw2 --scale embedded --world 8 --micro-batch-rows 2 --expert-parallel 4
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

import torch  # noqa: E402
import train_dpo  # noqa: E402
import train_sft  # noqa: E402
from rehearsal import rank as rank_model  # noqa: E402
from rehearsal import rows as made_up  # noqa: E402
from rehearsal import world  # noqa: E402
from rehearsal.slack import HostDelay  # noqa: E402
from rehearsal.watch import StepWatch, cap_allocator  # noqa: E402

from lineage.errors import run_cli  # noqa: E402
from lineage.modeling import count_params  # noqa: E402
from lineage.parallel_dims import ParallelDims, check  # noqa: E402
from lineage.training import packed_attention  # noqa: E402
from lineage.training.cli import JobOptions  # noqa: E402
from lineage.training.data import BatchPlan  # noqa: E402
from lineage.training.dist import close  # noqa: E402
from lineage.training.loop import train  # noqa: E402
from lineage.training.optim import build_optimizer  # noqa: E402
from lineage.training.packing import boundary_inputs  # noqa: E402
from lineage.training.preemption import Preempted  # noqa: E402
from lineage.workflow.config_file import read_config  # noqa: E402
from lineage.workflow.runs import build_lineage  # noqa: E402
from planning.measured import CHAT_LOSS_SHARE  # noqa: E402
from planning.memory import GIB, gpu_reserve, plan  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from sft_throughput import profile_tables, step_profiler  # noqa: E402  (one home for the profile's tables)

CARD_SHAPE = ("nemotron_h", "30b_a3b", 131072)  # the card's Base, as the planner assumes it (lineage.modeling)
ASSUMED = (
    "collectives move no data: FSDP's all-gather tiles this rank's shard, its reduce-scatter keeps this rank's "
    "chunk, sums and counts are N times this rank's, and routing is balanced (token t's slot s to expert "
    "(t*k + s) mod n; the all-to-all returns each rank's own rows): the network is not measured"
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("run", help="a trained run of config.yaml (sft or dpo)")
    parser.add_argument("--scale", default=None, help="the config's scale to rehearse (default: the file's own)")
    parser.add_argument("--configfile", action="append", default=[], type=Path, help="overlay (repeatable)")
    parser.add_argument("--rank", type=int, default=0, help="the rank this process plays")
    parser.add_argument(
        "--world", type=int, default=None, help="ranks of the job (default: the run's nodes x processes)"
    )
    parser.add_argument(
        "--ranks-per-node", type=int, default=None, help="default: the run's processes a node (at most the world)"
    )
    parser.add_argument("--expert-parallel", type=int, default=None, metavar="E", help="default: the run's")
    parser.add_argument("--global-batch-rows", type=int, default=None, help="default: the run's")
    parser.add_argument("--micro-batch-rows", type=int, default=None, help="default: the run's")
    parser.add_argument("--steps", type=int, default=8, help="optimizer steps rehearsed (the lr schedule fit to them)")
    parser.add_argument("--timed-from", type=int, default=3, help="first step of the summary's medians")
    parser.add_argument("--layers", type=int, default=None, help="keep the first N layers (a smaller device)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None, help="default: the run's")
    parser.add_argument("--metrics", type=Path, default=None, help="also keep the trainer's metrics.jsonl here")
    parser.add_argument("--summary", type=Path, default=None, help="write the summary as JSON here")
    parser.add_argument(
        "--profile-steps",
        type=int,
        default=0,
        metavar="N",
        help="profile the last N steps (torch.profiler; GPU time by kernel category and launching op); the "
        "summary's medians end before them",
    )
    parser.add_argument(
        "--capacity-gib",
        type=float,
        default=None,
        help="the headroom against this many GiB a GPU (a rehearsal on a bigger GPU for the card's H100: 79.18); "
        "default: this device's",
    )
    parser.add_argument(
        "--hold-back-gib",
        type=float,
        default=None,
        metavar="G",
        help="cap torch's allocator at capacity - reserve - G GiB (CUDA only): a rehearsal that completes under the "
        "cap keeps G GiB free whatever its cache would have reserved uncapped",
    )
    parser.add_argument(
        "--host-delay-us",
        type=float,
        default=0,
        metavar="US",
        help="spin US microseconds of host time before every FSDP module's forward (tools/rehearsal/slack.py): a step "
        "that does not grow by the added time leaves the host ahead of the GPU at FSDP's hooks",
    )
    parser.add_argument("--trace", type=Path, default=None, help="also write the profiled steps' Chrome trace")
    return parser.parse_args(argv)


def resolve(args):
    """(config, lineage, run, recipe, mesh degrees, device) for the rehearsal, with the flags' overrides."""
    config = read_config(overlays=args.configfile, scale=args.scale)
    lineage = build_lineage(config, check_files=False)
    if args.run not in lineage.runs or lineage.runs[args.run].kind not in ("sft", "dpo"):
        trained = [n for n, r in lineage.runs.items() if r.kind in ("sft", "dpo")]
        raise SystemExit(f"{args.run!r} is no trained run of the config; one of: {', '.join(trained)}")
    run = lineage.runs[args.run]
    changes = {
        k: v
        for k, v in (("global_batch_rows", args.global_batch_rows), ("micro_batch_rows", args.micro_batch_rows))
        if v
    }
    if args.profile_steps and args.profile_steps + 2 > args.steps - args.timed_from + 1:
        raise SystemExit(
            f"--profile-steps {args.profile_steps} leaves no timed step: give --steps >= "
            f"{args.timed_from + args.profile_steps + 1}"
        )
    recipe = dataclasses.replace(
        run.recipe, steps=args.steps, warmup_steps=min(run.recipe.warmup_steps, args.steps), **changes
    )
    dims = rehearsed_dims(args, run)
    device = torch.device(args.device or run.device)
    device = (
        torch.device("cuda", 0) if device.type == "cuda" else device
    )  # without starting CUDA: the allocator is set first
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit(f"{args.run} trains on cuda, but torch sees no GPU here; rehearse it on a GPU machine")
    if args.hold_back_gib is not None and device.type != "cuda":
        raise SystemExit("--hold-back-gib caps the CUDA allocator: rehearse on a GPU (--device cuda)")
    if problem := packed_attention.refusal(recipe, device.type):
        raise SystemExit(f"{args.run}: {problem}")
    return config, lineage, run, recipe, dims, device


def rehearsed_dims(args, run) -> ParallelDims:
    """The run's degrees with the flags' overrides, refused as the trainer would refuse them (but for the
    experts, which the model's build checks): errors name the flag, or the config key the degree came from."""
    world_size = args.world or run.world_size
    per_node = args.ranks_per_node or min(run.processes_per_node, world_size)
    keys = dataclasses.replace(
        run.dims.keys,
        nodes="--world / --ranks-per-node",
        processes="--ranks-per-node",
        **({"expert_parallel": "--expert-parallel"} if args.expert_parallel else {}),
    )
    degree = args.expert_parallel or run.expert_parallel
    dims = ParallelDims.from_ranks(world_size, per_node, run.effective_sharding, degree, keys)
    check(dims)
    return dims


def model_config(config, lineage, layers: int | None):
    """The model the run trains: the built Base's shape at its tokenizer's size, or the card's Base shape."""
    base = lineage.base
    if base.build:
        family, size, vocab = base.family, base.model_size, config["scales"][config["scale"]]["base"]["tokenizer_vocab"]
    else:
        family, size, vocab = CARD_SHAPE
    shape = rank_model.shape_config(family, size, vocab)
    if layers is not None:
        shape.layers_block_type = list(shape.layers_block_type)[:layers]
    return shape, f"{family}/{size}" + (f" (first {layers} layers)" if layers else "")


def main(args) -> int:
    config, lineage, run, recipe, dims, device = resolve(args)
    shape, shape_name = model_config(config, lineage, args.layers)
    env = world.join(args.rank, dims, device)
    world_size = dims.world_size
    planned = planned_bytes(shape, run, recipe, dims)
    cap = None
    if args.hold_back_gib is not None:  # after join: the allocator's configuration is set before CUDA starts
        cap = cap_allocator(device, args.capacity_gib, planned[1], args.hold_back_gib)
        print(
            f"rehearsal: torch's allocator capped at {cap / GIB:.2f} GiB = capacity - {planned[1] / GIB:.2f} GiB "
            f"reserve - {args.hold_back_gib:g} GiB held back",
            flush=True,
        )
    try:
        plan_ = BatchPlan(recipe.global_batch_rows, recipe.micro_batch_rows, world_size)
        model = rank_model.rank_model(shape, env, recipe, dims=dims, accumulate=run.accumulate)
        covered, routed = world.give_rules(model), rank_model.route_balanced(model)
        delay = HostDelay(model, args.host_delay_us) if args.host_delay_us > 0 else None
        kind = run.kind
        head = (train_sft.attach_head_loss if kind == "sft" else train_dpo.attach_head)(model, recipe)
        boundaries = boundary_inputs(shape.model_type, device) if recipe.packing else ()
        if kind == "sft":
            rows = made_up.made_up_rows(recipe.max_length, shape.vocab_size, CHAT_LOSS_SHARE)
            step_data = train_sft.row_steps(rows, recipe, plan_, env.rank, pad_id=0)
            loss_fn, stats, shown = train_sft.sft_loss(recipe, boundaries), (), ()
        else:
            pairs, references = made_up.made_up_pairs(recipe.max_length, shape.vocab_size, CHAT_LOSS_SHARE)
            step_data = train_dpo.pair_steps(pairs, references, recipe, plan_, env.rank, pad_id=0)
            loss_fn, stats, shown = train_dpo.dpo_loss(recipe, boundaries), train_dpo.STATS, ("margin",)
        optimizer = build_optimizer(
            model, lr=recipe.lr, betas=recipe.adam_betas, weight_decay=recipe.weight_decay, eps=recipe.adam_eps
        )
        params = count_params(model)
        print(
            f"rehearsal: {args.run} ({kind}) at scale {config['scale']}, rank {env.rank} of {world_size} "
            f"({dims.processes_per_node} a node), expert parallel {dims.expert}, {dims.effective_sharding} sharding; "
            f"{shape_name}, vocabulary {shape.vocab_size:,}, {params.total:,} parameters ({params.active:,} active); device {device}; head {head}; {covered} FSDP modules, {routed} expert layers routed",
            flush=True,
        )
        print(f"rehearsal: {ASSUMED}", flush=True)
        print(
            f"rehearsal: rows of {recipe.max_length:,} tokens ({CHAT_LOSS_SHARE:.0%} labelled), "
            f"{plan_.rank_rows} {recipe.row_unit}s a step on this rank, "
            f"{'packs of ' + format(recipe.tokens_per_pack, ',') + ' tokens' if recipe.packing else 'padded'}",
            flush=True,
        )
        watch = StepWatch(device, args.capacity_gib, cap)
        profiled_from = recipe.steps - args.profile_steps + 1  # 1-based, as in the metrics
        prof = step_profiler(env, profiled_from, args.profile_steps) if args.profile_steps else None
        with tempfile.TemporaryDirectory() as scratch, prof or contextlib.nullcontext():
            metrics = args.metrics or Path(scratch) / "metrics.jsonl"
            options = job_options(args, run, dims, metrics, device)
            began = time.perf_counter()
            try:
                train(
                    options,
                    recipe,
                    env,
                    model,
                    optimizer,
                    step_data=watch.wrap(step_data, prof),
                    loss_fn=loss_fn,
                    stat_names=stats,
                    shown=shown,
                    params=params,
                    recipe_hash="rehearsal",
                )
            except Preempted as stopped:  # a time limit: report the steps done
                print(f"rehearsal: {stopped}; the report covers the steps done", flush=True)
                prof = None
            except torch.cuda.OutOfMemoryError:
                if cap is None:
                    raise
                raise SystemExit(
                    f"rehearsal: out of memory under the cap of {cap / GIB:.2f} GiB in step {len(watch.readings)}: {args.run} "
                    f"does not keep {args.hold_back_gib:g} GiB free"
                ) from None
            if prof:
                prof.step()  # closes the window that ends at the last step
            wall = time.perf_counter() - began
            steps = [json.loads(line) for line in metrics.read_text().splitlines()] if metrics.is_file() else []
            if not steps:
                raise SystemExit("rehearsal: stopped before its first step ended; nothing to report")
        held = rank_model.held_bytes(model, optimizer)
        # the profiler's warm-up step and the profiled ones are not timed
        timed_to = profiled_from - 2 if prof else recipe.steps
        summary = watch.summary(steps, (args.timed_from, timed_to), world_size, held, planned, dims.expert, wall)
        if delay:
            summary["host_delay"], line = delay.report(len(steps))
            summary["text"] += "\n" + line
        print(watch.table(steps, world_size), flush=True)
        print(summary["text"], flush=True)
        if prof:
            profiled = sum(r["step_time_s"] for r in steps if r["step"] >= profiled_from)
            print(profile_tables(prof, args.profile_steps, 20, profiled), flush=True)
            if args.trace:
                prof.export_chrome_trace(str(args.trace))
        if args.summary:
            args.summary.write_text(json.dumps({k: v for k, v in summary.items() if k != "text"}, indent=2) + "\n")
    finally:
        close()
    return 0


def job_options(args, run, dims: ParallelDims, metrics: Path, device: torch.device) -> JobOptions:
    """The trainer's options for a rehearsal: nothing saved or resumed, the metrics kept."""
    return JobOptions(
        init=Path("rehearsal"),
        data=(),
        out=Path("rehearsal"),
        state_dir=None,
        run=args.run,
        metrics=metrics,
        lineage_extra={},
        sharding=dims.sharding,
        accumulate=run.accumulate,
        expert_parallel=dims.expert,
        save_every=0,
        save_every_minutes=0,
        keep_states=1,
        device=device.type,
        peak_flops=None,
        python_gc="automatic",
    )


def planned_bytes(shape, run, recipe, dims: ParallelDims):
    """The planner's memory per GPU for this rank (workflow/scripts/planning/memory.py), or None where it plans nothing."""
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        meta = AutoModelForCausalLM.from_config(shape, dtype=torch.float32)
    micro_tokens = recipe.tokens_per_pack if recipe.packing else recipe.micro_batch_rows * recipe.row_tokens
    return plan(
        meta,
        gpus=dims.shard,
        micro_tokens=micro_tokens,
        checkpointing=recipe.activation_checkpointing,
        loss_share=CHAT_LOSS_SHARE,
        fused_loss=recipe.fused_loss,
        accumulate=run.accumulate,
        expert_parallel=dims.expert,
        world_size=dims.world_size,
    ), gpu_reserve(dims.world_size, dims.expert)


if __name__ == "__main__":
    sys.exit(run_cli(lambda: main(parse_args())))
