"""One MoE layer's routed experts at the card's widths on one GPU: the dispatch around their grouped GEMMs.

Side by side in one process, forward + backward (bf16) of:
- transformers' NemotronHExperts with `grouped_mm`: sort, gather, GEMMs, inverse gather, fp32 sum; its
  backward scatter-adds (index_put_ with accumulate) the tokens' and rows' gradients;
- the same experts on the trainer's dispatch (lineage/training/moe_dispatch.py, E = 1): gathers in
  both directions and in both passes;
- each of them compiled (`torch.compile` of the module, as the trainer compiles a MoE block's mixer);
- the experts behind lineage/training/expert_parallel.py's dispatch with an expert group of one GPU
  (eager): the count exchange and both all-to-alls (NCCL, a group of one: a copy) added.
Also: the all-to-all alone, and the experts' GEMM rate (their FLOPs over transformers' eager time).

Run as (repository root, one GPU):
    PYTHONPATH=workflow/scripts python benchmarks/expert_dispatch.py --tokens 8192,16384,32768
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cuda_timing import timed  # noqa: E402
from torch.distributed.device_mesh import init_device_mesh  # noqa: E402
from transformers import NemotronHConfig  # noqa: E402
from transformers.models.nemotron_h.modeling_nemotron_h import NemotronHExperts  # noqa: E402

from lineage.modeling import SHAPES  # noqa: E402
from lineage.training.expert_parallel import split_experts  # noqa: E402
from lineage.training.moe_dispatch import use_sorted_dispatch  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="30b_a3b_rank8", help="a nemotron_h shape of lineage/modeling.py")
    parser.add_argument("--tokens", default="8192,16384,32768", help="tokens per micro-batch (comma-separated)")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.cuda.set_device(0)
    config = NemotronHConfig(**SHAPES[("nemotron_h", args.size)], vocab_size=131072)
    config._experts_implementation = "grouped_mm"
    torch.manual_seed(0)
    plain = NemotronHExperts(config).to("cuda", torch.bfloat16)
    for param in plain.parameters():
        torch.nn.init.normal_(param, std=0.02)
    gathers = copy.deepcopy(plain)
    use_sorted_dispatch([gathers])
    split = copy.deepcopy(plain)
    split_experts(split, init_device_mesh("cuda", (1,), mesh_dim_names=("ep",))["ep"])
    modules = {
        "grouped_mm": plain,
        "gathers": gathers,
        "grouped_mm compiled": torch.compile(copy.deepcopy(plain)),
        "gathers compiled": torch.compile(gathers),
        "E-dispatch (group of 1)": split,
    }
    hidden, experts, top_k = config.hidden_size, config.n_routed_experts, config.num_experts_per_tok
    print(
        f"NemotronHExperts {args.size}: {experts} experts of {config.moe_intermediate_size}, top-{top_k}, hidden "
        f"{hidden}, bf16, grouped_mm; {torch.cuda.get_device_name()}"
    )
    print(
        f"| tokens | {' | '.join(f'{name} ms' for name in modules)} | gathers / grouped_mm, compiled | "
        "all-to-all alone ms | experts TFLOP/s (grouped_mm) |"
    )
    print("|---" * (len(modules) + 4) + "|")
    for tokens in (int(t) for t in args.tokens.split(",")):
        x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        index = torch.stack([torch.randperm(experts, device="cuda")[:top_k] for _ in range(tokens)])
        weights = torch.rand(tokens, top_k, device="cuda").softmax(-1).requires_grad_()
        grad = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16)

        def step(module):
            module.zero_grad(set_to_none=True)
            x.grad = weights.grad = None
            module(x, index, weights).backward(grad)

        with torch.no_grad():
            reference = plain(x, index, weights)
            differences = {n: (m(x, index, weights) - reference).abs().max().item() for n, m in modules.items()}
        ms = {name: timed(lambda m=module: step(m), args.repeats) for name, module in modules.items()}
        copies = x.detach().repeat_interleave(top_k, 0)
        out = torch.empty_like(copies)
        alone = timed(lambda: dist.all_to_all_single(out, copies), args.repeats)
        flops = 3 * 2 * 2 * tokens * top_k * hidden * config.moe_intermediate_size  # up + down, fwd + bwd
        ratio = ms["grouped_mm compiled"] / ms["gathers compiled"]
        print(
            f"| {tokens:,} | {' | '.join(f'{v:.2f}' for v in ms.values())} | {ratio:.2f}x | {alone:.2f} | "
            f"{flops / ms['grouped_mm'] / 1e9:.0f} |"
        )
        print("  max |output - grouped_mm's|: " + ", ".join(f"{n} {d:.1e}" for n, d in differences.items()))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
