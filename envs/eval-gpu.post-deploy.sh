#!/usr/bin/env bash
# Snakemake runs this once after creating the GPU eval conda env: the same Punkt data as envs/eval.yaml's, and the
# Mamba-2 kernels, which a conda env file cannot build (they need the env's torch at build time).
set -euo pipefail
python tools/install_punkt.py --target "$CONDA_PREFIX/nltk_data"
PYTHON="$CONDA_PREFIX/bin/python" bash envs/mamba-kernels.sh
