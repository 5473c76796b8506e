"""Model shapes the Mamba-2 CUDA kernels cannot run are refused with the sizes to change, never crash inside
causal-conv1d; every Nemotron-H shape the project builds (the embedded tiny one first) is one they take."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import types

import pytest
import torch
from safetensors.torch import load_file

from lineage.errors import exit_code
from lineage.families.nemotron_h import mamba_kernel_misfit
from lineage.modeling import SHAPES, KernelShapeError, build_config, prepare_kernels

TOKENS = types.SimpleNamespace(bos_token_id=1, eos_token_id=2, pad_token_id=0)


@pytest.mark.parametrize("size", sorted(size for family, size in SHAPES if family == "nemotron_h"))
def test_every_nemotron_h_shape_of_the_project_fits_the_kernels(size):
    assert mamba_kernel_misfit(build_config("nemotron_h", size, TOKENS, vocab_size=2048)) is None


def test_a_misfit_shape_is_refused_on_a_gpu_with_the_kernels_only(monkeypatch):
    config = build_config("nemotron_h", "tiny", TOKENS, vocab_size=2048)
    config.mamba_num_heads = 4  # the former embedded shape: a 164-wide input projection
    assert "164 wide" in mamba_kernel_misfit(config)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: object() if name == "causal_conv1d" else real(name, *a)
    )
    with pytest.raises(KernelShapeError, match="multiple of 8") as err:
        prepare_kernels(config, "cuda:0")
    assert exit_code(err.value) == 4
    prepare_kernels(config, "cpu")  # the reference path runs any shape


FAKE_KERNEL = """
def _refuse_cpu(x):
    if not x.is_cuda:  # as the real causal-conv1d does
        raise RuntimeError("Expected x.is_cuda() to be true, but got false.")


def causal_conv1d_fn(x, weight, bias=None, activation=None, **kwargs):
    _refuse_cpu(x)


def causal_conv1d_update(x, conv_state, weight, bias=None, activation=None, **kwargs):
    _refuse_cpu(x)
"""

CPU_FORWARD = """
import sys, torch, types
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM
from lineage.modeling import build_config, prepare_kernels

torch.manual_seed(0)
config = build_config("nemotron_h", "tiny", types.SimpleNamespace(bos_token_id=1, eos_token_id=2, pad_token_id=0),
                      vocab_size=256)
model = AutoModelForCausalLM.from_config(config).eval()
ids = torch.arange(3, 40).view(1, -1)
try:
    model(ids)
    print("transformers ran the CPU tensors without the kernel")
except RuntimeError as error:
    print("refused:", error)
prepare_kernels(config, "cpu")
with torch.no_grad():
    save_file({"logits": model(ids).logits}, sys.argv[1])
"""


def _cpu_forward(out, *first_on_path):
    """CPU_FORWARD in a fresh process whose import path starts with `first_on_path`."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, first_on_path), *sys.path])}
    return subprocess.run([sys.executable, "-c", CPU_FORWARD, str(out)], env=env, capture_output=True, text=True)


def test_cpu_tensors_stay_off_installed_gpu_kernels(tmp_path):
    """transformers hands CPU tensors to causal-conv1d whenever it is installed (a GPU machine running the
    embedded scale or a CPU evaluation); prepare_kernels sends them to the reference path. A stand-in
    package refuses CPU tensors as the real one does (the real one needs CUDA to install)."""
    (tmp_path / "causal_conv1d").mkdir()
    (tmp_path / "causal_conv1d" / "__init__.py").write_text(FAKE_KERNEL)
    ran = _cpu_forward(tmp_path / "kernel.st", tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "refused: Expected x.is_cuda()" in ran.stdout  # transformers' behaviour this guards against
    ran = _cpu_forward(tmp_path / "plain.st")
    assert "transformers ran the CPU tensors without the kernel" in ran.stdout, ran.stderr[-2000:]
    routed, plain = (load_file(tmp_path / name)["logits"] for name in ("kernel.st", "plain.st"))
    assert torch.equal(routed, plain)
