"""Full activation checkpointing reruns a block's forward except its last matrix product.

The products a backward computes are counted below autograd (a dispatch mode), with and without full
checkpointing: the difference is the rerun. It must hold every product of the blocks' forward but
one per block (Mamba-2's out_proj, attention's o_proj, the routed experts' down GEMM, the dense MLP's
down_proj), and the gradients must
equal those of no checkpointing, eager and with the blocks compiled as the trainer compiles them.
transformers' own order (the shared expert last) reruns the experts' down GEMM, so the counts can fail.
"""

from __future__ import annotations

import importlib.util
from collections import Counter

import pytest
import torch
from torch._dynamo.utils import counters
from torch.utils._python_dispatch import TorchDispatchMode
from transformers import AutoModelForCausalLM

from lineage.modeling import CONFIG_CLASSES, SHAPES
from lineage.training.checkpointing import enable_activation_checkpointing
from lineage.training.compiling import compile_block
from lineage.training.expert_parallel import expert_modules
from lineage.training.fsdp import blocks
from lineage.training.last_product import leave_out_of_recompute
from lineage.training.moe_dispatch import use_sorted_dispatch

PRODUCTS = {"mm": "dense", "addmm": "dense", "bmm": "dense", "_grouped_mm": "grouped"}


class ProductCount(TorchDispatchMode):
    """Matrix-product kernels run, by kind (below autograd: a product stopped before computing is not counted)."""

    def __init__(self):
        super().__init__()
        self.counts = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kind = PRODUCTS.get(func._overloadpacket.__name__)
        if kind:
            self.counts[kind] += 1
        return func(*args, **(kwargs or {}))


def tiny_model(
    family: str,
    *,
    checkpointing: bool,
    leave_out: bool = True,
    compiled: bool = False,
    device: str = "cpu",
    **shape,
):
    """The tiny `family` model as the trainer prepares it (the experts' dispatch, full checkpointing): fp32 on
    CPU, bf16 on a GPU (where Nemotron-H's Mamba-2 mixers run mamba-ssm's fused kernel)."""
    config = CONFIG_CLASSES[family](**(SHAPES[(family, "tiny")] | shape), vocab_size=256)
    if family != "llama":
        config._experts_implementation = "grouped_mm"
    torch.manual_seed(0)
    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    model = AutoModelForCausalLM.from_config(config, dtype=dtype).to(device)
    model.train()
    use_sorted_dispatch(expert_modules(model))
    if checkpointing:
        enable_activation_checkpointing(model, True)
    for block in blocks(model):
        if checkpointing and leave_out:
            leave_out_of_recompute(block)
        if compiled:
            compile_block(block, checkpointing)
    return model


def products(run) -> Counter:
    """Matrix products `run` computes, by kind (dense or grouped)."""
    with ProductCount() as count:
        run()
    return count.counts


def forward_and_backward(model, ids):
    """Products of the forward and of the backward, and the gradients."""
    model.zero_grad(set_to_none=True)
    out = {}
    forward = products(lambda: out.setdefault("loss", model(input_ids=ids, labels=ids).loss))
    backward = products(lambda: out["loss"].backward())
    grads = {name: param.grad.clone() for name, param in model.named_parameters() if param.grad is not None}
    return forward, backward, grads


def last_products(model) -> Counter:
    """One product per block, by kind: a block with routed experts ends with their grouped down GEMM."""
    grouped = sum(bool(expert_modules(block)) for block in blocks(model))
    return Counter({"grouped": grouped, "dense": len(blocks(model)) - grouped})


@pytest.mark.parametrize("family", ["nemotron_h", "qwen3_moe", "llama"])
def test_the_rerun_leaves_out_each_blocks_last_product_and_the_gradients_hold(family):
    ids = torch.randint(3, 250, (2, 24), generator=torch.Generator().manual_seed(1))
    _, plain_backward, reference = forward_and_backward(tiny_model(family, checkpointing=False), ids)
    model = tiny_model(family, checkpointing=True)
    forward, backward, grads = forward_and_backward(model, ids)
    rerun = backward - plain_backward
    head = Counter({"dense": 1})  # the LM head: outside the blocks, never rerun
    assert rerun == forward - head - last_products(model)
    assert_same_gradients(grads, reference)


def assert_same_gradients(grads, reference):
    assert grads.keys() == reference.keys()
    for name, grad in grads.items():
        torch.testing.assert_close(grad, reference[name], rtol=1e-4, atol=1e-6, msg=name)


def test_without_it_the_rerun_recomputes_the_experts_down_gemm():
    """The check above can fail: in transformers' order (the shared expert last) the rerun computes both expert GEMMs."""
    ids = torch.randint(3, 250, (2, 24), generator=torch.Generator().manual_seed(1))
    _, plain_backward, _ = forward_and_backward(tiny_model("nemotron_h", checkpointing=False), ids)
    model = tiny_model("nemotron_h", checkpointing=True, leave_out=False)
    forward, backward, _ = forward_and_backward(model, ids)
    assert (backward - plain_backward)["grouped"] == forward["grouped"]


def test_compiled_blocks_with_their_last_products_eager_give_the_gradients_of_no_checkpointing():
    """Compiled as the trainer compiles them (compiling.py), three steps of two lengths (the second compiles the
    blocks again for dynamic shapes): each rerun must pick its forward's graphs.

    (A dispatch mode would run the compiled blocks eager, so here only the gradients are compared.)"""
    torch._dynamo.reset()
    reference_model = tiny_model("nemotron_h", checkpointing=False)
    model = tiny_model("nemotron_h", checkpointing=True, compiled=True)
    for seed, length in ((1, 24), (2, 40), (3, 24)):
        ids = torch.randint(3, 250, (2, length), generator=torch.Generator().manual_seed(seed))
        for each in (reference_model, model):
            each.zero_grad(set_to_none=True)
            each(input_ids=ids, labels=ids).loss.backward()
        grads = {name: param.grad for name, param in model.named_parameters() if param.grad is not None}
        assert_same_gradients(grads, {n: p.grad for n, p in reference_model.named_parameters() if p.grad is not None})
    assert counters["stats"]["unique_graphs"] > 0


@pytest.mark.skipif(
    not torch.cuda.is_available() or importlib.util.find_spec("mamba_ssm") is None,
    reason="needs a CUDA GPU and mamba-ssm",
)
def test_on_mamba_ssms_fused_kernel_the_rerun_leaves_out_out_proj():
    """transformers calls the fused kernel with out_proj inside it, which a rerun cannot stop before."""
    ids = torch.randint(3, 250, (2, 24), generator=torch.Generator().manual_seed(1)).cuda()
    mamba_and_attention = {"layers_block_type": ["linear_attention", "full_attention"], "device": "cuda"}
    _, plain_backward, reference = forward_and_backward(
        tiny_model("nemotron_h", checkpointing=False, **mamba_and_attention), ids
    )
    _, transformers_backward, _ = forward_and_backward(
        tiny_model("nemotron_h", checkpointing=True, leave_out=False, **mamba_and_attention), ids
    )
    model = tiny_model("nemotron_h", checkpointing=True, **mamba_and_attention)
    forward, backward, grads = forward_and_backward(model, ids)
    rerun = backward - plain_backward
    assert rerun == forward - Counter({"dense": 1}) - last_products(model)
    assert (transformers_backward - plain_backward)["dense"] == rerun["dense"] + 1  # its out_proj
    for name, grad in grads.items():  # bf16: the same products, rounded alike
        assert (grad.float() - reference[name].float()).norm() <= 1e-2 * reference[name].float().norm() + 1e-6, name
