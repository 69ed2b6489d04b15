"""Decoding engines on Markov chains, vectorised over Monte Carlo runs: the samplers' public façade.

Algorithm 3 (``autoregressive``) and Algorithm 1 (``speculative``) live here; the
later chapters' samplers are re-exported (``batch_speculative``, ``tree_speculative``,
``biased_speculative``, ``speculative_k``), as are the shared pieces from
``primitives`` (``DecodeResult``, ``sample_rows``, ``cumulative``). No module of the
package imports this one: it sits on top of them.

Why one loop over positions suffices for speculative decoding with lookahead to
the end (Algorithm 1, K = infinity): inside a round every earlier token was
accepted, so the draft token at position n is always drawn from
``p_n(. | x_{n-1})`` with ``x_{n-1}`` the *output* token, and draft tokens after a
rejection are thrown away. Drafting the whole block first (as ``reference`` does)
or token by token therefore gives the same joint law of tokens and rejections,
and all runs advance together, one position at a time.
"""

from __future__ import annotations

import numpy as np

from . import _lock
from ._rng import RNGLike, as_generator, check_runs
from .batch import batch_speculative, tree_speculative  # noqa: F401 (façade)
from .biased import biased_speculative  # noqa: F401 (façade)
from .chains import MarkovChain, _check_chain, _check_pair
from .laws import acceptance, residual
from .lookahead import LookaheadResult, speculative_k  # noqa: F401 (façade)
from .primitives import DecodeResult, cumulative, sample_rows, token_dtype, verify_step


def autoregressive(target: MarkovChain, runs: int, rng: RNGLike = None) -> DecodeResult:
    """Algorithm 3: sample ``x_n ~ q_n(. | x_{n-1})`` for n = 1..T; T oracle calls per run."""
    _check_chain(target, "target")
    runs, gen = check_runs(runs), as_generator(rng)
    laws = target.laws()
    tokens = np.empty((runs, target.T), dtype=token_dtype(target.V))
    prev = np.zeros(runs, dtype=np.int64)
    for n in range(target.T):
        prev = sample_rows(cumulative(laws[n]), prev, gen.random(runs))
        tokens[:, n] = prev
    return DecodeResult(tokens, np.zeros(tokens.shape, bool), np.full(runs, target.T))


@_lock.guarded("decoding.speculative")
def speculative(draft: MarkovChain, target: MarkovChain, runs: int, rng: RNGLike = None) -> DecodeResult:
    """Algorithm 1 (speculative decoding, lookahead to the end), all runs at once.

    At each position: draw ``x~ ~ p_n``, accept with probability ``min(1, q_n/p_n)``,
    else draw from the residual ``[q_n - p_n]_+`` and mark a rejection (``verify_step``).
    """
    _check_pair(draft, target)
    runs, gen = check_runs(runs), as_generator(rng)
    p_laws, q_laws = draft.laws(), target.laws()
    T = target.T
    tokens = np.empty((runs, T), dtype=token_dtype(target.V))
    rejected = np.zeros((runs, T), dtype=bool)
    prev = np.zeros(runs, dtype=np.int64)
    for n in range(T):
        p, q = p_laws[n], q_laws[n]  # checked laws: no check per position
        accept, cdf_residual = acceptance(p, q, check=False), cumulative(residual(p, q, check=False))
        x, rej = verify_step(gen, cumulative(p), accept, cdf_residual, prev)
        tokens[:, n], rejected[:, n] = x, rej
        prev = x
    oracle_calls = 1 + rejected[:, :-1].sum(axis=1)
    return DecodeResult(tokens, rejected, oracle_calls)
