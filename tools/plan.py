"""Plan a training job before asking for GPUs: memory per GPU and node, and step time, on N nodes x G GPUs.

The model is built on the meta device from a named shape and its parameters counted exactly; memory
follows from how this project trains (planning/memory.py), step time from the MFU this trainer measured
and the bytes its collectives move (planning/step_time.py, planning/measured.py). `--check` compares the
memory model with the runs measured on one H200; `--lineage` plans every trained run of the card's
lineage (config.yaml, the full scale or `--scale`; planning/lineage.py) and the jobs beside them (planning/side_jobs.py).

Run as:
    python tools/plan.py --family nemotron_h --size 30b_a3b --vocab 131072 --gpus 8 --gpu-gib 79.18 \
        --global-batch-rows 512 --micro-batch-rows 2 --tokens-per-row 4096 --activation-checkpointing
    python tools/plan.py --nodes 2 --sharding hybrid ...
    python tools/plan.py --lineage --nodes-list 1,2,4
    python tools/plan.py --lineage --scale gpu --nodes-list 1
    python tools/plan.py --lineage --nodes-list 1 --expert-parallel-list 1,8 \
        --token-stats results/embedded/data/token_stats.json
    python tools/plan.py --check
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from lineage.errors import run_cli  # noqa: E402
from lineage.parallel_dims import SHARDINGS, Keys, ParallelDims  # noqa: E402
from lineage.training.fsdp import ACCUMULATIONS  # noqa: E402
from lineage.training.recipe import FUSED_LOSSES  # noqa: E402
from lineage.workflow.cluster import host_memory_mb  # noqa: E402
from planning.lineage import lineage_table  # noqa: E402
from planning.measured import CHAT_LOSS_SHARE, MEASURED_MFU  # noqa: E402
from planning.memory import (  # noqa: E402
    GIB,
    H100_GIB,
    Plan,
    build_meta_model,
    check,
    check_expert_parallel,
    expert_params,
    fits,
    plan,
)
from planning.step_time import A2A_GBS, INTER_GBS, INTRA_GBS, all_to_all_bytes, step_time  # noqa: E402

# What the single job's errors name: its degrees are flags.
FLAG_KEYS = Keys(nodes="--nodes", processes="--gpus", sharding="--sharding", expert_parallel="--expert-parallel")


def report(result: Plan, model, args, dims: ParallelDims) -> str:
    tokens_per_step = args.global_batch_rows * args.tokens_per_row
    world = dims.world_size
    micro_steps = max(1, args.global_batch_rows // (args.micro_batch_rows * world))
    timing = step_time(
        result.counts,
        tokens=tokens_per_step,
        loss_share=args.loss_share,
        dims=dims,
        micro_steps=micro_steps,
        mfu=args.mfu,
        peak_tflops=args.peak_tflops,
        intra_gbs=args.intra_gbs,
        inter_gbs=args.inter_gbs,
        accumulate=args.accumulate,
        experts=expert_params(model),
        all_to_all_bytes=all_to_all_bytes(model, tokens_per_step / world, dims.expert, args.activation_checkpointing),
        a2a_gbs=args.a2a_gbs,
    )
    gathered = (
        "all weights (bf16) and full fp32 grads (unsharded accumulation)"
        if args.accumulate == "unsharded"
        else "gathered bf16 blocks + root, one block's fp32 grads"
    )
    rows = [
        ("weights + grads + AdamW (fp32, sharded)", result.static),
        (gathered, result.gathered),
        (
            "activations ("
            + {False: "all kept", True: "checkpointed", "selective": "selective"}[args.activation_checkpointing]
            + ")",
            result.activations,
        ),
        ("LM head and loss (logits, or the fused kernel's gradient and chunk)", result.logits),
        ("outside torch's allocator: CUDA context, NCCL buffers", result.reserve),
    ]
    group = dims.shard
    lines = [
        f"{args.family}/{args.size}: {result.counts.total / 1e9:.2f}B parameters, "
        f"{result.counts.active / 1e9:.2f}B active; "
        f"{dims.nodes} node(s) x {dims.processes_per_node} GPUs of {args.gpu_gib} GiB, {dims.sharding} sharding (state "
        f"sharded over {group} GPUs); micro-batch {args.micro_batch_rows} x {args.tokens_per_row} tokens, "
        f"{micro_steps} per step",
        "",
        "| memory per GPU | GiB |",
        "|---|---|",
    ]
    lines += [f"| {name} | {value / GIB:.1f} |" for name, value in rows]
    verdict = "fits" if fits(result.peak, args.gpu_gib) else "DOES NOT FIT"
    moved = timing.traffic
    lines += [
        f"| **peak** | **{result.peak / GIB:.1f}** ({verdict}) |",
        "",
        f"host memory per node (mem_mb: auto): {host_memory_mb(result.counts.total, dims.processes_per_node) / 1024:,.0f} GiB",
        f"step of {args.global_batch_rows} rows x {args.tokens_per_row} tokens: compute {timing.compute:.1f} s "
        f"at MFU {args.mfu:.1%}; communication {moved.seconds:.1f} s ({moved.intra_bytes / 1e9:,.0f} GB per "
        f"GPU within the node at {args.intra_gbs:g} GB/s, {moved.inter_bytes / 1e9:,.0f} GB across nodes at "
        f"{args.inter_gbs:g} GB/s; expert parallel {dims.expert}: all-to-all {timing.all_to_all:.1f} s); "
        f"step {timing.overlapped:.1f}-{timing.serial:.1f} s (overlapped-serial), "
        f"{tokens_per_step / timing.overlapped / world:,.0f}-{tokens_per_step / timing.serial / world:,.0f} "
        "tokens/s/GPU",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", default=None, help="default nemotron_h (--lineage: the scale's Base)")
    parser.add_argument("--size", default=None, help="default 30b_a3b (--lineage: the scale's Base)")
    parser.add_argument("--vocab", type=int, default=None, help="default 131072 (--lineage: the scale's Base)")
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--gpus", type=int, default=None, help="GPUs per node (default 8; --lineage: the scale's)")
    parser.add_argument(
        "--sharding",
        choices=SHARDINGS,
        default="full",
        help="hybrid: shard within a node, replicate across nodes",
    )
    parser.add_argument("--intra-gbs", type=float, default=INTRA_GBS, help="bus bandwidth within a node, GB/s per GPU")
    parser.add_argument("--inter-gbs", type=float, default=INTER_GBS, help="bus bandwidth across nodes, GB/s per GPU")
    parser.add_argument(
        "--gpu-gib",
        type=float,
        default=H100_GIB,
        help=f"the device's total memory as torch reports it (default {H100_GIB}: an H100 80GB)",
    )
    parser.add_argument("--global-batch-rows", type=int, default=512)
    parser.add_argument("--micro-batch-rows", type=int, default=2)
    parser.add_argument("--tokens-per-row", type=int, default=4096, help="padded row length (or pack length)")
    parser.add_argument(
        "--activation-checkpointing",
        nargs="?",
        const=True,
        default=False,
        choices=[True, "selective"],
        type=lambda text: "selective" if text == "selective" else text,
        help="full (no value) or selective (keep the products' outputs)",
    )
    parser.add_argument("--ce-chunk-tokens", type=int, default=0, help="as train_sft.py's flag (0: off)")
    parser.add_argument(
        "--fused-loss",
        nargs="?",
        const="liger",
        default="none",
        choices=FUSED_LOSSES,
        help="train_sft.py's --fused-loss (alone: liger, no logits kept; compiled: bf16 logits only)",
    )
    parser.add_argument(
        "--accumulate",
        choices=ACCUMULATIONS,
        default="sharded",
        help="train_sft.py's --accumulate (unsharded: all weights and gradients on every GPU)",
    )
    parser.add_argument(
        "--loss-share",
        type=float,
        default=1.0,
        help=f"share of tokens with a loss, where the head runs (the chat rows: {CHAT_LOSS_SHARE})",
    )
    parser.add_argument(
        "--mfu",
        type=float,
        default=None,
        help=f"model FLOPs utilisation (default {MEASURED_MFU * 100:.1f}%%; --lineage: as measured at each pack size)",
    )
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="dense bf16 per GPU (H100/H200: 989)")
    parser.add_argument("--check", action="store_true", help="compare with the measured single-H200 runs")
    parser.add_argument("--lineage", action="store_true", help="plan the card's trained runs (config.yaml, --scale)")
    parser.add_argument("--scale", default="full", help="--lineage: the scale of config.yaml whose runs are planned")
    parser.add_argument(
        "--pair-lengths",
        type=Path,
        default=None,
        metavar="FILE",
        help="--lineage: a reference_logprobs.py file whose pair lengths DPO steps are planned with",
    )
    parser.add_argument(
        "--nodes-list",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 2, 4],
        help="node counts of --lineage (default 1,2,4)",
    )
    parser.add_argument(
        "--expert-parallel",
        type=int,
        default=1,
        metavar="E",
        help="routed experts split over E GPUs of a node (1: FSDP shards them like the rest)",
    )
    parser.add_argument(
        "--expert-parallel-list",
        type=lambda text: [int(n) for n in text.split(",")],
        default=None,
        help="expert-parallel degrees of --lineage (e.g. 1,8; default: the full scale's train.expert_parallel)",
    )
    parser.add_argument(
        "--a2a-gbs", type=float, default=A2A_GBS, help="all-to-all bandwidth within a node, GB/s per GPU"
    )
    parser.add_argument(
        "--pack-tokens",
        type=int,
        default=None,
        metavar="N",
        help="--lineage: SFT packs of N tokens (default: the scale's own, TrainRecipe.micro_batch_tokens)",
    )
    parser.add_argument(
        "--token-stats",
        type=Path,
        default=None,
        metavar="FILE",
        help="--lineage: the token_stats rule's output; steps are packed from these row lengths",
    )
    args = parser.parse_args(argv)
    if args.check:
        print(check())
        return 0
    if args.lineage:
        print(lineage_table(args))
        return 0
    args.family, args.size = args.family or "nemotron_h", args.size or "30b_a3b"
    args.vocab, args.gpus = args.vocab or 131072, args.gpus or 8
    model = build_meta_model(args.family, args.size, args.vocab)
    dims = ParallelDims(args.nodes, args.gpus, args.sharding, args.expert_parallel, FLAG_KEYS)
    check_expert_parallel(model, dims)
    args.mfu = MEASURED_MFU if args.mfu is None else args.mfu
    result = plan(
        model,
        gpus=dims.shard,
        micro_tokens=args.micro_batch_rows * args.tokens_per_row,
        checkpointing=args.activation_checkpointing,
        ce_chunk_tokens=args.ce_chunk_tokens,
        loss_share=args.loss_share,
        fused_loss=args.fused_loss,
        accumulate=args.accumulate,
        expert_parallel=dims.expert,
        world_size=dims.world_size,
    )
    print(report(result, model, args, dims))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
