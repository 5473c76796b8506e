"""What a job asks of a Slurm cluster, and how a training job starts its processes on the nodes it gets.

Requests are per node, in snakemake-executor-plugin-slurm's resource names: `nodes` always (so
sbatch is never free to spread a job), `cpus_per_task` with one task per node, `mem_mb` (Slurm's
`--mem` is per node), and GPUs per node as a gres (`gpu[:type]:G`, per node by Slurm's
definition; what the plugin's partition selection reads) or as `--gpus-per-node`. A job of more
than one node takes the plugin's `mpi` path: Snakemake runs the rule in the batch step on the
job's first node and the rule's own `srun` starts one launcher per node, each `accelerate
launch` of that node's processes with a static rendezvous on the first node
(workflow/scripts/launch_node.sh). Host memory can be planned from the model (`mem_mb: auto`).

Nothing here imports torch: the rules read it while Snakemake parses.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from typing import Any

LAUNCHER = "python workflow/scripts/launch_ranks.py --config_file workflow/accelerate/fsdp2.yaml"
NODE_LAUNCHER = "workflow/scripts/launch_node.sh"

# A training job's end at its time limit. Slurm sends SIGTERM this long before the limit (sbatch --signal); each
# rank finishes its step and saves its state (lineage/training/preemption.py), and the launcher, which forwards
# the signal, waits that long for them before it kills them (TORCH_ELASTIC_SHUTDOWN_TIMEOUT, torchrun's name too; 30 s
# by default: too short for a full-scale rank's ~47 GB state). The grace ends 30 s before the limit, where Slurm
# itself would start to kill.
STOP_LEAD_S = 300
STOP_GRACE_S = STOP_LEAD_S - 30
TRAIN_STOP_SIGNAL = f"--signal=TERM@{STOP_LEAD_S}"

# Host memory of a training node (mem_mb: auto). No rank holds the model: each reads and writes its
# own rows, a tensor at a time (lineage.checkpoints.distributed). What grows with the model is the
# resumable state written in the background: every rank stages its shard of the fp32 weights and
# both AdamW moments in host memory while a thread writes it (lineage.training.state.StateSaver),
# the node's share of 12 bytes a parameter. Every process adds its interpreter, torch, the CUDA
# context and pinned buffers. Each rank also holds its run's tokenized rows, ids and labels at 4 bytes each
# (lineage.chat.token_array; a repeated row once): 8 bytes a token, about 0.2 GB a rank for sftw4's sets
# and ~8 GB for the Stage-1 mixture (~1e9 tokens: ~64 GB a node of 8, inside HOST_MARGIN's 60 GB at 31.6B
# parameters only just; give the chain's stage1_sft a mem_mb of its own where its mixture is larger).
STATE_BYTES_PER_PARAM = 4 + 4 + 4
PROCESS_OVERHEAD_MB = 6 * 1024
HOST_MARGIN = 1.15


@dataclass(frozen=True)
class Resources:
    """One job class's request per node; `mem_mb` "auto" (training only) is planned from the model."""

    cpus: int
    mem_mb: int | str
    runtime: int
    gpus: int = 0  # per node
    gpu_type: str | None = None  # gres type, e.g. h200 (gres gpu:h200:8)
    gpu_request: str = "gres"  # gres | gpus_per_node: how the site wants GPUs asked for

    @property
    def gpu_spec(self) -> str:
        """`[type:]G`, what follows `gpu:` in a gres and `--gpus-per-node=`."""
        return f"{self.gpu_type}:{self.gpus}" if self.gpu_type else str(self.gpus)

    def snakemake(self, nodes: int = 1, mem_mb: int | None = None) -> dict[str, Any]:
        """In the names snakemake-executor-plugin-slurm understands, for a job of `nodes` nodes."""
        memory = self.mem_mb if mem_mb is None else mem_mb
        if not isinstance(memory, int):
            raise ValueError(f"mem_mb {memory!r} must be planned (host_memory_mb) before it is requested")
        out: dict[str, Any] = {"nodes": nodes, "mem_mb": memory, "runtime": self.runtime, "cpus_per_task": self.cpus}
        if self.gpus:
            if self.gpu_request == "gres":
                out["gres"] = f"gpu:{self.gpu_spec}"
            else:
                out["slurm_extra"] = f"--gpus-per-node={self.gpu_spec}"
            out["tasks_per_gpu"] = 0  # the plugin would otherwise turn `tasks` into --ntasks-per-gpu
        if nodes > 1:
            out |= {"mpi": "srun", "tasks": nodes}  # the rule's srun starts one launcher per node
        return out


def threads_per_process(cpus: int, world_size: int) -> int:
    """CPU threads of each rank: a node's CPUs shared by the whole world, as if every rank ran on
    one node, so that 2 nodes x 1 process and 1 node x 2 processes train bit-identical weights on
    CPU (a matmul's sums depend on its thread count). Set explicitly because Snakemake exports
    OMP_NUM_THREADS and MKL_NUM_THREADS=<the job's threads> to every process: two ranks of two
    threads each on two cores scored 30x slower than one thread each."""
    return max(1, cpus // world_size)


def launch_command(nodes: int, processes_per_node: int, resources: Resources, stop_grace: int | None = None) -> str:
    """The command that starts a training script's processes: launch_ranks.py on one node; on
    several, srun with one task per node, each running that node's launch_ranks.py. With `stop_grace`
    the launcher gives its ranks that many seconds to save after a stop signal (STOP_GRACE_S)."""
    threads = threads_per_process(resources.cpus, nodes * processes_per_node)
    grace = f"TORCH_ELASTIC_SHUTDOWN_TIMEOUT={stop_grace} " if stop_grace is not None else ""
    if nodes == 1:
        return f"{grace}{LAUNCHER} --num_processes {processes_per_node} --num_cpu_threads_per_process {threads}"
    step = [
        "srun",
        f"--nodes={nodes}",
        "--ntasks-per-node=1",
        f"--cpus-per-task={resources.cpus}",
        "--kill-on-bad-exit=1",
        "--label",
    ]
    if resources.gpus:  # the batch shell's SLURM_* are scrubbed: give the step its GPUs explicitly
        step.append(f"--gres=gpu:{resources.gpu_spec}")
    return grace + shlex.join([*step, NODE_LAUNCHER, str(processes_per_node), str(threads)])  # srun passes it on


def host_memory_mb(params: int, processes_per_node: int, nodes: int = 1) -> int:
    """Memory per training node: its ranks' staged share of the resumable state, and their processes."""
    need = params * STATE_BYTES_PER_PARAM / nodes / 2**20 + processes_per_node * PROCESS_OVERHEAD_MB
    return int(math.ceil(need * HOST_MARGIN / 1024)) * 1024
