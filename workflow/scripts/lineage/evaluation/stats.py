"""Which differences in the eval table are signal: intervals for every cell, exact paired tests.

A cell is a mean over items: of 0/1 verdicts (accuracies) or of per-item values (repetition,
log-prob margins). Its 95% interval is Wilson's for a proportion (right at 0 and 1 and at n of
16, where the normal interval is not) and a seeded percentile bootstrap for a continuous mean.

Two columns evaluated on the same items are compared item by item. The paired difference gets a
seeded bootstrap interval over the shared items, and a test: McNemar's exact test (a two-sided
binomial test on the items that flipped) for verdicts, a sign-flip permutation test of the mean
difference for values: exact (every sign pattern enumerated) when at most 16 items differ, else a
Monte-Carlo estimate from 20,000 seeded flips, reported as (k + 1) / (n + 1) (k draws at least as
extreme of n: never 0, and valid as a p-value) with its draw count. A difference is within noise
when p >= 0.05. Everything is deterministic: the same numbers on every run.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

Z95 = 1.959963984540054
ALPHA = 0.05
BOOTSTRAP_DRAWS = 4000
PERMUTATIONS = 20000
EXACT_FLIPS = 16  # at most 2**16 sign patterns enumerated
SEED = 20240601


@dataclass(frozen=True)
class Estimate:
    """A mean over n items with its 95% interval."""

    value: float
    low: float
    high: float
    n: int

    def scaled(self, factor: float) -> Estimate:
        return replace(self, value=self.value * factor, low=self.low * factor, high=self.high * factor)


@dataclass(frozen=True)
class Paired:
    """Column minus reference on the items both were evaluated on."""

    diff: float
    low: float
    high: float
    n: int  # shared items
    p: float
    test: str  # mcnemar | permutation
    discordant: int  # items whose verdict flipped (mcnemar) or whose value changed
    draws: int = 0  # Monte-Carlo draws behind p (0: exact)

    @property
    def test_text(self) -> str:
        """The test and its p as people write them: `permutation p 5.0e-05 (20,000 draws)`, `mcnemar p 0.031`."""
        how = f"{self.draws:,} draws" if self.draws else "exact"
        return f"{self.test} p {self.p:.2g} ({how})" if self.p < 0.001 else f"{self.test} p {self.p:.3g} ({how})"

    @property
    def within_noise(self) -> bool:
        return self.p >= ALPHA

    def scaled(self, factor: float) -> Paired:
        return replace(self, diff=self.diff * factor, low=self.low * factor, high=self.high * factor)


def binary(values: Sequence[float]) -> bool:
    return all(v in (0, 1, True, False) for v in values)


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for successes out of n."""
    if n <= 0:
        raise ValueError("an interval needs at least one item")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _bootstrap_means(values: np.ndarray, draws: int = BOOTSTRAP_DRAWS) -> np.ndarray:
    rng = np.random.default_rng(SEED)
    picks = rng.integers(0, len(values), size=(draws, len(values)))
    return values[picks].mean(axis=1)


def estimate(values: Sequence[float]) -> Estimate:
    """The mean and its 95% interval: Wilson for 0/1 values, bootstrap percentiles otherwise."""
    if not values:
        raise ValueError("an estimate needs at least one item")
    array = np.asarray(values, dtype=float)
    mean = float(array.mean())
    if binary(values):
        low, high = wilson(int(array.sum()), len(array))
    else:
        means = _bootstrap_means(array)
        low, high = (float(x) for x in np.quantile(means, [0.025, 0.975]))
    return Estimate(mean, low, high, len(array))


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar p: the discordant items as a Binomial(b + c, 1/2) draw."""
    flips = only_first + only_second
    if flips == 0:
        return 1.0
    tail = sum(math.comb(flips, k) for k in range(min(only_first, only_second) + 1)) / 2**flips
    return min(1.0, 2 * tail)


def sign_flip_p(differences: np.ndarray) -> tuple[float, int]:
    """Two-sided p of the mean paired difference under random signs, and the draws behind it (0: exact,
    every pattern enumerated, for few nonzero differences; else (k + 1) / (n + 1) of n seeded draws)."""
    nonzero = differences[differences != 0]
    if len(nonzero) == 0:
        return 1.0, 0
    observed = abs(nonzero.sum())
    exact = len(nonzero) <= EXACT_FLIPS
    if exact:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(nonzero))))
    else:
        signs = np.random.default_rng(SEED).choice((1.0, -1.0), size=(PERMUTATIONS, len(nonzero)))
    extreme = int(np.sum(np.abs(signs @ nonzero) >= observed - 1e-12 * max(1.0, observed)))
    if exact:
        return extreme / len(signs), 0
    return (extreme + 1) / (len(signs) + 1), len(signs)


def paired(ours: Sequence[float], reference: Sequence[float]) -> Paired:
    """ours - reference over shared items (same order): bootstrap interval and the exact test."""
    if len(ours) != len(reference) or not ours:
        raise ValueError(f"paired values need the same non-zero number of items ({len(ours)} vs {len(reference)})")
    a, b = np.asarray(ours, dtype=float), np.asarray(reference, dtype=float)
    differences = a - b
    low, high = (float(x) for x in np.quantile(_bootstrap_means(differences), [0.025, 0.975]))
    if binary(ours) and binary(reference):
        only_ours, only_ref = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
        return Paired(
            float(differences.mean()),
            low,
            high,
            len(a),
            mcnemar_exact(only_ours, only_ref),
            "mcnemar",
            only_ours + only_ref,
        )
    p, draws = sign_flip_p(differences)
    return Paired(
        float(differences.mean()),
        low,
        high,
        len(a),
        p,
        "permutation",
        int((differences != 0).sum()),
        draws,
    )
