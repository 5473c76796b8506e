"""Score every preference pair's chosen and rejected sequence once under the reference checkpoint.

The DPO trainer reads the result instead of running a frozen second model at every step. The
pairs are tokenized exactly as train_dpo.py tokenizes them (lineage.training.pairs), each
sequence becomes an eval request (the prompt as context, the labelled completion as
continuation) and is scored by the eval's log-likelihood: packed (--pack-tokens; varlen
attention, the Mamba-2 `seq_idx`, the head on scored positions, the Triton log-prob pass) where
the model can be packed on its device, padded batches otherwise. Identical pairs are scored once.
Launched on several processes (`accelerate launch --num_processes N`, as the trainers are), each
rank scores every N-th distinct pair on its own GPU and rank 0 writes them all: a node scores the
pairs in 1/N of the time.

The output is JSONL: a header (format, the reference checkpoint and its identity, the data
files' checksums, max length, truncation, dtype, method), then one line per distinct pair:
its key (a digest of both sides' tokens), its first data row, the two summed log-probs and the
two sequences' lengths (what the planner packs).
Written atomically.

Run as:
    python workflow/scripts/reference_logprobs.py --init results/embedded/models/sftw2 \
        --data results/embedded/data/pairs.jsonl --max-length 1024 --dtype float32 --out ref.jsonl
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from transformers import AutoTokenizer

from lineage.chat import TRUNCATION_MODES, load_bundle
from lineage.checkpoints.directory import read_lineage
from lineage.checkpoints.distributed import load_replica
from lineage.errors import run_cli
from lineage.evaluation.packed_scoring import packed_loglikelihood, scoring_packs
from lineage.evaluation.scoring import loglikelihood
from lineage.io import DataError, write_jsonl
from lineage.pair_rows import PAIR_FIELDS
from lineage.screening import control_tokens
from lineage.training import dist as tdist
from lineage.training.data import load_rows
from lineage.training.pairs import reference_header, scoring_request, tokenize_pairs

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--init", type=Path, required=True, help="the reference checkpoint (the DPO run's parent)")
    parser.add_argument("--data", type=Path, action="append", required=True, help="preference pairs (JSONL), in order")
    parser.add_argument("--max-length", type=int, required=True, help="the DPO recipe's max_length")
    parser.add_argument("--truncation", choices=TRUNCATION_MODES, default="drop", help="the DPO recipe's truncation")
    parser.add_argument("--dtype", choices=tuple(DTYPES), default="float32", help="the compute dtype of the scores")
    parser.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu")
    parser.add_argument(
        "--pack-tokens", type=int, default=0, help="score packed sequences of this many tokens (0: padded batches)"
    )
    parser.add_argument("--batch-size", type=int, default=8, help="sequences per padded batch")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.pack_tokens and args.pack_tokens < args.max_length:
        parser.error(
            f"--pack-tokens {args.pack_tokens} is below --max-length {args.max_length}: a sequence would not fit"
        )
    return args


def score(model, requests, args, pad_id: int) -> tuple[list[float], str]:
    """Summed log-prob of every request, and how they were computed."""
    pack_tokens, why_padded = scoring_packs(model, args.pack_tokens)
    if pack_tokens:
        scores = packed_loglikelihood(
            model, requests, pack_tokens=pack_tokens, pad_id=pad_id, max_length=args.max_length
        )
        method = f"packed, {pack_tokens} tokens"
    else:
        tdist.print0(f"scoring padded: {why_padded or '--pack-tokens 0'}")
        scores = loglikelihood(model, requests, batch_size=args.batch_size, pad_id=pad_id, max_length=args.max_length)
        method = f"padded, {args.batch_size} sequences a batch"
    if any(s.truncated for s in scores):
        raise RuntimeError("a sequence was cut to fit max_length; the pairs were tokenized with another max length")
    return [s.logprob for s in scores], method


def main(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    env = tdist.init_distributed(args.device)
    try:
        tokenizer = AutoTokenizer.from_pretrained(args.init)
        bundle = load_bundle(args.init)
        tokenizer.chat_template = bundle.chat_template  # as train_dpo.py: the bundle's template wins
        data = load_rows(args.data, required=PAIR_FIELDS)
        if data.summary():
            tdist.print0(f"data: {data.summary()}")
        pairs, summary_line, _ = tokenize_pairs(
            tokenizer,
            data.rows,
            bundle.system_prompt,
            args.max_length,
            args.truncation,
            data.where,
            control_tokens([args.init]),
        )
        tdist.print0(f"data: {summary_line}")
        if not pairs:
            raise DataError(f"no usable pairs in {', '.join(map(str, args.data))}")
        distinct = list({pair.key: pair for pair in reversed(pairs)}.values())[::-1]  # first occurrence of each
        mine = distinct[env.rank :: env.world_size]

        model = load_replica(args.init, env, dtype=DTYPES[args.dtype])  # the ranks split the hashing
        requests = [scoring_request(side) for pair in mine for side in (pair.chosen, pair.rejected)]
        scoring_started = time.perf_counter()
        logprobs, method = score(model, requests, args, tokenizer.pad_token_id)
        seconds = time.perf_counter() - scoring_started
        tokens = sum(len(c) + len(k) for c, k in requests)
        print(
            f"rank {env.rank}: scored {len(mine)} distinct pairs ({tokens:,} tokens, {method}) in {seconds:.1f} s "
            f"({tokens / max(seconds, 1e-9):,.0f} tokens/s)"
        )
        lines = [
            {
                "key": pair.key,
                "row": pair.row,
                "chosen": logprobs[2 * k],
                "rejected": logprobs[2 * k + 1],
                "lengths": [len(pair.chosen.input_ids), len(pair.rejected.input_ids)],
                "labelled": [len(requests[2 * k][1]), len(requests[2 * k + 1][1])],
            }
            for k, pair in enumerate(mine)
        ]
        parts = tdist.gather_to_main(lines)
        if env.is_main:
            ordered = sorted((line for part in parts for line in part), key=lambda line: line["row"])
            header = reference_header(
                read_lineage(args.init),
                args.init,
                data.records,
                {
                    "max_length": args.max_length,
                    "truncation": args.truncation,
                    "dtype": args.dtype,
                    "method": method,
                    "pairs": len(pairs),
                    "distinct_pairs": len(distinct),
                    "ranks": env.world_size,
                },
            )
            write_jsonl(args.out, [header, *ordered])
            tdist.print0(
                f"wrote {len(ordered)} distinct pairs' log-probs to {args.out} ({time.perf_counter() - started:.1f} s)"
            )
    finally:
        tdist.close()
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(lambda: main(parse_args())))
