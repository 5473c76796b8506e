#!/usr/bin/env bash
# Snakemake runs this once after creating the GPU eval conda env: the same Punkt data as envs/eval.yaml's.
set -euo pipefail
python tools/install_punkt.py --target "$CONDA_PREFIX/nltk_data"
