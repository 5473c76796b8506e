"""torch.compile of one transformer block, with the parts that launch their own kernels left eager.

Compiling a block fuses what sits between its matrix products: norms and their fp32 casts,
rotary embeddings, activations, residual adds, and in a MoE block the router and the expert
dispatch / combine around the grouped GEMMs, whose fp32 intermediates then never reach memory.

A Mamba-2 mixer on its kernels runs mamba-ssm's fused split-conv-scan: Triton launches and a
causal-conv1d C++ extension inside an autograd.Function, which Dynamo does not trace. The mixer
always runs eager (its PyTorch fallback too, so both paths compile the same way), its block's
norm and residual compiled around it (a graph break each side): the kernels keep their own
backward and the `seq_idx` that keeps packed rows apart.
"""

from __future__ import annotations

import torch

# Mixers whose forward calls kernels Dynamo cannot trace (class names, as transformers spells them)
EAGER_MIXERS = frozenset({"NemotronHMamba2Mixer"})


def compile_block(block: torch.nn.Module, **options) -> list[str]:
    """Compile `block` in place (nn.Module.compile, `options` passed on); return the eager parts' names."""
    eager = []
    for name, module in block.named_modules():
        if type(module).__name__ in EAGER_MIXERS:
            module.forward = torch.compiler.disable(module.forward, recursive=True)
            eager.append(name)
    block.compile(**options)
    return eager
