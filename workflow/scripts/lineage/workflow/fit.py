"""Every GPU-trained run fits its GPUs, checked before any job, whatever the target.

A run that does not fit fails on the node after its queue wait; here it is a config error naming the run, what
it plans and what would make it fit. The memory is the planner's (planning/memory.py: the model counted on the
meta device, the run's own world size, expert parallelism, packs and head loss, plus the reserve for the CUDA
context and NCCL), against the device's total as torch reports it (`scales.<scale>.train.gpu_gib`, default an
H100 80GB's 79.18). The model is the Stage-1 checkpoint's or the Base's config.json, or the built Base's shape;
with neither on disk (or a config.json of no model type transformers knows) there is nothing to plan from and
nothing is refused here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lineage.workflow.checks import TRAINED, ConfigError
from lineage.workflow.trained_model import trained_model

CHECKED_DEVICES = ("cuda",)  # a CPU run's memory is the host's: Slurm's mem_mb, not this check


def check_fit(lineage, settings: dict[str, Any], base: Path) -> None:
    """Refuse a GPU-trained run whose planned memory a GPU does not hold (module docstring)."""
    runs = {
        name: run
        for name, run in lineage.runs.items()
        if run.kind in TRAINED and run.built and run.device in CHECKED_DEVICES
    }
    if not runs:
        return
    config = trained_model(settings, base).config()
    if config is None:
        return
    import torch
    from transformers import AutoModelForCausalLM

    from planning.measured import CHAT_LOSS_SHARE
    from planning.memory import GIB, H100_GIB, fits, plan

    capacity = settings["train"].get("gpu_gib", H100_GIB)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    planned: dict[tuple, float] = {}
    for name, run in runs.items():
        recipe, dims = run.recipe, run.dims
        micro_tokens = recipe.tokens_per_pack if recipe.packing else recipe.micro_batch_rows * recipe.row_tokens
        key = (dims.world_size, dims.shard, dims.expert, run.accumulate, micro_tokens)
        key += (recipe.activation_checkpointing, recipe.fused_loss, recipe.ce_chunk_tokens)
        if key not in planned:
            planned[key] = plan(
                model,
                gpus=dims.shard,
                micro_tokens=micro_tokens,
                checkpointing=recipe.activation_checkpointing,
                ce_chunk_tokens=recipe.ce_chunk_tokens,
                loss_share=CHAT_LOSS_SHARE,
                fused_loss=recipe.fused_loss,
                accumulate=run.accumulate,
                expert_parallel=dims.expert,
                world_size=dims.world_size,
            ).peak
        if not fits(planned[key], capacity):
            raise ConfigError(
                f"runs.{name}: plans {planned[key] / GIB:.1f} GiB a GPU at scale {lineage.scale} ({dims.nodes} node(s) "
                f"x {dims.processes_per_node} GPUs, expert parallel {dims.expert}, micro-batches of "
                f"{micro_tokens:,} tokens; the CUDA context and NCCL included), more than the {capacity:g} GiB a GPU "
                f"gives (scales.{lineage.scale}.train.gpu_gib); give it more nodes (runs.{name}.overrides."
                f"{lineage.scale}.nodes), smaller packs, or GPUs with more memory (set gpu_gib to what torch reports). "
                "Plan it: python tools/plan.py --lineage"
            )
