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

--packing concatenates each rank's rows of a step, in order, into sequences of --pack-tokens
(position_ids restart per row, attention stays within a row; Mamba-2 layers get each token's row
as seq_idx, see lineage.training.packing), so little compute goes to padding; the rows, their
order and the loss are those of the padded run, up to float rounding. The LM head runs only on
the trained positions, fused with the loss (--fused-loss, see lineage.training.head_loss).

--validation rows (chat rows, or the holdout split's battle rows, each preferred answer once) are
scored every --validate-every steps, in eval mode and without gradients (lineage.training.validation);
--report-to sends each step's numbers to TensorBoard, trackio, W&B or MLflow (lineage.training.tracking).
"""

from __future__ import annotations

import functools
import sys
import time

import torch

from lineage.chat import IGNORE_INDEX, tokenize_rows
from lineage.data.preferences import winner_rows
from lineage.errors import run_cli
from lineage.io import DataError
from lineage.modeling import causal_pairs
from lineage.screening import chat_refusal, control_tokens
from lineage.training import dist as tdist
from lineage.training import head_loss, job, packed_attention
from lineage.training.cli import JobOptions, parse_training_args, resume_hash, training_parser
from lineage.training.data import (
    BatchPlan,
    collate,
    collate_packed,
    load_rows,
    packed_rank_rows,
    rank_rows,
    sample_order,
)
from lineage.training.loop import StepData, train
from lineage.training.packing import backbone_inputs
from lineage.training.recipe import SftRecipe
from lineage.training.validation import rank_groups


def parse_args(argv=None) -> tuple[JobOptions, SftRecipe]:
    parser = training_parser("Supervised fine-tuning on chat rows (assistant-only loss)", SftRecipe)
    options, recipe = parse_training_args(parser, SftRecipe, argv)
    if problem := packed_attention.refusal(recipe, options.device):
        parser.error(problem)
    return options, recipe


def name_dropped_rows(stats, where) -> None:
    """Give each dropped row its file and line (`where`: LoadedRows.where)."""
    for dropped in stats.dropped_rows:
        dropped["where"] = where(dropped.pop("row"))


def prepare_data(options: JobOptions, recipe: SftRecipe, env: tdist.DistEnv, plan: BatchPlan, tokenizer, bundle):
    """Tokenize --data and return (step_data, stats, data records); every rank does the same work.

    Tokenizing on every rank is cheap and needs no broadcast. step_data(step) gives this rank's
    micro-batches of that step, padded or packed as the flags say.
    """
    tokenizer.chat_template = bundle.chat_template  # the bundle's template wins over a tokenizer_config copy
    data = load_rows(options.data, required=("messages",))
    if data.summary():
        tdist.print0(f"data: {data.summary()}")
    tokens = control_tokens([options.init])  # its template's markers and its tokenizer's special tokens
    rows, stats = tokenize_rows(
        tokenizer,
        (r["messages"] for r in data.rows),
        system_prompt=bundle.system_prompt,
        max_length=recipe.max_length,
        truncation=recipe.truncation,
        refuse=functools.partial(chat_refusal, tokens=tokens),
    )
    name_dropped_rows(stats, data.where)
    tdist.print0(f"data: {stats.summary()}")
    if not rows:
        raise DataError(
            f"no trainable rows in {', '.join(options.data)} ({stats.summary()}); "
            "raise --max-length or pass --truncation truncate"
        )
    if recipe.packing:
        tdist.print0(
            f"packing: each rank's rows of a step in sequences of {recipe.tokens_per_pack} tokens, "
            f"rows kept apart by {recipe.packed_attention}"
        )
    tdist.print0(
        f"batch: {plan.global_rows} rows = {plan.micro_rows} micro × {plan.accumulation} accumulation × "
        f"{plan.world_size} ranks; {recipe.steps} steps = {recipe.steps * plan.global_rows / len(rows):.2f} epochs"
    )
    return row_steps(rows, recipe, plan, env.rank, tokenizer.pad_token_id), stats, data.records


def prepare_validation(options: JobOptions, recipe: SftRecipe, env: tdist.DistEnv, plan: BatchPlan, tokenizer, bundle):
    """This rank's share of the --validation rows as StepData (None without --validate-every), tokenized as the
    training rows are; says how many of them also train (the card's recipe trains on the holdout)."""
    if options.validation is None or not options.validate_every:
        return None
    conversations = validation_conversations(options.validation)
    trained = {_key(r["messages"]) for r in load_rows(options.data, required=("messages",)).rows}
    held, held_stats = tokenize_rows(
        tokenizer,
        conversations,
        system_prompt=bundle.system_prompt,
        max_length=recipe.max_length,
        truncation=recipe.truncation,
        refuse=functools.partial(chat_refusal, tokens=control_tokens([options.init])),
    )
    if not held:
        raise DataError(f"{options.validation}: no row to validate on ({held_stats.summary()})")
    seen = sum(_key(c) in trained for c in conversations)
    tdist.print0(
        f"validation: {len(held)} rows of {options.validation} every {options.validate_every} steps"
        + (
            f"; {seen} of {len(conversations)} also train (recipe.holdout_in_training: true, as the card "
            "did): val_loss measures fit, not generalisation"
            if seen
            else "; none of them trains"
        )
    )
    return validation_data(held, recipe, env, plan.micro_rows, tokenizer.pad_token_id)


def _key(messages) -> str:
    return "\x1e".join(f"{m['role']}\x1f{m['content']}" for m in messages)


def validation_conversations(path) -> list[list[dict]]:
    """The conversations of a validation file: chat rows as they are, battle rows (with `preferred`, as
    split_holdout.py writes the holdout) as their winner row, each once."""
    rows = load_rows([path], required=("messages",)).rows
    battles = [r for r in rows if "preferred" in r]
    chats = [r for r in rows if "preferred" not in r]
    return [r["messages"] for r in chats] + [r["messages"] for r in winner_rows([], battles, 1)]


def validation_data(rows, recipe: SftRecipe, env: tdist.DistEnv, micro_rows: int, pad_id: int) -> StepData:
    """This rank's share of the tokenized validation rows, as micro-batches (as many on every rank)."""
    lengths = [len(r.input_ids) for r in rows]
    budget = recipe.tokens_per_pack if recipe.packing else None
    micro = []
    for ids in rank_groups(lengths, env.world_size, env.rank, micro_rows, budget):
        if recipe.packing:
            batch = collate_packed(
                [rows[i] for i in ids], pad_id, recipe.tokens_per_pack, packed_attention.pack_multiple(recipe)
            )
        elif ids:
            batch = collate([rows[i] for i in ids], pad_id)
        else:  # keeps the ranks in step: two padding tokens, nothing scored
            batch = {"input_ids": torch.full((1, 2), pad_id), "labels": torch.full((1, 2), IGNORE_INDEX)}
        batch["loss_positions"] = head_loss.find_loss_positions(batch["labels"])
        micro.append(batch)
    scored = sum(len(m["loss_positions"]) for m in micro)
    return StepData(micro_batches=micro, normalizer=scored, tokens=sum(lengths))


def row_steps(rows, recipe: SftRecipe, plan: BatchPlan, rank: int, pad_id: int):
    """step_data(step): `rank`'s micro-batches of tokenized rows at that step, padded or packed as the recipe says
    (a pure function of the step: a resume or a rehearsal of one rank builds the same batches)."""
    order = sample_order(len(rows), recipe.steps * plan.global_rows, recipe.seed)
    lengths = [len(r.input_ids) for r in rows]
    pack_multiple = packed_attention.pack_multiple(recipe)

    def step_data(step: int) -> StepData:
        if recipe.packing:
            groups = packed_rank_rows(order, step, plan, rank, lengths, recipe.tokens_per_pack)
            micro = [
                collate_packed([rows[i] for i in ids], pad_id, recipe.tokens_per_pack, pack_multiple) for ids in groups
            ]
        else:
            groups = rank_rows(order, step, plan, rank)
            micro = [collate([rows[i] for i in ids], pad_id) for ids in groups]
        for m in micro:  # found here, on the host: on the GPU the count would hold the host until the forward ran
            m["loss_positions"] = head_loss.find_loss_positions(m["labels"])
        trained = sum(len(m["loss_positions"]) for m in micro)
        step_lengths = [lengths[i] for ids in groups for i in ids]
        return StepData(
            micro_batches=micro,
            normalizer=trained,
            tokens=sum(step_lengths),
            head_tokens=trained,
            attention_pairs=causal_pairs(step_lengths),
        )

    return step_data


def attach_head_loss(model, recipe: SftRecipe) -> str:
    """Make model(input_ids, labels, ...) return the loss sum, the head fused as the recipe says."""
    implementation = head_loss.choose(recipe.fused_loss, recipe.ce_chunk_tokens)
    head_loss.attach(model, implementation, recipe.ce_chunk_tokens)
    return implementation


def sft_loss(recipe: SftRecipe, boundaries: tuple[str, ...] = ()):
    """loss_fn(model, micro) for the loop: summed cross-entropy of the labelled tokens (attach_head_loss first).

    `boundaries` are the packed micro-batch's inputs that the model needs (packing.boundary_inputs).
    """

    varlen = packed_attention.takes_boundaries(recipe)

    def loss_fn(model, micro):
        inputs = backbone_inputs(micro, boundaries, varlen)
        return model(**inputs, labels=micro["labels"], loss_positions=micro.get("loss_positions")), {}

    return loss_fn


def main(options: JobOptions, recipe: SftRecipe) -> int:
    started = time.time()
    env = tdist.init_distributed(options.device, training=True)
    try:
        begun = job.start(options, recipe, env)
        step_data, stats, data_records = prepare_data(options, recipe, env, begun.plan, begun.tokenizer, begun.bundle)
        validation = prepare_validation(options, recipe, env, begun.plan, begun.tokenizer, begun.bundle)
        model, optimizer, params = job.sharded_model(options, recipe, env, begun, attach_head_loss)
        run_hash = resume_hash(recipe, data_records, begun.parent)
        summary = train(
            options,
            recipe,
            env,
            model,
            optimizer,
            step_data=step_data,
            loss_fn=sft_loss(recipe, begun.boundaries),
            stat_names=(),
            params=params,
            recipe_hash=run_hash,
            validation=validation,
        )
        job.finish(
            options,
            recipe,
            env,
            model,
            kind="sft",
            begun=begun,
            data_records=data_records,
            summary=summary,
            started=started,
            run_hash=run_hash,
            extra={"loss_tokens": summary["normalizer"], "data_stats": stats.as_dict()},
        )
    finally:
        tdist.close()
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(lambda: main(*parse_args())))
