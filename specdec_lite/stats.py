"""Small statistics the tests, benchmarks and labs share: standard errors and goodness of fit.

Inputs are checked: every bad argument (NaN or inf, negative counts, booleans or
strings where numbers belong, mismatched shapes) raises ``ValueError`` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._i18n import _
from .laws import _numbers, check_law
from .primitives import check_int

#: Largest number of sequences ``sequence_index`` can index: indices ``0 .. V**T - 1`` must fit int64.
MAX_SEQUENCES = 2**63


def _sample(x: Any, name: str) -> np.ndarray:
    """``x`` flattened to float64 after checking it holds finite numbers (booleans count as 0/1 indicators)."""
    arr = _numbers(x, name, kinds="biuf").astype(np.float64).ravel()
    if not np.all(np.isfinite(arr)):
        raise ValueError(_("{name}: contains NaN or inf").format(name=name))
    return arr


def mean_and_se(x: Any) -> tuple[float, float]:
    """Sample mean of ``x`` and its standard error ``s / sqrt(n)`` (``s`` with ``n - 1`` degrees of freedom)."""
    x = _sample(x, "x")
    if x.size < 2:
        raise ValueError(_("x: need at least 2 samples for a standard error, got {x_size}").format(x_size=x.size))
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size))


def running_mean(x: Any) -> tuple[np.ndarray, np.ndarray]:
    """Running mean of ``x`` and its running standard error (both of length ``len(x)``; se[0] = 0)."""
    x = _sample(x, "x")
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


def _counts(counts: Any) -> np.ndarray:
    """``counts`` as float64 whole numbers after checking they are finite, nonnegative, integral, not all 0."""
    raw = _numbers(counts, "counts")
    if raw.ndim == 0:
        raise ValueError(_("counts: expected an array of counts per cell, got a scalar {raw!r}").format(raw=raw))
    arr = raw.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(_("counts: contains NaN or inf"))
    if np.any(arr < 0):
        raise ValueError(_("counts: has negative entries (min {arr_min:.6g})").format(arr_min=arr.min()))
    whole = np.round(arr)
    off = np.abs(arr - whole) > 1e-9 * np.maximum(whole, 1.0)  # frequency * runs may miss an integer by rounding
    if np.any(off):
        raise ValueError(
            _("counts: must be whole numbers, got {float_arr_off_0!r}").format(float_arr_off_0=float(arr[off][0]))
        )
    arr = whole
    if raw.dtype.kind in "iu" and raw.size and int(raw.max()) > 2**53:
        raise ValueError(
            _("counts: {int_raw_max} exceeds 2**53, beyond exact float64 arithmetic").format(int_raw_max=int(raw.max()))
        )
    if arr.sum() == 0:
        raise ValueError(_("counts: all zero; there is nothing to test"))
    return arr


def chi_square(counts: Any, probs: Any, *, min_expected: float = 5.0) -> GoodnessOfFit:
    """Pearson chi-square goodness of fit of ``counts`` against the exact law ``probs``.

    ``sum_cells (O - E)^2 / E`` with ``E = n probs``, ``n = sum counts``, on ``cells - 1``
    degrees of freedom. ``counts`` must be nonnegative whole numbers, not all 0 (a float
    within ``1e-9`` relative of a whole number, e.g. ``freq * runs``, is rounded to it),
    and ``probs`` a law (finite, nonnegative, summing to 1 within ``laws.sum_tolerance``)
    of the same shape; both are flattened. Cells with expected count below
    ``min_expected`` are pooled into one (the usual validity condition of the
    chi-square approximation). Observations in a cell of probability 0 give
    ``pvalue = 0``: an impossible outcome is never noise.
    """
    counts = _counts(counts)
    raw = _numbers(probs, "probs")
    if raw.shape != counts.shape:
        raise ValueError(
            _("counts and probs must have the same shape, got {counts_shape} and {raw_shape}").format(
                counts_shape=counts.shape, raw_shape=raw.shape
            )
        )
    probs = check_law(raw.ravel(), "probs")
    counts = counts.ravel()
    if (
        isinstance(min_expected, bool)
        or not isinstance(min_expected, (int, float, np.integer, np.floating))
        or not (0 <= min_expected < np.inf)
    ):
        raise ValueError(
            _("min_expected: must be a finite real number >= 0, got {min_expected!r}").format(min_expected=min_expected)
        )
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
    # scipy.stats.chi2.sf is this function of scipy.special (the same float); scipy.stats itself takes most of a
    # second to import, which every graded kernel would pay, so only scipy.special is imported, when first needed
    from scipy.special import chdtrc

    return GoodnessOfFit(stat, dof, float(chdtrc(dof, stat)), int(obs.size))


def sequence_index(tokens: Any, V: int) -> np.ndarray:
    """Row-major index ``sum_t tokens[..., t] V^(T-1-t)`` of each sequence (last axis, length ``T``), as int64.

    Matches ``theory.sequence_law``. ``tokens`` must be integers in ``[0, V)``; when the
    ``V**T`` sequences do not fit an int64 index (``V**T > 2**63``) it raises
    ``ValueError`` rather than wrap around: no table of that many cells exists to count into.
    """
    V = check_int(V, "V", low=1)
    t = _numbers(tokens, "tokens", kinds="iu")
    if t.ndim == 0:
        raise ValueError(_("tokens: expected sequences on the last axis (runs, T), got a scalar {t!r}").format(t=t))
    T = t.shape[-1]
    if V**T > MAX_SEQUENCES:
        raise ValueError(
            _("tokens: V**T = {V}**{T} sequences do not fit an int64 index (at most 2**63)").format(V=V, T=T)
        )
    if t.size and (int(t.min()) < 0 or int(t.max()) >= V):
        raise ValueError(
            _("tokens: ids must lie in [0, {V}), got min {int_t_min} and max {int_t_max}").format(
                V=V, int_t_min=int(t.min()), int_t_max=int(t.max())
            )
        )
    weights = np.array([V**k for k in range(T - 1, -1, -1)], dtype=np.int64)
    return t.astype(np.int64) @ weights


def z_bound_miss(n: int, x: float, z: float) -> float:
    """``P(|X - n x| > z sqrt(n x (1 - x)))`` for ``X ~ Binomial(n, x)``, exactly.

    How often a right frequency of ``n`` draws fails a check that accepts it within ``z`` standard errors.
    """
    n = check_int(n, "n")
    if not (0.0 < x < 1.0):
        raise ValueError(_("x: must lie in (0, 1), got {x!r}").format(x=x))
    if not (np.isfinite(z) and z > 0):
        raise ValueError(_("z: must be a positive number, got {z!r}").format(z=z))
    from scipy import stats as _st

    half = z * np.sqrt(n * x * (1 - x))
    return float(_st.binom.cdf(np.ceil(n * x - half) - 1, n, x) + _st.binom.sf(np.floor(n * x + half), n, x))
