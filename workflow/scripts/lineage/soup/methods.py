"""Soup methods: pure functions that combine parent tensors, one flat slice at a time.

A method gets the output slice, the parents' slices (same length, the parents' dtype), their
weights in the accumulation dtype and two scratch buffers of that dtype, and writes the result
into the output slice. It does no I/O and keeps no state, so the streaming reader and writer
(lineage/soup/stream.py) serve every method alike. `config.yaml` names one per soup run
(`runs.<soup>.method`, default `DEFAULT`). Adding one: docs/add-a-soup-method.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

Method = Callable[[np.ndarray, Sequence[np.ndarray], Sequence[np.floating], np.ndarray, np.ndarray], None]


def linear(
    out: np.ndarray, sources: Sequence[np.ndarray], weights: Sequence[np.floating], acc: np.ndarray, tmp: np.ndarray
) -> None:
    """out = w0*s0 + w1*s1 + ..., computed in acc's dtype and rounded once into out's dtype.

    Flat arrays no longer than the scratch buffers acc and tmp; `weights` in acc's dtype. Each
    widening is exact and each product and sum is one rounding in acc's dtype (no fused
    multiply-add), so the result equals `(w0 * s0.float() + w1 * s1.float() + ...).to(out.dtype)`
    in torch bit for bit: both round to nearest even.
    """
    count = out.size
    total, part = acc[:count], tmp[:count]
    _scaled(sources[0], weights[0], total)
    for source, weight in zip(sources[1:], weights[1:], strict=True):
        _scaled(source, weight, part)
        np.add(total, part, out=total)
    np.copyto(out, total, casting="unsafe")


def _scaled(source: np.ndarray, weight: np.floating, into: np.ndarray) -> None:
    if source.dtype != into.dtype:
        np.copyto(into, source)  # widening to fp32/fp64 is exact
        source = into
    np.multiply(source, weight, out=into)


# The registry: config.yaml's `runs.<soup>.method`, soup.py's --method and their checks read it.
METHODS: dict[str, Method] = {"linear": linear}
DEFAULT = "linear"
