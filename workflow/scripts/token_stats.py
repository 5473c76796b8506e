"""Token lengths of the lineage's training sets, as the trainers tokenize them, for the planner.

Each set is rendered with the bundle's chat template and system prompt and tokenized with the
Stage-1 tokenizer, rows past max_length handled as the recipe says; a SFT row counts its
tokens, a DPO pair its chosen and rejected sides together. The output keeps each set's length
histogram, so tools/plan.py packs micro-batches from the real lengths instead of
counting every row at max_length.

Run as:
    python workflow/scripts/token_stats.py --tokenizer results/embedded/stage1/tokenizer --bundle resources/bundle \
        --max-length 1024 --sft winners_x40=results/embedded/data/sets/winners_x40.jsonl \
        --pairs battle_pairs=results/embedded/data/pairs.jsonl --out results/embedded/data/token_stats.json
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
from collections import Counter
from pathlib import Path

from lineage.chat import TRUNCATION_MODES, load_bundle, tokenize_rows
from lineage.cli import positive_int
from lineage.errors import run_cli
from lineage.io import write_json
from lineage.pair_rows import PAIR_FIELDS
from lineage.screening import chat_refusal, control_tokens
from lineage.training.data import load_rows
from lineage.training.pairs import tokenize_pairs


def named_path(text: str) -> tuple[str, Path]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH, got {text!r}")
    return name, Path(path)


def summary(lengths: list[int], trained: int, kept: int, rows_in: int) -> dict:
    """Counts, quantiles and the histogram {length: rows} of one set."""
    ordered = sorted(lengths)
    return {
        "rows_in": rows_in,
        "rows": kept,
        "tokens": sum(ordered),
        "trained_tokens": trained,
        "mean": sum(ordered) / len(ordered) if ordered else 0.0,
        "median": statistics.median(ordered) if ordered else 0,
        "p90": ordered[int(0.9 * (len(ordered) - 1))] if ordered else 0,
        "max": ordered[-1] if ordered else 0,
        "histogram": {str(length): n for length, n in sorted(Counter(ordered).items())},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", type=Path, required=True, help="the Stage-1 tokenizer (or checkpoint) folder")
    parser.add_argument("--bundle", type=Path, required=True, help="chat template and system prompt")
    parser.add_argument("--max-length", type=positive_int, required=True)
    parser.add_argument("--truncation", choices=TRUNCATION_MODES, default="drop")
    parser.add_argument("--sft", type=named_path, action="append", default=[], help="NAME=PATH of a SFT set")
    parser.add_argument("--pairs", type=named_path, action="append", default=[], help="NAME=PATH of a DPO pair set")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    bundle = load_bundle(args.bundle)
    tokenizer.chat_template = bundle.chat_template
    tokens = control_tokens([args.tokenizer, args.bundle])  # the rows the trainers screen out are not counted
    sets = {}
    for name, path in args.sft:
        raw = load_rows([path], required=("messages",)).rows  # the rows the trainers read
        rows, stats = tokenize_rows(
            tokenizer,
            (r["messages"] for r in raw),
            system_prompt=bundle.system_prompt,
            max_length=args.max_length,
            truncation=args.truncation,
            refuse=functools.partial(chat_refusal, tokens=tokens),
        )
        sets[name] = {
            "kind": "sft",
            "path": str(path),
            **summary([len(r.input_ids) for r in rows], stats.trained_tokens, len(rows), len(raw)),
        }
    for name, path in args.pairs:
        raw = load_rows([path], required=PAIR_FIELDS).rows
        pairs, _, _ = tokenize_pairs(
            tokenizer, raw, bundle.system_prompt, args.max_length, args.truncation, tokens=tokens
        )
        trained = sum(p.chosen.trained_tokens + p.rejected.trained_tokens for p in pairs)
        sets[name] = {
            "kind": "pairs",
            "path": str(path),
            **summary([p.length for p in pairs], trained, len(pairs), len(raw)),
        }
    for name, entry in sets.items():
        print(
            f"{name}: {entry['rows']:,}/{entry['rows_in']:,} {entry['kind']} rows, mean {entry['mean']:,.0f} tokens, "
            f"median {entry['median']:,.0f}, p90 {entry['p90']:,}, max {entry['max']:,}"
        )
    write_json(
        args.out,
        {"tokenizer": str(args.tokenizer), "max_length": args.max_length, "truncation": args.truncation, "sets": sets},
    )
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
