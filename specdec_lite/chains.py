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

from . import _lock
from ._i18n import _
from ._rng import RNGLike, as_generator
from .laws import check_law
from .primitives import as_real_array, check_flag, check_int, check_real, describe

#: The most cells ``MarkovChain.laws()`` builds (``T V^2``; 2^26 float64 cells are 512 MiB). Every chain
#: algorithm works on that table and a few like it; a one-token chain (``T = 1``) would make a ``V x V``
#: table of identical rows, so for a large vocabulary use the functions on laws directly.
MAX_LAW_CELLS = 2**26


@dataclass(frozen=True, eq=False)
class MarkovChain:
    """A non-stationary first-order chain ``(init, trans)``; see the module docstring."""

    init: np.ndarray
    trans: np.ndarray

    def __init__(self, init: Any, trans: Any):
        init = check_law(init, "init")
        if init.ndim != 1:
            raise ValueError(_("init: must have shape (V,), got {init_shape}").format(init_shape=init.shape))
        V = init.shape[0]
        shape = np.shape(as_real_array(trans, "trans"))
        if len(shape) != 3 or shape[1:] != (V, V):
            raise ValueError(
                _("trans: must have shape (T-1, V, V) = (T-1, {V}, {V}), got {trans_shape}").format(
                    V=V, trans_shape=shape
                )
            )
        # Checked in its own dtype (a float16 table is held to float16's tolerance), then stored in float64.
        trans = check_law(trans, "trans")
        for name, arr in (("init", init), ("trans", trans)):
            object.__setattr__(self, name, _normalised(arr))

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
        n = check_int(n, "n", low=0, high=self.T - 1, what="position ")
        if prev is not None:
            prev = self._check_tokens(prev, "prev")
        if n == 0:
            if prev is None:
                return self.init
            return np.broadcast_to(self.init, np.shape(prev) + (self.V,))
        if prev is None:
            raise ValueError(_("prev: positions n >= 1 need the previous token"))
        return self.trans[n - 1][prev]

    def _check_tokens(self, tokens: Any, name: str) -> Any:
        """``tokens`` as an integer array of token ids in ``[0, V)`` (negative ids would wrap)."""
        if isinstance(tokens, (int, np.integer)) and not isinstance(tokens, bool) and 0 <= tokens < self.V:
            return tokens  # the reference loops' one token: the quick path
        try:
            arr = np.asarray(tokens)
        except ValueError:  # ragged nested sequences
            raise ValueError(
                _("{name}: token ids must be an integer array, got {describe_tokens}").format(
                    name=name, describe_tokens=describe(tokens)
                )
            ) from None
        if arr.dtype.kind not in "iu":
            raise ValueError(
                _("{name}: token ids must be integers, got dtype {arr_dtype}").format(name=name, arr_dtype=arr.dtype)
            )
        if arr.size and (arr.min() < 0 or arr.max() >= self.V):
            raise ValueError(
                _("{name}: token ids must lie in [0, {V}), got range [{arr_min}, {arr_max}]").format(
                    name=name, V=self.V, arr_min=arr.min(), arr_max=arr.max()
                )
            )
        return arr

    def laws(self) -> np.ndarray:
        """All conditional laws as one ``(T, V, V)`` array (row ``u`` at ``n = 0`` is ``init``).

        Refuses tables of more than ``MAX_LAW_CELLS`` cells before building them.
        """
        _check_table(self, "chain")
        first = np.broadcast_to(self.init, (1, self.V, self.V))
        return np.concatenate([first, self.trans], axis=0)

    @_lock.guarded("MarkovChain.marginals")
    def marginals(self) -> np.ndarray:
        """``(T, V)`` array of the marginal laws of ``x_1, ..., x_T``: ``mu_{n+1} = mu_n trans[n]``."""
        mu = np.empty((self.T, self.V))
        mu[0] = self.init
        for n in range(1, self.T):
            mu[n] = mu[n - 1] @ self.trans[n - 1]
        return mu

    def log_prob(self, tokens: Any) -> np.ndarray:
        """Log-probability of each sequence in ``tokens`` (shape ``(..., T)``)."""
        tokens = self._check_tokens(tokens, "tokens")
        if tokens.ndim == 0 or tokens.shape[-1] != self.T:
            raise ValueError(
                _("tokens: last axis must be T = {T}, got {tokens_shape}").format(T=self.T, tokens_shape=tokens.shape)
            )
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
        concentration = check_real(concentration, "concentration", low=0, open_low=True)
        uniform_init = check_flag(uniform_init, "uniform_init")
        gen = as_generator(rng)
        alpha = np.full(V, concentration)
        init = np.full(V, 1.0 / V) if uniform_init else gen.dirichlet(alpha)
        trans = gen.dirichlet(alpha, size=(T - 1, V))
        return cls(init, trans)

    def mix(self, other: MarkovChain, weight: float) -> MarkovChain:
        """Row-wise mixture ``(1 - weight) * self + weight * other`` (same V and T)."""
        _check_pair(self, other, "self", "other", tables=False)
        weight = check_real(weight, "weight", low=0, high=1)
        return MarkovChain(
            (1 - weight) * self.init + weight * other.init,
            (1 - weight) * self.trans + weight * other.trans,
        )

    def with_temperature(self, temperature: float) -> MarkovChain:
        """Every law raised to the power ``1/temperature`` and renormalised.

        ``temperature < 1`` sharpens, ``> 1`` flattens; zeros stay zeros.
        """
        temperature = check_real(temperature, "temperature", low=0, open_low=True)

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
    _check_chain(target, "target", tables=False)
    quality = check_real(quality, "quality", low=0, high=1)
    other = MarkovChain.random(target.V, target.T, rng, **random_kw)
    return target.mix(other, 1.0 - quality)


def seeded_pair(V: int, T: int, quality: float, seed: int) -> tuple[MarkovChain, MarkovChain, np.random.SeedSequence]:
    """The book's ``(draft, target, mc_seed)`` triple: a random target and ``draft_for(target, quality)``.

    Three independent streams come from one ``seed``: the target, the draft's random
    part, and the Monte Carlo runs, so changing ``quality`` keeps the same two chains.
    """
    V, T = _check_size(V, "V"), _check_size(T, "T")
    quality = check_real(quality, "quality", low=0, high=1)
    seed = check_int(seed, "seed", low=0)
    s_target, s_draft, s_mc = np.random.SeedSequence(seed).spawn(3)
    target = MarkovChain.random(V, T, rng=np.random.default_rng(s_target))
    draft = draft_for(target, quality, rng=np.random.default_rng(s_draft))
    return draft, target, s_mc


def one_token(p: Any, q: Any) -> tuple[MarkovChain, MarkovChain]:
    """The draft and target of a single token (``T = 1``) whose laws are ``p`` and ``q`` (one vocabulary).

    Building them is cheap; the chain algorithms then work on ``V x V`` tables (see
    ``MAX_LAW_CELLS``).
    """
    checked = check_law(p, "p"), check_law(q, "q")
    for name, x in zip("pq", checked, strict=True):
        if x.ndim != 1:
            raise ValueError(
                _("{name}: must be one law of shape (V,), got shape {x_shape}").format(name=name, x_shape=x.shape)
            )
    V, W = checked[0].size, checked[1].size
    if V != W:
        raise ValueError(
            _("p and q must share the vocabulary: p has V = {p_size}, q has V = {q_size}").format(p_size=V, q_size=W)
        )
    # The chains check p and q again in their own dtype (a float16 law keeps float16's tolerance).
    return MarkovChain(p, np.empty((0, V, V))), MarkovChain(q, np.empty((0, V, V)))


def _normalised(law: np.ndarray) -> np.ndarray:
    """``law`` with each row divided by its total: the one law a sampler both draws from and tests against.

    A law accepted within its dtype's rounding (``laws.sum_tolerance``) may sum to ``1 + 2^-23``;
    the draw divides by the total (``primitives.cumulative``), so ``min(1, q/p)`` must read the
    same quotient, or a draft of ``p(x) = 1 + 2^-23`` would be rejected where ``q(x) = 1``.
    A row whose total is 1 to float64's rounding (within ``V`` ulps) stays as it is: dividing
    again would only move its last bits (division is not idempotent in floating point), and a
    draft built from a target's rows, ``p == q``, must stay equal to it.
    """
    if not law.size:
        out = law.copy()
    else:
        total = law.sum(axis=-1, keepdims=True)
        exact = np.abs(total - 1.0) <= law.shape[-1] * np.finfo(np.float64).eps
        out = np.where(exact, law, law / total)
    out.flags.writeable = False
    return out


def _check_size(x: Any, name: str) -> int:
    return check_int(x, name)


@_lock.guarded("chains.sequence_law")
def sequence_law(chain: MarkovChain, max_sequences: int = 2_000_000) -> np.ndarray:
    """Exact probability of all ``V^T`` sequences, flattened in row-major token order.

    Index of ``x_{1:T}`` is ``sum_n x_n V^(T-1-n)`` (``np.ravel_multi_index``, or
    ``stats.sequence_index``). For tests and small illustrations only; refuses more
    than ``max_sequences`` cells.
    """
    _check_chain(chain, "chain", tables=False)
    check_sequences(chain.V, chain.T, max_sequences)
    law = chain.init.copy()
    for n in range(1, chain.T):
        law = (law.reshape(-1, chain.V)[:, :, None] * chain.trans[n - 1][None]).reshape(-1)
    return law


def check_sequences(V: int, T: int, max_sequences: Any, name: str = "chain", states: str = "V") -> int:
    """Refuse, before anything is built, an enumeration of more than ``max_sequences`` sequences (``V^T`` of them).

    ``states`` names the state count in the message (``"2V"`` for tokens with their
    rejection marks). Returns ``max_sequences`` checked as an integer >= 1.
    """
    max_sequences = check_int(max_sequences, "max_sequences")
    if V**T > max_sequences:
        raise ValueError(
            _("{name}: {states}^T = {V}^{T} sequences is more than max_sequences={max_sequences}").format(
                name=name, states=states, V=V, T=T, max_sequences=max_sequences
            )
        )
    return max_sequences


def _check_table(chain: MarkovChain, name: str) -> None:
    """Refuse a chain whose ``(T, V, V)`` table of laws has more than ``MAX_LAW_CELLS`` cells."""
    cells = chain.T * chain.V**2
    if cells > MAX_LAW_CELLS:
        raise ValueError(
            _(
                "{name}: its (T, V, V) = ({chain_T}, {chain_V}, {chain_V}) table of laws has "
                "{cells:,} cells ({cells_8_2_30:.1f} GiB), more than chains.MAX_LAW_CELLS = "
                "{MAX_LAW_CELLS:,}; the chain algorithms hold several such tables. For one token use "
                "the functions on laws (laws.tv, tradeoff, batch.batch_improvement), or raise "
                "chains.MAX_LAW_CELLS"
            ).format(
                name=name,
                chain_T=chain.T,
                chain_V=chain.V,
                cells=cells,
                cells_8_2_30=cells * 8 / 2**30,
                MAX_LAW_CELLS=MAX_LAW_CELLS,
            )
        )


def _check_chain(chain: Any, name: str, *, tables: bool = True) -> MarkovChain:
    """``chain`` after checking it is a ``MarkovChain`` (and, with ``tables``, that ``laws()`` may be built)."""
    if not isinstance(chain, MarkovChain):
        raise ValueError(
            _("{name}: expected a MarkovChain, got {describe_chain}").format(name=name, describe_chain=describe(chain))
        )
    if tables:
        _check_table(chain, name)
    return chain


def _check_pair(
    draft: MarkovChain, target: MarkovChain, a: str = "draft", b: str = "target", *, tables: bool = True
) -> None:
    for name, c in ((a, draft), (b, target)):
        _check_chain(c, name, tables=tables)
    if (draft.V, draft.T) != (target.V, target.T):
        raise ValueError(
            _(
                "{a} and {b} must share V and T: {a} has V={draft_V}, T={draft_T}; {b} has V={target_V}, T={target_T}"
            ).format(a=a, b=b, draft_V=draft.V, draft_T=draft.T, target_V=target.V, target_T=target.T)
        )


def prefix_average(rows: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Per-position ``E_{x_{n-1} ~ mu_{n-1}}[rows_n(x_{n-1})]``, shape ``(T,)``.

    ``rows`` (T, V) holds a quantity per position and previous token (row 0's first
    entry is used at ``n = 0``, which has no previous token, as in ``laws()``); ``mu``
    (T, V) the marginals of the chain that produced the prefix (``theory.rejection_profile``
    spells this pass out for Theorem 1's ``TV(p_n, q_n)``).
    """
    rows, mu = as_real_array(rows, "rows"), as_real_array(mu, "mu")
    if rows.ndim != 2 or rows.shape != mu.shape:
        raise ValueError(
            _("rows and mu: must both have shape (T, V), got {rows_shape} and {mu_shape}").format(
                rows_shape=rows.shape, mu_shape=mu.shape
            )
        )
    profile = np.empty(rows.shape[0])
    profile[0] = rows[0, 0]
    profile[1:] = np.einsum("nu,nu->n", mu[:-1], rows[1:])
    return profile
