"""The readable reference for finite lookahead: one run of Chapter 7's algorithm, round by round.

Slow on purpose (Python loops over rounds and positions). It drafts each block
first and then verifies it, exactly as the chapter states the algorithm; the
vectorised ``lookahead.speculative_k`` is tested against it.
"""

from __future__ import annotations

import numpy as np

from . import _lock
from ._rng import RNGLike, as_generator, check_generator, check_runs
from .chains import MarkovChain, _check_pair
from .laws import residual
from .lookahead import LookaheadResult, check_lookahead


@_lock.guarded("lookahead_reference.speculative_k_one")
def speculative_k_one(draft: MarkovChain, target: MarkovChain, K: int, gen: np.random.Generator):
    """One run; returns (tokens, rejected flags, bonus flags, oracle calls, draft calls)."""
    _check_pair(draft, target)
    K, gen = check_lookahead(K), check_generator(gen)
    T, V = target.T, target.V
    tokens: list[int] = []
    rejected: list[bool] = []
    bonus: list[bool] = []
    oracle_calls = draft_calls = 0
    while len(tokens) < T:
        n0 = len(tokens)
        k = min(K, T - n0)
        # Draft k tokens from p, continuing from the accepted prefix.
        drafts, prev = [], (tokens[-1] if tokens else None)
        for n in range(n0, n0 + k):
            prev = int(gen.choice(V, p=draft.conditional(n, prev)))
            drafts.append(prev)
        draft_calls += k
        oracle_calls += 1  # one target call scores the k drafts and the position after them
        prev = tokens[-1] if tokens else None
        for n, x in enumerate(drafts, start=n0):
            p_n, q_n = draft.conditional(n, prev), target.conditional(n, prev)
            if gen.random() < min(1.0, q_n[x] / p_n[x]):
                tokens.append(x)
                rejected.append(False)
                bonus.append(False)
                prev = x
            else:
                tokens.append(int(gen.choice(V, p=residual(p_n, q_n, check=False))))
                rejected.append(True)
                bonus.append(False)
                break
        else:
            if len(tokens) < T:  # every draft accepted: the target's law at the next position is free
                tokens.append(int(gen.choice(V, p=target.conditional(len(tokens), prev))))
                rejected.append(False)
                bonus.append(True)
    return np.array(tokens), np.array(rejected), np.array(bonus), oracle_calls, draft_calls


@_lock.guarded("lookahead_reference.speculative_k")
def speculative_k(draft: MarkovChain, target: MarkovChain, K: int, runs: int, rng: RNGLike = None) -> LookaheadResult:
    """``runs`` independent runs of ``speculative_k_one``, collected like the vectorised engine."""
    _check_pair(draft, target)
    K, runs, gen = check_lookahead(K), check_runs(runs), as_generator(rng)
    out = [speculative_k_one(draft, target, K, gen) for _ in range(runs)]
    return LookaheadResult(
        np.stack([o[0] for o in out]),
        np.stack([o[1] for o in out]),
        np.array([o[3] for o in out]),
        np.stack([o[2] for o in out]),
        np.array([o[4] for o in out]),
        K,
    )
