"""Intervals and paired tests of the eval table, on constructed results with known answers."""

import math

import pytest

from lineage.evaluation import stats


def test_wilson_matches_the_textbook_values_and_stays_inside_0_1():
    low, high = stats.wilson(8, 16)
    assert (round(low, 4), round(high, 4)) == (0.28, 0.72)  # Wilson, 95%: 0.2800 - 0.7200
    assert stats.wilson(0, 16)[0] == 0.0 and 0 < stats.wilson(0, 16)[1] < 0.25
    assert stats.wilson(16, 16)[1] == 1.0


def test_exact_mcnemar_is_the_binomial_tail_of_the_flipped_items():
    assert stats.mcnemar_exact(1, 0) == 1.0  # one flip: as likely as not
    assert stats.mcnemar_exact(0, 0) == 1.0
    assert stats.mcnemar_exact(8, 0) == pytest.approx(2 / 2**8)
    assert stats.mcnemar_exact(3, 1) == pytest.approx(2 * (1 + 4) / 16)


def test_one_item_of_16_is_within_noise_and_a_large_difference_is_not():
    reference = [1] * 8 + [0] * 8
    one_more = [1] * 9 + [0] * 7  # a cell moves by 6.2 points
    small = stats.paired(one_more, reference)
    assert small.diff == pytest.approx(1 / 16) and small.within_noise and small.test == "mcnemar"
    assert small.low <= 0 <= small.high
    large = stats.paired([1] * 16, [1, 1, 1, 1] + [0] * 12)  # 12 items flipped, all one way
    assert not large.within_noise and large.p == pytest.approx(2 / 2**12) and large.low > 0


def test_continuous_differences_use_an_exact_sign_flip_test():
    reference = [0.1 * k for k in range(10)]
    shifted = [v + 0.5 for v in reference]  # every item moves the same way
    moved = stats.paired(shifted, reference)
    assert moved.test == "permutation" and moved.p == pytest.approx(2 / 2**10) and not moved.within_noise
    noisy = stats.paired([v + (0.5 if k % 2 else -0.5) for k, v in enumerate(reference)], reference)
    assert noisy.within_noise and abs(noisy.diff) < 1e-12


def test_a_monte_carlo_p_is_never_zero_and_says_its_draws():
    """Beyond 16 changed items the sign-flip test samples 20,000 patterns: p = (k + 1) / (n + 1), which a table
    shows with its draw count; exact enumeration says so."""
    reference = [0.1 * k for k in range(40)]
    moved = stats.paired([v + 0.5 for v in reference], reference)  # all 40 one way: no draw is as extreme
    assert moved.draws == stats.PERMUTATIONS and moved.p == pytest.approx(1 / (stats.PERMUTATIONS + 1))
    assert moved.test_text == "permutation p 5e-05 (20,000 draws)"
    few = stats.paired([v + 0.5 for v in reference[:10]], reference[:10])
    assert few.draws == 0 and few.test_text == "permutation p 0.00195 (exact)"


def test_estimates_carry_n_and_are_deterministic():
    values = [0.05, 0.1, 0.0, 0.3, 0.12, 0.08]
    first, second = stats.estimate(values), stats.estimate(values)
    assert first == second and first.n == 6 and first.low < first.value < first.high
    assert math.isclose(first.value, sum(values) / 6)
    proportion = stats.estimate([1, 0, 1, 1])
    assert (proportion.low, proportion.high) == stats.wilson(3, 4)
