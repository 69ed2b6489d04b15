"""One token, biased verification: the quality/speed trade-off (Theorems 4 and 5).

An algorithm ``A = (b, P)`` proposes ``x ~ p``, accepts it with probability
``b(x)``, and otherwise outputs a fresh token from the rejection law ``P``. So

* output law        ``P^A = b p + (sum_x (1 - b) p) P``;
* rejection probability ``1 - sum_x b(x) p(x)``;
* quality loss      ``Loss*_TV(b) = min_P TV(P^A, q) = sum_x max(0, b p - q)`` (Theorem 4).

Every function works on the last axis and broadcasts over leading axes (a stack
of laws, a transition matrix, a whole chain's ``laws()``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _lock, laws
from ._i18n import _
from .laws import REJECTION_LAWS, check_law, check_pair, residual, tv
from .primitives import as_real_array, describe


def check_rejection_law(kind: Any, name: str = "kind") -> str:
    """``kind`` after checking it names a rejection law of ``REJECTION_LAWS`` (``"opt"`` or ``"uno"``)."""
    if not isinstance(kind, str) or kind not in REJECTION_LAWS:
        raise ValueError(
            _("{name}: must be one of {REJECTION_LAWS}, got {describe_kind}").format(
                name=name, REJECTION_LAWS=REJECTION_LAWS, describe_kind=describe(kind)
            )
        )
    return kind


def check_accept(accept: Any, shape: tuple[int, ...], name: str = "accept") -> np.ndarray:
    """An acceptance rule ``b``: finite numbers in ``[0, 1]``, broadcastable to ``shape``."""
    b = as_real_array(accept, name)
    if b.ndim == 0 or b.shape[-1] != shape[-1]:
        raise ValueError(
            _("{name}: needs one probability per token (last axis {shape_1}), got shape {b_shape}").format(
                name=name, shape_1=shape[-1], b_shape=b.shape
            )
        )
    try:
        np.broadcast_shapes(b.shape, shape)
    except ValueError:
        raise ValueError(
            _("{name}: shape {b_shape} does not broadcast with the laws' shape {shape}").format(
                name=name, b_shape=b.shape, shape=shape
            )
        ) from None
    if not np.all(np.isfinite(b)):
        raise ValueError(_("{name}: contains NaN or inf").format(name=name))
    if np.any(b < 0) or np.any(b > 1):
        raise ValueError(
            _("{name}: probabilities must lie in [0, 1], got range [{b_min:.3g}, {b_max:.3g}]").format(
                name=name, b_min=b.min(), b_max=b.max()
            )
        )
    return b


def check_eps(eps: Any, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """The over-acceptance margin ``eps >= 0`` (a number, or one per token; not a bool or a string).

    With ``shape`` (the laws' shape) ``eps`` must also broadcast to it.
    """
    e = as_real_array(eps, "eps")
    if not np.all(np.isfinite(e)):
        raise ValueError(_("eps: contains NaN or inf"))
    if np.any(e < 0):
        raise ValueError(
            _("eps: must be >= 0 (eps < 0 under-accepts; see Theorem 2), got min {e_min:.3g}").format(e_min=e.min())
        )
    if shape is not None:
        try:
            np.broadcast_shapes(e.shape, shape)
        except ValueError:
            raise ValueError(
                _("eps: shape {e_shape} does not broadcast with the laws' shape {shape}").format(
                    e_shape=e.shape, shape=shape
                )
            ) from None
    return e


def _laws_and_accept(p: Any, q: Any, accept: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p, q = check_pair(p, q)
    b = check_accept(accept, np.broadcast_shapes(p.shape, q.shape))
    return p, q, b


def reject_probability(p: Any, accept: Any) -> np.ndarray:
    """``P^A(reject) = sum_x (1 - b(x)) p(x)``: the mass the rule sends to the rejection law."""
    p = check_law(p, "p")
    b = check_accept(accept, p.shape)
    return np.maximum(((1.0 - b) * p).sum(axis=-1), 0.0)


def output_law(p: Any, accept: Any, rejection: Any) -> np.ndarray:
    """``P^A = b p + (sum_x (1 - b) p) P`` for ``A = (b, P)`` with ``P = rejection``."""
    p = check_law(p, "p")
    P = check_law(rejection, "rejection")
    if P.shape[-1] != p.shape[-1]:
        raise ValueError(
            _("rejection: must be a law over the same {p_shape_1} tokens as p, got shape {P_shape}").format(
                p_shape_1=p.shape[-1], P_shape=P.shape
            )
        )
    b = check_accept(accept, np.broadcast_shapes(p.shape, P.shape))
    r = ((1.0 - b) * p).sum(axis=-1, keepdims=True)
    return b * p + r * P


def bias(p: Any, q: Any, accept: Any, rejection: Any) -> np.ndarray:
    """``TV(P^A, q)``: how far the algorithm ``(b, P)`` is from the target."""
    p, q = check_pair(p, q)
    return tv(output_law(p, accept, rejection), q, check=False)


@_lock.guarded("tradeoff.optimal_rejection_law")
def optimal_rejection_law(p: Any, q: Any, accept: Any) -> np.ndarray:
    """Theorem 4's optimal rejection law, canonical choice ``P* = [q - b p]_+`` (normalised).

    With ``A = (q - b p) / sum_x (1 - b) p`` (which sums to 1), the optimal laws are
    those with ``P = 0`` where ``A < 0`` and ``0 <= P <= A`` elsewhere. We return the
    positive part of ``A`` rescaled to sum to 1; it is optimal because that sum is at
    least 1. When ``b <= min(1, q/p)`` it *is* ``A`` (Corollary 1); for
    over-acceptance ``b = min(1, (q + eps)/p)`` it is the ordinary residual
    ``[q - p]_+``. If nothing is ever rejected (``sum (1 - b) p = 0``) every ``P`` is
    optimal and, like ``laws.residual``, we fall back to ``q`` when the positive part
    is rounding noise.
    """
    p, q, b = _laws_and_accept(p, q, accept)
    return residual(b * p, q, check=False)


@_lock.guarded("tradeoff.tv_loss")
def tv_loss(p: Any, q: Any, accept: Any) -> np.ndarray:
    """Theorem 4: ``Loss*_TV(b) = 1/2 sum|q - b p| - 1/2 sum (1 - b) p = sum_x max(0, b p - q)``."""
    p, q, b = _laws_and_accept(p, q, accept)
    return np.maximum(b * p - q, 0.0).sum(axis=-1)


def pareto_point(p: Any, q: Any, accept: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(P^A(reject), Loss*_TV(b))``: where the rule ``b`` with its best ``P`` sits in the plane.

    Theorem 5: for ``min(1, q/p) <= b <= 1`` the two add up to ``TV(p, q)``.
    """
    p, q, b = _laws_and_accept(p, q, accept)
    return reject_probability(p, b), tv_loss(p, q, b)


@_lock.guarded("tradeoff.over_accept")
def over_accept(p: Any, q: Any, eps: Any) -> np.ndarray:
    """Over-acceptance ``b(x) = min(1, (q(x) + eps)/p(x))`` with ``eps >= 0``, after checking ``p``, ``q``, ``eps``.

    ``eps = 0`` is speculative decoding; ``eps >= max(p - q)`` accepts everything.
    Where ``p(x) = 0`` the token is never proposed and we return 1 (``laws.over_accept``).
    """
    p, q = check_pair(p, q)
    return laws.over_accept(p, q, check_eps(eps, np.broadcast_shapes(np.shape(p), np.shape(q))))


def rejection_law(p: Any, q: Any, kind: str) -> np.ndarray:
    """The rejection law of Decoding-OPT (``"opt"``: ``[q - p]_+``) or Decoding-UNO (``"uno"``: ``q``), checked."""
    kind = check_rejection_law(kind)
    p, q = check_pair(p, q)
    return laws.rejection_law(p, q, kind)


def over_accept_point(p: Any, q: Any, eps: Any, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """``(P^A(reject), TV(P^A, q))`` of over-acceptance with margin ``eps`` and rejection law ``kind``.

    For ``kind = "opt"`` the second number equals ``tv_loss`` (Decoding-OPT attains
    Theorem 4's optimum); for ``"uno"`` it is never smaller.
    """
    kind = check_rejection_law(kind)
    b = over_accept(p, q, eps)
    P = rejection_law(p, q, kind)
    return reject_probability(p, b), bias(p, q, b, P)
