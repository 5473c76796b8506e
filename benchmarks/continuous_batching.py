"""Generation in fixed batches against continuous batching, at the generating benchmarks' lengths.

Run as: python benchmarks/continuous_batching.py                                  # CPU, tiny, seconds
        python benchmarks/continuous_batching.py --device cuda --dtype bfloat16 \\
            --size 30b_a3b_reduced --vocab-size 131072 --batch-size 32

A random-init Nemotron-H of the chosen shape greedily answers prompts whose token lengths are those
of the shipped items (GSM8K, IFEval and the degeneration prompts, with the system prompt and the
chat template's markers, at 4 characters a token), each with its own answer length: a random model does not stop, so the stop is given,
drawn log-normally around the length a chat model writes for that benchmark (--answer-median,
capped at the benchmark's own max_new_tokens). Both decoders replay the same CUDA-graph step:
"fixed" runs a sorted batch until its longest answer ends (what `eval.cache: graph` does), and
"continuous" refills a row as soon as its answer ends (`eval.cache: continuous`). Printed per
benchmark: generated tokens, wall time, tokens/s, the speed-up, and how many items got the same
tokens from both (bf16 rounding differs with the batch a row shares, so a near-tie may flip).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow" / "scripts"))

from cuda_timing import wall  # noqa: E402

from lineage.evaluation.benchmarks import BENCHMARKS  # noqa: E402
from lineage.evaluation.generation import generate_greedy  # noqa: E402
from lineage.modeling import SHAPES  # noqa: E402

SAMPLES = {"gsm8k": "gsm8k.jsonl", "ifeval": "ifeval.jsonl", "degen": "gen_prompts.jsonl"}
ANSWER_MEDIAN = {"gsm8k": 180, "ifeval": 320, "degen": 260}  # tokens; assumed, not measured on the card's model
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


CHARS_PER_TOKEN = 4  # English text under a 131k-entry BPE vocabulary
TEMPLATE_TOKENS = 12  # the turn markers of a system, a user and an assistant header


def prompt_lengths(benchmark: str) -> list[int]:
    """Token lengths of the shipped items' prompts as the evaluation sends them (system turn included)."""
    from lineage.evaluation.benchmarks import gsm8k, ifeval

    system = (REPO / "resources" / "bundle" / "system_prompt.txt").read_text()
    rows = [json.loads(line) for line in (REPO / "resources/sample/eval" / SAMPLES[benchmark]).read_text().splitlines()]
    messages = {"gsm8k": gsm8k.messages, "ifeval": ifeval.messages, "degen": lambda item: item["messages"]}[benchmark]
    return [
        TEMPLATE_TOKENS + (len(system) + sum(len(m["content"]) for m in messages(row))) // CHARS_PER_TOKEN
        for row in rows
    ]


def workload(benchmark: str, items: int, median: int, rng: random.Random) -> tuple[list[list[int]], list[int], int]:
    """(prompts, answer lengths, the benchmark's max_new_tokens) for `items` items."""
    cap = BENCHMARKS[benchmark].max_new_tokens
    lengths = prompt_lengths(benchmark)
    prompts = [[rng.randrange(10, 1000) for _ in range(rng.choice(lengths))] for _ in range(items)]
    answers = [max(1, min(cap, round(math.exp(rng.gauss(math.log(median), 0.6))))) for _ in range(items)]
    return prompts, answers, cap


def build_model(size: str, vocab: int, dtype: torch.dtype, device: str, seed: int):
    from transformers import AutoModelForCausalLM, NemotronHConfig

    torch.manual_seed(seed)
    config = NemotronHConfig(**SHAPES[("nemotron_h", size)], vocab_size=vocab)
    with torch.device(device):
        return AutoModelForCausalLM.from_config(config, dtype=dtype).eval()


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(s for f, s in SHAPES if f == "nemotron_h"), default="tiny")
    parser.add_argument("--vocab-size", type=int, default=4096)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--benchmarks", default="gsm8k,ifeval,degen")
    parser.add_argument("--items", type=int, default=16, help="items per benchmark")
    parser.add_argument("--answer-scale", type=float, default=1.0, help="multiply the answer medians (CPU: 0.1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    model = build_model(args.size, args.vocab_size, DTYPES[args.dtype], args.device, args.seed)
    params = sum(p.numel() for p in model.parameters())
    print(
        f"nemotron_h/{args.size}, vocab {args.vocab_size:,}, {params / 1e9:.2f}B parameters, {args.dtype}, "
        f"{args.device}, {args.batch_size} rows",
        flush=True,
    )
    rng = random.Random(args.seed)
    rows = []
    for benchmark in args.benchmarks.split(","):
        median = max(1, round(ANSWER_MEDIAN[benchmark] * args.answer_scale))
        prompts, answers, cap = workload(benchmark, args.items, median, rng)
        cap = min(cap, max(answers))  # the cache holds the longest answer; no row runs past its own
        outputs, walls = {}, {}
        for cache in ("graph", "continuous"):
            warm = prompts[: args.batch_size]
            generate_greedy(
                model, warm, max_new_tokens=4, stop_ids=[], pad_id=0, batch_size=args.batch_size, cache=cache
            )
            outputs[cache], walls[cache] = wall(
                lambda: generate_greedy(
                    model,
                    prompts,
                    max_new_tokens=cap,
                    stop_ids=[],
                    pad_id=0,
                    batch_size=args.batch_size,
                    cache=cache,
                    bucket=64,
                    limits=answers,
                ),
                args.device,
            )
        tokens = sum(answers)
        same = sum(a == b for a, b in zip(outputs["graph"], outputs["continuous"]))
        assert [len(g.token_ids) for g in outputs["continuous"]] == answers
        row = {
            "benchmark": benchmark,
            "items": len(prompts),
            "prompt_tokens_mean": round(sum(map(len, prompts)) / len(prompts)),
            "answer_tokens_mean": round(tokens / len(prompts)),
            "answer_tokens_max": max(answers),
            "fixed_s": round(walls["graph"], 2),
            "continuous_s": round(walls["continuous"], 2),
            "fixed_tokens_per_s": round(tokens / walls["graph"]),
            "continuous_tokens_per_s": round(tokens / walls["continuous"]),
            "speedup": round(walls["graph"] / walls["continuous"], 2),
            "same_tokens": f"{same}/{len(prompts)}",
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(
        "\n| benchmark | items | prompt / answer tokens (mean, max) | fixed s | continuous s | fixed tok/s "
        "| continuous tok/s | speed-up | same tokens |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['benchmark']} | {r['items']} | {r['prompt_tokens_mean']} / {r['answer_tokens_mean']}, "
            f"{r['answer_tokens_max']} | {r['fixed_s']} | {r['continuous_s']} | {r['fixed_tokens_per_s']:,} | "
            f"{r['continuous_tokens_per_s']:,} | {r['speedup']}x | {r['same_tokens']} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
