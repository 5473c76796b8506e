"""The LM head and its loss at the real vocabularies: each head-loss implementation, forward + backward.

What the trainer runs at its loss positions (lineage.training.head_loss): hidden states (positions
x hidden, bf16) through the head (vocab x hidden, bf16) into the summed fp32 cross-entropy, and
the gradients of both. `matmuls` times the head's three matrix products alone (logits, then the
gradients of the hidden states and of the head), so `total - matmuls` is what each
implementation spends on the loss itself. The loss's memory floor is the bytes that the in-place
kernel must move (the logits read twice, written once) at the device's measured copy bandwidth.

Times are medians of CUDA-event timings after warm-up; memory is the peak allocated above the
inputs. Loss and gradients are compared with the unfused fp32 path (`logits`). Run as (repository
root, one GPU):
    PYTHONPATH=workflow/scripts python benchmarks/head_loss_kernels.py --positions 20000
"""

from __future__ import annotations

import argparse
import importlib.util

import torch
from cuda_timing import timed

from lineage.training import head_loss

SHAPES = (("llama-1b", 2048, 128256), ("nemotron-h card", 2688, 131072))  # (name, hidden, vocab)


def copy_bandwidth(nbytes: int = 4 << 30) -> float:
    """Bytes per second of a device-to-device copy (read + write counted)."""
    source = torch.empty(nbytes // 2, dtype=torch.bfloat16, device="cuda")
    target = torch.empty_like(source)
    ms = timed(lambda: target.copy_(source), 10)
    return 2 * nbytes / (ms / 1e3)


def loss_and_grads(implementation: str, hidden, weight, targets) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One forward and backward of a head-loss implementation: (loss as float64, d hidden, d head)."""
    hidden.grad = weight.grad = None
    loss = head_loss._FUNCTIONS[implementation](hidden, weight, targets, 0)
    loss.backward()
    return loss.detach().double(), hidden.grad, weight.grad


def relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--positions", type=int, default=20000, help="loss positions (one micro-batch's trained tokens)"
    )
    parser.add_argument("--implementations", default="matmuls,compiled,inplace,liger,cce")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    bandwidth = copy_bandwidth()
    print(
        f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, copy bandwidth {bandwidth / 1e12:.2f} TB/s; "
        f"{args.positions:,} loss positions, medians of {args.repeats}"
    )
    for name, width, vocab in SHAPES:
        torch.manual_seed(0)
        hidden = (torch.randn(args.positions, width, device="cuda") / 8).bfloat16().requires_grad_()
        weight = (torch.randn(vocab, width, device="cuda") / 64).bfloat16().requires_grad_()
        targets = torch.randint(0, vocab, (args.positions,), device="cuda")
        floor_ms = 3 * 2 * args.positions * vocab / bandwidth * 1e3
        print(f"\n{name}: hidden {width:,}, vocabulary {vocab:,}; the loss's memory floor {floor_ms:.2f} ms")
        print(
            "| implementation | fwd+bwd ms | loss ms (total - matmuls) | peak above inputs GiB | "
            "loss rel. diff | grad rel. diff |"
        )
        print("|---|---|---|---|---|---|")

        reference = [t.clone() for t in loss_and_grads("logits", hidden, weight, targets)]

        def matmuls(hidden=hidden, weight=weight):  # bound now: the tensors are deleted after each shape
            logits = hidden.detach() @ weight.detach().T
            (logits @ weight.detach(), logits.T @ hidden.detach())

        matmul_ms = None
        for implementation in args.implementations.split(","):
            package = head_loss.KERNEL_PACKAGES.get(implementation)
            if package and importlib.util.find_spec(package) is None:
                print(f"| {implementation} | not installed ({package}) | | | | |")
                continue

            def step(implementation=implementation, hidden=hidden, weight=weight, targets=targets):
                loss_and_grads(implementation, hidden, weight, targets)

            function = matmuls if implementation == "matmuls" else step
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            try:
                ms = timed(function, args.repeats)
            except Exception as error:  # a kernel that fails shows in its row
                print(f"| {implementation} | failed: {type(error).__name__}: {str(error)[:120]} | | | | |")
                continue
            peak = (torch.cuda.max_memory_allocated() - base) / 2**30
            if implementation == "matmuls":
                matmul_ms = ms
                print(f"| matmuls (head, dx, dw) | {ms:.2f} | - | {peak:.1f} | - | - |")
                continue
            loss, dx, dw = loss_and_grads(implementation, hidden, weight, targets)
            loss_diff = abs(loss.item() - reference[0].item()) / reference[0].item()
            grad_diff = max(relative(dx, reference[1]), relative(dw, reference[2]))
            loss_ms = f"{ms - matmul_ms:.2f}" if matmul_ms is not None else "-"
            print(f"| {implementation} | {ms:.2f} | {loss_ms} | {peak:.1f} | {loss_diff:.1e} | {grad_diff:.1e} |")
        del hidden, weight, targets, reference
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
