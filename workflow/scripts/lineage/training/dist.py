"""One process group for every launch: a single process, torchrun, or `accelerate launch`.

The launchers export RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT; without them
the script is one process and gets a world of one over an in-process store, so the sharded
code path (and its numerics) is the same whether one process runs or eight.
"""

from __future__ import annotations

import datetime as _dt
import gc
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist

from lineage.parallel_dims import ParallelDims
from lineage.training.lifetime import die_with_parent


class DeviceMissingError(RuntimeError):
    """A job asked for a device this machine does not have; the message says what torch sees."""


@dataclass(frozen=True)
class DistEnv:
    rank: int
    world_size: int
    local_rank: int
    device: torch.device
    local_world_size: int = 1  # ranks on this node (torchrun's LOCAL_WORLD_SIZE)

    @property
    def is_main(self) -> bool:
        """Whether this process writes what rank 0 writes: rank 0, or a rehearsal's one process (any rank)."""
        return self.rank == 0 or rehearsing()


def share_cpu_threads() -> None:
    """Put the BLAS libraries at this process's thread share (OMP_NUM_THREADS, which the launcher
    sets per process). Snakemake also exports MKL_NUM_THREADS=<the job's threads>, which accelerate
    leaves alone: two ranks of two MKL threads each on two cores scored 30x slower than one each."""
    share = os.environ.get("OMP_NUM_THREADS", "")
    if share.isdigit() and int(share) > 0:
        torch.set_num_threads(int(share))  # sets OpenMP's and MKL's counts alike


TRAINING_ALLOCATOR = "expandable_segments:True"
ALLOCATOR_VARIABLES = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")


def training_allocator() -> str:
    """Give the CUDA caching allocator segments that grow in place, unless the user configured it; say which.

    Packs change length every step, so a step's activations never quite fit the blocks the step before
    freed: fixed segments fragment, reserved memory climbs past what is allocated, and once a cudaMalloc
    fails the allocator frees every cached block (a device synchronisation) and maps memory anew while the
    GPU waits. Segments that grow keep reserved memory near allocated memory, which is also the figure an
    80 GB GPU must hold. Set before CUDA starts (the allocator reads the variable once; after, its
    settings are changed in place); training jobs only: the decoders' CUDA graphs keep the default.
    """
    for name in ALLOCATOR_VARIABLES:
        if os.environ.get(name):
            return f"{name}={os.environ[name]} (set by the user)"
    if torch.cuda.is_initialized():  # something started CUDA first: the running allocator takes it for new segments
        set_settings = getattr(torch.cuda.memory, "_set_allocator_settings", None)
        if set_settings is None:
            return "default (CUDA had started before the job could configure it)"
        set_settings(TRAINING_ALLOCATOR)
        return f"{TRAINING_ALLOCATOR} (set after CUDA started)"
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = TRAINING_ALLOCATOR
    return f"PYTORCH_CUDA_ALLOC_CONF={TRAINING_ALLOCATOR}"


def check_device(device: str) -> None:
    """Refuse `--device cuda` where torch sees no GPU, in one line that says what torch is."""
    if device == "cuda" and not torch.cuda.is_available():
        raise DeviceMissingError(
            f"--device cuda was asked for, but torch {torch.__version__} sees no GPU (CUDA build: "
            f"{torch.version.cuda or 'none, a CPU build'}); run on a GPU machine, or pass --device cpu"
        )


def init_distributed(device: str = "auto", timeout_min: int = 30, *, training: bool = False) -> DistEnv:
    """Join (or create) the process group: nccl on GPUs, gloo on CPU; a launched rank dies with its launcher.
    `training`: the CUDA allocator is set up for training (training_allocator)."""
    die_with_parent()
    share_cpu_threads()
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if rank == 0 and (age := process_age_s()) is not None:
        print(f"job start: {age:.1f} s after the interpreter began (mostly imports)", flush=True)
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    check_device(device)
    use_cuda = torch.cuda.is_available() if device == "auto" else device == "cuda"
    if use_cuda:
        if training:
            setting = training_allocator()
            if rank == 0:
                print(f"CUDA allocator: {setting}", flush=True)
        torch.cuda.set_device(local_rank)
        dev = torch.device("cuda", local_rank)
    else:
        dev = torch.device("cpu")
    if not dist.is_initialized():
        timeout = _dt.timedelta(minutes=timeout_min)
        backend = "cuda:nccl,cpu:gloo" if use_cuda else "gloo"
        if "MASTER_ADDR" in os.environ:
            dist.init_process_group(
                backend, rank=rank, world_size=world_size, timeout=timeout, device_id=dev if use_cuda else None
            )
        elif world_size == 1:
            dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1, timeout=timeout)
        else:
            raise RuntimeError(
                f"WORLD_SIZE={world_size} but MASTER_ADDR is not set; start several processes with "
                "`accelerate launch --num_processes N` or `torchrun --nproc_per_node N`"
            )
    if rank != 0:
        quiet_third_party_warnings()
    local_world_size = int(os.environ.get("LOCAL_WORLD_SIZE", str(world_size)))
    return DistEnv(
        rank=rank, world_size=world_size, local_rank=local_rank, device=dev, local_world_size=local_world_size
    )


def process_age_s() -> float | None:
    """Seconds since this process began (Linux's /proc; None elsewhere). A job prints it as it starts: on one H100
    host the GPU jobs spent ~20 s before their own clocks began, and this splits the imports from the rest."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()  # from field 3: the name may hold spaces
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: the start, in clock ticks since boot
    except (OSError, ValueError, IndexError):
        return None


def describe_world(env: DistEnv, dims: ParallelDims) -> str:
    """'world size 4 on 2 nodes (n1, n2), hybrid sharding': where the ranks run, for the log."""
    hosts: list[str | None] = [None] * env.world_size
    dist.all_gather_object(hosts, socket.gethostname())
    nodes = list(dict.fromkeys(hosts))
    where = f"{len(nodes)} node{'s' if len(nodes) > 1 else ''} ({', '.join(nodes)})"
    sharding = f"hybrid ({dims.replicate} replicas x {dims.shard} shards)" if dims.hybrid else dims.sharding
    return f"world size {env.world_size} on {where}, {sharding} sharding"


def quiet_third_party_warnings() -> None:
    """Ranks other than 0 keep third-party warnings to themselves: a job prints each warning once, not per rank.
    Errors still print on every rank."""
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
    except ImportError:
        pass


REHEARSAL_BACKEND = "fake"  # torch's fake process group: one process plays one rank of a larger job


def rehearsing() -> bool:
    """Whether this process is a rehearsal of one rank (tools/rehearse.py), whose collectives move no data."""
    return dist.is_initialized() and dist.get_backend() == REHEARSAL_BACKEND


def all_reduce_sum(tensor: torch.Tensor) -> torch.Tensor:
    """Sum a tensor over all ranks, in place, and return it. A rehearsal takes every rank to hold what this one
    holds (the world size times its own), so means and rates come out as this rank's."""
    if rehearsing():
        tensor.mul_(dist.get_world_size())
    elif dist.get_world_size() > 1:
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    return tensor


def gather_to_main(value):
    """Every rank's `value` as a list on rank 0 (in rank order), None elsewhere; [value] on one rank."""
    if not dist.is_initialized() or dist.get_world_size() == 1:
        return [value]
    gathered = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
    dist.gather_object(value, gathered, dst=0)
    return gathered


def barrier() -> None:
    if dist.is_initialized() and dist.get_world_size() > 1:
        dist.barrier()


def close() -> None:
    """Leave the process group. On a clean end, first wait for every rank (a barrier), so that no rank
    tears down its connections, and exits, while a collective it took part in (a gather's sends) may
    still be in flight on a peer: a rank that did so could die of SIGABRT ("terminate called without an
    active exception") after its interpreter ended, failing a job whose output was written. On an
    error, leave at once: a peer may never reach the barrier."""
    if not dist.is_initialized():
        return
    if sys.exc_info()[0] is None and dist.get_world_size() > 1:
        dist.barrier()
    dist.destroy_process_group()
    gc.collect()  # release the backend's work objects while the interpreter is whole


def print0(*args, **kwargs) -> None:
    """Print on rank 0 only (in a rehearsal, on the rank rehearsed), flushed so that logs interleave correctly
    under Slurm."""
    if not dist.is_initialized() or dist.get_rank() == 0 or rehearsing():
        print(*args, **kwargs, flush=True)
