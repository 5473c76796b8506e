"""Batched vs one-item-at-a-time evaluation inference: same outputs, how much faster.

Run as: python benchmarks/eval.py --size tiny                       # CPU, seconds
        python benchmarks/eval.py --size 100m --device cuda --items 64 --max-new-tokens 128

A random-init model of the chosen shape (Llama, or the hybrid Mamba/attention Nemotron-H
family with --arch nemotron_h) scores random (context, continuation) requests and greedily
continues random prompts, first one item at a time (no padding; scoring with a full forward
per request, generation through generate with a batch of one), then batched as the
evaluation runs it. It asserts the scores agree to 1e-4 per scored token and the generated
token ids are identical, then prints items/s, tokens/s and the speedup as a Markdown table.
On a GPU, batch shapes select different matrix kernels, so a prompt may diverge where the
one-at-a-time top-2 logits are within --tie-gap (a near-tie that rounding decides either
way); each such case is printed with its gap, and any other divergence fails. float32 by
default (TF32 off): in bf16 the rounding differences are large enough that batched and
one-at-a-time greedy outputs of a random model routinely diverge.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from cuda_timing import wall  # noqa: E402

from lineage.evaluation.generation import generate_greedy, sequential_generate  # noqa: E402
from lineage.evaluation.scoring import loglikelihood, naive_loglikelihood  # noqa: E402

SIZES = {  # hidden, layers, heads, kv heads, intermediate, vocab
    "tiny": (64, 2, 4, 2, 128, 1024),
    "small": (256, 4, 8, 4, 768, 8192),
    "100m": (768, 12, 12, 4, 2048, 32000),
    "1b": (2048, 16, 32, 8, 5632, 32000),
}
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def build_model(size: str, arch: str, dtype: torch.dtype, device: str, seed: int):
    from transformers import AutoModelForCausalLM, LlamaConfig

    hidden, layers, heads, kv, inter, vocab = SIZES[size]
    if arch == "llama":
        config = LlamaConfig(
            vocab_size=vocab,
            hidden_size=hidden,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=kv,
            intermediate_size=inter,
            max_position_embeddings=4096,
            pad_token_id=0,
            bos_token_id=None,
            eos_token_id=None,
        )
    else:
        from transformers import NemotronHConfig

        pattern = (["mamba", "attention", "mlp"] * layers)[: max(layers, 3)]
        config = NemotronHConfig(
            vocab_size=vocab,
            hidden_size=hidden,
            layers_block_type=pattern,
            num_attention_heads=heads,
            num_key_value_heads=kv,
            head_dim=hidden // heads,
            intermediate_size=inter,
            mamba_num_heads=heads,
            mamba_head_dim=2 * hidden // heads,
            ssm_state_size=16,
            n_groups=1,
            chunk_size=64,
            max_position_embeddings=4096,
            pad_token_id=0,
            bos_token_id=None,
            eos_token_id=None,
        )
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=dtype).to(device).eval()
    return model, vocab, sum(p.numel() for p in model.parameters())


@torch.inference_mode()
def top2_gap(model, ids: list[int]) -> float:
    """Gap between the two largest next-token logits after `ids` (one row, no cache): a near-tie
    is where batched and one-at-a-time greedy decoding may rightly part."""
    tensor = torch.tensor([ids], device=next(model.parameters()).device)
    top = model(input_ids=tensor, use_cache=False).logits[0, -1].float().topk(2).values
    return float(top[0] - top[1])


def divergence(model, prompt, a, b) -> tuple[int, float]:
    """(first step where two greedy outputs differ, top-2 logit gap of the one-at-a-time forward there)."""
    step = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return step, top2_gap(model, list(prompt) + list(a[:step]))


def row(phase, mode, items, tokens, seconds, baseline=None):
    speedup = f"{baseline / seconds:.2f}x" if baseline else "1.00x"
    rates = f"{items / seconds:.2f} | {tokens / seconds:.1f}"
    return f"| {phase} | {mode} | {items} | {tokens} | {seconds:.2f} | {rates} | {speedup} |"


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Options every eval benchmark shares: where and in what dtype it runs, how many items, the tie rule."""
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    parser.add_argument("--items", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--tie-gap",
        type=float,
        default=1e-3,
        help="a divergence is excused only where the top-2 logit gap is below this (a near-tie)",
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny")
    parser.add_argument("--arch", choices=["llama", "nemotron_h"], default="llama")
    add_run_arguments(parser)
    parser.add_argument("--context-tokens", default="32-256", help="min-max prompt length")
    parser.add_argument("--continuation-tokens", default="1-64", help="min-max scored continuation length")
    args = parser.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_num_threads(max(1, torch.get_num_threads()))
    model, vocab, n_params = build_model(args.size, args.arch, DTYPES[args.dtype], args.device, args.seed)
    rng = random.Random(args.seed)
    lo, hi = map(int, args.context_tokens.split("-"))
    clo, chi = map(int, args.continuation_tokens.split("-"))
    prompts = [[rng.randrange(1, vocab) for _ in range(rng.randint(lo, hi))] for _ in range(args.items)]
    requests = [(p, [rng.randrange(1, vocab) for _ in range(rng.randint(clo, chi))]) for p in prompts]
    score_tokens = sum(len(c) + len(k) for c, k in requests)

    # Warm-up outside the timings: first calls pay for allocator growth and lazy initialisation.
    naive_loglikelihood(model, requests[:2])
    loglikelihood(model, requests[:2], batch_size=2, pad_id=0)
    kw = {"max_new_tokens": args.max_new_tokens, "stop_ids": [vocab + 1], "pad_id": 0}
    generate_greedy(model, prompts[:2], batch_size=2, **{**kw, "max_new_tokens": 2})

    naive, t_naive = wall(lambda: naive_loglikelihood(model, requests), args.device)
    batched, t_batched = wall(lambda: loglikelihood(model, requests, batch_size=args.batch_size, pad_id=0), args.device)
    # Equal to 1e-4 per scored token: a sum over n tokens carries n per-token rounding differences,
    # and batch shapes pick different matrix kernels on a GPU.
    worst = max(abs(a.logprob - b.logprob) / a.n_tokens for a, b in zip(naive, batched))
    worst_sum = max(abs(a.logprob - b.logprob) for a, b in zip(naive, batched))

    seq, g_naive = wall(lambda: sequential_generate(model, prompts, **kw), args.device)
    bat, g_batched = wall(lambda: generate_greedy(model, prompts, batch_size=args.batch_size, **kw), args.device)
    mismatched = [i for i, (a, b) in enumerate(zip(seq, bat)) if a.token_ids != b.token_ids]
    ties = {i: divergence(model, prompts[i], seq[i].token_ids, bat[i].token_ids) for i in mismatched}
    unexplained = [i for i, (_, gap) in ties.items() if gap > args.tie_gap]
    gen_tokens = sum(len(g.token_ids) for g in bat)

    device = torch.cuda.get_device_name() if args.device == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    print(
        f"{args.arch} {args.size}: {n_params / 1e6:.1f}M parameters, {args.dtype}, {device}; {args.items} items, "
        f"batch {args.batch_size}, contexts {args.context_tokens} tokens, continuations {args.continuation_tokens}, "
        f"{args.max_new_tokens} new tokens per prompt"
    )
    print(
        f"scores: max |Δ summed log-prob| {worst_sum:.1e}, per scored token {worst:.1e}; "
        f"generated token ids equal for {len(bat) - len(mismatched)} of {len(bat)} prompts"
    )
    for i, (step, gap) in ties.items():
        print(
            f"  prompt {i} diverges at step {step}: top-2 logit gap {gap:.1e} "
            f"({'a near-tie: rounding picks either token' if gap <= args.tie_gap else 'NOT a near-tie'})"
        )
    print()
    print("| phase | mode | items | tokens | s | items/s | tokens/s | speedup |")
    print("|---|---|---|---|---|---|---|---|")
    print(row("log-likelihood", "one at a time", args.items, score_tokens, t_naive))
    print(row("log-likelihood", f"batched ({args.batch_size})", args.items, score_tokens, t_batched, t_naive))
    print(row("greedy generation", "one at a time", args.items, gen_tokens, g_naive))
    print(row("greedy generation", f"batched ({args.batch_size})", args.items, gen_tokens, g_batched, g_naive))
    assert worst <= 1e-4, f"batched scores differ from one-at-a-time scores by {worst:.2e} per token"
    assert not unexplained, f"batched generation differs from one-at-a-time generation for items {unexplained[:10]}"
    return 0


if __name__ == "__main__":
    sys.exit(main())
