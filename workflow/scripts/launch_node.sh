#!/usr/bin/env bash
# One node's part of a multi-node training job: launch_ranks.py starts this node's processes,
# meeting the other nodes at a static rendezvous on the job's first node.
#
# Started once per node by the training rule's srun (lineage/workflow/cluster.py launch_command):
#   srun --nodes=N --ntasks-per-node=1 ... workflow/scripts/launch_node.sh <processes per node> <threads per process> \
#       <script> <args>
# Node k holds ranks k*P ... k*P+P-1 (machine rank = SLURM_NODEID), so ranks, and the data each
# reads, do not depend on which node answers first. NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME from the
# submitting environment pass through (sbatch --export=ALL) where a site needs them.
set -euo pipefail

if [[ $# -lt 3 ]]; then
    echo "usage: $0 <processes per node> <threads per process> <training script> [args...]" >&2
    exit 2
fi
if [[ -z "${SLURM_NODEID:-}" || -z "${SLURM_JOB_NODELIST:-}" ]]; then
    echo "error: $0 runs inside a Slurm job step (srun); a training run of more than one node needs the" \
        "Slurm profile (snakemake --profile profiles/slurm ...), or set scales.<scale>.train.nodes: 1" >&2
    exit 2
fi

per_node=$1
threads=$2 # lineage/workflow/cluster.py threads_per_process says why it is given
shift 2
head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
# A port of this job's own: jobs sharing a first node do not collide, every node computes the same one.
port=$((20000 + SLURM_JOB_ID % 20000))

exec python workflow/scripts/launch_ranks.py --config_file workflow/accelerate/fsdp2.yaml \
    --num_machines "$SLURM_NNODES" --machine_rank "$SLURM_NODEID" \
    --num_processes $((SLURM_NNODES * per_node)) --num_cpu_threads_per_process "$threads" \
    --main_process_ip "$head_node" --main_process_port "$port" \
    "$@"
