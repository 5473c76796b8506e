#!/usr/bin/env bash
# Snakemake runs this once after creating the GPU training conda env: the Mamba-2 kernels, which a conda env file
# cannot build (they need the env's torch at build time: pip --no-build-isolation).
set -euo pipefail
PYTHON="$CONDA_PREFIX/bin/python" bash envs/mamba-kernels.sh
