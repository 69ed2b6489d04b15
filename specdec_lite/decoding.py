"""Decoding engines on Markov chains, vectorised over Monte Carlo runs.

Why one loop over positions suffices for speculative decoding with lookahead to
the end (Algorithm 1, K = infinity): inside a round every earlier token was
accepted, so the draft token at position n is always drawn from
``p_n(. | x_{n-1})`` with ``x_{n-1}`` the *output* token, and draft tokens after a
rejection are thrown away. Drafting the whole block first (as ``reference`` does)
or token by token therefore gives the same joint law of tokens and rejections,
and all runs advance together, one position at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._rng import RNGLike, as_generator, check_runs
from .chains import MarkovChain, _check_pair
from .laws import acceptance, residual


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


def cumulative(laws: np.ndarray) -> np.ndarray:
    """Row-wise CDF scaled to end at exactly 1 (so zero-probability tokens are never drawn)."""
    cdf = np.cumsum(laws, axis=-1)
    return cdf / cdf[..., -1:]


def _token_dtype(V: int) -> type:
    return np.int16 if V <= np.iinfo(np.int16).max else np.int32


def autoregressive(target: MarkovChain, runs: int, rng: RNGLike = None) -> DecodeResult:
    """Algorithm 3: sample ``x_n ~ q_n(. | x_{n-1})`` for n = 1..T; T oracle calls per run."""
    runs, gen = check_runs(runs), as_generator(rng)
    laws = target.laws()
    tokens = np.empty((runs, target.T), dtype=_token_dtype(target.V))
    prev = np.zeros(runs, dtype=np.int64)
    for n in range(target.T):
        prev = sample_rows(cumulative(laws[n]), prev, gen.random(runs))
        tokens[:, n] = prev
    return DecodeResult(tokens, np.zeros(tokens.shape, bool), np.full(runs, target.T))


def speculative(draft: MarkovChain, target: MarkovChain, runs: int, rng: RNGLike = None) -> DecodeResult:
    """Algorithm 1 (speculative decoding, lookahead to the end), all runs at once.

    At each position: draw ``x~ ~ p_n``, accept with probability ``min(1, q_n/p_n)``,
    else draw from the residual ``[q_n - p_n]_+`` and mark a rejection.
    """
    _check_pair(draft, target)
    runs, gen = check_runs(runs), as_generator(rng)
    p_laws, q_laws = draft.laws(), target.laws()
    T = target.T
    tokens = np.empty((runs, T), dtype=_token_dtype(target.V))
    rejected = np.zeros((runs, T), dtype=bool)
    prev = np.zeros(runs, dtype=np.int64)
    for n in range(T):
        p, q = p_laws[n], q_laws[n]
        x = sample_rows(cumulative(p), prev, gen.random(runs))
        rej = gen.random(runs) >= acceptance(p, q)[prev, x]
        if rej.any():
            x[rej] = sample_rows(cumulative(residual(p, q)), prev[rej], gen.random(int(rej.sum())))
        tokens[:, n], rejected[:, n] = x, rej
        prev = x
    oracle_calls = 1 + rejected[:, :-1].sum(axis=1)
    return DecodeResult(tokens, rejected, oracle_calls)

from .batch import batch_speculative, tree_speculative  # noqa: E402, F401
from .biased import biased_speculative  # noqa: E402, F401
from .lookahead import LookaheadResult, speculative_k  # noqa: E402, F401
