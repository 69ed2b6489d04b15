"""Theorem 2 and Corollary 1: no unbiased token-wise rule rejects less than speculative decoding.

The class F: members of the generic Algorithm 2 whose acceptance ``b_n(x)`` and
rejection law ``P_n`` depend only on the prefix (and ``b_n`` on the draft token
``x``), and whose output law is the target's. Per position, given the prefix:

* any rule can be written ``b = min(1, (q + eps)/p)`` with ``eps = b p - q``
  (``epsilon_of``);
* unbiasedness forces ``eps <= 0``, i.e. ``b <= min(1, q/p)``, and then
  ``P = (q - b p) / sum_x (1 - b) p`` (Corollary 1, ``unbiased_rejection_law``);
* so the rejection probability is at least ``TV(p, q)`` (``rejection_lower_bound``),
  with equality exactly for the speculative rule.

*Sample and match* (emit the target's own draw, keep the draft when the two agree) is
exact, and it is F's member ``b = q`` in disguise: it keeps the draft with probability
``sum_x p q <= 1 - TV(p, q)`` (``sample_and_match``, ``sample_and_match_rule``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _lock
from ._i18n import _
from ._rng import RNGLike, as_generator, check_runs
from .chains import MarkovChain, _check_pair, sequence_law
from .laws import acceptance, check_pair, residual, tv
from .primitives import check_real, cumulative, sample_rows
from .tradeoff import _laws_and_accept, bias

#: Slack allowed above ``min(1, q/p)`` before a rule counts as over-accepting (rounding only).
ACCEPT_ATOL = 1e-12


def epsilon_of(p: Any, q: Any, accept: Any) -> np.ndarray:
    """The margin ``eps = b p - q`` with ``b = min(1, (q + eps)/p)`` wherever ``p > 0`` (the smallest such eps)."""
    p, q, b = _laws_and_accept(p, q, accept)
    return b * p - q


def rejection_lower_bound(p: Any, q: Any) -> np.ndarray:
    """Theorem 2 per position: every unbiased rule rejects with probability at least ``TV(p, q)``."""
    p, q = check_pair(p, q)
    return tv(p, q, check=False)


def rejection_excess(p: Any, q: Any, accept: Any) -> np.ndarray:
    """``P^A(reject) - TV(p, q) = sum_x (min(1, q/p) - b) p``; nonnegative for every unbiased rule."""
    p, q, b = _laws_and_accept(p, q, accept)
    return ((acceptance(p, q, check=False) - b) * p).sum(axis=-1)


@_lock.guarded("optimality.unbiased_rejection_law")
def unbiased_rejection_law(p: Any, q: Any, accept: Any) -> np.ndarray:
    """Corollary 1: the only rejection law making ``b`` unbiased, ``(q - b p) / sum_x (1 - b) p``.

    Requires ``b <= min(1, q/p)`` wherever ``p > 0`` (otherwise no law works, and we
    raise). If the rule never rejects (then ``p = q`` and ``b = 1`` on the support)
    any law works and we return ``q``.
    """
    p, q, b = _laws_and_accept(p, q, accept)
    over = (b - acceptance(p, q, check=False)) * (p > 0)
    if np.any(over > ACCEPT_ATOL):
        raise ValueError(
            _(
                "accept: b exceeds min(1, q/p) by up to {over_max:.3g}, so the rule over-accepts, and by Corollary 1 "
                "no rejection law makes it unbiased"
            ).format(over_max=over.max())
        )
    b = np.minimum(b, np.where(p > 0, acceptance(p, q, check=False), b))
    return residual(b * p, q, check=False)  # q - b p >= 0 here, so this is (q - b p) / sum_x (1 - b) p


def is_unbiased(p: Any, q: Any, accept: Any, rejection: Any, *, atol: float = 1e-9) -> np.ndarray:
    """True where the algorithm ``(b, P)`` outputs exactly ``q`` (``TV(P^A, q) <= atol``)."""
    atol = check_real(atol, "atol", low=0)
    return bias(p, q, accept, rejection) <= atol


def random_unbiased_member(
    p: Any, q: Any, rng: RNGLike = None, *, spread: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """A random member of F at one position: ``(b, P)`` built by Corollary 1.

    ``b = (1 - spread * u) * min(1, q/p)`` with ``u ~ Uniform(0, 1)`` per token,
    except that a quarter of the tokens keep the speculative value so the boundary
    is explored too; ``P = unbiased_rejection_law(p, q, b)``. Small ``spread`` gives
    members close to speculative decoding. Broadcasts over leading axes.
    """
    p, q = check_pair(p, q)
    spread = check_real(spread, "spread", low=0, high=1)
    gen = as_generator(rng)
    shape = np.broadcast_shapes(p.shape, q.shape)
    u = 1.0 - spread * gen.random(shape)
    u = np.where(gen.random(shape) < 0.25, 1.0, u)
    b = u * acceptance(np.broadcast_to(p, shape), np.broadcast_to(q, shape), check=False)
    return b, unbiased_rejection_law(p, q, b)


def random_unbiased_chain_member(
    draft: MarkovChain, target: MarkovChain, rng: RNGLike = None, *, spread: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """A random member of F on a chain: per position and previous token, ``(accept, rejection)`` tables.

    Both have shape ``(T, V, V)`` like ``chain.laws()``: ``accept[n, u, x]`` is the
    probability of accepting draft token ``x`` after ``u``; ``rejection[n, u]`` the
    rejection law there. Run it with ``biased.generic_speculative``.
    """
    _check_pair(draft, target)
    return random_unbiased_member(draft.laws(), target.laws(), rng, spread=spread)


# --- sample and match: emit the target's own draw, keep the draft when they agree --


def sample_and_match(p: Any, q: Any, runs: int, rng: RNGLike = None) -> tuple[np.ndarray, np.ndarray]:
    """One token by *sample and match*: draw ``x ~ p`` and ``y ~ q`` independently, emit ``y``.

    The draft ``x`` counts as accepted when ``x == y``, with probability ``sum_x p(x) q(x)``
    (``sample_and_match_acceptance``); otherwise the round would end there, a rejection.
    The emitted token is the target's own draw, so its law is ``q`` exactly. Returns
    ``(tokens, accepted)``, two arrays of length ``runs``.
    """
    p, q = check_pair(p, q)
    if p.ndim != 1:
        raise ValueError(
            _("p, q: one law each (a vector over the tokens), got shape {p_shape}").format(p_shape=p.shape)
        )
    runs, gen = check_runs(runs), as_generator(rng)
    x = sample_rows(cumulative(p)[None], np.zeros(runs, dtype=np.int64), gen.random(runs))
    y = sample_rows(cumulative(q)[None], np.zeros(runs, dtype=np.int64), gen.random(runs))
    return y, x == y


def sample_and_match_acceptance(p: Any, q: Any) -> np.ndarray:
    """``sum_x p(x) q(x)``: how often sample and match keeps the draft (at most ``1 - TV(p, q)``)."""
    p, q = check_pair(p, q)
    return (p * q).sum(axis=-1)


def sample_and_match_rule(p: Any, q: Any) -> tuple[np.ndarray, np.ndarray]:
    """Sample and match as a member ``(b, P)`` of F: ``b = q`` and Corollary 1's law ``q (1 - p) / (1 - sum p q)``.

    Both give the same joint law of (emitted token, rejection mark): ``p(y) q(y)`` for an
    accepted ``y`` and ``q(y) (1 - p(y))`` for a rejection that emits ``y``. So Theorem 2
    applies: it rejects with probability ``1 - sum p q >= TV(p, q)``. Broadcasts over
    leading axes (a chain's ``laws()``).
    """
    p, q = check_pair(p, q)
    b = np.broadcast_to(q, np.broadcast_shapes(p.shape, q.shape)).copy()
    return b, unbiased_rejection_law(p, q, b)


# --- the class boundary: deciding on the whole draft at once ---------------------


def prob_all_accepted_tokenwise(draft: MarkovChain, target: MarkovChain) -> float:
    """``P(N_rej = 0)`` under speculative decoding: ``sum_x prod_n min(p_n, q_n)(x_n | x_{n-1})``.

    The largest probability any member of F can have of keeping the whole draft,
    since every member has ``b_n p_n <= min(p_n, q_n)``. One forward pass.
    """
    _check_pair(draft, target)
    keep = np.minimum(draft.laws(), target.laws())  # (T, V, V)
    v = keep[0, 0]
    for n in range(1, target.T):
        v = v @ keep[n]
    return float(v.sum())


def prob_all_accepted_joint(draft: MarkovChain, target: MarkovChain, max_sequences: int = 2_000_000) -> float:
    """``1 - TV(p(x_{1:T}), q(x_{1:T}))``: keeping the whole draft by one joint test on the sequence.

    Accepting ``x~_{1:T}`` with probability ``min(1, q(x~)/p(x~))`` (a maximal coupling
    of the two sequence laws) is unbiased if rejections resample from the sequence
    residual. It is outside F (the test on token n looks at the whole block), and
    ``prod_n min(a_n, b_n) <= min(prod a_n, prod b_n)`` makes it keep the draft at
    least as often as ``prob_all_accepted_tokenwise``. Enumeration: small chains only.
    """
    _check_pair(draft, target, tables=False)
    return float(1.0 - tv(sequence_law(draft, max_sequences), sequence_law(target, max_sequences), check=False))
