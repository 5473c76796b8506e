"""Resumable training state, kept in --state-dir, outside the run's declared output.

Snakemake deletes a job's outputs before it reruns the job, so anything needed to resume
lives elsewhere. A state is `step_NNNNNN/`: model and optimizer shards written by
torch.distributed.checkpoint (every rank writes its own shard; it can be read back by another
world size), each rank's RNG states (tensors only, read with weights_only=True), a
`trainer.json` (step, the recipe hash it belongs to) and a `COMPLETE` marker. It is written
under a temporary name and renamed once complete, so a crash mid-save leaves the previous
state as the latest. Only states whose recipe hash matches the current run are resumed.
On several nodes, --state-dir must be on a filesystem that every node sees.

`StateSaver` writes states in the background (torch.distributed.checkpoint's async save): the
step pauses only while the state is copied to host memory, a thread writes it while training goes
on, and rank 0 publishes it (trainer.json, COMPLETE, the rename) once its write, which DCP finishes
last, is done. The thread's collectives run on a gloo group of their own, never interleaved with
the training's.
"""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
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
    and the old recipe's states, which can never be resumed again, are removed; so is a state of this
    recipe whose write was cut off (a rank killed mid-save leaves its temporary: up to the whole state).
    """
    root = Path(state_dir)
    own = root / recipe_hash[:16]
    if prune and root.is_dir():
        for other in root.iterdir():
            if other.is_dir() and other != own:
                print(f"removing resumable state of an earlier recipe: {other}", flush=True)
                shutil.rmtree(other, ignore_errors=True)
        for cut in own.glob(f".{PREFIX}*.tmp"):
            print(f"removing a state whose write was cut off: {cut}", flush=True)
            shutil.rmtree(cut, ignore_errors=True)
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


def _begin(state_dir: Path, step: int, env: DistEnv) -> tuple[Path, Path]:
    """The temporary and final directories of the state of `step`; rank 0 makes the temporary (collective)."""
    final = state_dir / state_name(step)
    tmp = state_dir / f".{state_name(step)}.tmp"
    if env.is_main:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    barrier()
    torch.save(_rng_state(), tmp / f"rng-{env.rank:05d}.pt")
    return tmp, final


def _publish(state_dir: Path, tmp: Path, final: Path, step: int, env: DistEnv, meta: dict[str, Any], keep: int) -> None:
    """Rank 0: mark the written state complete, rename it into place, keep the newest `keep`."""
    (tmp / TRAINER_FILE).write_text(json.dumps({**meta, "step": step, "world_size": env.world_size}, indent=2) + "\n")
    (tmp / COMPLETE).write_text("")
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    for old in complete_states(state_dir)[:-keep] if keep > 0 else []:
        shutil.rmtree(old, ignore_errors=True)


def save_state(
    state_dir: str | os.PathLike, step: int, model, optimizer, env: DistEnv, meta: dict[str, Any], keep: int = 2
) -> Path:
    """Write the state after `step` optimizer steps and wait for it; keep the newest `keep` states."""
    state_dir = Path(state_dir)
    tmp, final = _begin(state_dir, step, env)
    model_state, optim_state = get_state_dict(model, optimizer)
    dcp.save({"model": model_state, "optim": optim_state}, checkpoint_id=tmp)
    barrier()
    if env.is_main:
        _publish(state_dir, tmp, final, step, env, meta, keep)
    barrier()
    return final


class StateSaver:
    """Resumable states written while training goes on; at most one in flight.

    `save` returns once the state is staged in host memory; `poll` (every step) publishes a
    finished one on rank 0; `wait` finishes the one in flight (before the next save, a stop or
    the end). A state that never finished is never published: resumption takes the last complete.
    """

    def __init__(self, state_dir: str | os.PathLike, env: DistEnv, keep: int = 2):
        self.state_dir, self.env, self.keep = Path(state_dir), env, keep
        self.group = dist.new_group(backend="gloo") if env.world_size > 1 else None
        self._pending: tuple[Future, Path, Path, int, dict[str, Any]] | None = None
        self._in_flight = False  # the same on every rank, unlike _pending (rank 0 may publish early)
        self.published: Path | None = None

    def save(self, step: int, model, optimizer, meta: dict[str, Any]) -> Path:
        """Start writing the state after `step` steps (collective); return where it will appear."""
        self.wait()
        tmp, final = _begin(self.state_dir, step, self.env)
        model_state, optim_state = get_state_dict(model, optimizer)
        future = dcp.async_save(
            {"model": model_state, "optim": optim_state}, checkpoint_id=tmp, process_group=self.group
        )
        self._pending, self._in_flight = (future, tmp, final, step, meta), True
        return final

    def poll(self) -> Path | None:
        """Publish the state in flight if its write is done (rank 0; DCP's coordinator finishes last)."""
        if self.env.is_main and self._pending is not None and self._pending[0].done():
            self._finish()
        return self.published

    def wait(self) -> Path | None:
        """Finish the state in flight, on every rank (collective when one is in flight)."""
        if self._in_flight:
            if self._pending is not None:
                self._pending[0].result()
            barrier()
            if self._pending is not None:
                self._finish()
            barrier()
            self._in_flight = False
        return self.published

    def _finish(self) -> None:
        future, tmp, final, step, meta = self._pending
        future.result()  # raises a failed write
        self._pending = None
        if self.env.is_main and tmp.exists():
            _publish(self.state_dir, tmp, final, step, self.env, meta, self.keep)
        self.published = final


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
