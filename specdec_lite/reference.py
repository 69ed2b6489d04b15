"""The readable reference: Algorithm 1 for one run, exactly as the book states it.

Slow on purpose (a Python loop over rounds and positions); the vectorised engine
in ``decoding`` is tested against it and the benchmark times one against the other.
"""

from __future__ import annotations

import numpy as np

from . import _lock
from ._rng import RNGLike, as_generator, check_generator, check_runs
from .chains import MarkovChain, _check_pair
from .laws import residual
from .primitives import DecodeResult


@_lock.guarded("reference.speculative_one")
def speculative_one(draft: MarkovChain, target: MarkovChain, gen: np.random.Generator):
    """One run of speculative decoding; returns (tokens, rejected flags, oracle calls)."""
    _check_pair(draft, target)
    check_generator(gen)
    T, V = target.T, target.V
    tokens, rejected = [], []
    oracle_calls = 0
    while len(tokens) < T:
        n0 = len(tokens)
        # Draft the rest of the sequence from p, continuing from the accepted prefix.
        drafts = []
        prev = tokens[-1] if tokens else None
        for n in range(n0, T):
            p_n = draft.conditional(n, prev)
            prev = int(gen.choice(V, p=p_n))
            drafts.append(prev)
        oracle_calls += 1  # one target call scores every drafted position
        # Verify left to right; stop at the first rejection.
        prev = tokens[-1] if tokens else None
        for n, x in enumerate(drafts, start=n0):
            p_n, q_n = draft.conditional(n, prev), target.conditional(n, prev)
            if gen.random() < min(1.0, q_n[x] / p_n[x]):
                tokens.append(x)
                rejected.append(False)
                prev = x
            else:
                tokens.append(int(gen.choice(V, p=residual(p_n, q_n, check=False))))
                rejected.append(True)
                break
    return np.array(tokens), np.array(rejected), oracle_calls


@_lock.guarded("reference.speculative")
def speculative(draft: MarkovChain, target: MarkovChain, runs: int, rng: RNGLike = None) -> DecodeResult:
    """``runs`` independent runs of ``speculative_one``, collected like the vectorised engine."""
    _check_pair(draft, target)
    runs, gen = check_runs(runs), as_generator(rng)
    out = [speculative_one(draft, target, gen) for _ in range(runs)]
    tokens = np.stack([o[0] for o in out])
    rejected = np.stack([o[1] for o in out])
    calls = np.array([o[2] for o in out])
    return DecodeResult(tokens, rejected, calls)
