"""Sample answers from a model on training prompts, check them, and write verifier DPO pairs.

One round of the Stage-1 recipe's verifier DPO: for every training-split prompt (GSM8K-style
math, IFEval-style constraints) draw --samples answers, check each programmatically, pair a
verified answer (chosen) with a failed one (rejected), and report the acceptance rate per
prompt type. Refuses to start when a training prompt is also an item of an --eval-items file (the workflow
checks its verifier prompts against the benchmarks' item files at start-up, before any job, and passes none).

Launched on several processes (`accelerate launch --num_processes N`, one per GPU), every rank
loads the whole model and samples every N-th batch; a prompt's draws depend on the seed and the
prompt alone (lineage/evaluation/seeded_sampling.py), so the pairs are those of one process for the
same seed, whatever the batch size. Rank 0 writes them.

Run as:
    python workflow/scripts/verifier_pairs.py --model results/embedded/models/dpo1 --round dpo2 \
        --prompts resources/sample/verifier_prompts.jsonl --eval-items resources/sample/eval/gsm8k.jsonl \
        --eval-items resources/sample/eval/ifeval.jsonl --samples 8 --temperature 1.0 \
        --out results/embedded/data/sets/verifier_dpo2.jsonl --stats results/embedded/data/verifier/dpo2.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from lineage.checkpoints.distributed import load_replica  # noqa: E402
from lineage.data.verifier import build_pairs, check_prompt, find_overlap, messages, verify  # noqa: E402
from lineage.errors import run_cli  # noqa: E402
from lineage.evaluation.decoders import SAMPLING_CACHES  # noqa: E402
from lineage.evaluation.generation import generate  # noqa: E402
from lineage.evaluation.prompts import ChatRenderer  # noqa: E402
from lineage.evaluation.replicas import Replicas  # noqa: E402
from lineage.evaluation.seeded_sampling import SeededSampler  # noqa: E402
from lineage.io import DataError, read_jsonl, write_json, write_jsonl  # noqa: E402
from lineage.training import dist as tdist  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="checkpoint that samples the answers")
    parser.add_argument("--round", required=True, help="name of the DPO run these pairs train (recorded in rows)")
    parser.add_argument("--prompts", required=True, help="training-split prompts (JSONL, see lineage/data/verifier.py)")
    parser.add_argument(
        "--eval-items",
        action="append",
        default=[],
        help="eval item files none may repeat (the workflow checks at start-up instead)",
    )
    parser.add_argument("--samples", type=int, default=8, help="answers drawn per prompt")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--top-p", type=float, default=1.0)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--max-pairs-per-prompt", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16, help="prompts a batch (x --samples rows)")
    parser.add_argument(
        "--cache",
        default="dynamic",
        choices=SAMPLING_CACHES,
        help="KV cache: generate()'s dynamic or static, or the CUDA-graph decoder (GPUs)",
    )
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    parser.add_argument("--out", required=True, help="DPO rows (JSONL)")
    parser.add_argument("--stats", required=True, help="acceptance statistics (JSON)")
    return parser.parse_args(argv)


def load_prompts(path: str, eval_files: list[str]) -> list[dict]:
    """Every prompt checked for its fields, then against every eval item (the workflow checks this at start-up,
    lineage/workflow/checks.py, and passes no --eval-items; a run by hand gives them)."""
    rows = list(read_jsonl(path))
    for line, item in rows:
        check_prompt(item, f"{path}:{line}")
    evaluation = {source: list(read_jsonl(source)) for source in eval_files}
    overlap = find_overlap([item for _, item in rows], {s: [item for _, item in r] for s, r in evaluation.items()})
    if overlap:
        shown = "; ".join(
            f"{path}:{line} ({item['id']!r}) repeats {o.source}:{evaluation[o.source][o.item][0]}"
            for o in overlap[:5]
            for line, item in [rows[o.prompt]]
        )
        raise DataError(
            f"{path}: {len(overlap)} training prompt(s) repeat evaluation items (normalized text): {shown}. "
            "Verifier prompts must come from training splits only; remove them."
        )
    return [item for _, item in rows]


def sample_pairs(args: argparse.Namespace, items: list[dict], model, replicas: Replicas) -> tuple[list[dict], dict]:
    """Sample, check and pair (this rank's share of the batches sampled, every rank gets all)."""
    chat = ChatRenderer(args.model)
    prompts = [chat.encode(chat.render(chat.with_system(messages(item)))) for item in items]
    generations = generate(
        model,
        prompts,
        SeededSampler(args.seed, args.temperature, args.top_p, samples=args.samples),
        max_new_tokens=args.max_new_tokens,
        stop_ids=chat.stop_token_ids(),
        pad_id=chat.pad_token_id(),
        batch_size=args.batch_size,
        cache=args.cache,
        replicas=replicas,
    )
    texts = [[chat.tokenizer.decode(list(g.token_ids), skip_special_tokens=True) for g in row] for row in generations]
    verdicts = [[verify(item, text) for text in row] for item, row in zip(items, texts, strict=True)]
    rows, stats = build_pairs(
        items, texts, verdicts, max_pairs_per_prompt=args.max_pairs_per_prompt, round_name=args.round
    )
    stats.update(
        model=str(args.model),
        prompts_file=str(args.prompts),
        samples_per_prompt=args.samples,
        temperature=args.temperature,
        top_p=args.top_p,
        max_new_tokens=args.max_new_tokens,
        seed=args.seed,
        cache=args.cache,
        ranks=replicas.world,
        eval_files_checked=args.eval_items,
        eval_overlap=(
            "checked here (--eval-items)"
            if args.eval_items
            else "not checked in this job: the workflow refuses an overlap at start-up (check_verifier_prompts)"
        ),
    )
    if not rows:
        raise DataError(
            f"{args.model}: no prompt of {args.prompts} got both a verified and a failed answer "
            f"({stats['total']}); raise --samples or --temperature so the round has pairs to learn from"
        )
    return rows, stats


def write_outputs(args: argparse.Namespace, rows: list[dict], stats: dict) -> None:
    write_jsonl(args.out, rows)
    write_json(args.stats, stats)
    for kind, rates in stats["by_type"].items():
        print(
            f"{args.round} {kind}: {rates['verified']}/{rates['samples']} samples verified "
            f"({rates['acceptance_rate']:.1%}), {rates['pairs']} pairs from {rates['prompts_with_pairs']} prompts"
        )
    print(f"{len(rows)} pairs -> {args.out} ({stats['wall_time_s']} s)")


def main(argv=None) -> int:
    args = parse_args(argv)
    tdist.check_device(args.device)
    started = time.perf_counter()
    items = load_prompts(args.prompts, args.eval_items)
    env = tdist.init_distributed(args.device)
    try:
        model = load_replica(args.model, env, dtype=DTYPES[args.dtype])
        rows, stats = sample_pairs(args, items, model, Replicas(env.rank, env.world_size))
        stats["wall_time_s"] = round(time.perf_counter() - started, 2)
        if env.is_main:
            write_outputs(args, rows, stats)
    finally:
        tdist.close()
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
