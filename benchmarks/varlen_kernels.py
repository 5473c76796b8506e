"""FlashAttention's varlen kernel on the trainer's own packs: torch's built-in FA2 against flash-attn-4.

The packs are the ones train_sft.py trains on (the chat rows, packed to --pack-tokens), so the
row lengths are the real ones: chat rows of a few hundred tokens, where a kernel's per-block
overhead and its tiles' causal waste weigh most. Each kernel runs the trainer's attention entry
(lineage.training.varlen_attention, grouped-query heads as the model gives them) forward and
backward on the same random bf16 q, k, v; times are medians of CUDA-event timings after warm-up.
TFLOP/s count each row's causal attention (forward 2·d·h·L² per row, backward 2.5x that), not
the tiles a kernel computes. Both kernels' outputs are compared with float32 SDPA row by row.

A kernel that fails prints its error in its row (with torch 2.11, flash-attn-4 4.0.0b36 does:
benchmarks/RESULTS.md). Run as (repository root, one GPU; flash-attn-4 importable for the fa4 rows):
    PYTHONPATH=workflow/scripts python benchmarks/varlen_kernels.py --tokenizer OUT/tokenizer \\
        --data OUT/data/winners_x40.jsonl --data OUT/data/general_mix.jsonl
"""

from __future__ import annotations

import argparse
import statistics
import sys

import torch
import torch.nn.functional as F
from transformers import AutoTokenizer

import train_sft
from lineage.chat import load_bundle
from lineage.training import dist as tdist
from lineage.training import varlen_attention
from lineage.training.data import BatchPlan

# (name, query heads, key/value heads, head dim): the two models' attention layers
SHAPES = (("llama-1b", 32, 8, 64), ("nemotron-h card", 32, 2, 128))


KERNELS = ("fa2", "fa4")  # torch's built-in FlashAttention 2, or flash-attn-4 put in its place


def use_kernel(kernel: str) -> None:
    """Route torch's flash-attention ops (the varlen kernel's) to `kernel` for this process.

    fa4 is the flash-attn-4 package (CuTe DSL kernels for Hopper and Blackwell), registered in
    torch's dispatcher by torch.nn.attention.activate_flash_attention_impl: the ops keep their
    schema, so compiled blocks would trace them as before. Only the benchmarks use it: with torch
    2.11 and flash-attn-4 4.0.0b36 the registered forward fails (benchmarks/RESULTS.md).
    """
    if kernel not in KERNELS:
        raise ValueError(f"attention kernel {kernel!r}: choose one of {', '.join(KERNELS)}")
    if kernel == "fa2":
        return
    try:
        from torch.nn.attention import activate_flash_attention_impl, list_flash_attention_impls
    except ImportError as error:
        raise RuntimeError(f"the fa4 kernel needs torch >= 2.10 (flash-attention registry); this is torch "
                           f"{torch.__version__}") from error
    if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] not in (9, 10):
        raise RuntimeError("the fa4 kernel runs on Hopper or Blackwell GPUs (compute capability 9.x or 10.x)")
    if "FA4" not in list_flash_attention_impls():
        raise RuntimeError(f"this torch {torch.__version__} has no FA4 registration (it lists "
                           f"{list_flash_attention_impls()}); use fa2")
    try:
        activate_flash_attention_impl("FA4")
    except ImportError as error:
        raise RuntimeError("the fa4 kernel needs the flash-attn-4 package: pip install flash-attn-4") from error


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--data", action="append", required=True)
    parser.add_argument("--pack-tokens", type=int, default=32768)
    parser.add_argument("--rows", type=int, default=128, help="rows packed (one step of that global batch)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--kernels", default="fa2,fa4", help="comma-separated, in order (fa4 stays on once used)")
    return parser.parse_args(argv)


def real_packs(args) -> list[tuple[torch.Tensor, int]]:
    """(cu_seq_lens on the GPU, longest row) of the packs of one step of the chat rows."""
    train_args, recipe = train_sft.parse_args([
        "--init", args.tokenizer, "--out", "/nonexistent/unused", *sum((["--data", d] for d in args.data), []),
        "--global-batch-rows", str(args.rows), "--micro-batch-rows", str(args.rows), "--max-length", "4096",
        "--steps", "1", "--packing", "--packed-attention", "varlen", "--pack-tokens", str(args.pack_tokens),
        "--precision", "bf16", "--device", "cuda"])
    env = tdist.init_distributed("cuda")
    plan = BatchPlan(recipe.global_batch_rows, recipe.micro_batch_rows, env.world_size)
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    step_data, _, _ = train_sft.prepare_data(train_args, recipe, env, plan, tokenizer, load_bundle(args.tokenizer))
    return [(micro["cu_seq_lens"].cuda(), micro["longest"]) for micro in step_data(0).micro_batches]


def timed(fn, repeats: int) -> float:
    """Median milliseconds of fn() over `repeats` runs, after three warm-up runs."""
    for _ in range(3):
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


def measure(packs, heads: int, kv_heads: int, dim: int, repeats: int):
    """(forward ms, backward ms, worst error vs fp32, gradients) summed over the packs."""
    fwd = bwd = 0.0
    errors, grads = [], []
    generator = torch.Generator(device="cuda").manual_seed(0)
    for cu, longest in packs:
        tokens = int(cu[-1])
        q, k, v = (torch.randn(1, h, tokens, dim, device="cuda", generator=generator, dtype=torch.bfloat16)
                   .requires_grad_() for h in (heads, kv_heads, kv_heads))
        bound = varlen_attention.grid_length(longest)

        def forward():
            return varlen_attention.varlen_attention(None, q, k, v, None, cu_seq_lens_q=cu, max_length_q=bound)[0]

        out = forward()
        dout = torch.randn_like(out)

        def backward():
            q.grad = k.grad = v.grad = None
            forward().backward(dout)

        forward_ms = timed(forward, repeats)
        fwd, bwd = fwd + forward_ms, bwd + timed(backward, repeats) - forward_ms  # the timed backward reruns it
        errors.append(reference_error(*(t[0].transpose(0, 1) for t in (q, k, v)), out[0].detach(), cu))
        backward()
        grads.append(torch.cat([t.grad.flatten().float() for t in (q, k, v)]))
    return fwd, bwd, max(errors), grads


def main(args) -> int:
    packs = real_packs(args)
    lengths = [b - a for cu, _ in packs for a, b in zip(cu.tolist(), cu.tolist()[1:])]
    print(f"packs: {len(packs)} of {args.pack_tokens} tokens, {len(lengths)} rows (padding tails included), "
          f"longest {max(lengths)}, mean {statistics.mean(lengths):.0f}; {torch.cuda.get_device_name()}, "
          f"torch {torch.__version__}")
    print("\n| shape | kernel | forward ms | backward ms | forward TFLOP/s | backward TFLOP/s | rel. error vs fp32 "
          "| grads vs fa2 |")
    print("|---|---|---|---|---|---|---|---|")
    kept: dict[str, list] = {}
    for kernel in args.kernels.split(","):
        try:
            use_kernel(kernel)
        except RuntimeError as error:
            print(f"| all | {kernel} | not run: {error} |")
            continue
        for name, heads, kv_heads, dim in SHAPES:
            label = f"{name} ({heads}/{kv_heads} heads of {dim})"
            try:
                fwd, bwd, error, grads = measure(packs, heads, kv_heads, dim, args.repeats)
            except Exception as failure:  # a kernel package that does not fit this torch: say so, go on
                print(f"| {label} | {kernel} | failed: {type(failure).__name__}: {failure} |")
                continue
            flops = 2.0 * dim * heads * float(sum(n * n for n in lengths))  # causal: half of 4·d·L² per head
            versus = "-"
            if kernel != "fa2" and name in kept:
                ref = torch.cat(kept[name])
                versus = f"{((torch.cat(grads) - ref).norm() / ref.norm()).item():.1e}"
            kept.setdefault(name, grads)
            print(f"| {label} | {kernel} | {fwd:.2f} | {bwd:.2f} | {flops / fwd / 1e9:.0f} | "
                  f"{2.5 * flops / bwd / 1e9:.0f} | {error:.1e} | {versus} |")
    tdist.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(parse_args()))
