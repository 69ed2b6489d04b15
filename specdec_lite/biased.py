"""Token-wise verification with any rule ``(b_n, P_n)`` on chains: samplers and exact laws.

A rule is given as two tables shaped like ``chain.laws()``, ``(T, V, V)``:
``accept[n, u, x]`` is the probability of accepting draft token ``x`` at position
``n`` after token ``u``, and ``rejection[n, u]`` the law sampled on a rejection
there (row ``u`` is ignored at ``n = 0``, as in ``laws()``).

Exact facts used here (the book's sequence-level analysis, beyond the paper's
single token): given the previous output token, position ``n`` outputs ``x``
unrejected with probability ``b p (x)`` and after a rejection with probability
``r P(x)``, ``r = sum (1 - b) p``. So the output is again a first-order chain with
transitions ``b p + r P`` (``output_chain``), and ``E[R_n]`` is ``r`` averaged over
the *output* chain's marginal of the previous token (``rejection_profile_of``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._i18n import _
from ._rng import RNGLike, as_generator, check_runs
from .chains import MarkovChain, _check_chain, _check_pair, prefix_average, sequence_law
from .laws import check_law, tv
from .primitives import DecodeResult, as_real_array, cumulative, token_dtype, verify_step
from .tradeoff import check_accept, check_eps, check_rejection_law, over_accept, rejection_law


def check_rule(draft: MarkovChain, accept: Any, rejection: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``(accept, rejection)`` tables of shape ``(T, V, V)`` for ``draft``."""
    _check_chain(draft, "draft")
    shape = (draft.T, draft.V, draft.V)
    accept, rejection = as_real_array(accept, "accept"), as_real_array(rejection, "rejection")
    for name, arr in (("accept", accept), ("rejection", rejection)):
        if arr.shape != shape:
            raise ValueError(
                _("{name}: must have shape (T, V, V) = {shape}, got {arr_shape}").format(
                    name=name, shape=shape, arr_shape=arr.shape
                )
            )
    return check_accept(accept, shape), check_law(rejection, "rejection")


def over_accept_rule(
    draft: MarkovChain, target: MarkovChain, eps: Any, rejection_law_name: str
) -> tuple[np.ndarray, np.ndarray]:
    """The tables of over-acceptance ``b = min(1, (q + eps)/p)`` with Decoding-OPT or -UNO's law.

    ``eps`` is a scalar ``>= 0`` or an array broadcastable to ``(T, V, V)`` (a margin per
    position, previous token and draft token).
    """
    _check_pair(draft, target)
    check_rejection_law(rejection_law_name, "rejection_law")
    e = check_eps(eps)
    shape = (target.T, target.V, target.V)
    try:
        np.broadcast_shapes(e.shape, shape)
    except ValueError:
        raise ValueError(
            _("eps: shape {e_shape} does not broadcast to (T, V, V) = {shape}").format(e_shape=e.shape, shape=shape)
        ) from None
    p, q = draft.laws(), target.laws()
    return np.broadcast_to(over_accept(p, q, e), shape).copy(), rejection_law(p, q, rejection_law_name)


def generic_speculative(
    draft: MarkovChain, accept: Any, rejection: Any, runs: int, rng: RNGLike = None
) -> DecodeResult:
    """Algorithm 2 with lookahead to the end, all runs at once, for the rule ``(accept, rejection)``.

    At each position: draw ``x ~ p_n(. | x_{n-1})``, keep it with probability
    ``accept[n, x_{n-1}, x]``, else draw from ``rejection[n, x_{n-1}]`` and mark a
    rejection (``primitives.verify_step``; the same one-loop-over-positions argument as
    ``decoding.speculative``).
    """
    b, P = check_rule(draft, accept, rejection)
    runs, gen = check_runs(runs), as_generator(rng)
    p_laws = draft.laws()
    T = draft.T
    tokens = np.empty((runs, T), dtype=token_dtype(draft.V))
    rejected = np.zeros((runs, T), dtype=bool)
    prev = np.zeros(runs, dtype=np.int64)
    for n in range(T):
        x, rej = verify_step(gen, cumulative(p_laws[n]), b[n], cumulative(P[n]), prev)
        tokens[:, n], rejected[:, n] = x, rej
        prev = x
    return DecodeResult(tokens, rejected, 1 + rejected[:, :-1].sum(axis=1))


def biased_speculative(
    draft: MarkovChain, target: MarkovChain, eps: Any, rejection_law: str, runs: int, rng: RNGLike = None
) -> DecodeResult:
    """Over-acceptance on chains: accept with ``min(1, (q_n + eps)/p_n)``, reject to OPT or UNO's law.

    ``rejection_law = "opt"`` samples ``[q_n - p_n]_+`` (Decoding-OPT, Theorem 4's
    optimum), ``"uno"`` samples ``q_n`` (Decoding-UNO). ``eps = 0`` with ``"opt"`` is
    speculative decoding.
    """
    b, P = over_accept_rule(draft, target, eps, rejection_law)
    return generic_speculative(draft, b, P, runs, rng)


# --- exact sequence-level quantities ------------------------------------------


def output_chain(draft: MarkovChain, accept: Any, rejection: Any) -> MarkovChain:
    """The chain the rule outputs: transitions ``b p + (sum (1 - b) p) P`` per previous token."""
    b, P = check_rule(draft, accept, rejection)
    p = draft.laws()
    r = ((1.0 - b) * p).sum(axis=-1, keepdims=True)
    out = b * p + r * P
    out = out / out.sum(axis=-1, keepdims=True)  # rounding only
    return MarkovChain(out[0, 0], out[1:])


def rejection_profile_of(draft: MarkovChain, accept: Any, rejection: Any) -> np.ndarray:
    """``E[R_n]`` for each position: ``sum (1 - b_n) p_n`` averaged over the output chain's previous token."""
    b, _ = check_rule(draft, accept, rejection)
    row_r = np.maximum(((1.0 - b) * draft.laws()).sum(axis=-1), 0.0)  # (T, V)
    return prefix_average(row_r, output_chain(draft, accept, rejection).marginals())


def joint_chain(draft: MarkovChain, accept: Any, rejection: Any) -> MarkovChain:
    """Tokens and rejection marks together: a chain on ``2V`` states ``2 x + r`` (as ``speculative_joint_law``)."""
    b, P = check_rule(draft, accept, rejection)
    p = draft.laws()
    r = ((1.0 - b) * p).sum(axis=-1, keepdims=True)
    both = np.stack([b * p, r * P], axis=-1).reshape(draft.T, draft.V, 2 * draft.V)
    both = both / both.sum(axis=-1, keepdims=True)
    return MarkovChain(both[0, 0], np.repeat(both[1:], 2, axis=1))


def biased_output_chain(draft: MarkovChain, target: MarkovChain, eps: Any, rejection_law: str) -> MarkovChain:
    """The exact output chain of ``biased_speculative`` (it is again first order)."""
    return output_chain(draft, *over_accept_rule(draft, target, eps, rejection_law))


def biased_rejection_profile(draft: MarkovChain, target: MarkovChain, eps: Any, rejection_law: str) -> np.ndarray:
    """Exact ``E[R_n]`` of ``biased_speculative`` per position (a forward pass over its output chain)."""
    return rejection_profile_of(draft, *over_accept_rule(draft, target, eps, rejection_law))


def biased_expected_rejections(draft: MarkovChain, target: MarkovChain, eps: Any, rejection_law: str) -> float:
    """Exact ``E[N_rej]`` of ``biased_speculative``."""
    return float(biased_rejection_profile(draft, target, eps, rejection_law).sum())


def sequence_tv(a: MarkovChain, b: MarkovChain, max_sequences: int = 2_000_000) -> float:
    """``TV`` between the laws of whole sequences ``x_{1:T}`` of two chains, by enumeration (small chains only)."""
    _check_pair(a, b, "a", "b", tables=False)
    return float(tv(sequence_law(a, max_sequences), sequence_law(b, max_sequences), check=False))


def biased_sequence_tv(draft: MarkovChain, target: MarkovChain, eps: Any, rejection_law: str) -> float:
    """Exact sequence-level ``TV`` of ``biased_speculative``'s output to the target (enumeration)."""
    return sequence_tv(biased_output_chain(draft, target, eps, rejection_law), target)


def loss_profile(out: MarkovChain, target: MarkovChain) -> np.ndarray:
    """Per-position bias ``E_{x_{n-1} ~ out}[TV(out_n, q_n)]``; its sum bounds ``sequence_tv(out, target)``.

    The bound is the hybrid argument: swap one position's law at a time from the
    output chain's to the target's; each swap moves the sequence law by exactly this
    much in TV, and the triangle inequality adds them up.
    """
    _check_pair(out, target, "out", "target")
    return prefix_average(tv(out.laws(), target.laws(), check=False), out.marginals())


def chain_front_point(draft: MarkovChain, target: MarkovChain, eps: Any, rejection_law: str) -> tuple[float, float]:
    """The single-token trade-off summed over a chain, prefixes weighted by the *target*.

    Returns ``(sum_n E_{x_{n-1} ~ q}[P^A_n(reject)], sum_n E_{x_{n-1} ~ q}[TV(P^A_n, q_n)])``:
    Theorem 5 applied position by position and added up. For Decoding-OPT the two
    add up to Theorem 1's ``sum_n E_q[TV(p_n, q_n)]`` for every ``eps``; UNO lies above.
    """
    b, P = over_accept_rule(draft, target, eps, rejection_law)
    p, q = draft.laws(), target.laws()
    r = np.maximum(((1.0 - b) * p).sum(axis=-1), 0.0)  # (T, V)
    loss = tv(b * p + r[..., None] * P, q, check=False)
    mu = target.marginals()
    return float(prefix_average(r, mu).sum()), float(prefix_average(loss, mu).sum())


def sequence_point(draft: MarkovChain, target: MarkovChain, eps: Any, rejection_law: str) -> tuple[float, float]:
    """``(E[N_rej], TV(output sequence law, target sequence law))``, both exact (the second by enumeration)."""
    return (
        biased_expected_rejections(draft, target, eps, rejection_law),
        biased_sequence_tv(draft, target, eps, rejection_law),
    )
