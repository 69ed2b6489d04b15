"""Readable references for batch decoding: Algorithm 4 and the draft tree, one run at a time.

Slow on purpose: every round really drafts ``M`` full sequences, and the tree keeps
the list of drafts whose prefix matches what was accepted. The vectorised engines
in ``batch`` are tested against these.
"""

from __future__ import annotations

import numpy as np

from . import _lock
from ._rng import RNGLike, as_generator, check_generator, check_runs
from .batch import _check_M
from .chains import MarkovChain, _check_pair
from .laws import residual
from .primitives import DecodeResult


def _draft(draft: MarkovChain, n0: int, prev: int | None, gen: np.random.Generator) -> list[int]:
    """One draft of positions ``n0..T-1`` from ``p``, continuing after token ``prev``."""
    out = []
    for n in range(n0, draft.T):
        prev = int(gen.choice(draft.V, p=draft.conditional(n, prev)))
        out.append(prev)
    return out


def _cascade(candidates: list[int], p: np.ndarray, q: np.ndarray, gen: np.random.Generator) -> tuple[int, int | None]:
    """Try the candidate tokens in order against ``q^1 = q, q^{m+1} = [q^m - p]_+``.

    Returns ``(token, m)`` with ``m`` the index of the accepted candidate, or
    ``(token from q^{k+1}, None)`` when all ``k`` were rejected.
    """
    qm = q
    for m, x in enumerate(candidates):
        if gen.random() < min(1.0, qm[x] / p[x]):
            return x, m
        qm = residual(p, qm, check=False)  # the chains are checked laws
    return int(gen.choice(len(q), p=qm)), None


@_lock.guarded("batch_reference.batch_one")
def batch_one(draft: MarkovChain, target: MarkovChain, M: int, gen: np.random.Generator):
    """One run of Algorithm 4; returns (tokens, rejected flags, oracle calls)."""
    _check_pair(draft, target)
    M, gen = _check_M(M), check_generator(gen)
    T = target.T
    tokens, rejected = [], []
    oracle_calls = 0
    while len(tokens) < T:
        n0 = len(tokens)
        prev = tokens[-1] if tokens else None
        drafts = [_draft(draft, n0, prev, gen) for _ in range(M)]
        oracle_calls += 1  # one call scores every position of every draft
        # First position: the cascade over the M drafts' first tokens.
        p_n, q_n = draft.conditional(n0, prev), target.conditional(n0, prev)
        x, m = _cascade([d[0] for d in drafts], p_n, q_n, gen)
        tokens.append(x)
        rejected.append(m is None)
        if m is None:
            continue
        # Only the accepted draft continues, with the plain rule against q.
        for n, x in enumerate(drafts[m][1:], start=n0 + 1):
            prev = tokens[-1]
            x, hit = _cascade([x], draft.conditional(n, prev), target.conditional(n, prev), gen)
            tokens.append(x)
            rejected.append(hit is None)
            if hit is None:
                break
    return np.array(tokens), np.array(rejected), oracle_calls


@_lock.guarded("batch_reference.tree_one")
def tree_one(draft: MarkovChain, target: MarkovChain, M: int, gen: np.random.Generator):
    """One run of the draft tree; returns (tokens, rejected flags, oracle calls)."""
    _check_pair(draft, target)
    M, gen = _check_M(M), check_generator(gen)
    T = target.T
    tokens, rejected = [], []
    oracle_calls = 0
    while len(tokens) < T:
        n0 = len(tokens)
        prev = tokens[-1] if tokens else None
        alive = [_draft(draft, n0, prev, gen) for _ in range(M)]
        oracle_calls += 1
        for n in range(n0, T):
            prev = tokens[-1] if tokens else None
            j = n - n0  # index of position n inside each draft
            x, m = _cascade([d[j] for d in alive], draft.conditional(n, prev), target.conditional(n, prev), gen)
            tokens.append(x)
            rejected.append(m is None)
            if m is None:
                break
            # Keep every draft whose prefix still equals the accepted prefix.
            alive = [d for d in alive if d[j] == x]
    return np.array(tokens), np.array(rejected), oracle_calls


def _collect(one, draft: MarkovChain, target: MarkovChain, M: int, runs: int, rng: RNGLike) -> DecodeResult:
    _check_pair(draft, target)
    M, runs, gen = _check_M(M), check_runs(runs), as_generator(rng)
    out = [one(draft, target, M, gen) for _ in range(runs)]
    return DecodeResult(np.stack([o[0] for o in out]), np.stack([o[1] for o in out]), np.array([o[2] for o in out]))


@_lock.guarded("batch_reference.batch_speculative")
def batch_speculative(draft: MarkovChain, target: MarkovChain, M: int, runs: int, rng: RNGLike = None) -> DecodeResult:
    """``runs`` independent runs of ``batch_one``."""
    return _collect(batch_one, draft, target, M, runs, rng)


@_lock.guarded("batch_reference.tree_speculative")
def tree_speculative(draft: MarkovChain, target: MarkovChain, M: int, runs: int, rng: RNGLike = None) -> DecodeResult:
    """``runs`` independent runs of ``tree_one``."""
    return _collect(tree_one, draft, target, M, runs, rng)
