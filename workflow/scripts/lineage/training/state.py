"""Resumable training state, kept in --state-dir, outside the run's declared output.

Snakemake deletes a job's outputs before it reruns the job, so anything needed to resume
lives elsewhere. A state is `step_NNNNNN/`: model and optimizer shards written by
torch.distributed.checkpoint (every rank writes its own shard; it can be read back by another
world size), each rank's RNG states (tensors only, read with weights_only=True), a
`trainer.json` (step, the recipe hash it belongs to) and a `COMPLETE` marker. It is written
under a temporary name and renamed once complete, so a crash mid-save leaves the previous
state as the latest. Only states whose recipe hash matches the current run are resumed.
On several nodes, --state-dir must be on a filesystem that every node sees.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

from lineage.training.dist import DistEnv, barrier

COMPLETE = "COMPLETE"
TRAINER_FILE = "trainer.json"
PREFIX = "step_"


class StateError(RuntimeError):
    """A resumable state that does not belong to this run; the message says how to proceed."""


def state_name(step: int) -> str:
    return f"{PREFIX}{step:06d}"


def complete_states(state_dir: str | os.PathLike) -> list[Path]:
    """Complete states in step order (incomplete or temporary directories are ignored)."""
    state_dir = Path(state_dir)
    if not state_dir.is_dir():
        return []
    found = [p for p in state_dir.glob(f"{PREFIX}*") if p.is_dir() and (p / COMPLETE).is_file()]
    return sorted(found, key=lambda p: int(p.name[len(PREFIX) :]))


def recipe_state_dir(state_dir: str | os.PathLike, recipe_hash: str, *, prune: bool) -> Path:
    """The states of this recipe live in their own subfolder; with `prune`, drop other recipes'.

    A changed hyperparameter, parent or data set makes a new recipe: its run starts from step 0
    and the old recipe's states, which can never be resumed again, are removed.
    """
    root = Path(state_dir)
    own = root / recipe_hash[:16]
    if prune and root.is_dir():
        for other in root.iterdir():
            if other.is_dir() and other != own:
                print(f"removing resumable state of an earlier recipe: {other}", flush=True)
                shutil.rmtree(other, ignore_errors=True)
    return own


def discard_states(state_dir: str | os.PathLike, recipe_hash: str) -> None:
    """Remove this recipe's states once the final checkpoint is written (they can be huge)."""
    shutil.rmtree(Path(state_dir) / recipe_hash[:16], ignore_errors=True)


def latest_state(state_dir: str | os.PathLike, recipe_hash: str) -> Path | None:
    """The newest complete state; refuse one written for another recipe."""
    states = complete_states(state_dir)
    if not states:
        return None
    latest = states[-1]
    found = json.loads((latest / TRAINER_FILE).read_text()).get("recipe_hash")
    if found != recipe_hash:
        raise StateError(
            f"{latest} was written by a run with other settings or data (recipe hash {str(found)[:12]}… vs "
            f"{recipe_hash[:12]}…); delete {Path(state_dir)} to start over, or pass another --state-dir"
        )
    return latest


def _rng_state() -> dict[str, torch.Tensor]:
    state = {"cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def save_state(
    state_dir: str | os.PathLike, step: int, model, optimizer, env: DistEnv, meta: dict[str, Any], keep: int = 2
) -> Path:
    """Write the state after `step` optimizer steps; keep the newest `keep` states."""
    state_dir = Path(state_dir)
    final = state_dir / state_name(step)
    tmp = state_dir / f".{state_name(step)}.tmp"
    if env.is_main:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    barrier()
    model_state, optim_state = get_state_dict(model, optimizer)
    dcp.save({"model": model_state, "optim": optim_state}, checkpoint_id=tmp)
    torch.save(_rng_state(), tmp / f"rng-{env.rank:05d}.pt")
    barrier()
    if env.is_main:
        (tmp / TRAINER_FILE).write_text(
            json.dumps({**meta, "step": step, "world_size": env.world_size}, indent=2) + "\n"
        )
        (tmp / COMPLETE).write_text("")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        for old in complete_states(state_dir)[:-keep] if keep > 0 else []:
            shutil.rmtree(old, ignore_errors=True)
    barrier()
    return final


def load_state(path: str | os.PathLike, model, optimizer, env: DistEnv) -> dict[str, Any]:
    """Restore model, optimizer and (same world size) RNG states; return trainer.json."""
    path = Path(path)
    model_state, optim_state = get_state_dict(model, optimizer)
    state = {"model": model_state, "optim": optim_state}
    dcp.load(state, checkpoint_id=path)
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
    rng_file = path / f"rng-{env.rank:05d}.pt"
    if rng_file.is_file():
        rng = torch.load(rng_file, weights_only=True)
        torch.set_rng_state(rng["cpu"])
        if "cuda" in rng and torch.cuda.is_available():
            torch.cuda.set_rng_state(rng["cuda"])
    return json.loads((path / TRAINER_FILE).read_text())
