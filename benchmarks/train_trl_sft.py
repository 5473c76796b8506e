"""TRL's SFTTrainer on exactly what train_sft.py trains on, for a like-for-like throughput comparison.

Same rows (tokenized by lineage.chat, the trainer's own code), same order (lineage.training.data's
seeded order, read sequentially), same global batch, AdamW settings and lr schedule
(lineage.training.optim), bf16 autocast over fp32 weights. TRL runs padding-free (the rows of a
micro-batch concatenated, position_ids restarting per row), without gradient checkpointing. Writes
one JSON line per optimizer step in the trainer's metrics.jsonl format (loss, tokens, tok_per_s,
mfu, step_time_s, peak_mem_gib).

With --family/--size (and --vocab-size) instead of a checkpoint's weights, the model is the random
draw of benchmarks/sft_throughput.py with the same --init-seed (the same weights as our trainer's
run), built from --init's tokenizer. MFU counts as the trainer does (lineage.modeling.ParamCounts:
the head at the trained positions, each row's causal attention; mfu_without_attention the matmuls
alone), TRL's own liger option (--liger) included.

Run as (repository root, PYTHONPATH=workflow/scripts):
    python benchmarks/train_trl_sft.py --init CKPT --data rows.jsonl --steps 12 --global-batch-rows 128 \
        --micro-batch-rows 16 --max-length 4096 --lr 1e-5 --warmup-steps 1 --seed 1234 --metrics trl.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time

import torch
from datasets import Dataset
from torch.utils.data import SequentialSampler
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
from trl import SFTConfig, SFTTrainer

from lineage.chat import IGNORE_INDEX, load_bundle, tokenize_rows
from lineage.modeling import build_config, causal_pairs, count_params
from lineage.training.data import load_rows, sample_order
from lineage.training.optim import build_optimizer, lr_multiplier

PEAK_FLOPS = 989e12  # dense bf16, H100/H200
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def synchronize() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--init", required=True)
    parser.add_argument("--data", action="append", required=True)
    parser.add_argument("--metrics", required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--global-batch-rows", type=int, default=128)
    parser.add_argument("--micro-batch-rows", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=4096)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--warmup-steps", type=int, default=1)
    parser.add_argument("--adam-betas", default="0.9,0.95")
    parser.add_argument("--grad-clip", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--attn-implementation", default="sdpa", help="sdpa keeps rows apart with a dense mask")
    parser.add_argument("--liger", action="store_true", help="TRL's use_liger_kernel (liger-kernel's fused ops)")
    parser.add_argument("--family", default=None, help="a random model of this shape instead of --init's weights")
    parser.add_argument("--size", default=None)
    parser.add_argument("--vocab-size", type=int, default=None)
    parser.add_argument("--init-seed", type=int, default=1234)
    return parser.parse_args(argv)


def ordered_rows(args, tokenizer) -> tuple[list, list[int], list[int], list[int]]:
    """The tokenized rows in the order train_sft.py takes them; each step's tokens, trained tokens and causal pairs."""
    bundle = load_bundle(args.init)
    tokenizer.chat_template = bundle.chat_template
    raw = load_rows(args.data, required=("messages",)).rows
    rows, stats = tokenize_rows(
        tokenizer, (r["messages"] for r in raw), system_prompt=bundle.system_prompt, max_length=args.max_length
    )
    print(f"data: {stats.summary()}", flush=True)
    lengths = sorted(len(r.input_ids) for r in rows)
    cuts = statistics.quantiles(lengths, n=10)
    print(
        f"row lengths (tokens): min {lengths[0]}, p10 {cuts[0]:.0f}, median {statistics.median(lengths):.0f}, "
        f"p90 {cuts[-1]:.0f}, max {lengths[-1]}, mean {statistics.fmean(lengths):.0f}",
        flush=True,
    )
    order = sample_order(len(rows), args.steps * args.global_batch_rows, args.seed).tolist()
    chosen = [rows[i] for i in order]
    g = args.global_batch_rows
    steps = [chosen[s * g : (s + 1) * g] for s in range(args.steps)]
    tokens = [sum(len(r.input_ids) for r in step) for step in steps]
    trained = [sum(sum(label != IGNORE_INDEX for label in r.labels[1:]) for r in step) for step in steps]
    pairs = [causal_pairs(len(r.input_ids) for r in step) for step in steps]
    return chosen, tokens, trained, pairs


class SequentialSFTTrainer(SFTTrainer):
    """SFTTrainer reading the dataset in its stored order (already the trainer's seeded order)."""

    def _get_train_sampler(self, *args, **kwargs):
        return SequentialSampler(self.train_dataset)


class StepLog(TrainerCallback):
    """Wall time per optimizer step (synchronised) and the logged loss, as metrics.jsonl lines."""

    def __init__(self, path, tokens: list[int], trained: list[int], pairs: list[int], params):
        self.path, self.tokens, self.trained, self.pairs, self.params = path, tokens, trained, pairs, params
        self.records: list[dict] = []
        self.t0 = None

    def on_step_begin(self, args, state, control, **kwargs):
        if self.t0 is None:
            synchronize()
            self.t0 = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        synchronize()
        now = time.perf_counter()
        dt, self.t0 = now - self.t0, now
        index = state.global_step - 1
        tokens, trained, pairs = self.tokens[index], self.trained[index], self.pairs[index]
        self.records.append(
            {
                "step": state.global_step,
                "tokens": tokens,
                "tok_per_s": tokens / dt,
                "mfu": self.params.step_flops(tokens, trained, pairs) / dt / PEAK_FLOPS,
                "mfu_without_attention": self.params.step_flops(tokens, trained) / dt / PEAK_FLOPS,
                "step_time_s": dt,
                "peak_mem_gib": torch.cuda.max_memory_allocated() / 2**30 if DEVICE == "cuda" else None,
            }
        )

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs and self.records:
            self.records[-1]["loss"] = logs["loss"]
            self.records[-1]["grad_norm"] = logs.get("grad_norm")
            self.records[-1]["lr"] = logs.get("learning_rate")
            self.write()  # after every step, so a run stopped early still leaves its steps

    def write(self):
        with open(self.path, "w") as handle:
            for record in self.records:
                handle.write(json.dumps(record) + "\n")


def main(args) -> int:
    tokenizer = AutoTokenizer.from_pretrained(args.init)
    rows, tokens, trained, pairs = ordered_rows(args, tokenizer)
    dataset = Dataset.from_dict({"input_ids": [r.input_ids for r in rows], "labels": [r.labels for r in rows]})
    if args.family:
        from sft_throughput import random_model

        config = build_config(args.family, args.size, tokenizer, vocab_size=args.vocab_size)
        model = random_model(config, torch.device(DEVICE), args.init_seed, attn_implementation=args.attn_implementation)
    else:
        model = AutoModelForCausalLM.from_pretrained(
            args.init, dtype=torch.float32, attn_implementation=args.attn_implementation
        ).to(DEVICE)
    params = count_params(model)
    optimizer = build_optimizer(
        model, lr=args.lr, betas=tuple(float(b) for b in args.adam_betas.split(",")), weight_decay=0.0
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: lr_multiplier(step, steps=args.steps, warmup=args.warmup_steps, schedule="cosine"),
    )
    log = StepLog(args.metrics, tokens, trained, pairs, params)
    with tempfile.TemporaryDirectory() as scratch:
        config = SFTConfig(
            output_dir=scratch,
            per_device_train_batch_size=args.micro_batch_rows,
            gradient_accumulation_steps=args.global_batch_rows // args.micro_batch_rows,
            max_steps=args.steps,
            bf16=True,
            use_cpu=DEVICE == "cpu",
            gradient_checkpointing=False,
            use_liger_kernel=args.liger,
            padding_free=True,
            max_length=None,
            max_grad_norm=args.grad_clip,
            logging_steps=1,
            save_strategy="no",
            report_to=[],
            seed=args.seed,
            dataloader_drop_last=True,
        )
        trainer = SequentialSFTTrainer(
            model=model,
            args=config,
            train_dataset=dataset,
            processing_class=tokenizer,
            optimizers=(optimizer, schedule),
            callbacks=[log],
        )
        trainer.train()
    log.write()
    timed = log.records[2:] or log.records
    print(
        f"trl: {len(log.records)} steps, loss {log.records[0].get('loss')} -> {log.records[-1].get('loss')}, "
        f"median tok/s {statistics.median(r['tok_per_s'] for r in timed):,.0f}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(parse_args()))
