"""The bottom floor every sampler shares: the result type, row sampling and Algorithm 1's verify step.

Nothing here knows about chains or chapters; ``laws`` (the formulas on laws) and
``_rng`` (the ``rng`` argument) sit beside it. Every module above imports from
here, never the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


def check_int(value: Any, name: str, *, low: int = 1, high: int | None = None, what: str = "") -> int:
    """``value`` as an ``int`` after checking it is an integer (not a bool) in ``[low, high]``.

    The error names the argument: ``"{name}: {what}must be an integer >= {low}, got ..."``.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < low
        or (high is not None and value > high)
    ):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name}: {what}must be an integer {bound}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class DecodeResult:
    """Output of a decoding engine for ``runs`` independent runs.

    ``tokens`` (runs, T): the generated sequences. ``rejected`` (runs, T): ``R_n``.
    ``oracle_calls`` (runs,): target evaluations (each scores a whole block).
    """

    tokens: np.ndarray
    rejected: np.ndarray
    oracle_calls: np.ndarray

    @property
    def rejections(self) -> np.ndarray:
        """``N_rej`` per run."""
        return self.rejected.sum(axis=1)

    @property
    def runs(self) -> int:
        return self.tokens.shape[0]


def token_dtype(V: int) -> type:
    """The smallest integer type the samplers store tokens of a ``V``-token vocabulary in."""
    return np.int16 if V <= np.iinfo(np.int16).max else np.int32


def cumulative(laws: np.ndarray) -> np.ndarray:
    """Row-wise CDF scaled to end at exactly 1 (so zero-probability tokens are never drawn)."""
    cdf = np.cumsum(laws, axis=-1)
    return cdf / cdf[..., -1:]


def sample_rows(cdf: np.ndarray, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draw of one token per run from the law ``cdf[rows[i]]``.

    ``cdf`` has shape (V, V) with each row ending at exactly 1. Offsetting row ``u``
    by ``u`` makes the flattened array increasing, so one ``searchsorted`` serves
    every run at once: O(runs log V^2) instead of O(runs V).
    """
    V = cdf.shape[-1]
    flat = (cdf + np.arange(cdf.shape[0])[:, None]).ravel()
    idx = np.searchsorted(flat, rows + u, side="right") - rows * V
    return np.minimum(idx, V - 1)


def draft_and_test(
    gen: np.random.Generator, cdf_p: np.ndarray, accept: np.ndarray, prev: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Draw a draft token ``x ~ p(. | prev)`` per run and test it: rejected where ``U >= b(x | prev)``.

    ``cdf_p`` is the draft's CDF table ``(V, V)`` and ``accept`` the rule's table ``b``
    ``(V, V)`` at this position; uses two uniforms per run. Returns ``(x, rejected)``.
    """
    x = sample_rows(cdf_p, prev, gen.random(prev.shape[0]))
    rejected = gen.random(prev.shape[0]) >= accept[prev, x]
    return x, rejected


def verify_step(
    gen: np.random.Generator, cdf_p: np.ndarray, accept: np.ndarray, cdf_rejection: np.ndarray, prev: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """One position of Algorithm 1 (or Algorithm 2 with any rule ``(b, P)``) for every run.

    Draw ``x ~ p(. | prev)``, keep it with probability ``b(x | prev)``, else replace
    it by a draw from the rejection law ``P(. | prev)`` (``[q - p]_+`` for Algorithm 1)
    whose CDF table is ``cdf_rejection``. Returns ``(x, rejected)``.
    """
    x, rejected = draft_and_test(gen, cdf_p, accept, prev)
    if rejected.any():
        x[rejected] = sample_rows(cdf_rejection, prev[rejected], gen.random(int(rejected.sum())))
    return x, rejected
