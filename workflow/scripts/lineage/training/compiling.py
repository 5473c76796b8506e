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

Two Dynamo settings serve per-block compiling (prepare_compile). Blocks of one class share one forward, so Dynamo
keeps every block kind's graphs (in a hybrid: the Mamba-2, attention and MoE blocks) in that one frame's cache,
each kind in up to four variants (sizes static, then dynamic; with gradients, and without for validation): past
the cache's 8 entries the frame ran eager, as Stage 2's runs did on the H100 ("hit config.recompile_limit (8)").
And Dynamo compiles a step's sizes as constants first and recompiles with them dynamic when they change: in every
job anew, and the constants' graphs rarely match the compile cache of an earlier job (its first pack differs). Its
profile-guided sizes (torch.compiler.config.job_id) let the jobs of one workload start from the dynamic graphs an
earlier job settled on. On the H100 the first two steps' compiles took 36-118 s of each training job of the gpu
lineage, the compile cache warm; on CPU a second job of the tiny hybrid compiled its first step in 2.8 s against
11.9 s with the same cache and no profile, and nothing at its second (tests/test_compiling.py).
"""

from __future__ import annotations

import torch

from lineage import families
from lineage.io import sha256_json

VARIANTS_PER_KIND = 4  # sizes static and dynamic, each with and without gradients


def prepare_compile(blocks: list[torch.nn.Module], workload: str | None) -> None:
    """Before compiling `blocks`: room in Dynamo's cache for every kind's variants; and, given a `workload` (what
    the compiled program depends on beyond the blocks' shapes), the sizes found to vary shared with the other jobs
    of that workload and these blocks (Dynamo's profile in the compile cache's folder). A job id the user set wins."""
    kinds = {tuple(type(child) for child in block.children()) for block in blocks}
    dynamo = torch._dynamo.config
    dynamo.recompile_limit = max(dynamo.recompile_limit, VARIANTS_PER_KIND * len(kinds))
    if workload is not None and torch.compiler.config.job_id is None:
        torch.compiler.config.job_id = f"lineage-{workload}-{architecture(blocks)}"


def architecture(blocks: list[torch.nn.Module]) -> str:
    """A digest of the blocks' classes and parameter shapes: the graphs a compile of them makes."""
    shapes = [[type(b).__name__, [[n, list(p.shape)] for n, p in b.named_parameters()]] for b in blocks]
    return sha256_json(shapes)[:12]


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
