"""The varlen attention kernels on the trainer's own packs: FlashAttention 2, flash-attn-4 and cuDNN.

The packs are the ones train_sft.py trains on (the chat rows, packed to --pack-tokens), so the
row lengths are the real ones: chat rows of a few hundred tokens, where a kernel's per-block
overhead and its tiles' causal waste weigh most. fa2 and fa4 run the trainer's attention entry
(lineage.training.varlen_attention; fa4 with lineage.training.flash_attention_4 activated), cudnn
an eager entry of this file; grouped-query heads as the model gives them, forward and backward on
the same random bf16 q, k, v. Times are medians of CUDA-event timings after warm-up; each pack's
first call is timed apart (flash-attn-4 compiles its kernels at first use). TFLOP/s count each
row's causal attention (forward 2·d·h·L² per row, backward 2.5x that), not the tiles a kernel
computes. Outputs are compared with float32 SDPA row by row, gradients with fa2's.

A kernel that fails prints its error in its row. Run as (repository root, one GPU; flash-attn-4
importable for the fa4 rows):
    PYTHONPATH=workflow/scripts python benchmarks/varlen_kernels.py --tokenizer OUT/tokenizer \\
        --data OUT/data/winners_x40.jsonl --data OUT/data/general_mix.jsonl
"""

from __future__ import annotations

import argparse
import statistics
import sys

import torch
import torch.nn.functional as F
import train_sft
from cuda_timing import timed
from transformers import AutoTokenizer

from lineage.chat import load_bundle
from lineage.training import dist as tdist
from lineage.training import flash_attention_4, varlen_attention
from lineage.training.data import BatchPlan

# (name, query heads, key/value heads, head dim): the two models' attention layers
SHAPES = (("llama-1b", 32, 8, 64), ("nemotron-h card", 32, 2, 128))


KERNELS = ("fa2", "fa4", "cudnn")


def cudnn_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """The varlen entry's contract through cuDNN's fused attention on the ragged rows, eager.

    aten._cudnn_attention_forward with cumulative lengths is the path of torch's jagged nested
    tensors; aten's autograd formula gives its backward. Not a trainer option: on the chat rows
    its forward took 48x FlashAttention 2's time (benchmarks/RESULTS.md).
    """
    q, k, v = (t[0].transpose(0, 1).contiguous() for t in (query, key, value))  # (tokens, heads, dim)
    cu, bound = kwargs["cu_seq_lens_q"], kwargs["max_length_q"]
    out = torch.ops.aten._cudnn_attention_forward(
        q, k, v, None, cu, cu, bound, bound, True, 0.0, True, False, scale=scaling
    )[0]
    return out.unsqueeze(0), None


def entry(kernel: str):
    """The attention entry that runs `kernel`; fa4 stays under torch's flash-attention ops once chosen."""
    if kernel == "fa4":
        flash_attention_4.activate(torch.device("cuda"))
    return cudnn_attention if kernel == "cudnn" else varlen_attention.varlen_attention


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--data", action="append", required=True)
    parser.add_argument("--pack-tokens", type=int, default=32768)
    parser.add_argument("--rows", type=int, default=128, help="rows packed (one step of that global batch)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument(
        "--kernels",
        default="fa2,fa4",
        help=f"comma-separated, of {', '.join(KERNELS)}, in order (fa4 stays on once used: keep it last)",
    )
    return parser.parse_args(argv)


def real_packs(args) -> list[tuple[torch.Tensor, int]]:
    """(cu_seq_lens on the GPU, longest row) of the packs of one step of the chat rows."""
    train_args, recipe = train_sft.parse_args(
        [
            "--init",
            args.tokenizer,
            "--out",
            "/nonexistent/unused",
            *sum((["--data", d] for d in args.data), []),
            "--global-batch-rows",
            str(args.rows),
            "--micro-batch-rows",
            str(args.rows),
            "--max-length",
            "4096",
            "--steps",
            "1",
            "--packing",
            "--packed-attention",
            "varlen",
            "--pack-tokens",
            str(args.pack_tokens),
            "--precision",
            "bf16",
            "--device",
            "cuda",
        ]
    )
    env = tdist.init_distributed("cuda")
    plan = BatchPlan(recipe.global_batch_rows, recipe.micro_batch_rows, env.world_size)
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    step_data, _, _ = train_sft.prepare_data(train_args, recipe, env, plan, tokenizer, load_bundle(args.tokenizer))
    return [(micro["cu_seq_lens"].cuda(), micro["longest"]) for micro in step_data(0).micro_batches]


def reference_error(q, k, v, out, cu: torch.Tensor, rows: int = 8) -> float:
    """Max over the first `rows` rows of |out - float32 SDPA| / |float32 SDPA| (relative norm)."""
    worst, bounds = 0.0, cu.tolist()
    groups = q.shape[1] // k.shape[1]
    for start, end in list(zip(bounds, bounds[1:]))[:rows]:
        qs, ks, vs = (t[start:end].float().transpose(0, 1) for t in (q, k, v))
        ks, vs = ks.repeat_interleave(groups, 0), vs.repeat_interleave(groups, 0)
        ref = F.scaled_dot_product_attention(qs, ks, vs, is_causal=True).transpose(0, 1)
        worst = max(worst, ((out[start:end].float() - ref).norm() / ref.norm()).item())
    return worst


def measure(entry, packs, heads: int, kv_heads: int, dim: int, repeats: int):
    """(forward ms, backward ms, first-call ms, worst error vs fp32, gradients), each summed over the packs.

    The first-call time is a pack's first forward and backward, less the steady ones: what a new
    shape costs the kernel beyond its work (cuDNN's plan building).
    """
    fwd = bwd = first = 0.0
    errors, grads = [], []
    generator = torch.Generator(device="cuda").manual_seed(0)
    for cu, longest in packs:
        tokens = int(cu[-1])
        q, k, v = (
            torch.randn(1, h, tokens, dim, device="cuda", generator=generator, dtype=torch.bfloat16).requires_grad_()
            for h in (heads, kv_heads, kv_heads)
        )
        bound = varlen_attention.grid_length(longest)
        dout = torch.randn(1, tokens, heads, dim, device="cuda", generator=generator, dtype=torch.bfloat16)

        def forward():
            return entry(None, q, k, v, None, cu_seq_lens_q=cu, max_length_q=bound)[0]

        def backward():
            q.grad = k.grad = v.grad = None
            forward().backward(dout)

        cold = timed(backward, 1, warmup=0)
        forward_ms = timed(forward, repeats)
        both_ms = timed(backward, repeats)  # the timed backward reruns the forward
        fwd, bwd, first = fwd + forward_ms, bwd + both_ms - forward_ms, first + cold - both_ms
        errors.append(reference_error(*(t[0].transpose(0, 1) for t in (q, k, v)), forward()[0].detach(), cu))
        backward()
        grads.append(torch.cat([t.grad.flatten().float() for t in (q, k, v)]))
    return fwd, bwd, first, max(errors), grads


def main(args) -> int:
    packs = real_packs(args)
    lengths = [b - a for cu, _ in packs for a, b in zip(cu.tolist(), cu.tolist()[1:])]
    print(
        f"packs: {len(packs)} of {args.pack_tokens} tokens, {len(lengths)} rows (padding tails included), "
        f"longest {max(lengths)}, mean {statistics.mean(lengths):.0f}; {torch.cuda.get_device_name()}, "
        f"torch {torch.__version__}"
    )
    print(
        "\n| shape | kernel | forward ms | backward ms | forward TFLOP/s | backward TFLOP/s | first calls, extra ms "
        "| rel. error vs fp32 | grads vs fa2 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    kept: dict[str, list] = {}
    for kernel in args.kernels.split(","):
        try:
            attend = entry(kernel)
        except RuntimeError as error:
            print(f"| all | {kernel} | not run: {error} |")
            continue
        for name, heads, kv_heads, dim in SHAPES:
            label = f"{name} ({heads}/{kv_heads} heads of {dim})"
            try:
                fwd, bwd, first, error, grads = measure(attend, packs, heads, kv_heads, dim, args.repeats)
            except Exception as failure:  # a kernel package that does not fit this torch: say so, go on
                print(f"| {label} | {kernel} | failed: {type(failure).__name__}: {failure} |")
                continue
            flops = 2.0 * dim * heads * float(sum(n * n for n in lengths))  # causal: half of 4·d·L² per head
            versus = "-"
            if kernel != "fa2" and name in kept:
                ref = torch.cat(kept[name])
                versus = f"{((torch.cat(grads) - ref).norm() / ref.norm()).item():.1e}"
            kept.setdefault(name, grads)
            print(
                f"| {label} | {kernel} | {fwd:.2f} | {bwd:.2f} | {flops / fwd / 1e9:.0f} | "
                f"{2.5 * flops / bwd / 1e9:.0f} | {first:.0f} | {error:.1e} | {versus} |"
            )
    tdist.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(parse_args()))
