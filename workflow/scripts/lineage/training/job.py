"""The ends every trainer shares: what is checked before any data work, the sharded model with its
head and optimizer, and the final save. A trainer (train_sft.py, train_dpo.py) adds its data and
its loss between them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from transformers import AutoConfig, AutoTokenizer

from lineage.chat import Bundle, load_bundle
from lineage.io import sha256_json
from lineage.modeling import ParamCounts, count_params
from lineage.parallel_dims import ParallelDims
from lineage.training import dist as tdist
from lineage.training import head_loss, packed_attention
from lineage.training.cli import JobOptions
from lineage.training.data import BatchPlan
from lineage.training.fsdp import load_sharded_model
from lineage.training.mesh import job_dims
from lineage.training.optim import build_optimizer
from lineage.training.output import save_final, verify_parent
from lineage.training.packing import boundary_inputs
from lineage.training.recipe import TrainRecipe
from lineage.training.state import discard_states


@dataclass(frozen=True)
class Start:
    """What a job knows before it reads its data: the verified parent and how batches are laid out."""

    parent: dict[str, Any]
    attn_implementation: str
    boundaries: tuple[str, ...]  # the packed micro-batch's inputs the model needs (packing.boundary_inputs)
    plan: BatchPlan
    dims: ParallelDims  # the job's mesh degrees: its ranks as launched, its sharding and E as asked
    tokenizer: Any
    bundle: Bundle


def start(options: JobOptions, recipe: TrainRecipe, env: tdist.DistEnv) -> Start:
    """Verify the parent and refuse what cannot run here (a missing fused head, FA4) before any data work."""
    parent = verify_parent(options, env)
    head_loss.check_available(recipe.fused_loss, env.device)
    attn_implementation = packed_attention.attention_implementation(recipe, env.device)
    boundaries = (
        boundary_inputs(AutoConfig.from_pretrained(options.init).model_type, env.device) if recipe.packing else ()
    )
    return Start(
        parent=parent,
        attn_implementation=attn_implementation,
        boundaries=boundaries,
        plan=BatchPlan(recipe.global_batch_rows, recipe.micro_batch_rows, env.world_size),
        dims=job_dims(env, options.sharding, options.expert_parallel),
        tokenizer=AutoTokenizer.from_pretrained(options.init),
        bundle=load_bundle(options.init),
    )


def sharded_model(
    options: JobOptions,
    recipe: TrainRecipe,
    env: tdist.DistEnv,
    begun: Start,
    attach_head: Callable[[Any, TrainRecipe], str],
    note: str = "",
):
    """(model, optimizer, parameter counts): the parent sharded as the job says, its head attached."""
    model = load_sharded_model(
        options.init,
        env,
        precision=recipe.precision,
        activation_checkpointing=recipe.activation_checkpointing,
        attn_implementation=begun.attn_implementation,
        compile_blocks=recipe.compile,
        experts_implementation=recipe.experts,
        dims=begun.dims,
        accumulate=options.accumulate,
        compile_workload=compile_workload(options, recipe, begun) if recipe.compile else None,
    )
    head = attach_head(model, recipe)
    params: ParamCounts = count_params(model)
    world = tdist.describe_world(env, begun.dims)  # a collective: every rank calls it
    tdist.print0(
        f"model: {type(model).__name__}, {params.total:,} parameters ({params.active:,} active), {world}, "
        f"{recipe.precision}, device {env.device}, head {head}, experts {recipe.experts}{note}"
    )
    optimizer = build_optimizer(
        model, lr=recipe.lr, betas=recipe.adam_betas, weight_decay=recipe.weight_decay, eps=recipe.adam_eps
    )
    return model, optimizer, params


def compile_workload(options: JobOptions, recipe: TrainRecipe, begun: Start) -> str:
    """What a job's compiled blocks depend on beyond their shapes: jobs that agree on it (the SFT and DPO runs of a
    scale) start from the sizes an earlier one found to vary (lineage.training.compiling.prepare_compile)."""
    facts = {
        "precision": recipe.precision,
        "activation_checkpointing": recipe.activation_checkpointing,
        "attention": begun.attn_implementation,
        "experts": recipe.experts,
        "packing": [recipe.packing, recipe.tokens_per_pack if recipe.packing else None, recipe.packed_attention],
        "dims": [begun.dims.nodes, begun.dims.processes_per_node, begun.dims.sharding, begun.dims.expert],
        "accumulate": options.accumulate,
    }
    return sha256_json(facts)[:12]


def finish(
    options: JobOptions,
    recipe: TrainRecipe,
    env: tdist.DistEnv,
    model,
    *,
    kind: str,
    begun: Start,
    data_records: list[dict[str, Any]],
    summary: dict[str, Any],
    started: float,
    run_hash: str,
    extra: dict[str, Any],
) -> None:
    """Write the child checkpoint, then drop the resumable state it no longer needs."""
    save_final(
        options,
        recipe,
        env,
        model,
        kind=kind,
        parent=begun.parent,
        data_records=data_records,
        summary=summary,
        started=started,
        extra=extra,
    )
    if options.state_dir is not None and env.is_main:
        discard_states(options.state_dir, run_hash)
    tdist.print0(f"saved {options.out} (final loss {summary['final_loss']:.4f}, {time.time() - started:.1f} s)")
