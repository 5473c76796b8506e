"""The two ends of a training run: verify the parent checkpoint, write the child checkpoint.

The ranks split the hashing of the parent's files and agree on the result, so a corrupt parent
stops every rank with the same message. The child is written by every rank, each its own rows
(lineage.checkpoints.distributed), in the layout the parent came in, with a lineage record that
names the parent, the shared root, the recipe and the data checksums.
"""

from __future__ import annotations

from typing import Any

import torch

from lineage.checkpoints.directory import init_root, lineage_record, parent_entry
from lineage.checkpoints.distributed import save_from, verify_shared
from lineage.checkpoints.load import tied_aliases
from lineage.training.cli import JobOptions
from lineage.training.dist import DistEnv, barrier
from lineage.training.fsdp import PRECISIONS
from lineage.training.recipe import TrainRecipe


def verify_parent(options: JobOptions, env: DistEnv) -> dict[str, Any]:
    """verify_checkpoint(--init), its files hashed by all ranks; every rank gets the lineage dict or the same error."""
    try:
        return verify_shared(options.init, env)
    except Exception as err:
        raise type(err)(f"parent checkpoint {options.init} failed verification: {err}") from None


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
    """Write --out from every rank (bf16 at precision bf16, else fp32) in the parent's layout; lineage.json
    records the recipe verbatim."""
    config = model.config
    config.use_cache = True
    lineage = {}
    if env.is_main:  # only rank 0 writes lineage.json
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
    save_from(
        model,
        options.out,
        env,
        layout=getattr(model, "checkpoint_layout", None),
        config=config,
        companions_from=options.init,
        lineage=lineage,
        dtype=PRECISIONS[recipe.precision],
        skip=list(tied_aliases(model)),
    )
    barrier()
