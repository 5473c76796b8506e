"""Build a randomly initialised model from a named shape and save it as the root of a lineage.

At the embedded scale there is no pretrained base to download: this checkpoint plays the
card's Base, and everything trained from it records it as its `root`, which is how soups
check that their parents share an initialisation.

Run as:
    python workflow/scripts/init_model.py --family nemotron_h --size tiny \
        --tokenizer results/embedded/tokenizer --seed 0 --out results/embedded/base
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from lineage.checkpoints.directory import lineage_record, save_checkpoint
from lineage.checkpoints.load import tied_aliases
from lineage.errors import run_cli
from lineage.modeling import SHAPES, build_config, count_params, state_fingerprint

DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", choices=sorted({f for f, _ in SHAPES}), default="nemotron_h")
    parser.add_argument("--size", choices=sorted({s for _, s in SHAPES}), default="tiny")
    parser.add_argument(
        "--tokenizer", type=Path, required=True, help="directory from build_tokenizer.py (with the bundle)"
    )
    parser.add_argument(
        "--vocab-size",
        type=int,
        default=None,
        help="embedding and head rows: the tokenizer's ids, then padding up to this many (default: the tokenizer's)",
    )
    parser.add_argument("--seed", type=int, default=0, help="torch seed of the random initialisation")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16", help="dtype of the saved weights")
    parser.add_argument(
        "--run", default=None, help="run name recorded in lineage.json (default: the --out folder name)"
    )
    parser.add_argument("--out", type=Path, required=True, help="checkpoint directory (written atomically)")
    return parser.parse_args(argv)


def main(args) -> int:
    started = time.time()
    run = args.run or args.out.name
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    config = build_config(args.family, args.size, tokenizer, args.vocab_size)
    torch.manual_seed(args.seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    skip = set(tied_aliases(model))
    state = {
        k: v.to(DTYPES[args.dtype]) if v.is_floating_point() else v
        for k, v in model.state_dict().items()
        if k not in skip
    }
    counts = count_params(model)
    total, active = counts.total, counts.active
    lineage = lineage_record(
        run=run,
        kind="base",
        root={"run": run, "fingerprint": state_fingerprint(state)},
        recipe={"family": args.family, "size": args.size, "seed": args.seed, "dtype": args.dtype}
        | ({"vocab_size": args.vocab_size} if args.vocab_size else {}),
        started=started,
        params_total=total,
        params_active=active,
        tokenizer=str(args.tokenizer),
    )
    save_checkpoint(
        args.out, state, config=config, companions_from=args.tokenizer, lineage=lineage, dtype=DTYPES[args.dtype]
    )
    print(f"{run}: {args.family}/{args.size}, {total:,} parameters ({active:,} active per token) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(lambda: main(parse_args())))
