"""``stats.z_bound_miss``: the exact chance that a right frequency fails a check's z-standard-error bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

from specdec_lite.exercises import bugs
from specdec_lite.stats import z_bound_miss


@pytest.mark.parametrize(("n", "x", "z"), [(40, 0.3, 1.0), (200, 0.01, 2.0), (4000, 0.99, 5.0), (4000, 0.5, 5.0)])
def test_z_bound_miss_sums_the_binomial_outside_the_check_bound(n, x, z):
    """The sum of P(X = k) over the counts k that the check's own rule rejects (Lab 9's draft-law check)."""
    k = np.arange(n + 1)
    rejected = np.abs(k / n - x) > z * np.sqrt(x * (1 - x) / n)
    log_pmf = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * math.log(x) + (n - i) * math.log1p(-x)
        for i in map(int, k[rejected])
    ]
    exact = math.fsum(math.exp(v) for v in log_pmf)
    assert z_bound_miss(n, x, z) == pytest.approx(exact, rel=1e-9, abs=1e-300)


def test_the_checks_bound_misses_more_than_the_normal_tail_for_rare_tokens():
    """At x = 0.01 with the check's 4000 runs the binomial is skewed: the exact miss exceeds the normal 5.7e-7."""
    assert z_bound_miss(4000, 0.01, bugs.Z) > 4 * math.erfc(bugs.Z / math.sqrt(2))


@pytest.mark.parametrize(
    ("n", "x", "z"), [(0, 0.5, 1.0), (10, 0.0, 1.0), (10, 1.0, 1.0), (10, 0.5, 0.0), (10, 0.5, math.nan)]
)
def test_z_bound_miss_refuses_bad_input(n, x, z):
    with pytest.raises(ValueError):
        z_bound_miss(n, x, z)
