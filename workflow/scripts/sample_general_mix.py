"""Sample the general-mix SFT rows from the Stage-1 mixture: seeded, length-filtered, chat format.

Local JSONL sources are read directly; hub ids need hub access or an offline cache (the error
says how to point --source at a local copy instead). Rows holding a chat-template control token (those
given with --control-token and the tokenizer's own), without user text or with an empty answer are
quarantined. The sampling rule is documented in lineage/data/general_mix.py.

Run as:
    python workflow/scripts/sample_general_mix.py --source resources/sample/general_mix.jsonl \
        --rows 200 --seed 0 --tokenizer results/tokenizer --max-tokens 4096 \
        --out results/data/general_mix.jsonl --stats results/data/general_mix_stats.json
    python workflow/scripts/sample_general_mix.py --source allenai/tulu-3-sft-mixture --rows 13222 ...
"""

from __future__ import annotations

import argparse
import sys

from lineage.cli import positive_int, stage_main
from lineage.data.general_mix import TokenCounter, load_source, sample_rows
from lineage.errors import run_cli
from lineage.io import write_json, write_jsonl
from lineage.screening import control_tokens


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", action="append", required=True, help="local JSONL path or hub id (repeatable)")
    parser.add_argument("--rows", type=positive_int, required=True, help="rows to sample")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampling order")
    parser.add_argument("--tokenizer", required=True, help="tokenizer directory (its chat template is used)")
    parser.add_argument("--max-tokens", type=positive_int, default=4096, help="drop rows longer than this")
    parser.add_argument("--out", required=True, help="sampled chat rows (JSONL)")
    parser.add_argument("--stats", required=True, help="sampling stats (JSON)")
    parser.add_argument("--quarantine", default=None, help="source lines and rows that could not be used (JSONL)")
    parser.add_argument(
        "--control-token",
        action="append",
        default=[],
        help="a chat-template control token no row may hold (repeatable; the tokenizer's own are added)",
    )


def run(args: argparse.Namespace) -> str:
    sources = [load_source(spec) for spec in args.source]
    counter = TokenCounter(args.tokenizer)
    tokens = tuple(sorted({*args.control_token, *control_tokens([args.tokenizer])}))
    rows, stats = sample_rows(sources, args.rows, args.seed, counter, args.max_tokens, tokens)
    stats["tokenizer"] = args.tokenizer
    quarantine = stats.pop("quarantine")
    write_jsonl(args.out, rows)
    if args.quarantine:
        write_jsonl(args.quarantine, quarantine)
    write_json(args.stats, stats)
    return (
        f"sample_general_mix: {len(rows)} rows sampled (seed {args.seed}) from {stats['rows_total']} in "
        f"{len(sources)} source(s); {stats['rows_too_long']} of {stats['rows_examined']} examined were over "
        f"{args.max_tokens} tokens; {len(quarantine)} unusable line(s) or row(s) quarantined"
    )


main = stage_main(__doc__, arguments, run)

if __name__ == "__main__":
    sys.exit(run_cli(main, input_errors=(OSError,)))
