"""Evaluate one checkpoint on benchmark parts of the card's table, loading the model once.

Run as:
    python workflow/scripts/eval_model.py --model results/embedded/models/soupF2 --run soupF2 \\
        --items mmlu=resources/sample/eval/mmlu.jsonl --sizes mmlu=40,40 \\
        --items margin=results/embedded/data/holdout_pairs.jsonl \\
        --out-dir results/embedded/eval/soupF2 --device cpu --batch-size 16 --max-new-tokens 48

Benchmarks are the modules of lineage/evaluation/benchmarks. Parts are disjoint slices of one seeded
permutation of a file's item ids (`--sizes mmlu=1000,1000`: A is the first 1,000, B the next);
a benchmark without sizes is evaluated whole, as part A. `--parts mmlu_B,gsm8k_A` evaluates only
those parts (default: every part of every benchmark given). Each part writes
`<out-dir>/<benchmark>_<part>.json` (the score in 0-1, its secondary measures, the item ids, the
settings and the wall time) and `.records.jsonl` (one line per item: prompt, output or
log-likelihoods, verdict). Every item file is read and checked before the model is loaded.

Launched on several processes (`accelerate launch --num_processes N`, one per GPU), every rank loads
the whole model and runs every N-th batch of the one-process plan (lineage/evaluation/replicas.py):
the records are byte-identical to one process's, in 1/N of the time. Rank 0 writes them.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from lineage.checkpoints.directory import read_lineage
from lineage.checkpoints.distributed import load_replica
from lineage.errors import run_cli
from lineage.evaluation.benchmarks import BENCHMARKS
from lineage.evaluation.decoders import CACHES
from lineage.evaluation.items import load_items, select_items
from lineage.evaluation.packed_scoring import scoring_packs
from lineage.evaluation.prompts import ChatRenderer
from lineage.evaluation.replicas import Replicas
from lineage.evaluation.tasks import RunOptions
from lineage.io import write_json, write_jsonl
from lineage.training import dist as tdist

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16, "auto": None}


@dataclass(frozen=True)
class Part:
    benchmark: str
    part: str
    items_file: str
    sizes: dict[str, int]  # {} = the whole item set

    @property
    def name(self) -> str:
        return f"{self.benchmark}_{self.part}"


def benchmark_values(values: list[str], flag: str) -> dict[str, str]:
    """BENCHMARK=VALUE flags as a dict; each benchmark at most once."""
    found: dict[str, str] = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or name not in BENCHMARKS or not rest:
            raise SystemExit(f"{flag} {value!r}: expected BENCHMARK=VALUE, BENCHMARK one of {', '.join(BENCHMARKS)}")
        if name in found:
            raise SystemExit(f"{flag}: {name} given twice")
        found[name] = rest
    return found


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="checkpoint directory")
    parser.add_argument("--run", help="column name in the table (default: the run recorded in lineage.json)")
    parser.add_argument("--items", action="append", default=[], required=True, metavar="BENCHMARK=FILE")
    parser.add_argument(
        "--sizes",
        action="append",
        default=[],
        metavar="BENCHMARK=N,N,...",
        help="items per part, one number per part in part order (A, B, C)",
    )
    parser.add_argument("--parts", default=None, help="comma-separated parts to evaluate, e.g. mmlu_A,ifeval_C")
    parser.add_argument("--out-dir", required=True, type=Path)
    parser.add_argument("--seed", type=int, default=1234, help="seed of the item permutation shared by all parts")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument(
        "--max-batch-tokens",
        type=int,
        default=65536,
        help="log-likelihood batches hold at most this many padded tokens (0: no limit)",
    )
    parser.add_argument(
        "--pack-tokens",
        type=int,
        default=0,
        help="score log-likelihoods on packed sequences of at most this many tokens, no padding (0: padded batches)",
    )
    parser.add_argument("--max-new-tokens", type=int, help="generation length (default: each benchmark's own)")
    parser.add_argument(
        "--cache",
        default="dynamic",
        choices=CACHES,
        help="generation's KV cache: static compiles the decode step, graph replays it as a CUDA graph",
    )
    parser.add_argument(
        "--bucket", type=int, default=1, help="pad generation prompts to a multiple of this many tokens"
    )
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--dtype", default="auto", choices=sorted(DTYPES))
    args = parser.parse_args(argv)
    if args.batch_size < 1:
        parser.error("--batch-size must be at least 1")
    if args.pack_tokens < 0:
        parser.error("--pack-tokens must be 0 (padded batches) or a positive token budget")
    return args


def selected_parts(args: argparse.Namespace) -> list[Part]:
    """The parts to evaluate, in the card's order of benchmarks."""
    items, sizes = benchmark_values(args.items, "--items"), benchmark_values(args.sizes, "--sizes")
    unknown = sorted(set(sizes) - set(items))
    if unknown:
        raise SystemExit(f"--sizes for {', '.join(unknown)} without --items")
    parts = []
    for name, path in items.items():
        bench = BENCHMARKS[name]
        counts = [c.strip() for c in sizes[name].split(",")] if name in sizes else []
        if counts and (len(counts) > len(bench.parts) or not all(c.isdigit() for c in counts)):
            raise SystemExit(
                f"--sizes {name}={sizes[name]}: expected up to {len(bench.parts)} whole numbers "
                f"(parts {', '.join(bench.parts)})"
            )
        by_part = dict(zip(bench.parts, map(int, counts)))
        parts += [Part(name, part, path, by_part) for part in (bench.parts[: len(counts)] or bench.parts[:1])]
    if args.parts:
        wanted = [p.strip() for p in args.parts.split(",") if p.strip()]
        known = {p.name: p for p in parts}
        missing = [w for w in wanted if w not in known]
        if missing:
            raise SystemExit(
                f"--parts {', '.join(missing)}: not among the parts of the given benchmarks ({', '.join(known)})"
            )
        parts = [known[w] for w in wanted]
    order = {name: i for i, name in enumerate(BENCHMARKS)}
    return sorted(parts, key=lambda p: (order[p.benchmark], p.part))


def select(part: Part, seed: int) -> list[dict]:
    """The items of one part (read and checked before any model is loaded)."""
    items = load_items(part.benchmark, part.items_file)
    return select_items(
        part.benchmark,
        items,
        part=part.part if part.sizes else None,
        sizes=part.sizes,
        seed=seed,
        source=part.items_file,
    )


def evaluate(
    args: argparse.Namespace,
    part: Part,
    selected: list[dict],
    model: torch.nn.Module,
    chat: ChatRenderer,
    lineage: dict,
    replicas: Replicas,
) -> dict:
    """Run one part on the loaded model (this rank's share of its batches); rank 0 writes its result
    JSON and records; every rank returns the result."""
    bench = BENCHMARKS[part.benchmark]
    opts = RunOptions(
        batch_size=args.batch_size,
        max_new_tokens=args.max_new_tokens or None,
        max_batch_tokens=args.max_batch_tokens or None,
        pack_tokens=args.pack_tokens or None,
        cache=args.cache,
        bucket=args.bucket,
        replicas=replicas,
    )
    start = time.perf_counter()
    extras, records, n_tokens = bench.run(model, chat, selected, opts)
    wall = time.perf_counter() - start
    result = {
        "benchmark": bench.name,
        "part": part.part if part.sizes else None,
        "model": str(args.model),
        "run": args.run or lineage.get("run"),
        **extras,
        "n": len(selected),
        "item_ids": [bench.item_id(it) for it in selected],
        "items_file": str(part.items_file),
        "seed": args.seed,
        "part_sizes": part.sizes or None,
        "batch_size": args.batch_size,
        "max_batch_tokens": args.max_batch_tokens or None,
        "scoring": None if bench.generates else ("packed" if args.pack_tokens else "padded"),
        "pack_tokens": None if bench.generates else args.pack_tokens or None,
        "max_new_tokens": opts.new_tokens(bench),
        "cache": args.cache if bench.generates else None,
        "bucket": args.bucket if bench.generates else None,
        "device": args.device,
        "ranks": replicas.world,
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
        "wall_time_s": round(wall, 3),
        "items_per_s": round(len(selected) / wall, 3) if wall else None,
        "tokens_per_s": round(n_tokens / wall, 1) if wall else None,
        "tokens_counted": f"{bench.unit} tokens ({n_tokens})",
    }
    if not replicas.is_main:
        return result
    out = args.out_dir / part.name
    write_jsonl(f"{out}.records.jsonl", records)
    write_json(f"{out}.json", result)
    print(
        f"{part.name} of {result['run']}: score {result['score']:.4f} on {len(selected)} items in {wall:.1f}s "
        f"({result['items_per_s']} items/s)",
        flush=True,
    )
    return result


def main(argv=None) -> int:
    started = time.perf_counter()
    args = parse_args(argv)
    tdist.check_device(args.device)  # before any file is read: the job cannot run here at all
    parts = selected_parts(args)
    selections = [select(part, args.seed) for part in parts]  # every item file checked before the load
    env = tdist.init_distributed(args.device)
    try:
        replicas = Replicas(env.rank, env.world_size)
        model = load_replica(args.model, env, dtype=DTYPES[args.dtype])
        chat, lineage = ChatRenderer(args.model), read_lineage(args.model)
        where = f" on each of {env.world_size} ranks" if env.world_size > 1 else ""
        tdist.print0(f"loaded {args.model}{where} in {time.perf_counter() - started:.1f}s; {len(parts)} parts")
        asked = args.pack_tokens
        args.pack_tokens, why_padded = scoring_packs(model, asked)
        if why_padded:
            tdist.print0(f"--pack-tokens {asked}: scoring padded instead ({why_padded})")
        for number, (part, selected) in enumerate(zip(parts, selections, strict=True), start=1):
            tdist.print0(f"[{number}/{len(parts)}] ", end="")
            evaluate(args, part, selected, model, chat, lineage, replicas)
        tdist.print0(f"{len(parts)} parts of {args.model} in {time.perf_counter() - started:.1f}s")
    finally:
        tdist.close()
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
