"""A job given `--device cuda` on a machine whose torch sees no GPU stops in one line, exit 7 (environment), before
it reads a file: every script that takes --device."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
from workflow_helpers import REPO

SCRIPTS = REPO / "workflow" / "scripts"
MISSING = "/nonexistent/input"
COMMANDS = {
    "train_sft": ["--init", MISSING, "--data", MISSING, "--out", "/nonexistent/out"],
    "train_dpo": ["--init", MISSING, "--data", MISSING, "--reference-logprobs", MISSING, "--out", "/nonexistent/o"],
    "reference_logprobs": ["--init", MISSING, "--data", MISSING, "--max-length", "64", "--out", "/nonexistent/r"],
    "eval_model": ["--model", MISSING, "--items", f"mmlu={MISSING}", "--out-dir", "/nonexistent/e"],
    "verifier_pairs": [
        *("--model", MISSING, "--round", "dpo2", "--prompts", MISSING),
        *("--out", "/nonexistent/v", "--stats", "/nonexistent/s"),
    ],
}


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
@pytest.mark.parametrize("script", sorted(COMMANDS))
def test_cuda_without_a_gpu_is_refused_in_one_line(script):
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS)}
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / f"{script}.py"), *COMMANDS[script], "--device", "cuda"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 7, proc.stderr[-2000:]
    assert lines == [lines[-1]] and "--device cuda was asked for, but torch" in lines[-1], proc.stderr[-2000:]
