"""Full-parameter supervised fine-tuning on chat rows, assistant tokens only.

Loss = sum of the assistant tokens' cross-entropies / trained tokens of the whole global batch,
so the curve does not depend on the micro-batch or the number of ranks. Data order is seeded
and a pure function of the step; the model is sharded with FSDP2 on any number of ranks
(one included); resumable state goes to --state-dir; the result is a checkpoint with a
lineage.json naming the parent, the recipe and the data.

Run as:
    python workflow/scripts/train_sft.py --init results/embedded/base --data resources/sample/general_mix.jsonl \
        --out results/embedded/stage1 --steps 24 --lr 5e-6 --global-batch-rows 16 --micro-batch-rows 4 \
        --max-length 512 --precision fp32
or on several processes (CPU: gloo, GPU: nccl):
    accelerate launch --config_file workflow/accelerate/fsdp2.yaml --num_processes 2 \
        workflow/scripts/train_sft.py --init ... --data ... --out ... --steps 24
"""

from __future__ import annotations

import argparse
import sys
import time

from transformers import AutoTokenizer

from lineage.chat import load_bundle, tokenize_rows
from lineage.io import DataError
from lineage.modeling import count_params
from lineage.training import dist as tdist
from lineage.training.config import add_training_args, check_args, recipe_hash
from lineage.training.state import discard_states
from lineage.training.data import BatchPlan, collate, load_rows, rank_rows, sample_order
from lineage.training.fsdp import load_sharded_model
from lineage.training.loop import StepData, train
from lineage.training.losses import token_loss_sum, trained_token_count
from lineage.training.optim import build_optimizer
from lineage.training.output import save_final, verify_parent


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Supervised fine-tuning on chat rows (assistant-only loss)")
    add_training_args(parser, lr=5e-6)
    args = parser.parse_args(argv)
    check_args(args)
    return args


def main(args) -> int:
    started = time.time()
    env = tdist.init_distributed(args.device)
    try:
        parent = verify_parent(args, env)
        plan = BatchPlan(args.global_batch_rows, args.micro_batch_rows, env.world_size)

        # Data: tokenized identically on every rank (cheap, and no broadcast needed)
        tokenizer = AutoTokenizer.from_pretrained(args.init)
        bundle = load_bundle(args.init)
        tokenizer.chat_template = bundle.chat_template  # the bundle's template wins over a tokenizer_config copy
        raw, data_records = load_rows(args.data, required=("messages",))
        rows, stats = tokenize_rows(
            tokenizer,
            (r["messages"] for r in raw),
            system_prompt=bundle.system_prompt,
            max_length=args.max_length,
            truncation=args.truncation,
        )
        tdist.print0(f"data: {stats.summary()}")
        if not rows:
            raise DataError(
                f"no trainable rows in {', '.join(args.data)} ({stats.summary()}); "
                "raise --max-length or pass --truncation truncate"
            )
        order = sample_order(len(rows), args.steps * plan.global_rows, args.seed)
        tdist.print0(
            f"batch: {plan.global_rows} rows = {plan.micro_rows} micro × {plan.accumulation} accumulation × "
            f"{plan.world_size} ranks; {args.steps} steps = {args.steps * plan.global_rows / len(rows):.2f} epochs"
        )

        def step_data(step: int) -> StepData:
            groups = rank_rows(order, step, plan, env.rank)
            micro = [collate([rows[i] for i in ids], tokenizer.pad_token_id) for ids in groups]
            return StepData(
                micro_batches=micro,
                normalizer=sum(trained_token_count(m["labels"]) for m in micro),
                tokens=sum(len(rows[i].input_ids) for ids in groups for i in ids),
            )

        def loss_fn(model, micro):
            logits = model(input_ids=micro["input_ids"]).logits
            return token_loss_sum(logits, micro["labels"]), {}

        # Model and optimizer
        model = load_sharded_model(
            args.init, env, precision=args.precision, activation_checkpointing=args.activation_checkpointing
        )
        total, active = count_params(model)
        tdist.print0(
            f"model: {type(model).__name__}, {total:,} parameters ({active:,} active), world size {env.world_size}, "
            f"{args.precision}, device {env.device}"
        )
        optimizer = build_optimizer(
            model, lr=args.lr, betas=args.adam_betas, weight_decay=args.weight_decay, eps=args.adam_eps
        )

        run_hash = recipe_hash(args, data_records, parent)
        summary = train(
            args,
            env,
            model,
            optimizer,
            step_data=step_data,
            loss_fn=loss_fn,
            stat_names=(),
            active_params=active,
            recipe_hash=run_hash,
        )
        save_final(
            args,
            env,
            model,
            kind="sft",
            parent=parent,
            data_records=data_records,
            summary=summary,
            started=started,
            extra={"loss_tokens": summary["normalizer"], "data_stats": stats.as_dict()},
        )
        if args.state_dir is not None and env.is_main:
            discard_states(args.state_dir, run_hash)
        tdist.print0(f"saved {args.out} (final loss {summary['final_loss']:.4f}, {time.time() - started:.1f} s)")
    finally:
        tdist.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(parse_args()))
