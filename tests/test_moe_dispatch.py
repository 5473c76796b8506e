"""The trainer's expert dispatch (lineage/training/moe_dispatch.py) against transformers' grouped_mm.

Same rows, same grouped GEMMs, same fp32 sum per token: the output and every gradient equal
transformers' in fp32, for Nemotron-H's plain experts and Qwen3-MoE's gated ones, eager and
compiled. What changes is the backward: gathers where transformers' indexing scatters (index_put_
with accumulate, atomics on a GPU), which the profiler shows; and the tokens' gradient in bf16 is
summed in fp32 and rounded once, so it is at least as close to the exact sum.
"""

from __future__ import annotations

import copy

import pytest
import torch

from lineage.modeling import CONFIG_CLASSES, SHAPES
from lineage.training.expert_parallel import expert_modules
from lineage.training.moe_dispatch import MoeDispatchError, dispatch, inverse, use_sorted_dispatch

TOKENS = 96


def experts_pair(family: str, dtype=torch.float32, device: str = "cpu"):
    """transformers' grouped_mm experts module of the tiny `family` model, and a copy on the trainer's dispatch."""
    config = CONFIG_CLASSES[family](**SHAPES[(family, "tiny")], vocab_size=256)
    config._experts_implementation = "grouped_mm"
    torch.manual_seed(0)
    model_class = __import__("transformers").AutoModelForCausalLM
    module = expert_modules(model_class.from_config(config, dtype=dtype))[0].to(device)
    for param in module.parameters():
        torch.nn.init.normal_(param, std=0.5)
    ours = copy.deepcopy(module)
    assert use_sorted_dispatch([ours]) == 1
    return module, ours


def routed_inputs(module, dtype=torch.float32):
    generator = torch.Generator().manual_seed(1)
    device = next(module.parameters()).device
    experts, top_k = module.num_experts, module.config.num_experts_per_tok
    hidden = torch.randn(TOKENS, module.config.hidden_size, generator=generator, dtype=dtype)
    index = torch.stack([torch.randperm(experts, generator=generator)[:top_k] for _ in range(TOKENS)])
    weights = torch.rand(TOKENS, top_k, generator=generator).softmax(-1)
    grad = torch.randn(TOKENS, module.config.hidden_size, generator=generator, dtype=dtype)
    return tuple(t.to(device) for t in (hidden, index, weights, grad))


def run(module, hidden, index, weights, grad):
    hidden = hidden.clone().requires_grad_()
    weights = weights.clone().requires_grad_()
    module.zero_grad(set_to_none=True)
    out = module(hidden, index, weights)
    out.backward(grad)
    grads = {name: param.grad for name, param in module.named_parameters()}
    return out.detach(), hidden.grad, weights.grad, grads


@pytest.mark.parametrize("family", ["nemotron_h", "qwen3_moe"])
@pytest.mark.parametrize("compiled", [False, True])
def test_the_dispatch_computes_transformers_grouped_mm(family, compiled):
    theirs, ours = experts_pair(family)
    inputs = routed_inputs(theirs)
    if compiled:
        torch._dynamo.reset()
        ours.compile()  # one graph for the sort, gathers, up GEMM and weights; the down GEMM and sum eager
    expected, got = run(theirs, *inputs), run(ours, *inputs)
    for what, mine, reference in zip(("output", "tokens' gradient", "router weights' gradient"), got, expected):
        assert_close_scaled(mine, reference, what)
    assert got[3].keys() == expected[3].keys()
    for name, grad in expected[3].items():  # sums over an expert's rows, in another row order
        assert_close_scaled(got[3][name], grad, name)


def assert_close_scaled(got, expected, what):
    """fp32 sums of the same terms in another order (or blocking, compiled): within 1e-6 of the largest value."""
    scale = expected.abs().max().item()
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6 * scale, msg=what)


def scatter_ops(module, inputs) -> set[str]:
    """The scatter ops of the backward pass."""
    hidden, index, weights, grad = inputs
    out = module(hidden.clone().requires_grad_(), index, weights.clone().requires_grad_())
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        out.backward(grad)
    return {e.key for e in prof.key_averages() if e.key in ("aten::index_put_", "aten::_index_put_impl_")}


def test_the_backward_gathers_where_transformers_scatters():
    theirs, ours = experts_pair("nemotron_h")
    inputs = routed_inputs(theirs)
    assert scatter_ops(theirs, inputs)  # the check can fail: transformers' backward scatter-adds
    assert not scatter_ops(ours, inputs)


def test_each_tokens_gradient_is_its_copies_summed_in_fp32_and_rounded_once():
    top_k, tokens, width = 6, 500, 64
    generator = torch.Generator().manual_seed(2)
    order = torch.randperm(tokens * top_k, generator=generator)
    position = inverse(order)
    assert torch.equal(order[position], torch.arange(tokens * top_k))
    x = torch.randn(tokens, width, dtype=torch.bfloat16, requires_grad=True)
    rows = dispatch(x, order, position, top_k)
    assert torch.equal(rows, x.detach()[order // top_k])
    grad_rows = torch.randn(tokens * top_k, width, generator=generator).to(torch.bfloat16)
    rows.backward(grad_rows)
    exact = grad_rows.double()[position].view(tokens, top_k, width).sum(1)
    ours = (x.grad.double() - exact).abs()
    theirs = torch.zeros(tokens, width, dtype=torch.bfloat16).index_put_((order // top_k,), grad_rows, accumulate=True)
    theirs = (theirs.double() - exact).abs()
    half_ulp = exact.abs() * 2.0**-8
    assert (ours <= half_ulp + 1e-30).all()  # one rounding of a (here exact) fp32 sum
    assert ours.sum() < theirs.sum()  # a rounding after every add loses more


def test_a_module_with_expert_biases_is_refused_with_what_to_set():
    _, ours = experts_pair("nemotron_h")
    ours.has_bias = True
    with pytest.raises(MoeDispatchError, match="set experts: eager"):
        use_sorted_dispatch([ours])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_in_bf16_compiled_it_computes_transformers_grouped_mm():
    """torch._grouped_mm's CUDA kernels (bf16 only) and Inductor's fused gathers: bf16 rounding apart."""
    theirs, ours = experts_pair("nemotron_h", torch.bfloat16, "cuda")
    inputs = routed_inputs(theirs, torch.bfloat16)
    torch._dynamo.reset()
    ours.compile()
    expected, got = run(theirs, *inputs), run(ours, *inputs)
    for mine, reference in zip(got[:3], expected[:3]):
        assert (mine.float() - reference.float()).norm() < 1e-2 * reference.float().norm()
    for name, grad in expected[3].items():
        assert (got[3][name].float() - grad.float()).norm() < 1e-2 * grad.float().norm(), name


def test_a_micro_batch_without_tokens_gives_empty_outputs_and_gradients():
    theirs, ours = experts_pair("nemotron_h")
    hidden, index, weights, grad = (t[:0] for t in routed_inputs(theirs))
    out, hidden_grad, weights_grad, _ = run(ours, hidden, index, weights, grad)
    assert out.shape == hidden.shape and hidden_grad.shape == hidden.shape and weights_grad.shape == weights.shape
