"""A job given `--device cuda` on a machine whose torch sees no GPU stops in one line, exit 7 (environment), before
it reads a file: every script that takes --device."""

from __future__ import annotations

import json
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
def test_cuda_without_a_gpu_is_refused_in_one_line():
    commands = [[str(SCRIPTS / f"{script}.py"), *args, "--device", "cuda"] for script, args in sorted(COMMANDS.items())]
    proc = subprocess.run(
        [sys.executable, str(REPO / "tests" / "_run_scripts.py"), json.dumps(commands)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(SCRIPTS)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for script, result in zip(sorted(COMMANDS), json.loads(proc.stdout.splitlines()[-1]), strict=True):
        lines = [line for line in result["stderr"].splitlines() if line.strip()]
        assert result["code"] == 7, (script, result["stderr"][-2000:])
        assert len(lines) == 1 and lines[0].startswith(f"{script}.py: environment error: --device cuda was asked for")
