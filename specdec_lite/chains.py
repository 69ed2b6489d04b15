"""First-order, non-stationary Markov chains: the book's model of a language model.

A chain over a vocabulary of ``V`` tokens and horizon ``T`` is

* ``init``  shape ``(V,)``: the law of the first token ``x_1``;
* ``trans`` shape ``(T-1, V, V)``: row ``u`` of ``trans[t]`` is the law of token
  ``x_{t+2}`` given ``x_{t+1} = u`` (0-based: ``trans[n-1]`` drives position ``n``).

So ``p_n(. | x_{1:n-1}) = p_n(. | x_{n-1})``: the prefix matters only through its
last token, which is what lets the book compute everything exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._rng import RNGLike, as_generator
from .laws import check_law


@dataclass(frozen=True, eq=False)
class MarkovChain:
    """A non-stationary first-order chain ``(init, trans)``; see the module docstring."""

    init: np.ndarray
    trans: np.ndarray

    def __init__(self, init: Any, trans: Any):
        init = check_law(init, "init")
        if init.ndim != 1:
            raise ValueError(f"init: must have shape (V,), got {init.shape}")
        V = init.shape[0]
        trans = np.asarray(trans, dtype=np.float64)
        if trans.ndim != 3 or trans.shape[1:] != (V, V):
            raise ValueError(f"trans: must have shape (T-1, V, V) = (T-1, {V}, {V}), got {trans.shape}")
        trans = check_law(trans, "trans")
        for name, arr in (("init", init), ("trans", trans)):
            arr = arr.copy()
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)

    @property
    def V(self) -> int:
        """Vocabulary size."""
        return self.init.shape[0]

    @property
    def T(self) -> int:
        """Horizon: number of tokens generated."""
        return self.trans.shape[0] + 1

    def conditional(self, n: int, prev: Any = None) -> np.ndarray:
        """Law of token ``n`` (0-based) given the previous token(s) ``prev``.

        ``n = 0`` ignores ``prev`` and returns ``init`` (broadcast to ``prev``'s shape
        when one is given); otherwise returns ``trans[n-1][prev]``.
        """
        if not 0 <= n < self.T:
            raise ValueError(f"n: position must be in [0, {self.T}), got {n}")
        if n == 0:
            if prev is None:
                return self.init
            return np.broadcast_to(self.init, np.shape(prev) + (self.V,))
        if prev is None:
            raise ValueError("prev: positions n >= 1 need the previous token")
        return self.trans[n - 1][prev]

    def laws(self) -> np.ndarray:
        """All conditional laws as one ``(T, V, V)`` array (row ``u`` at ``n = 0`` is ``init``)."""
        first = np.broadcast_to(self.init, (1, self.V, self.V))
        return np.concatenate([first, self.trans], axis=0)

    def marginals(self) -> np.ndarray:
        """``(T, V)`` array of the marginal laws of ``x_1, ..., x_T``: ``mu_{n+1} = mu_n trans[n]``."""
        mu = np.empty((self.T, self.V))
        mu[0] = self.init
        for n in range(1, self.T):
            mu[n] = mu[n - 1] @ self.trans[n - 1]
        return mu

    def log_prob(self, tokens: Any) -> np.ndarray:
        """Log-probability of each sequence in ``tokens`` (shape ``(..., T)``)."""
        tokens = np.asarray(tokens)
        if tokens.shape[-1] != self.T:
            raise ValueError(f"tokens: last axis must be T = {self.T}, got {tokens.shape}")
        with np.errstate(divide="ignore"):
            lp = np.log(self.init[tokens[..., 0]])
            for n in range(1, self.T):
                lp = lp + np.log(self.trans[n - 1][tokens[..., n - 1], tokens[..., n]])
        return lp

    # --- constructors ---------------------------------------------------------

    @classmethod
    def random(
        cls,
        V: int,
        T: int,
        rng: RNGLike = None,
        *,
        concentration: float = 1.0,
        uniform_init: bool = True,
    ) -> MarkovChain:
        """A random chain: every row of every ``trans[t]`` drawn from Dirichlet(concentration).

        ``uniform_init`` (the paper's choice) makes the first token uniform; otherwise
        it is Dirichlet too. Small ``concentration`` gives peaked, LM-like rows.
        """
        V, T = _check_size(V, "V"), _check_size(T, "T")
        if not concentration > 0:
            raise ValueError(f"concentration: must be > 0, got {concentration}")
        gen = as_generator(rng)
        alpha = np.full(V, float(concentration))
        init = np.full(V, 1.0 / V) if uniform_init else gen.dirichlet(alpha)
        trans = gen.dirichlet(alpha, size=(T - 1, V))
        return cls(init, trans)

    def mix(self, other: MarkovChain, weight: float) -> MarkovChain:
        """Row-wise mixture ``(1 - weight) * self + weight * other`` (same V and T)."""
        _check_pair(self, other, "self", "other")
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"weight: must be in [0, 1], got {weight}")
        return MarkovChain(
            (1 - weight) * self.init + weight * other.init,
            (1 - weight) * self.trans + weight * other.trans,
        )

    def with_temperature(self, temperature: float) -> MarkovChain:
        """Every law raised to the power ``1/temperature`` and renormalised.

        ``temperature < 1`` sharpens, ``> 1`` flattens; zeros stay zeros.
        """
        if not temperature > 0:
            raise ValueError(f"temperature: must be > 0, got {temperature}")

        def temper(x: np.ndarray) -> np.ndarray:
            with np.errstate(divide="ignore"):
                logx = np.log(x) / temperature
            logx = logx - logx.max(axis=-1, keepdims=True)
            w = np.exp(logx)
            return w / w.sum(axis=-1, keepdims=True)

        return MarkovChain(temper(self.init), temper(self.trans))

    def __repr__(self) -> str:
        return f"MarkovChain(V={self.V}, T={self.T})"


def draft_for(target: MarkovChain, quality: float, rng: RNGLike = None, **random_kw: Any) -> MarkovChain:
    """A draft whose closeness to ``target`` is one knob, ``quality`` in [0, 1].

    The draft is ``quality * target + (1 - quality) * other`` with ``other`` a random
    chain (``MarkovChain.random(V, T, rng, **random_kw)``): ``quality = 1`` is the
    target itself, ``quality = 0`` an unrelated chain. Every per-position TV shrinks
    linearly: ``TV(p_n, q_n) = (1 - quality) * TV(other_n, q_n)``.
    """
    if not 0.0 <= quality <= 1.0:
        raise ValueError(f"quality: must be in [0, 1], got {quality}")
    other = MarkovChain.random(target.V, target.T, rng, **random_kw)
    return target.mix(other, 1.0 - quality)


def _check_size(x: Any, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1:
        raise ValueError(f"{name}: must be an integer >= 1, got {x!r}")
    return int(x)


def _check_pair(draft: MarkovChain, target: MarkovChain, a: str = "draft", b: str = "target") -> None:
    for name, c in ((a, draft), (b, target)):
        if not isinstance(c, MarkovChain):
            raise ValueError(f"{name}: expected a MarkovChain, got {type(c).__name__}")
    if (draft.V, draft.T) != (target.V, target.T):
        raise ValueError(
            f"{a} and {b} must share V and T: {a} has V={draft.V}, T={draft.T}; "
            f"{b} has V={target.V}, T={target.T}"
        )
