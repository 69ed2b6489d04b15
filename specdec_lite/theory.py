"""Exact quantities of the paper: Theorem 1, and the public façade of the later chapters' exact results.

Theorem 1 (``rejection_profile``, ``expected_rejections``, ...) is computed here by
one forward pass over the target's marginals; the later chapters' results are
re-exported from ``batch``, ``lookahead`` and ``tradeoff``, and ``sequence_law``
from ``chains``. No module of the package imports this one: it sits on top of
them, so ``theory.expected_rejections_batch`` is ``batch.expected_rejections_batch``.

Counting convention: ``R_n = 1`` when position ``n`` was a rejection and
``N_rej = sum_n R_n`` (the paper's runtime). A round (one oracle call) starts at
position 1 and after every rejection *before* the last position, so
``oracle calls = 1 + sum_{n < T} R_n``, which lies in ``[N_rej, N_rej + 1]``.
"""

from __future__ import annotations

import numpy as np

from ._i18n import _
from .batch import (  # noqa: F401 (re-exported)
    batch_improvement,
    batch_rejection_limit,
    expected_rejections_batch,
    expected_rejections_tree,
)
from .chains import MarkovChain, _check_pair, check_sequences, sequence_law
from .laws import law_split, tv
from .lookahead import expected_oracle_calls_k, expected_rejections_k, lookahead_profile  # noqa: F401 (re-exported)
from .tradeoff import optimal_rejection_law, pareto_point, tv_loss  # noqa: F401 (re-exported)


def rejection_profile(draft: MarkovChain, target: MarkovChain) -> np.ndarray:
    """``E[R_n] = E_{x_{n-1} ~ q}[TV(p_n, q_n)(. | x_{n-1})]`` for each position, shape ``(T,)``.

    One O(T V^2) pass: the per-row TVs of every transition matrix, weighted by the
    target's marginal of the previous token.
    """
    _check_pair(draft, target)
    row_tv = tv(draft.laws(), target.laws(), check=False)  # (T, V): TV of the law after token u
    mu = target.marginals()
    profile = np.empty(target.T)
    profile[0] = row_tv[0, 0]
    profile[1:] = np.einsum("nu,nu->n", mu[:-1], row_tv[1:])
    return profile


def expected_rejections(draft: MarkovChain, target: MarkovChain) -> float:
    """Theorem 1(b): ``E[N_rej] = sum_n E_{x_{1:n-1} ~ q}[TV(p_n, q_n)]``."""
    return float(rejection_profile(draft, target).sum())


def expected_oracle_calls(draft: MarkovChain, target: MarkovChain) -> float:
    """``E[oracle calls] = 1 + sum_{n < T} E[R_n]`` (a rejection at the last position opens no round)."""
    return float(1.0 + rejection_profile(draft, target)[:-1].sum())


def speedup(draft: MarkovChain, target: MarkovChain) -> float:
    """Oracle-call speed-up over autoregressive decoding: ``T / E[oracle calls]``.

    Between 1 (disjoint supports: every position rejects) and T (``p == q``). The
    paper's ``T / E[N_rej]`` agrees up to the ``+1`` and is infinite when ``p == q``.
    """
    calls = expected_oracle_calls(draft, target)  # checks the chains
    return target.T / calls


def mean_acceptance(draft: MarkovChain, target: MarkovChain) -> float:
    """``alpha = 1 - (1/T) sum_n E[TV(p_n, q_n)]``: Theorem 1's profile as one i.i.d. acceptance rate.

    The rate that Leviathan et al.'s i.i.d. model (``lookahead.iid_speedup``) needs
    to stand in for the chain.
    """
    return 1.0 - float(rejection_profile(draft, target).mean())


def speculative_joint_law(draft: MarkovChain, target: MarkovChain, max_sequences: int = 2_000_000) -> np.ndarray:
    """Exact joint law of tokens *and* rejection marks under Algorithm 1.

    Given the previous token, position n outputs ``x`` unrejected with probability
    ``p(x) min(1, q(x)/p(x)) = min(p, q)(x)`` and ``x`` after a rejection with
    probability ``TV(p, q) [q - p]_+(x) = max(q - p, 0)(x)``; the two add up to
    ``q(x)``, which is Theorem 1(a) in one line. So ``(x_n, R_n)`` is itself a
    Markov chain on ``2V`` states ``2 x + r``, and this is its ``sequence_law``
    (index a run with ``stats.sequence_index(2 * tokens + rejected, 2 * V)``).
    """
    _check_pair(draft, target)
    check_sequences(2 * target.V, target.T, max_sequences, _("tokens and marks"), "(2V)")
    p, q = draft.laws(), target.laws()
    both = np.stack(law_split(p, q, check=False), axis=-1).reshape(target.T, target.V, 2 * target.V)
    trans = np.repeat(both[1:], 2, axis=1)  # rows (u, r) depend on u only
    return sequence_law(MarkovChain(both[0, 0], trans), max_sequences)
