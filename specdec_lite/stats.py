"""Small statistics the tests, benchmarks and labs share: standard errors and goodness of fit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as _st


def mean_and_se(x: Any) -> tuple[float, float]:
    """Sample mean of ``x`` and its standard error ``s / sqrt(n)``."""
    x = np.asarray(x, dtype=np.float64).ravel()
    if x.size < 2:
        raise ValueError(f"x: need at least 2 samples for a standard error, got {x.size}")
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size))


def running_mean(x: Any) -> tuple[np.ndarray, np.ndarray]:
    """Running mean of ``x`` and its running standard error (both of length ``len(x)``; se[0] = 0)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    n = np.arange(1, x.size + 1)
    mean = np.cumsum(x) / n
    sq = np.cumsum(x * x) / n
    var = np.maximum(sq - mean**2, 0.0) * n / np.maximum(n - 1, 1)
    return mean, np.sqrt(var / n)


@dataclass(frozen=True)
class GoodnessOfFit:
    """Pearson chi-square test of observed counts against an exact law."""

    statistic: float
    dof: int
    pvalue: float
    cells: int


def chi_square(counts: Any, probs: Any, *, min_expected: float = 5.0) -> GoodnessOfFit:
    """Chi-square goodness of fit of ``counts`` against the exact law ``probs``.

    Cells with expected count below ``min_expected`` are pooled into one (the usual
    validity condition of the chi-square approximation). Observations in a cell of
    probability 0 give ``pvalue = 0``: an impossible outcome is never noise.
    """
    counts = np.asarray(counts, dtype=np.float64).ravel()
    probs = np.asarray(probs, dtype=np.float64).ravel()
    if counts.shape != probs.shape:
        raise ValueError(f"counts and probs must have the same size, got {counts.size} and {probs.size}")
    n = counts.sum()
    if np.any(counts[probs <= 0] > 0):
        return GoodnessOfFit(np.inf, 0, 0.0, int(counts.size))
    expected = n * probs
    small = expected < min_expected
    obs = np.append(counts[~small], counts[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    keep = exp > 0
    obs, exp = obs[keep], exp[keep]
    dof = obs.size - 1
    if dof < 1:
        return GoodnessOfFit(0.0, 0, 1.0, int(obs.size))
    stat = float(((obs - exp) ** 2 / exp).sum())
    return GoodnessOfFit(stat, dof, float(_st.chi2.sf(stat, dof)), int(obs.size))


def sequence_index(tokens: Any, V: int) -> np.ndarray:
    """Row-major index of each sequence in ``tokens`` (runs, T), matching ``theory.sequence_law``."""
    tokens = np.asarray(tokens, dtype=np.int64)
    weights = V ** np.arange(tokens.shape[-1] - 1, -1, -1, dtype=np.int64)
    return tokens @ weights
