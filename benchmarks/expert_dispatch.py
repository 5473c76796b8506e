"""The cost of expert parallelism's dispatch on one GPU: one MoE layer's routed experts at the card's widths.

Side by side in one process, forward + backward of transformers' NemotronHExperts (grouped_mm, the
trainer's `experts: grouped_mm`), as E = 1 runs it, and the same experts behind
lineage/training/expert_parallel.py's dispatch with an expert group of one GPU: the sort of the
token copies, the count exchange, both all-to-alls (NCCL, a group of one: a copy), the regrouping by
expert and the weighted sum back. The difference is what the dispatch adds around the experts'
matmuls before any other GPU is involved. Also: the all-to-all alone, and the whole layer's FLOPs.

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="30b_a3b_reduced", help="a nemotron_h shape of lineage/modeling.py")
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
    split = copy.deepcopy(plain)
    split_experts(split, init_device_mesh("cuda", (1,), mesh_dim_names=("ep",))["ep"])
    hidden, experts, top_k = config.hidden_size, config.n_routed_experts, config.num_experts_per_tok
    print(
        f"NemotronHExperts {args.size}: {experts} experts of {config.moe_intermediate_size}, top-{top_k}, hidden "
        f"{hidden}, bf16, grouped_mm; {torch.cuda.get_device_name()}"
    )
    print(
        "| tokens | E=1 experts ms | dispatched ms (group of 1) | added ms | added % | all-to-all alone ms | "
        "experts TFLOP/s (E=1) |"
    )
    print("|---|---|---|---|---|---|---|")
    for tokens in (int(t) for t in args.tokens.split(",")):
        x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        index = torch.stack([torch.randperm(experts, device="cuda")[:top_k] for _ in range(tokens)])
        weights = torch.rand(tokens, top_k, device="cuda").softmax(-1)
        grad = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16)

        def step(module):
            module.zero_grad(set_to_none=True)
            x.grad = None
            module(x, index, weights).backward(grad)

        with torch.no_grad():
            same = (plain(x, index, weights) - split(x, index, weights)).abs().max().item()
        base = timed(lambda: step(plain), args.repeats)
        dispatched = timed(lambda: step(split), args.repeats)
        copies = x.detach().repeat_interleave(top_k, 0)
        out = torch.empty_like(copies)
        alone = timed(lambda: dist.all_to_all_single(out, copies), args.repeats)
        flops = 3 * 2 * 2 * tokens * top_k * hidden * config.moe_intermediate_size  # up + down, fwd + bwd
        print(
            f"| {tokens:,} | {base:.2f} | {dispatched:.2f} | {dispatched - base:+.2f} | "
            f"{100 * (dispatched - base) / base:+.1f}% | {alone:.2f} | {flops / base / 1e9:.0f} |"
            + (f" (max |difference| {same:.1e})" if same else "")
        )
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
