"""The two ends of a training run: verify the parent checkpoint, write the child checkpoint.

Rank 0 reads and hashes the parent once and tells the other ranks the result (or the error),
so a corrupt parent stops every rank with the same message. The child is written by rank 0
from the gathered full state dict, through save_checkpoint, with a lineage record that names
the parent, the shared root, the recipe and the data checksums.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist

from lineage.checkpoint import init_root, lineage_record, parent_entry, save_checkpoint, verify_checkpoint
from lineage.training.cli import JobOptions
from lineage.training.dist import DistEnv, barrier
from lineage.training.fsdp import PRECISIONS, gather_full_state_dict
from lineage.training.recipe import TrainRecipe


def verify_parent(options: JobOptions, env: DistEnv) -> dict[str, Any]:
    """verify_checkpoint(--init) on rank 0; every rank gets the lineage dict or raises the same error."""
    payload: list[Any] = [None]
    if env.is_main:
        try:
            payload[0] = ("ok", verify_checkpoint(options.init))
        except Exception as err:  # forwarded to the other ranks, then raised everywhere
            payload[0] = ("error", f"{type(err).__name__}: {err}")
    if env.world_size > 1:
        dist.broadcast_object_list(payload, src=0)
    status, value = payload[0]
    if status == "error":
        raise RuntimeError(f"parent checkpoint {options.init} failed verification: {value}")
    return value


def runtime_environment(env: DistEnv) -> dict[str, Any]:
    """Where the run trained: package versions, the accelerator and its driver, host and world size."""
    import platform
    import shutil
    import socket
    import subprocess

    import transformers

    record: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "cuda": torch.version.cuda,
        "device": env.device.type,
        "gpu": None,
        "driver": None,
        "hostname": socket.gethostname(),
        "world_size": env.world_size,
    }
    if env.device.type == "cuda":
        record["gpu"] = torch.cuda.get_device_name(env.device)
        if shutil.which("nvidia-smi"):
            query = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            record["driver"] = query.stdout.strip().splitlines()[0] if query.returncode == 0 and query.stdout else None
    return record


def save_final(
    options: JobOptions,
    recipe: TrainRecipe,
    env: DistEnv,
    model: torch.nn.Module,
    *,
    kind: str,
    parent: dict[str, Any],
    data_records: list[dict[str, Any]],
    summary: dict[str, Any],
    started: float,
    extra: dict[str, Any] | None = None,
) -> None:
    """Gather the weights to rank 0 and write --out (bf16 at precision bf16, else fp32); lineage.json
    records the recipe verbatim."""
    state = gather_full_state_dict(model)
    if env.is_main:
        config = model.config
        config.use_cache = True
        lineage = lineage_record(
            run=options.run or options.out.name,
            kind=kind,
            root=init_root(parent),
            parents=[parent_entry(parent.get("run", options.init.name), options.init)],
            recipe=recipe.as_dict(),
            data=data_records,
            started=started,
            world_size=env.world_size,
            tokens_trained=summary["tokens"],
            final_loss=summary["final_loss"],
            resumed_from=summary.get("resumed_from"),
            environment=runtime_environment(env),
            **(extra or {}),
            **options.lineage_extra,
        )
        save_checkpoint(
            options.out,
            state,
            config=config,
            companions_from=options.init,
            lineage=lineage,
            dtype=PRECISIONS[recipe.precision],
        )
    barrier()
