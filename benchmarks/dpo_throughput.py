"""train_dpo.py's steps on a named shape with fresh random weights, after its reference pass, each timed.

As benchmarks/sft_throughput.py does for SFT: every rank draws the same random weights on its GPU
(no checkpoint written or read). The reference is that draw in bf16, scored as
reference_logprobs.py scores a parent (the eval's packed log-likelihood where the model packs on
its device, padded batches otherwise); the file it writes is the one the trainer then reads.
The policy's optimizer steps are train_dpo.py's own (its flags, pairs, loss, FSDP2 sharding, loop
and metrics.jsonl).

--reference live runs the trainer as it was before reference log-probs had a job of their own
(git history of workflow/scripts/train_dpo.py): pairs padded, a second, frozen copy of the model
sharded beside the policy, both over the full vocabulary at every micro-batch, an fp32
log-softmax per row. It is the "before" of benchmarks/dpo_speed.sh.

The summary line gives medians over steps --timed-from .. the last: tokens/s/GPU, MFU on active
parameters (the policy's forward and backward, as the trainer counts it; the live reference's
forward is not counted, so its MFU understates the work done), peak memory, loss first -> last.
The reference pass gets its own line: seconds, tokens/s and MFU of a forward pass.

Run as (repository root, PYTHONPATH=workflow/scripts:benchmarks):
    python benchmarks/dpo_throughput.py --family llama --size 1b --vocab-size 128256 --tokenizer OUT/tokenizer \
        --data pairs.jsonl --steps 8 --global-batch-rows 64 --packing --packed-attention varlen --compile \
        --fused-loss inplace --metrics m.jsonl
The flags not listed by --help are train_dpo.py's (its --init, --out and --reference-logprobs are filled in).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import torch
import train_dpo
from sft_throughput import add_layers_flag, allocator_line, first_layers, random_model, random_sharded_model, summary
from transformers import AutoTokenizer

from lineage.chat import IGNORE_INDEX, load_bundle
from lineage.evaluation.packed_scoring import packed_loglikelihood, unpackable_reason
from lineage.evaluation.scoring import loglikelihood
from lineage.families.nemotron_h import missing_mamba_kernels
from lineage.io import write_jsonl
from lineage.modeling import SHAPES, build_config, causal_pairs, count_params
from lineage.pair_rows import PAIR_FIELDS
from lineage.training import dist as tdist
from lineage.training.data import BatchPlan, collate, load_rows, rank_rows, sample_order
from lineage.training.fsdp import build_options
from lineage.training.loop import StepData, train
from lineage.training.losses import dpo_sigmoid
from lineage.training.optim import build_optimizer
from lineage.training.packing import boundary_inputs
from lineage.training.pairs import reference_header, scoring_request, tokenize_pairs

PEAK_FLOPS = 989e12  # dense bf16, H100/H200


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--family", required=True, choices=sorted({f for f, _ in SHAPES}))
    parser.add_argument("--size", required=True, choices=sorted({s for _, s in SHAPES}))
    parser.add_argument("--tokenizer", type=Path, required=True, help="directory from build_tokenizer.py")
    parser.add_argument("--init-seed", type=int, default=1234, help="seed of the random weights")
    parser.add_argument("--vocab-size", type=int, default=None, help="embedding and head rows (a real vocabulary)")
    parser.add_argument(
        "--reference",
        choices=("file", "live"),
        default="file",
        help="file: scored beforehand (the trainer); live: a frozen copy at every step (before)",
    )
    parser.add_argument("--reference-pack-tokens", type=int, default=32768, help="the reference pass's packs")
    parser.add_argument("--timed-from", type=int, default=3, help="first step in the medians (allocator warm-up)")
    add_layers_flag(parser)
    own, rest = parser.parse_known_args(argv)
    own.scratch = Path(tempfile.mkdtemp(prefix="dpo-bench-"))
    rest = [a for a in rest if a != "--"]
    args, recipe = train_dpo.parse_args(
        [
            "--init",
            str(own.tokenizer),
            "--out",
            "/nonexistent/unused",
            "--reference-logprobs",
            str(own.scratch / "reference.jsonl"),
            *rest,
        ]
    )
    return own, args, recipe


def random_parent(own) -> dict:
    """The lineage record that stands for the random draw (the reference file names its identity)."""
    return {"run": f"random {own.family}/{own.size}", "root": {"run": "random", "fingerprint": f"seed {own.init_seed}"}}


def reference_pass(own, args, recipe, env, config, tokenizer, bundle) -> str:
    """Score the pairs with the bf16 draw as reference_logprobs.py does, write the file; a line with the timing."""
    loaded = load_rows(args.data, required=PAIR_FIELDS)
    raw, records = loaded.rows, loaded.records
    pairs, _, _ = tokenize_pairs(tokenizer, raw, bundle.system_prompt, recipe.max_length, recipe.truncation)
    distinct = list({p.key: p for p in reversed(pairs)}.values())[::-1]
    model = random_model(config, env.device, own.init_seed, **build_options(config, None, recipe.experts))
    model = model.to(torch.bfloat16).eval()
    requests = [scoring_request(side) for p in distinct for side in (p.chosen, p.rejected)]
    if env.device.type == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    if unpackable_reason(model) is None:
        scores = packed_loglikelihood(
            model,
            requests,
            pack_tokens=own.reference_pack_tokens,
            pad_id=tokenizer.pad_token_id,
            max_length=recipe.max_length,
        )
        method = f"packed, {own.reference_pack_tokens} tokens"
    else:
        scores = loglikelihood(
            model, requests, batch_size=16, pad_id=tokenizer.pad_token_id, max_length=recipe.max_length
        )
        method = "padded, 16 sequences a batch"
    seconds = time.perf_counter() - started
    params = count_params(model)
    del model
    if env.device.type == "cuda":
        torch.cuda.empty_cache()
    lines = [
        {
            "key": p.key,
            "row": p.row,
            "chosen": scores[2 * k].logprob,
            "rejected": scores[2 * k + 1].logprob,
            "lengths": [len(p.chosen.input_ids), len(p.rejected.input_ids)],
        }
        for k, p in enumerate(distinct)
    ]
    header = reference_header(
        random_parent(own),
        "random",
        records,
        {"max_length": recipe.max_length, "truncation": recipe.truncation, "dtype": "bfloat16", "method": method},
    )
    write_jsonl(args.extras["reference_logprobs"], [header, *lines])
    sides = [len(c) + len(k) for c, k in requests]
    scored = sum(len(k) for _, k in requests)
    flops = params.step_flops(sum(sides), scored, causal_pairs(sides)) / 3  # a forward pass
    return (
        f"reference pass: {len(distinct)} distinct pairs, {sum(sides):,} tokens, {method}: {seconds:.2f} s, "
        f"{sum(sides) / seconds:,.0f} tokens/s, MFU {100 * flops / seconds / PEAK_FLOPS:.1f}%"
    )


def live_reference_data(args, recipe, env, plan, tokenizer, bundle):
    """step_data of the trainer before: micro-batches of micro_batch_rows pairs, chosen then rejected rows padded."""
    tokenizer.chat_template = bundle.chat_template
    raw = load_rows(args.data, required=PAIR_FIELDS).rows
    pairs, line, _ = tokenize_pairs(tokenizer, raw, bundle.system_prompt, recipe.max_length, recipe.truncation)
    tdist.print0(f"data: {line}")
    order = sample_order(len(pairs), recipe.steps * plan.global_rows, recipe.seed)

    def step_data(step: int) -> StepData:
        groups = rank_rows(order, step, plan, env.rank)
        micro = [
            collate([pairs[i].chosen for i in ids] + [pairs[i].rejected for i in ids], tokenizer.pad_token_id)
            for ids in groups
        ]
        lengths = [len(side.input_ids) for ids in groups for i in ids for side in (pairs[i].chosen, pairs[i].rejected)]
        return StepData(
            micro_batches=micro,
            normalizer=sum(len(ids) for ids in groups),
            tokens=sum(lengths),
            attention_pairs=causal_pairs(lengths),
        )

    return step_data


def full_vocabulary_logprobs(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The trainer before: each row's fp32 log-softmax over the whole vocabulary, summed on its labels."""
    logits, labels = logits[:, :-1], labels[:, 1:]
    sums = []
    for row_logits, row_labels in zip(logits, labels, strict=True):
        logp = row_logits.float().log_softmax(-1).gather(-1, row_labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        sums.append((logp * (row_labels != IGNORE_INDEX)).sum())
    return torch.stack(sums)


def live_reference_loss(recipe, reference):
    def loss_fn(model, micro):
        chosen, rejected = full_vocabulary_logprobs(model(input_ids=micro["input_ids"]).logits, micro["labels"]).chunk(
            2
        )
        with torch.no_grad():
            ref_chosen, ref_rejected = full_vocabulary_logprobs(
                reference(input_ids=micro["input_ids"]).logits, micro["labels"]
            ).chunk(2)
        loss, reward_chosen, reward_rejected = dpo_sigmoid(chosen, rejected, ref_chosen, ref_rejected, recipe.beta)
        margin = reward_chosen - reward_rejected
        return loss.sum(), {
            "reward_chosen": reward_chosen.sum(),
            "reward_rejected": reward_rejected.sum(),
            "margin": margin.sum(),
            "accuracy": (margin > 0).float().sum(),
            "ref_logp_chosen": ref_chosen.sum(),
            "ref_logp_rejected": ref_rejected.sum(),
        }

    return loss_fn


def main(own, args, recipe) -> int:
    env = tdist.init_distributed(args.device, training=True)
    try:
        plan = BatchPlan(recipe.global_batch_rows, recipe.micro_batch_rows, env.world_size)
        tokenizer = AutoTokenizer.from_pretrained(own.tokenizer)
        bundle = load_bundle(own.tokenizer)
        tokenizer.chat_template = bundle.chat_template
        config, depth = first_layers(
            build_config(own.family, own.size, tokenizer, vocab_size=own.vocab_size), own.layers
        )
        if own.reference == "file":
            tdist.print0(reference_pass(own, args, recipe, env, config, tokenizer, bundle))
            step_data, _, _, _ = train_dpo.prepare_data(args, recipe, env, plan, tokenizer, bundle, random_parent(own))
            boundaries = boundary_inputs(config.model_type, env.device) if recipe.packing else ()
            model = random_sharded_model(config, env, recipe, own.init_seed, args.accumulate)
            head = train_dpo.attach_head(model, recipe)
            loss_fn = train_dpo.dpo_loss(recipe, boundaries)
        else:
            step_data = live_reference_data(args, recipe, env, plan, tokenizer, bundle)
            model = random_sharded_model(config, env, recipe, own.init_seed, args.accumulate)
            reference = random_sharded_model(config, env, recipe, own.init_seed, args.accumulate)
            reference.requires_grad_(False)
            reference.eval()
            head, loss_fn = "full logits, live reference", live_reference_loss(recipe, reference)
        params = count_params(model)
        tdist.print0(
            f"model: {own.family}/{own.size}{depth}, {params.total:,} parameters ({params.active:,} active), "
            f"vocabulary {config.vocab_size:,}, random init on {env.device}, world size {env.world_size}, "
            f"{recipe.precision}, head {head}, packing {recipe.packing} ({recipe.packed_attention}), "
            f"compile {recipe.compile}, accumulate {args.accumulate}, "
            f"mamba kernels {'missing' if missing_mamba_kernels() else 'on'}"
        )
        optimizer = build_optimizer(
            model, lr=recipe.lr, betas=recipe.adam_betas, weight_decay=recipe.weight_decay, eps=recipe.adam_eps
        )
        train(
            args,
            recipe,
            env,
            model,
            optimizer,
            step_data=step_data,
            loss_fn=loss_fn,
            stat_names=train_dpo.STATS,
            shown=("margin",),
            params=params,
            recipe_hash="benchmark",
        )
        if env.is_main and args.metrics and Path(args.metrics).is_file():
            rows = [json.loads(line) for line in Path(args.metrics).read_text().splitlines() if line.strip()]
            print(
                summary(rows, own.timed_from, recipe.steps, env.world_size, f"{own.family}/{own.size}{depth} dpo"),
                flush=True,
            )
            if env.device.type == "cuda":
                print(allocator_line(env.device), flush=True)
    finally:
        tdist.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*parse_args()))
