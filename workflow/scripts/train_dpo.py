"""Full-parameter DPO (sigmoid loss) on preference pairs, against reference log-probs scored beforehand.

Each pair is the prompt conversation rendered with the generation prompt, plus the chosen or
the rejected answer as the completion; a sequence's score is the summed log-probability of
its completion tokens (end-of-turn included). The reference is the --init checkpoint, as in the
card, but its scores come from --reference-logprobs (reference_logprobs.py, a job of its own run
once per parent and pair set): no second model is loaded, and a changed beta, lr or step count
retrains without rescoring. Loss = mean over the pairs of the global batch; step lines report
reward margins and accuracy.

The policy runs as the SFT trainer runs (train.speed): pairs packed with their rows kept apart
(--packing; a pair's chosen and rejected sequences share a pack), compiled blocks, the LM head
only on the completion positions, each position's log-probability from the fused head
(--fused-loss compiled | inplace; lineage.training.head_loss.attach_logprobs), never the full
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

import argparse
import sys
import time
from pathlib import Path

from transformers import AutoConfig, AutoTokenizer

from lineage.chat import load_bundle
from lineage.errors import run_cli
from lineage.io import DataError
from lineage.modeling import causal_pairs, count_params
from lineage.training import dist as tdist
from lineage.training import head_loss, packed_attention
from lineage.training.cli import parse_training_args, resume_hash, training_parser
from lineage.training.data import BatchPlan, load_rows, packed_rank_rows, rank_rows, sample_order
from lineage.training.fsdp import load_sharded_model
from lineage.training.loop import StepData, train
from lineage.training.losses import dpo_sigmoid
from lineage.training.optim import build_optimizer
from lineage.training.output import save_final, verify_parent
from lineage.training.packing import backbone_inputs, boundary_inputs
from lineage.training.pairs import collate_pairs, read_reference, reference_logprobs, sequence_sums, tokenize_pairs
from lineage.training.recipe import DpoRecipe
from lineage.training.state import discard_states

STATS = ("reward_chosen", "reward_rejected", "margin", "accuracy", "ref_logp_chosen", "ref_logp_rejected")


def parse_args(argv=None) -> tuple[argparse.Namespace, DpoRecipe]:
    parser = training_parser("DPO on preference pairs (sigmoid loss, reference log-probs scored beforehand)",
                             DpoRecipe)
    parser.add_argument("--reference-logprobs", type=Path, required=True, metavar="FILE",
                        help="the pairs' log-probs under the reference (--init), from reference_logprobs.py")
    args, recipe = parse_training_args(parser, DpoRecipe, argv)
    if problem := packed_attention.refusal(recipe, args.device):
        parser.error(problem)
    return args, recipe


def prepare_data(args, recipe: DpoRecipe, env: tdist.DistEnv, plan: BatchPlan, tokenizer, bundle, parent):
    """Tokenize the pairs, attach their reference log-probs; return (step_data, dropped, data records, reference)."""
    tokenizer.chat_template = bundle.chat_template  # the bundle's template wins over a tokenizer_config copy
    raw, data_records = load_rows(args.data, required=("messages", "chosen", "rejected"))
    pairs, summary_line, dropped = tokenize_pairs(tokenizer, raw, bundle.system_prompt, recipe.max_length,
                                                  recipe.truncation)
    tdist.print0(f"data: {summary_line}")
    if not pairs:
        raise DataError(f"no usable pairs in {', '.join(map(str, args.data))}; raise --max-length or pass "
                        "--truncation truncate")
    reference, table = read_reference(args.reference_logprobs, parent, recipe.max_length, recipe.truncation)
    references = reference_logprobs(pairs, table, str(args.reference_logprobs), data_records)
    tdist.print0(f"reference: log-probs of {reference['model']['run']} from {args.reference_logprobs} "
                 f"({reference['dtype']}, {reference['method']})")
    order = sample_order(len(pairs), recipe.steps * plan.global_rows, recipe.seed)
    if recipe.packing:
        tdist.print0(f"packing: each rank's pairs of a step in sequences of {recipe.tokens_per_pack} tokens, "
                     f"rows kept apart by {recipe.packed_attention}")
    tdist.print0(
        f"batch: {plan.global_rows} pairs = {plan.micro_rows} micro × {plan.accumulation} accumulation × "
        f"{plan.world_size} ranks; {recipe.steps} steps = {recipe.steps * plan.global_rows / len(pairs):.2f} epochs"
    )
    lengths = [pair.length for pair in pairs]
    multiple = packed_attention.pack_multiple(recipe)

    def micro_batch(ids: list[int]) -> dict:
        chosen = [pairs[i] for i in ids]
        batch = collate_pairs(chosen, tokenizer.pad_token_id, recipe.tokens_per_pack if recipe.packing else None,
                              multiple)
        return batch | {"reference": references[ids] if ids else references[:0]}

    def step_data(step: int) -> StepData:
        if recipe.packing:
            groups = packed_rank_rows(order, step, plan, env.rank, lengths, recipe.tokens_per_pack)
        else:
            groups = rank_rows(order, step, plan, env.rank)
        micro = [micro_batch(ids) for ids in groups]
        sides = [len(side.input_ids) for ids in groups for i in ids for side in (pairs[i].chosen, pairs[i].rejected)]
        head = sum(int(m["sequences"] > 0) * m["positions"].numel() for m in micro)
        return StepData(micro_batches=micro, normalizer=sum(len(ids) for ids in groups), tokens=sum(sides),
                        head_tokens=head, attention_pairs=causal_pairs(sides))

    return step_data, dropped, data_records, reference


def dpo_loss(recipe: DpoRecipe, boundaries: tuple[str, ...] = ()):
    """loss_fn(model, micro) for the loop: the summed DPO loss of the micro-batch's pairs and its stats."""
    varlen = packed_attention.takes_boundaries(recipe)

    def loss_fn(model, micro):
        logprobs = model(**backbone_inputs(micro, boundaries, varlen), positions=micro["positions"],
                         targets=micro["targets"])
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


def main(args: argparse.Namespace, recipe: DpoRecipe) -> int:
    started = time.time()
    env = tdist.init_distributed(args.device)
    try:
        parent = verify_parent(args, env)
        head_loss.check_available(recipe.fused_loss, env.device)
        attn_implementation = packed_attention.attention_implementation(recipe, env.device)
        boundaries = boundary_inputs(AutoConfig.from_pretrained(args.init).model_type, env.device) \
            if recipe.packing else ()
        plan = BatchPlan(recipe.global_batch_rows, recipe.micro_batch_rows, env.world_size)
        tokenizer = AutoTokenizer.from_pretrained(args.init)
        step_data, dropped, data_records, reference = prepare_data(args, recipe, env, plan, tokenizer,
                                                                   load_bundle(args.init), parent)

        policy = load_sharded_model(
            args.init,
            env,
            precision=recipe.precision,
            activation_checkpointing=recipe.activation_checkpointing,
            attn_implementation=attn_implementation,
            compile_blocks=recipe.compile,
            experts_implementation=recipe.experts,
            sharding=args.sharding,
            expert_parallel=args.expert_parallel,
            accumulate=args.accumulate,
        )
        head_path = attach_head(policy, recipe)
        params = count_params(policy)
        world = tdist.describe_world(env, args.sharding)  # a collective: every rank calls it
        tdist.print0(
            f"model: {type(policy).__name__}, {params.total:,} parameters ({params.active:,} active), "
            f"{world}, {recipe.precision}, device {env.device}, head {head_path}, experts {recipe.experts}; "
            "reference log-probs from file"
        )
        optimizer = build_optimizer(
            policy, lr=recipe.lr, betas=recipe.adam_betas, weight_decay=recipe.weight_decay, eps=recipe.adam_eps
        )
        run_hash = resume_hash(recipe, [*data_records, {"sha256": reference["sha256"]}], parent)  # and its reference
        summary = train(
            args,
            recipe,
            env,
            policy,
            optimizer,
            step_data=step_data,
            loss_fn=dpo_loss(recipe, boundaries),
            stat_names=STATS,
            shown=("margin", "accuracy"),
            params=params,
            recipe_hash=run_hash,
        )
        reference_record = {key: reference[key] for key in ("file", "sha256", "model", "dtype", "method")}
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
            extra={"pairs_trained": summary["normalizer"], "pairs_dropped": dropped, "reference": reference_record},
        )
        if args.state_dir is not None and env.is_main:
            discard_states(args.state_dir, run_hash)
        tdist.print0(f"saved {args.out} (final loss {summary['final_loss']:.4f}, {time.time() - started:.1f} s)")
    finally:
        tdist.close()
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(lambda: main(*parse_args())))
