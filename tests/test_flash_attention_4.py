"""--packed-attention fa4: flash-attn-4 under torch's flash-attention ops, refused clearly where it cannot run."""

from __future__ import annotations

import itertools

import pytest
import torch
from _training_fixtures import build_base, run_in_process, train_args

from lineage.errors import exit_code
from lineage.training import flash_attention_4, varlen_attention

HAS_FA4 = flash_attention_4.installed()


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build_base(tmp_path_factory.mktemp("fa4"), family="llama")


@pytest.mark.parametrize(
    "left, right, causal, expected",
    [
        (-1, 0, False, (True, None, None)),  # varlen's causal mask, given as a window
        (None, None, True, (True, None, None)),
        (-1, -1, True, (True, None, None)),
        (-1, -1, False, (False, None, None)),
        (128, 0, False, (False, 128, 0)),  # a sliding window stays one
        (64, 32, False, (False, 64, 32)),
    ],
)
def test_aten_windows_become_flash_attn_4_s_arguments(left, right, causal, expected):
    assert flash_attention_4.window(left, right, causal) == expected


def test_fa4_is_refused_on_cpu_before_any_data_work(base, tmp_path, capsys):
    args = train_args(base["base"], base["sft"], tmp_path / "out", packing=True, packed_attention="fa4", device="cpu")
    with pytest.raises(SystemExit):
        run_in_process("train_sft", args)
    assert "--packed-attention fa4 runs a CUDA kernel; on CPU use sdpa" in capsys.readouterr().err


@pytest.mark.skipif(HAS_FA4, reason="flash-attn-4 is installed here")
def test_without_the_package_activation_says_what_to_install():
    with pytest.raises(
        flash_attention_4.FlashAttention4Error,
        match="needs the flash-attn-4 package: pip install flash-attn-4 \\(or use varlen\\)",
    ) as caught:
        flash_attention_4.activate(torch.device("cuda"))
    assert exit_code(caught.value) == 4  # a config error at the command line, not a traceback


def test_activation_on_the_cpu_names_the_cpu():
    assert "on cpu use sdpa" in flash_attention_4.refusal(torch.device("cpu"))


fa4_gpu = pytest.mark.skipif(
    not (
        HAS_FA4
        and torch.cuda.is_available()
        and torch.cuda.get_device_capability()[0] in flash_attention_4.ARCHITECTURES
    ),
    reason="flash-attn-4 runs on Hopper or Blackwell GPUs with the flash-attn-4 package",
)


@fa4_gpu
@pytest.mark.parametrize("heads, kv_heads, dim", [(32, 8, 64), (32, 2, 128)])  # Llama-1B's and Nemotron-H's
def test_fa4_gives_flash_attention_2_s_outputs_and_gradients(heads, kv_heads, dim):
    lengths = [300, 1, 57, 1133, 128, 700]
    cu = torch.tensor([0, *itertools.accumulate(lengths)], dtype=torch.int32, device="cuda")
    tokens, bound = int(cu[-1]), varlen_attention.grid_length(max(lengths))

    def run(compiled=False):
        generator = torch.Generator(device="cuda").manual_seed(0)
        q, k, v = (
            torch.randn(1, h, tokens, dim, device="cuda", dtype=torch.bfloat16, generator=generator).requires_grad_()
            for h in (heads, kv_heads, kv_heads)
        )
        attend = varlen_attention.varlen_attention
        attend = torch.compile(attend, fullgraph=True) if compiled else attend
        out = attend(None, q, k, v, None, cu_seq_lens_q=cu, max_length_q=bound)[0]
        out.float().square().sum().backward()
        return [out.detach().float()] + [t.grad.float() for t in (q, k, v)]

    flash_2 = run()
    try:
        flash_attention_4.activate(torch.device("cuda"))
        for compiled in (False, True):
            for name, a, b in zip(("out", "dq", "dk", "dv"), run(compiled), flash_2, strict=True):
                assert ((a - b).norm() / b.norm()).item() < 1e-2, (name, compiled)
    finally:
        flash_attention_4.deactivate()
