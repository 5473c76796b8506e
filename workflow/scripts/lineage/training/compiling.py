"""torch.compile of one transformer block, with the parts that launch their own kernels left eager.

Compiling a block fuses what sits between its matrix products: norms and their fp32 casts,
rotary embeddings, activations, residual adds, and in a MoE block the router and the expert
dispatch / combine around the grouped GEMMs, whose fp32 intermediates then never reach memory.

A Mamba-2 mixer on its kernels runs mamba-ssm's fused split-conv-scan: Triton launches and a
causal-conv1d C++ extension inside an autograd.Function, which Dynamo does not trace. The mixer
always runs eager (its PyTorch fallback too, so both paths compile the same way), its block's
norm and residual compiled around it (a graph break each side): the kernels keep their own
backward and the `seq_idx` that keeps packed rows apart.

Under activation checkpointing transformers checkpoints the block's forward from inside the
block's call, so compiling the block traces the checkpoint as one higher-order op, which can hold
no graph break: a block with an eager mixer falls back to eager, and with it every block of the
model (their frames share nn.Module's call code, which Dynamo then skips). So with full
checkpointing the block's children are compiled one by one and the checkpoint stays eager around
them (it reruns their compiled forwards), each mixer's last matrix product eager after its graph so
that the rerun can stop before it (last_product.py). Selective checkpointing keeps its blocks eager: its
policy must see the ops it picks from, which compiled children hide (torch refuses: a cached tensor
mutated), and whole blocks compiled with the checkpoint traced failed on the GPU at the second
pack shape (AOTAutograd's partitioner; benchmarks/RESULTS.md).
"""

from __future__ import annotations

import torch

from lineage import families


def compile_block(block: torch.nn.Module, checkpointing: bool | str = False, **options) -> list[str]:
    """Compile `block` in place (nn.Module.compile, `options` passed on) for its activation checkpointing
    (False, True = full, "selective"); return the eager parts' names."""
    eager, mixers = [], families.eager_mixers()  # whose forward calls kernels Dynamo cannot trace
    for name, module in block.named_modules():
        if isinstance(module, mixers):
            module.forward = torch.compiler.disable(module.forward, recursive=True)
            eager.append(name)
    if checkpointing is True:
        for name, child in block.named_children():
            if not any(part == name or part.startswith(f"{name}.") for part in eager):
                child.compile(**options)
    elif checkpointing:
        eager = [""]  # the whole block
    else:
        block.compile(**options)
    return eager


def graphs_compiled() -> int:
    """Frames Dynamo has compiled in this process so far. A step that adds some compiled anew (a first shape, a
    recompile for a new one): the step's line says so, which explains a slow step in the middle of a run."""
    from torch._dynamo.utils import counters  # loaded already: the trainer imports torch.compiler.disable-d code

    return int(counters["frames"].get("ok", 0))
