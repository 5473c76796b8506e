"""Full-parameter DPO (sigmoid loss) on preference pairs, against reference log-probs scored beforehand.

Each pair is the prompt conversation rendered with the generation prompt, plus the chosen or
the rejected answer as the completion; a sequence's score is the summed log-probability of
its completion tokens (end-of-turn included). The reference is the --init checkpoint, as in the
card, but its scores come from --reference-logprobs (reference_logprobs.py, a job of its own run
once per parent and pair set): no second model is loaded, and a changed beta, lr or step count
retrains without rescoring. Loss = mean over the pairs of the global batch; step lines report
reward margins and accuracy.

--validation pairs (the holdout split's battle pairs) are scored every --validate-every steps, in
eval mode and without gradients (lineage.training.validation): the DPO loss, reward margin and
accuracy against the same reference file, which must hold them too (the workflow's reference job
scores the training and the validation pairs together).

The policy runs as the SFT trainer runs (train.speed): pairs packed with their rows kept apart
(--packing; a pair's chosen and rejected sequences share a pack), compiled blocks, the LM head
only on the completion positions, each position's log-probability from the fused head
(--fused-loss compiled | inplace | inplace_chunked; lineage.training.head_loss.attach_logprobs), never the full
logits of a sequence.

Run as:
    python workflow/scripts/reference_logprobs.py --init results/embedded/models/sftw2 \
        --data results/embedded/data/pairs.jsonl --max-length 512 --out /tmp/reference.jsonl
    python workflow/scripts/train_dpo.py --init results/embedded/models/sftw2 --data results/embedded/data/pairs.jsonl \
        --reference-logprobs /tmp/reference.jsonl --out /tmp/dpo --steps 10 --lr 1e-6 --beta 0.1 \
        --global-batch-rows 8 --micro-batch-rows 2 --max-length 512 --precision fp32
or with accelerate launch --config_file workflow/accelerate/fsdp2.yaml --num_processes N (see train_sft.py).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

from lineage.chat import IGNORE_INDEX
from lineage.errors import run_cli
from lineage.io import DataError
from lineage.modeling import causal_pairs
from lineage.pair_rows import PAIR_FIELDS
from lineage.screening import control_tokens
from lineage.training import dist as tdist
from lineage.training import head_loss, job, packed_attention
from lineage.training.cli import JobOptions, parse_training_args, resume_hash, training_parser
from lineage.training.data import BatchPlan, load_rows, packed_rank_rows, rank_rows, sample_order
from lineage.training.loop import StepData, train
from lineage.training.losses import dpo_sigmoid
from lineage.training.packing import backbone_inputs
from lineage.training.pairs import (
    Pair,
    collate_pairs,
    read_reference,
    reference_logprobs,
    scored_positions,
    sequence_sums,
    tokenize_pairs,
)
from lineage.training.recipe import DpoRecipe
from lineage.training.validation import rank_groups

STATS = ("reward_chosen", "reward_rejected", "margin", "accuracy", "ref_logp_chosen", "ref_logp_rejected")


def parse_args(argv=None) -> tuple[JobOptions, DpoRecipe]:
    parser = training_parser("DPO on preference pairs (sigmoid loss, reference log-probs scored beforehand)", DpoRecipe)
    parser.add_argument(
        "--reference-logprobs",
        type=Path,
        required=True,
        metavar="FILE",
        help="the pairs' log-probs under the reference (--init), from reference_logprobs.py",
    )
    options, recipe = parse_training_args(parser, DpoRecipe, argv, extras=("reference_logprobs",))
    if problem := packed_attention.refusal(recipe, options.device):
        parser.error(problem)
    return options, recipe


def prepare_data(
    options: JobOptions, recipe: DpoRecipe, env: tdist.DistEnv, plan: BatchPlan, tokenizer, bundle, parent
):
    """Tokenize the pairs, attach their reference log-probs; return (step_data, dropped, data records, reference,
    validation)."""
    tokenizer.chat_template = bundle.chat_template  # the bundle's template wins over a tokenizer_config copy
    data = load_rows(options.data, required=PAIR_FIELDS)
    if data.summary():
        tdist.print0(f"data: {data.summary()}")
    pairs, summary_line, dropped = pairs_of(data, options, recipe, tokenizer, bundle)
    tdist.print0(f"data: {summary_line}")
    if not pairs:
        raise DataError(
            f"no usable pairs in {', '.join(map(str, options.data))}; raise --max-length or pass --truncation truncate"
        )
    reference_file = options.extras["reference_logprobs"]
    reference, table = read_reference(reference_file, parent, recipe.max_length, recipe.truncation)
    references = reference_logprobs(pairs, table, str(reference_file), data.where)
    tdist.print0(
        f"reference: log-probs of {reference['model']['run']} from {reference_file} "
        f"({reference['dtype']}, {reference['method']})"
    )
    if recipe.packing:
        tdist.print0(
            f"packing: each rank's pairs of a step in sequences of {recipe.tokens_per_pack} tokens, "
            f"rows kept apart by {recipe.packed_attention}"
        )
    tdist.print0(
        f"batch: {plan.global_rows} pairs = {plan.micro_rows} micro × {plan.accumulation} accumulation × "
        f"{plan.world_size} ranks; {recipe.steps} steps = {recipe.steps * plan.global_rows / len(pairs):.2f} epochs"
    )
    step_data = pair_steps(pairs, references, recipe, plan, env.rank, tokenizer.pad_token_id)
    validation = prepare_validation(options, recipe, env, plan, tokenizer, bundle, table, {p.key for p in pairs})
    return step_data, dropped, data.records, reference, validation


def pairs_of(data, options: JobOptions, recipe: DpoRecipe, tokenizer, bundle):
    """(pairs, summary line, drops) of loaded rows, tokenized and screened as reference_logprobs.py does (both must
    keep the same pairs for the keys to meet)."""
    screen = control_tokens([options.init])
    return tokenize_pairs(
        tokenizer, data.rows, bundle.system_prompt, recipe.max_length, recipe.truncation, data.where, screen
    )


def prepare_validation(options: JobOptions, recipe: DpoRecipe, env, plan: BatchPlan, tokenizer, bundle, table, trained):
    """This rank's share of the --validation pairs as StepData (None without --validate-every), tokenized as the
    training pairs are, with their reference log-probs from the same file; says how many of them also train."""
    if options.validation is None or not options.validate_every:
        return None
    data = load_rows([options.validation], required=PAIR_FIELDS)
    pairs, summary_line, _ = pairs_of(data, options, recipe, tokenizer, bundle)
    if not pairs:
        raise DataError(f"{options.validation}: no pair to validate on ({summary_line})")
    reference_file = options.extras["reference_logprobs"]
    if missing := sum(pair.key not in table for pair in pairs):
        raise DataError(
            f"{reference_file}: no reference log-probs for {missing} of the {len(pairs)} validation pairs of "
            f"{options.validation}: score them with the training pairs (reference_logprobs.py --data TRAINING "
            f"--data {options.validation}, as the workflow's reference job does)"
        )
    references = reference_logprobs(pairs, table, str(reference_file), data.where)
    seen = sum(pair.key in trained for pair in pairs)
    tdist.print0(
        f"validation: {len(pairs)} pairs of {options.validation} every {options.validate_every} steps"
        + (
            f"; {seen} of them also train (recipe.holdout_in_training: true, as the card did): val_loss measures "
            "fit, not generalisation"
            if seen
            else "; none of them trains"
        )
    )
    budget = recipe.tokens_per_pack if recipe.packing else None
    groups = rank_groups([pair.length for pair in pairs], env.world_size, env.rank, plan.micro_rows, budget)
    micro = [pair_batch(pairs, references, ids, recipe, tokenizer.pad_token_id) for ids in groups]
    return StepData(
        micro_batches=micro,
        normalizer=sum(len(ids) for ids in groups),
        tokens=sum(pairs[i].length for ids in groups for i in ids),
    )


def pair_batch(pairs: list[Pair], references, ids: list[int], recipe: DpoRecipe, pad_id: int) -> dict:
    """The micro-batch of the pairs `ids` with their reference log-probs, padded or packed as the recipe says. An
    empty one (a rank with fewer validation pairs) scores nothing and keeps the ranks in step."""
    if ids or recipe.packing:
        pack = recipe.tokens_per_pack if recipe.packing else None
        batch = collate_pairs([pairs[i] for i in ids], pad_id, pack, packed_attention.pack_multiple(recipe))
    else:
        labels = torch.full((1, 2), IGNORE_INDEX)
        batch = {"input_ids": torch.full((1, 2), pad_id), "labels": labels}
        batch |= scored_positions(labels, torch.zeros_like(labels), 0)
    return batch | {"reference": references[ids] if ids else references[:0]}


def pair_steps(pairs, references, recipe: DpoRecipe, plan: BatchPlan, rank: int, pad_id: int):
    """step_data(step): `rank`'s micro-batches of pairs (with their reference log-probs, a (pairs, 2) tensor) at
    that step, padded or packed as the recipe says; a pure function of the step."""
    order = sample_order(len(pairs), recipe.steps * plan.global_rows, recipe.seed)
    lengths = [pair.length for pair in pairs]

    def step_data(step: int) -> StepData:
        if recipe.packing:
            groups = packed_rank_rows(order, step, plan, rank, lengths, recipe.tokens_per_pack)
        else:
            groups = rank_rows(order, step, plan, rank)
        micro = [pair_batch(pairs, references, ids, recipe, pad_id) for ids in groups]
        sides = [len(side.input_ids) for ids in groups for i in ids for side in (pairs[i].chosen, pairs[i].rejected)]
        head = sum(int(m["sequences"] > 0) * m["positions"].numel() for m in micro)
        return StepData(
            micro_batches=micro,
            normalizer=sum(len(ids) for ids in groups),
            tokens=sum(sides),
            head_tokens=head,
            attention_pairs=causal_pairs(sides),
        )

    return step_data


def dpo_loss(recipe: DpoRecipe, boundaries: tuple[str, ...] = ()):
    """loss_fn(model, micro) for the loop: the summed DPO loss of the micro-batch's pairs and its stats."""
    varlen = packed_attention.takes_boundaries(recipe)

    def loss_fn(model, micro):
        logprobs = model(
            **backbone_inputs(micro, boundaries, varlen), positions=micro["positions"], targets=micro["targets"]
        )
        if not micro["sequences"]:  # an empty pack that keeps the ranks in step: no pair, zero gradient
            zero = logprobs.sum() * 0
            return zero, {name: zero.detach() for name in STATS}
        sums = sequence_sums(logprobs, micro)
        chosen, rejected = sums[0::2], sums[1::2]
        reference = micro["reference"].to(sums.dtype)
        ref_chosen, ref_rejected = reference[:, 0], reference[:, 1]
        loss, reward_chosen, reward_rejected = dpo_sigmoid(chosen, rejected, ref_chosen, ref_rejected, recipe.beta)
        margin = reward_chosen - reward_rejected
        stats = {
            "reward_chosen": reward_chosen.sum(),
            "reward_rejected": reward_rejected.sum(),
            "margin": margin.sum(),
            "accuracy": (margin > 0).to(sums.dtype).sum(),
            "ref_logp_chosen": ref_chosen.sum(),
            "ref_logp_rejected": ref_rejected.sum(),
        }
        return loss.sum(), stats

    return loss_fn


def attach_head(model, recipe: DpoRecipe) -> str:
    """Make model(input_ids, positions, targets, ...) return each position's log-prob, fused as the recipe says."""
    implementation = head_loss.choose(recipe.fused_loss, recipe.ce_chunk_tokens)
    head_loss.attach_logprobs(model, implementation, recipe.ce_chunk_tokens)
    return implementation


def main(options: JobOptions, recipe: DpoRecipe) -> int:
    started = time.time()
    env = tdist.init_distributed(options.device, training=True)
    try:
        begun = job.start(options, recipe, env)
        step_data, dropped, data_records, reference, validation = prepare_data(
            options, recipe, env, begun.plan, begun.tokenizer, begun.bundle, begun.parent
        )
        policy, optimizer, params = job.sharded_model(
            options, recipe, env, begun, attach_head, note="; reference log-probs from file"
        )
        run_hash = resume_hash(
            recipe, [*data_records, {"sha256": reference["sha256"]}], begun.parent
        )  # and its reference
        summary = train(
            options,
            recipe,
            env,
            policy,
            optimizer,
            step_data=step_data,
            loss_fn=dpo_loss(recipe, begun.boundaries),
            stat_names=STATS,
            shown=("margin", "accuracy"),
            params=params,
            recipe_hash=run_hash,
            validation=validation,
        )
        reference_record = {key: reference[key] for key in ("file", "sha256", "model", "dtype", "method")}
        job.finish(
            options,
            recipe,
            env,
            policy,
            kind="dpo",
            begun=begun,
            data_records=data_records,
            summary=summary,
            started=started,
            run_hash=run_hash,
            extra={"pairs_trained": summary["normalizer"], "pairs_dropped": dropped, "reference": reference_record},
        )
    finally:
        tdist.close()
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(lambda: main(*parse_args())))
