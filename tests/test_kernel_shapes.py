"""Model shapes the Mamba-2 CUDA kernels cannot run are refused with the sizes to change, never crash inside
causal-conv1d; every Nemotron-H shape the project builds (the embedded tiny one first) is one they take."""

from __future__ import annotations

import importlib.util
import types

import pytest

from lineage.errors import exit_code
from lineage.families.nemotron_h import mamba_kernel_misfit
from lineage.modeling import SHAPES, KernelShapeError, build_config, check_kernel_shape

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
        check_kernel_shape(config, "cuda:0")
    assert exit_code(err.value) == 4
    check_kernel_shape(config, "cpu")  # the reference path runs any shape
