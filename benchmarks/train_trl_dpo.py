"""TRL's DPOTrainer on exactly the pairs train_dpo.py trains on, for a like-for-like throughput comparison.

Same pairs (tokenized by lineage.training.pairs, the trainer's own code: the prompt's tokens, then
each answer's labelled tokens), same order (lineage.training.data's seeded order, read
sequentially), same global batch, beta, AdamW settings and lr schedule, bf16 autocast over fp32
weights, the random draw of benchmarks/sft_throughput.py with the same --init-seed. TRL runs with
precompute_ref_log_probs (its reference pass before training, timed apart, as our reference job
is), its chunked LM head, no gradient checkpointing; --attn-implementation, --liger and the
micro-batch are the knobs (TRL 1.16 turns padding_free off for DPO and says so). One JSON line per
optimizer step in the trainer's metrics.jsonl format; MFU counted as the trainer counts it
(lineage.modeling.ParamCounts: the policy's forward and backward, the head at the completion
positions, each sequence's causal attention).

Run as (repository root, PYTHONPATH=workflow/scripts:benchmarks):
    python benchmarks/train_trl_dpo.py --tokenizer OUT/tokenizer --data pairs.jsonl --family llama --size 1b \
        --vocab-size 128256 --steps 8 --global-batch-rows 64 --micro-batch-rows 16 --metrics trl.jsonl
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

import torch
from datasets import Dataset
from sft_throughput import random_model
from torch.utils.data import SequentialSampler
from train_trl_sft import DEVICE, StepLog, synchronize
from transformers import AutoTokenizer
from trl import DPOConfig, DPOTrainer

from lineage.chat import load_bundle
from lineage.modeling import build_config, causal_pairs, count_params
from lineage.training.data import load_rows, sample_order
from lineage.training.optim import build_optimizer, lr_multiplier
from lineage.training.pairs import scoring_request, tokenize_pairs


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--data", action="append", required=True)
    parser.add_argument("--metrics", required=True)
    parser.add_argument("--family", required=True)
    parser.add_argument("--size", required=True)
    parser.add_argument("--vocab-size", type=int, default=None)
    parser.add_argument("--init-seed", type=int, default=1234)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--global-batch-rows", type=int, default=64, help="pairs per optimizer step")
    parser.add_argument("--micro-batch-rows", type=int, default=16, help="pairs per forward/backward")
    parser.add_argument(
        "--precompute-batch", type=int, default=None, help="pairs per reference batch (TRL's default: the micro-batch)"
    )
    parser.add_argument("--max-length", type=int, default=4096)
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--lr", type=float, default=1e-6)
    parser.add_argument("--warmup-steps", type=int, default=1)
    parser.add_argument("--schedule", choices=("cosine", "linear", "constant"), default="cosine")
    parser.add_argument("--adam-betas", default="0.9,0.95")
    parser.add_argument("--grad-clip", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--attn-implementation", default="sdpa")
    parser.add_argument(
        "--liger", action="store_true", help="TRL's use_liger_kernel (layer kernels; DPO refuses its FLCE)"
    )
    return parser.parse_args(argv)


def ordered_pairs(args, tokenizer):
    """The pairs in train_dpo.py's order as TRL's tokenized columns; each step's tokens, completion tokens, pairs."""
    bundle = load_bundle(args.tokenizer)
    tokenizer.chat_template = bundle.chat_template
    raw = load_rows(args.data, required=("messages", "chosen", "rejected")).rows
    pairs, line, _ = tokenize_pairs(tokenizer, raw, bundle.system_prompt, args.max_length, "drop")
    print(f"data: {line}", flush=True)
    order = sample_order(len(pairs), args.steps * args.global_batch_rows, args.seed).tolist()
    rows = {"prompt_ids": [], "chosen_ids": [], "rejected_ids": []}
    for i in order:
        (prompt, chosen), (prompt_r, rejected) = scoring_request(pairs[i].chosen), scoring_request(pairs[i].rejected)
        assert prompt == prompt_r, "a pair's sides share their prompt"
        rows["prompt_ids"].append(prompt)
        rows["chosen_ids"].append(chosen)
        rows["rejected_ids"].append(rejected)
    g, tokens, trained, attention = args.global_batch_rows, [], [], []
    for s in range(args.steps):
        sides = [
            len(rows["prompt_ids"][k]) + len(rows[f"{side}_ids"][k])
            for k in range(s * g, (s + 1) * g)
            for side in ("chosen", "rejected")
        ]
        tokens.append(sum(sides))
        trained.append(
            sum(len(rows[f"{side}_ids"][k]) for k in range(s * g, (s + 1) * g) for side in ("chosen", "rejected"))
        )
        attention.append(causal_pairs(sides))
    return Dataset.from_dict(rows), tokens, trained, attention


class SequentialDPOTrainer(DPOTrainer):
    """DPOTrainer on the already tokenized pairs (the trainer's tokens), read in their stored order."""

    def _prepare_dataset(self, dataset, processing_class, args, dataset_name):
        return dataset

    def _get_train_sampler(self, *args, **kwargs):
        return SequentialSampler(self.train_dataset)


def main(args) -> int:
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    dataset, tokens, trained, attention = ordered_pairs(args, tokenizer)
    config = build_config(args.family, args.size, tokenizer, vocab_size=args.vocab_size)
    model = random_model(config, torch.device(DEVICE), args.init_seed, attn_implementation=args.attn_implementation)
    params = count_params(model)
    optimizer = build_optimizer(
        model, lr=args.lr, betas=tuple(float(b) for b in args.adam_betas.split(",")), weight_decay=0.0
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: lr_multiplier(step, steps=args.steps, warmup=args.warmup_steps, schedule=args.schedule)
    )
    log = StepLog(args.metrics, tokens, trained, attention, params)
    with tempfile.TemporaryDirectory() as scratch:
        dpo_config = DPOConfig(
            output_dir=scratch,
            per_device_train_batch_size=args.micro_batch_rows,
            gradient_accumulation_steps=args.global_batch_rows // args.micro_batch_rows,
            max_steps=args.steps,
            bf16=True,
            use_cpu=DEVICE == "cpu",
            gradient_checkpointing=False,
            use_liger_kernel=args.liger,
            precompute_ref_log_probs=True,
            precompute_ref_batch_size=args.precompute_batch,
            beta=args.beta,
            loss_type=["sigmoid"],
            max_length=None,
            max_grad_norm=args.grad_clip,
            logging_steps=1,
            save_strategy="no",
            report_to=[],
            seed=args.seed,
            dataloader_drop_last=True,
            remove_unused_columns=False,
        )
        synchronize()
        started = time.perf_counter()
        trainer = SequentialDPOTrainer(
            model=model,
            args=dpo_config,
            train_dataset=dataset,
            processing_class=tokenizer,
            optimizers=(optimizer, schedule),
            callbacks=[log],
        )
        synchronize()
        reference_s = time.perf_counter() - started
        pass_tokens = sum(
            len(p) + len(c) + len(r)
            for p, c, r in zip(dataset["prompt_ids"], dataset["chosen_ids"], dataset["rejected_ids"])
        )
        print(
            f"trl: reference pass (precompute_ref_log_probs, in the trainer's construction) {reference_s:.2f} s "
            f"over {len(dataset):,} pairs, {pass_tokens:,} tokens",
            flush=True,
        )
        trainer.train()
    log.write()
    timed = log.records[3:] or log.records
    tps = sorted(r["tok_per_s"] for r in timed)[len(timed) // 2]
    mfu = sorted(r["mfu"] for r in timed)[len(timed) // 2]
    peak = max((r["peak_mem_gib"] or 0) for r in log.records)
    print(
        f"trl: {args.family}/{args.size} dpo, attention {args.attn_implementation}, liger {args.liger}, micro-batch "
        f"{args.micro_batch_rows} pairs: tokens/s {tps:,.0f} | MFU {100 * mfu:.1f}% | peak {peak:.1f} GiB | loss "
        f"{log.records[0].get('loss', float('nan')):.4f} -> {log.records[-1].get('loss', float('nan')):.4f}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(parse_args()))
