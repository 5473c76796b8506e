"""The host's own cost of FSDP2's hooks and of full activation checkpointing, per module and micro-batch.

A full-scale rank's GPU waits for its host ~15% of a step (benchmarks/RESULTS.md, "The card's node rehearsed"),
and the host's work grows with the module calls, not the tokens: FSDP2 runs Python hooks around each sharded
module's forward and backward (gather, reshard, reduce), and the non-reentrant checkpoint wraps each block in
saved-tensor hooks and reruns it. Here blocks too small to cost the device anything (two 64-wide linears) run
forward and backward as rank 0 of a world of 8 in the rehearsal's fake process group (tools/rehearsal/world.py,
collectives by its stated rules), plain, checkpointed, sharded and both; the differences are the hooks' host time.

    python benchmarks/fsdp_host_cost.py                    # CPU: Python and dispatch alone
    python benchmarks/fsdp_host_cost.py --device cuda      # + the kernel launches of the hooks' copies
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
from pathlib import Path

import torch
from torch.utils.checkpoint import checkpoint

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "workflow" / "scripts"), str(REPO / "tools")]

from rehearsal import world  # noqa: E402

from lineage.parallel_dims import ParallelDims  # noqa: E402
from lineage.training.fsdp import shard  # noqa: E402

WIDTH = 64


class Block(torch.nn.Sequential):
    """Two linears: a block too small to cost the device anything."""

    def __init__(self):
        super().__init__(torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU(), torch.nn.Linear(WIDTH, WIDTH))


class Stack(torch.nn.Module):
    """`count` blocks in a row, each checkpointed or not; named as transformers names its blocks, so that the
    trainer's own sharding (lineage.training.fsdp.shard) finds them."""

    _no_split_modules = ["Block"]
    config = types.SimpleNamespace()  # a dense model to the trainer: no routed experts

    def __init__(self, count: int, checkpointed: bool):
        super().__init__()
        self.checkpointed = checkpointed
        self.layers = torch.nn.ModuleList(Block() for _ in range(count))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        for block in self.layers:
            h = checkpoint(block, h, use_reentrant=False) if self.checkpointed else block(h)
        return h


def stack(count: int, checkpointed: bool, env, device: torch.device) -> Stack:
    """The blocks; with `env`, sharded by the trainer (each block, then the root; bf16 compute, fp32 sums)."""
    made = Stack(count, checkpointed).to(device)
    if env is not None:
        shard(made, env, "bf16")
        world.give_rules(made)
    return made


def micro_batch_seconds(made: Stack, device: torch.device, repeats: int) -> float:
    """Median wall of one forward and backward through every block (the device synchronised each time)."""
    x = torch.randn(8, WIDTH, device=device)

    def run():
        made(x).float().sum().backward()
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    for _ in range(3):  # warm-up: lazy initialisation, first allocations
        run()
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        run()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--blocks", type=int, default=52, help="blocks in the stack (the card's 52 layers)")
    parser.add_argument("--repeats", type=int, default=20, help="timed forward+backward passes (median kept)")
    args = parser.parse_args()
    device = torch.device("cuda", 0) if args.device == "cuda" else torch.device("cpu")  # set_device needs an index
    if device.type == "cpu":
        torch.set_num_threads(1)  # the host's one Python thread is what is measured
    env = world.join(0, ParallelDims(nodes=1, processes_per_node=8), device)
    seconds = {}
    for sharded in (False, True):
        for checkpointed in (False, True):
            made = stack(args.blocks, checkpointed, env if sharded else None, device)
            seconds[sharded, checkpointed] = micro_batch_seconds(made, device, args.repeats)
    per_block = {key: 1e3 * value / args.blocks for key, value in seconds.items()}
    print(
        f"{args.blocks} blocks of two {WIDTH}-wide linears, rank 0 of 8 (fake group), {device}, torch {torch.__version__}"
    )
    print("| blocks | ms a forward+backward | ms a block |")
    print("|---|---|---|")
    for (sharded, checkpointed), ms in per_block.items():
        name = " + ".join(n for n, on in (("FSDP2", sharded), ("checkpointed", checkpointed)) if on) or "plain"
        print(f"| {name} | {ms * args.blocks:.1f} | {ms:.3f} |")
    fsdp = per_block[True, False] - per_block[False, False]
    ckpt = per_block[False, True] - per_block[False, False]
    print(f"host time a module and micro-batch: FSDP2's hooks {fsdp:.3f} ms, full checkpointing {ckpt:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
