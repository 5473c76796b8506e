"""Full-parameter DPO (sigmoid loss) on preference pairs, against the frozen parent as reference.

Each pair is the prompt conversation rendered with the generation prompt, plus the chosen or
the rejected answer as the completion; a sequence's score is the summed log-probability of
its completion tokens (end-of-turn included). Chosen and rejected rows go through one forward
pass. The reference model is the --init checkpoint, sharded like the policy and never updated.
Loss = mean over the pairs of the global batch; step lines report reward margins and accuracy.

Run as:
    python workflow/scripts/train_dpo.py --init results/embedded/sftw2 --data results/embedded/pairs.jsonl \
        --out results/embedded/dpo_lr1e-6 --steps 10 --lr 1e-6 --beta 0.1 --global-batch-rows 8 \
        --micro-batch-rows 2 --max-length 512 --precision fp32
or with accelerate launch --config_file workflow/accelerate/fsdp2.yaml --num_processes N (see train_sft.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

import torch
from transformers import AutoTokenizer

from lineage.chat import completion_logprob_inputs, load_bundle
from lineage.io import DataError
from lineage.modeling import causal_pairs, count_params
from lineage.training import dist as tdist
from lineage.training.cli import parse_training_args, resume_hash, training_parser
from lineage.training.state import discard_states
from lineage.training.data import BatchPlan, collate, load_rows, rank_rows, sample_order
from lineage.training.fsdp import load_sharded_model
from lineage.training.loop import StepData, train
from lineage.training.losses import dpo_sigmoid, sequence_logprobs
from lineage.training.optim import build_optimizer
from lineage.training.output import save_final, verify_parent
from lineage.training.recipe import DpoRecipe
from lineage.errors import run_cli

STATS = ("reward_chosen", "reward_rejected", "margin", "accuracy", "ref_logp_chosen", "ref_logp_rejected")


def parse_args(argv=None) -> tuple[argparse.Namespace, DpoRecipe]:
    parser = training_parser("DPO on preference pairs (sigmoid loss, frozen reference)", DpoRecipe)
    return parse_training_args(parser, DpoRecipe, argv)


def completion_text(value, field: str, index: int) -> str:
    """An answer given as a string, an assistant message, or a list ending in one."""
    if isinstance(value, list) and value:
        value = value[-1]
    if isinstance(value, dict) and value.get("role") == "assistant":
        value = value.get("content")
    if not isinstance(value, str):
        raise DataError(f"pair {index}: '{field}' must be a string or an assistant message, got {type(value).__name__}")
    return value


def tokenize_pairs(tokenizer, raw, system_prompt, max_length, truncation):
    pairs, dropped = [], Counter()
    for index, row in enumerate(raw):
        sides = [
            completion_logprob_inputs(
                tokenizer,
                row["messages"],
                completion_text(row[field], field, index),
                system_prompt=system_prompt,
                max_length=max_length,
                truncation=truncation,
            )
            for field in ("chosen", "rejected")
        ]
        reasons = [reason for _, reason in sides if reason]
        if reasons:
            dropped[reasons[0]] += 1
        else:
            pairs.append((sides[0][0], sides[1][0]))
    drops = ", ".join(f"{k}: {v}" for k, v in sorted(dropped.items())) or "none"
    return pairs, f"{len(pairs)}/{len(raw)} pairs kept (dropped: {drops})", dict(dropped)


def main(args: argparse.Namespace, recipe: DpoRecipe) -> int:
    started = time.time()
    env = tdist.init_distributed(args.device)
    try:
        parent = verify_parent(args, env)
        plan = BatchPlan(recipe.global_batch_rows, recipe.micro_batch_rows, env.world_size)

        tokenizer = AutoTokenizer.from_pretrained(args.init)
        bundle = load_bundle(args.init)
        tokenizer.chat_template = bundle.chat_template  # the bundle's template wins over a tokenizer_config copy
        raw, data_records = load_rows(args.data, required=("messages", "chosen", "rejected"))
        pairs, summary_line, dropped = tokenize_pairs(
            tokenizer, raw, bundle.system_prompt, recipe.max_length, recipe.truncation
        )
        tdist.print0(f"data: {summary_line}")
        if not pairs:
            raise DataError(
                f"no usable pairs in {', '.join(args.data)}; raise --max-length or pass --truncation truncate"
            )
        order = sample_order(len(pairs), recipe.steps * plan.global_rows, recipe.seed)
        tdist.print0(
            f"batch: {plan.global_rows} pairs = {plan.micro_rows} micro × {plan.accumulation} accumulation × "
            f"{plan.world_size} ranks; {recipe.steps} steps = {recipe.steps * plan.global_rows / len(pairs):.2f} epochs"
        )

        def step_data(step: int) -> StepData:
            groups = rank_rows(order, step, plan, env.rank)
            micro = [
                collate([pairs[i][0] for i in ids] + [pairs[i][1] for i in ids], tokenizer.pad_token_id)
                for ids in groups
            ]
            lengths = [len(row.input_ids) for ids in groups for i in ids for row in pairs[i][:2]]  # chosen, rejected
            return StepData(micro_batches=micro, normalizer=sum(len(ids) for ids in groups), tokens=sum(lengths),
                            attention_pairs=causal_pairs(lengths))

        policy = load_sharded_model(args.init, env, precision=recipe.precision,
                                    activation_checkpointing=recipe.activation_checkpointing, sharding=args.sharding,
                                    accumulate=args.accumulate)
        reference = load_sharded_model(args.init, env, precision=recipe.precision, trainable=False,
                                       sharding=args.sharding)

        def loss_fn(model, micro):
            chosen, rejected = sequence_logprobs(model(input_ids=micro["input_ids"]).logits, micro["labels"]).chunk(2)
            with torch.no_grad():
                ref_chosen, ref_rejected = sequence_logprobs(
                    reference(input_ids=micro["input_ids"]).logits, micro["labels"]
                ).chunk(2)
            loss, reward_chosen, reward_rejected = dpo_sigmoid(chosen, rejected, ref_chosen, ref_rejected, recipe.beta)
            margin = reward_chosen - reward_rejected
            stats = {
                "reward_chosen": reward_chosen.sum(),
                "reward_rejected": reward_rejected.sum(),
                "margin": margin.sum(),
                "accuracy": (margin > 0).float().sum(),
                "ref_logp_chosen": ref_chosen.sum(),
                "ref_logp_rejected": ref_rejected.sum(),
            }
            return loss.sum(), stats

        params = count_params(policy)
        world = tdist.describe_world(env, args.sharding)  # a collective: every rank calls it
        tdist.print0(
            f"model: {type(policy).__name__}, {params.total:,} parameters ({params.active:,} active), "
            f"{world}, {recipe.precision}, device {env.device}; reference frozen"
        )
        optimizer = build_optimizer(
            policy, lr=recipe.lr, betas=recipe.adam_betas, weight_decay=recipe.weight_decay, eps=recipe.adam_eps
        )
        run_hash = resume_hash(recipe, data_records, parent)
        summary = train(
            args,
            recipe,
            env,
            policy,
            optimizer,
            step_data=step_data,
            loss_fn=loss_fn,
            stat_names=STATS,
            shown=("margin", "accuracy"),
            params=params,
            recipe_hash=run_hash,
        )
        save_final(
            args,
            recipe,
            env,
            policy,
            kind="dpo",
            parent=parent,
            data_records=data_records,
            summary=summary,
            started=started,
            extra={"pairs_trained": summary["normalizer"], "pairs_dropped": dropped},
        )
        if args.state_dir is not None and env.is_main:
            discard_states(args.state_dir, run_hash)
        tdist.print0(f"saved {args.out} (final loss {summary['final_loss']:.4f}, {time.time() - started:.1f} s)")
    finally:
        tdist.close()
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(lambda: main(*parse_args())))
