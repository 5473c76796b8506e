"""Evaluate one checkpoint on one benchmark part of the card's table.

Run as: python workflow/scripts/eval_benchmark.py --benchmark mmlu --model results/ckpt/soupF2 \
            --items resources/sample/eval/mmlu.jsonl --sample 1000 --seed 1234 --part A \
            --out-json results/eval/soupF2/mmlu_A.json --out-records results/eval/soupF2/mmlu_A.records.jsonl

Benchmarks: mmlu, gsm8k, ifeval (parts A/B/C), degen, margin (whole item set, optionally
restricted with --ids-from-split). Parts are disjoint slices of one seeded permutation of the
item ids (`--sample N` for equal parts, `--sizes 200,400,753` otherwise). The
result JSON carries the score (a fraction in 0-1), its secondary measures, the item ids,
the run name and the wall time; the records JSONL has one line per item with its prompt,
output or log-likelihoods and verdict.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from lineage.checkpoint import load_model, read_lineage  # noqa: E402
from lineage.evaluation.items import item_id, load_items, parse_part_sizes, read_id_list, select_items  # noqa: E402
from lineage.evaluation.prompts import ChatRenderer  # noqa: E402
from lineage.evaluation.tasks import DEFAULT_MAX_NEW_TOKENS, RUNNERS, RunOptions  # noqa: E402
from lineage.io import write_json, write_jsonl  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16, "auto": None}
THROUGHPUT_UNIT = {
    "mmlu": "prompt",
    "margin": "scored",
    "gsm8k": "generated",
    "ifeval": "generated",
    "degen": "generated",
}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmark", required=True, choices=sorted(RUNNERS))
    parser.add_argument("--model", required=True, help="checkpoint directory")
    parser.add_argument("--items", required=True, help="item file (JSONL)")
    parser.add_argument(
        "--ids-from-split", help="keep only these ids (JSONL with id/key/battle_id, JSON list or one per line)"
    )
    parser.add_argument("--part", choices=["A", "B", "C"], help="disjoint item set; omit to evaluate every item")
    parser.add_argument("--sample", type=int, help="items per part (all parts equal)")
    parser.add_argument("--sizes", help="items per part in part order when they differ, e.g. 200,400,753")
    parser.add_argument("--seed", type=int, default=1234, help="seed of the item permutation shared by all parts")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument(
        "--max-batch-tokens",
        type=int,
        default=65536,
        help="log-likelihood batches hold at most this many padded tokens (0: no limit)",
    )
    parser.add_argument("--max-new-tokens", type=int, help=f"generation length (defaults {DEFAULT_MAX_NEW_TOKENS})")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--dtype", default="auto", choices=sorted(DTYPES))
    parser.add_argument("--run", help="column name in the table (default: the run recorded in lineage.json)")
    parser.add_argument("--out-json", required=True)
    parser.add_argument("--out-records", required=True)
    args = parser.parse_args(argv)
    if args.part and args.sample is None and not args.sizes:
        parser.error("--part needs --sample or --sizes")
    if args.batch_size < 1:
        parser.error("--batch-size must be at least 1")
    return args


def load(args: argparse.Namespace) -> tuple[torch.nn.Module, ChatRenderer, dict]:
    """The verified model in eval mode, its chat renderer and its lineage record."""
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA device is visible")
    model = load_model(args.model, dtype=DTYPES[args.dtype], device=args.device).eval()
    return model, ChatRenderer(args.model), read_lineage(args.model)


def select(args: argparse.Namespace) -> list[dict]:
    """The items of this benchmark part (read and checked before any model is loaded)."""
    items = load_items(args.benchmark, args.items)
    keep = read_id_list(args.ids_from_split) if args.ids_from_split else None
    return select_items(
        args.benchmark,
        items,
        part=args.part,
        sizes=parse_part_sizes(args.sizes, args.sample),
        seed=args.seed,
        keep_ids=keep,
        source=args.ids_from_split or args.items,
    )


def evaluate(args: argparse.Namespace, selected: list[dict], model: torch.nn.Module, chat: ChatRenderer,
             lineage: dict) -> dict:
    """Run one benchmark part on a loaded model; write its result JSON and records; return the result."""
    sizes = parse_part_sizes(args.sizes, args.sample)
    opts = RunOptions(
        batch_size=args.batch_size, max_new_tokens=args.max_new_tokens, max_batch_tokens=args.max_batch_tokens or None
    )

    start = time.perf_counter()
    extras, records, n_tokens = RUNNERS[args.benchmark](model, chat, selected, opts)
    wall = time.perf_counter() - start

    result = {
        "benchmark": args.benchmark,
        "part": args.part,
        "model": str(args.model),
        "run": args.run or lineage.get("run"),
        **extras,
        "n": len(selected),
        "item_ids": [item_id(args.benchmark, it) for it in selected],
        "items_file": str(args.items),
        "seed": args.seed,
        "part_sizes": sizes or None,
        "batch_size": args.batch_size,
        "max_batch_tokens": args.max_batch_tokens or None,
        "max_new_tokens": (args.max_new_tokens or DEFAULT_MAX_NEW_TOKENS.get(args.benchmark)),
        "device": args.device,
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
        "wall_time_s": round(wall, 3),
        "items_per_s": round(len(selected) / wall, 3) if wall else None,
        "tokens_per_s": round(n_tokens / wall, 1) if wall else None,
        "tokens_counted": f"{THROUGHPUT_UNIT[args.benchmark]} tokens ({n_tokens})",
    }
    write_jsonl(args.out_records, records)
    write_json(args.out_json, result)
    part = f" part {args.part}" if args.part else ""
    print(
        f"{args.benchmark}{part} of {result['run']}: score {result['score']:.4f} on {len(selected)} items "
        f"in {wall:.1f}s ({result['items_per_s']} items/s)",
        flush=True,
    )
    return result


def main(argv=None) -> int:
    args = parse_args(argv)
    selected = select(args)
    evaluate(args, selected, *load(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
