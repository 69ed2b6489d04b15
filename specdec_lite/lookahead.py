"""Finite lookahead K and a draft that is not free: rounds, rejections and wall-clock.

The model (one round = one oracle call). A round that starts at position ``n0``
drafts ``k = min(K, T - n0)`` tokens from ``p`` and scores them with one target
call, which also yields ``q`` at position ``n0 + k``. Verification is Algorithm 1's:
accept ``x~_t`` with probability ``min(1, q_t/p_t)``; the first rejection draws
from ``[q_t - p_t]_+`` and ends the round. If all ``k`` drafts are accepted and
``n0 + K < T``, a **bonus** token is sampled from ``q`` at position ``n0 + K`` and the
round ends after it. So a round emits between 1 and ``K + 1`` tokens; ``K = 0`` is
autoregressive decoding (every round is a bonus token) and ``K >= T`` is the
paper's K = infinity (no bonus ever).

Counting: ``R_n = 1`` marks a rejection (bonus tokens are never rejections);
oracle calls = rounds; draft calls = drafted tokens (a rejected round still paid
for all its ``k`` drafts). Wall-clock model: a target call costs 1 whatever the
block length, a draft call costs ``c``, so a round costs ``k c + 1`` and
speculative decoding takes ``E[oracle calls] + c E[draft calls]`` against ``T``
for autoregressive decoding.

Exact values on first-order chains come from one forward pass over the states
``(x_{n-1}, j_n)``, ``j_n`` = the index of position ``n`` inside its round
(``j_n = 0``: a round starts at ``n``; ``j_n = K``: ``n`` is a bonus position).
Given the previous token ``u``, a drafted position emits ``x`` accepted with
probability ``min(p, q)(x | u)`` (then ``j -> j + 1``) and ``x`` after a rejection
with probability ``max(q - p, 0)(x | u)`` (then ``j -> 0``); a bonus position emits
``x ~ q(. | u)`` and resets ``j``. Each step costs O(K V^2).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _lock
from ._i18n import _
from ._rng import RNGLike, as_generator, check_runs
from .chains import MarkovChain, _check_pair, check_sequences, sequence_law
from .laws import acceptance, law_split, residual
from .primitives import (
    DecodeResult,
    as_real_array,
    check_int,
    check_ints,
    check_real,
    check_reals,
    cumulative,
    sample_rows,
    token_dtype,
    verify_step,
)

# --- validation -----------------------------------------------------------------


def check_lookahead(K: Any, name: str = "K") -> int:
    """``K`` must be an integer >= 0 (``K = 0`` is autoregressive decoding)."""
    return check_int(K, name, low=0, what="lookahead ")


def check_cost(c: Any, name: str = "c") -> float:
    """``c`` (cost of one draft call in target calls) must be a finite number >= 0 (not a bool or a string)."""
    return check_real(c, name, low=0, what=_("cost ratio "))


def check_alpha(alpha: Any, name: str = "alpha") -> np.ndarray:
    """Acceptance rate(s) in [0, 1]: a number or an array of numbers."""
    return check_reals(alpha, name, low=0, high=1, what=_("acceptance rate "))


def _check_rate(alpha: Any, name: str = "alpha") -> float:
    """One acceptance rate in [0, 1]."""
    return check_real(alpha, name, low=0, high=1, what=_("acceptance rate "))


# --- exact values on chains -------------------------------------------------------


@dataclass(frozen=True)
class LookaheadProfile:
    """Exact per-position expectations for lookahead ``K`` (arrays of shape ``(T,)``).

    ``rejection[n] = P(R_n = 1)``, ``round_start[n] = P(a round starts at n)``,
    ``bonus[n] = P(n is a bonus token)``, ``draft_calls[n]`` = expected tokens drafted
    by a round starting at ``n`` (``round_start[n] * min(K, T - n)``).
    """

    K: int
    rejection: np.ndarray
    round_start: np.ndarray
    bonus: np.ndarray
    draft_calls: np.ndarray

    @property
    def T(self) -> int:
        return self.rejection.shape[0]

    @property
    def expected_rejections(self) -> float:
        return float(self.rejection.sum())

    @property
    def expected_oracle_calls(self) -> float:
        return float(self.round_start.sum())

    @property
    def expected_draft_calls(self) -> float:
        return float(self.draft_calls.sum())

    def expected_time(self, c: float) -> float:
        """``E[oracle calls] + c E[draft calls]``, in target-call units."""
        return self.expected_oracle_calls + check_cost(c) * self.expected_draft_calls

    def speedup(self, c: float) -> float:
        """Wall-clock speed-up over autoregressive decoding: ``T / E[time]``."""
        return self.T / self.expected_time(c)


def lookahead_profiles(draft: MarkovChain, target: MarkovChain, Ks: Iterable[int]) -> list[LookaheadProfile]:
    """:class:`LookaheadProfile` for every lookahead in ``Ks``, in one vectorised forward pass.

    ``pi[k, u, j]`` is ``P(x_{n-1} = u, j_n = j)`` under lookahead ``Ks[k]``; ``j`` never
    exceeds ``n <= T - 1``, so lookaheads beyond ``T - 1`` share the same states.
    """
    _check_pair(draft, target)
    Ks = np.array(check_ints(Ks, "Ks", low=0, what="lookahead "), dtype=np.int64)
    if Ks.size == 0:
        raise ValueError(_("Ks: need at least one lookahead"))
    p, q = draft.laws(), target.laws()
    keep, move = law_split(p, q, check=False)  # accepted / rejected mass, (T, V, V)
    row_tv = move.sum(axis=-1)  # (T, V)
    T, V = target.T, target.V
    J = int(min(Ks.max(), T - 1)) + 1
    drafted = np.arange(J)[None, :] < Ks[:, None]  # (nK, J): j < K drafts, j == K is a bonus
    pi = np.zeros((Ks.size, V, J))
    pi[:, 0, 0] = 1.0  # position 0: every row of laws()[0] is init, so any "previous token" works
    rejection, start, bonus = (np.zeros((Ks.size, T)) for _ in range(3))
    for n in range(T):
        d = pi * drafted[:, None, :]
        b = (pi - d).sum(axis=-1)  # (nK, V): mass on bonus positions
        start[:, n] = pi[:, :, 0].sum(axis=-1)
        bonus[:, n] = b.sum(axis=-1)
        rejection[:, n] = d.sum(axis=-1) @ row_tv[n]
        if n == T - 1:
            break
        nxt = np.zeros_like(pi)
        nxt[:, :, 0] = d.sum(axis=-1) @ move[n] + b @ q[n]
        nxt[:, :, 1:] = np.einsum("kuj,ux->kxj", d[:, :, :-1], keep[n])
        pi = nxt
    block = np.minimum(Ks[:, None], T - np.arange(T)[None, :])  # tokens a round starting at n drafts
    return [LookaheadProfile(int(K), rejection[i], start[i], bonus[i], start[i] * block[i]) for i, K in enumerate(Ks)]


def lookahead_profile(draft: MarkovChain, target: MarkovChain, K: int) -> LookaheadProfile:
    """Exact per-position expectations for one lookahead ``K``."""
    return lookahead_profiles(draft, target, [check_lookahead(K)])[0]


def expected_rejections_k(draft: MarkovChain, target: MarkovChain, K: int) -> float:
    """``E[N_rej]`` with lookahead ``K``: ``sum_n E[TV(p_n, q_n)(. | x_{n-1}); n drafted]``."""
    return lookahead_profile(draft, target, K).expected_rejections


def expected_oracle_calls_k(draft: MarkovChain, target: MarkovChain, K: int) -> float:
    """Expected rounds (target calls) with lookahead ``K``; ``T`` at ``K = 0``, Theorem 1's at ``K >= T``."""
    return lookahead_profile(draft, target, K).expected_oracle_calls


def expected_draft_calls_k(draft: MarkovChain, target: MarkovChain, K: int) -> float:
    """Expected drafted tokens (draft calls) with lookahead ``K``."""
    return lookahead_profile(draft, target, K).expected_draft_calls


def wallclock_speedup_k(draft: MarkovChain, target: MarkovChain, K: int, c: float) -> float:
    """Predicted speed-up ``T / (E[oracle calls] + c E[draft calls])`` over autoregressive decoding."""
    return lookahead_profile(draft, target, K).speedup(c)


def speedup_curve(draft: MarkovChain, target: MarkovChain, c: float, Ks: Iterable[int]) -> np.ndarray:
    """Wall-clock speed-up for every lookahead in ``Ks`` (one forward pass)."""
    c = check_cost(c)
    return np.array([prof.speedup(c) for prof in lookahead_profiles(draft, target, Ks)])


def best_lookahead(draft: MarkovChain, target: MarkovChain, c: float, *, K_max: int | None = None) -> tuple[int, float]:
    """The lookahead with the largest exact wall-clock speed-up, and that speed-up.

    Searches ``K = 0 .. min(K_max, T)`` (every ``K >= T`` behaves like ``K = T``);
    ties go to the smallest ``K``. ``K = 0`` means: do not speculate.
    """
    _check_pair(draft, target)
    c = check_cost(c)
    top = target.T if K_max is None else min(check_lookahead(K_max, "K_max"), target.T)
    curve = speedup_curve(draft, target, c, range(top + 1))
    K = int(np.argmax(curve))
    return K, float(curve[K])


# --- the i.i.d. model of Leviathan et al. ---------------------------------------------


@_lock.guarded("lookahead.expected_tokens_per_call")
def expected_tokens_per_call(alpha: Any, K: int) -> Any:
    """Leviathan et al.'s ``E[tokens per round] = (1 - alpha^(K+1)) / (1 - alpha)`` (``K + 1`` at alpha = 1).

    Acceptances i.i.d. with rate ``alpha = 1 - TV`` and no horizon: a round emits
    ``min(G, K + 1)`` tokens with ``G`` geometric, so the mean is ``1 + alpha + ... + alpha^K``.
    """
    K = check_lookahead(K)
    a = check_alpha(alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(a == 1.0, K + 1.0, (1.0 - a ** (K + 1)) / np.where(a == 1.0, 0.5, 1.0 - a))
    return float(out) if out.ndim == 0 else out


@_lock.guarded("lookahead.iid_speedup")
def iid_speedup(alpha: Any, K: int, c: float) -> Any:
    """Leviathan et al.'s wall-clock speed-up ``(1 - alpha^(K+1)) / ((1 - alpha)(K c + 1))``."""
    return expected_tokens_per_call(alpha, K) / (check_lookahead(K) * check_cost(c) + 1.0)


def best_lookahead_iid(alpha: float, c: float, *, K_max: int | None = None) -> int | float:
    """The ``K`` maximising :func:`iid_speedup`, in closed form (Lambert W).

    ``f(K) = (1 - alpha^(K+1)) / (K c + 1)`` is a concave function over an affine
    one, so unimodal; setting ``f' = 0`` with ``y = alpha^(K+1)`` gives
    ``y (a - ln y) = 1``, ``a = 1 + (1 - c) ln(1/alpha) / c``, solved by
    ``ln y = a + W_{-1}(-e^{-a})``. The integer optimum is the floor or ceiling of
    the real one; ties go to the smaller ``K``. Where every longer lookahead is
    better (``c = 0`` or ``alpha = 1`` with ``c < 1``) the answer is ``K_max``, or
    ``math.inf`` when no ``K_max`` is given.
    """
    from scipy.special import lambertw

    a_ = _check_rate(alpha)
    c = check_cost(c)
    cap = None if K_max is None else check_lookahead(K_max, "K_max")
    if a_ == 0.0 or c >= 1.0:
        return 0  # nothing is ever accepted, or one draft costs as much as the call it saves
    if c == 0.0 or a_ == 1.0:
        return math.inf if cap is None else cap
    L = -math.log(a_)
    a = 1.0 + (1.0 - c) * L / c
    if a < 700.0:
        w = float(lambertw(-math.exp(-a), -1).real)
    else:  # -e^{-a} underflows: solve w + ln(-w) = -a by Newton from the asymptote -a - ln a
        w = -a - math.log(a)
        for _ in range(4):
            w -= (w + math.log(-w) + a) / (1.0 + 1.0 / w)
    K_star = math.log(-w) / L - 1.0  # ln y = a + w = -ln(-w) and K + 1 = -ln y / L
    candidates = {max(0, math.floor(K_star)), max(0, math.ceil(K_star))}
    if cap is not None:
        candidates = {min(k, cap) for k in candidates}
    return min(sorted(candidates), key=lambda k: -iid_speedup(a_, k, c))


def iid_expected_oracle_calls(alpha: float, K: int, T: int) -> float:
    """Expected rounds for ``T`` tokens when acceptances are i.i.d. Bernoulli(alpha), with the horizon.

    ``m(t)`` = expected rounds with ``t`` tokens to go: a round drafts ``k = min(K, t)``,
    emits ``g <= k`` tokens when its first rejection is draft ``g`` (probability
    ``alpha^(g-1) (1 - alpha)``), and ``k + 1`` (``k`` if ``k = t``) when all are accepted.
    """
    a = _check_rate(alpha)
    K = check_lookahead(K)
    T = check_int(T, "T")
    m = np.zeros(T + 1)
    for t in range(1, T + 1):
        k = min(K, t)
        g = np.arange(1, k + 1)
        first_reject = a ** (g - 1) * (1 - a)
        rest = t - k - 1 if k < t else 0
        m[t] = 1.0 + first_reject @ m[t - g] + a**k * m[max(rest, 0)]
    return float(m[T])


def tv_schedule_pair(
    V: int, T: int, tv: Any, rng: RNGLike = None, *, concentration: float = 1.0
) -> tuple[MarkovChain, MarkovChain]:
    """A (draft, target) pair with ``TV(p_n, q_n)(. | u) = tv[n]`` whatever the previous token ``u``.

    ``tv`` is one number (the same TV everywhere) or a schedule of shape ``(T,)``. Both
    chains share a random chain ``m``: ``q_n = (1 - tv[n]) m_n + tv[n] e_a``,
    ``p_n = (1 - tv[n]) m_n + tv[n] e_b`` with ``a != b`` random tokens per row. The
    acceptance at position ``n`` is then Bernoulli(``1 - tv[n]``) independently of
    everything before: with a constant ``tv``, the i.i.d. setting of Leviathan et al.
    """
    V = check_int(V, "V", low=2, what=_("two different spikes need "))
    T = check_int(T, "T")
    sched = as_real_array(tv, "tv")
    if sched.ndim == 0:
        sched = np.full(T, float(sched))
    if sched.shape != (T,) or not np.all(np.isfinite(sched)) or np.any(sched < 0) or np.any(sched > 1):
        raise ValueError(
            _("tv: must be a number or a (T,) = ({T},) array of values in [0, 1], got {tv!r}").format(T=T, tv=tv)
        )
    gen = as_generator(rng)
    base = MarkovChain.random(V, T, gen, concentration=concentration)
    laws = base.laws()  # (T, V, V); row 0 repeats init
    a = gen.integers(V, size=(T, V))
    b = (a + gen.integers(1, V, size=(T, V))) % V
    a[0], b[0] = a[0, 0], b[0, 0]  # the first token's law does not depend on a previous token
    eye, w = np.eye(V), sched[:, None, None]
    q = (1 - w) * laws + w * eye[a]
    p = (1 - w) * laws + w * eye[b]
    return MarkovChain(p[0, 0], p[1:]), MarkovChain(q[0, 0], q[1:])


# --- Monte Carlo --------------------------------------------------------------------


@dataclass(frozen=True)
class LookaheadResult(DecodeResult):
    """A :class:`DecodeResult` with the lookahead's extra bookkeeping.

    ``bonus`` (runs, T): the token came for free with a fully accepted round.
    ``draft_calls`` (runs,): drafted tokens, wasted ones included. ``K``: the lookahead.
    """

    bonus: np.ndarray
    draft_calls: np.ndarray
    K: int

    def time(self, c: float) -> np.ndarray:
        """Wall-clock per run in target-call units: ``oracle_calls + c draft_calls``."""
        return self.oracle_calls + check_cost(c) * self.draft_calls

    @property
    def round_position(self) -> np.ndarray:
        """``j_n`` (runs, T): index of each position inside its round (0 where a round starts)."""
        j = np.zeros(self.tokens.shape, dtype=np.int64)
        ends = self.rejected | self.bonus
        for n in range(1, j.shape[1]):
            j[:, n] = np.where(ends[:, n - 1], 0, j[:, n - 1] + 1)
        return j

    @property
    def next_round_position(self) -> np.ndarray:
        """``j_{n+1}`` (runs, T): 0 where position ``n`` ended its round (rejection or bonus), else ``j_n + 1``."""
        return np.where(self.rejected | self.bonus, 0, self.round_position + 1)


@_lock.guarded("lookahead.speculative_k")
def speculative_k(draft: MarkovChain, target: MarkovChain, K: int, runs: int, rng: RNGLike = None) -> LookaheadResult:
    """Speculative decoding with lookahead ``K`` (see the module docstring), all runs at once.

    Loop over positions; each run carries its previous token and ``j``. Drafting
    token by token gives the same law as drafting the block first, as in
    ``decoding.speculative``; with ``K >= T`` it uses the same random numbers as
    ``decoding.speculative`` and so reproduces it draw for draw.
    """
    _check_pair(draft, target)
    K, runs, gen = check_lookahead(K), check_runs(runs), as_generator(rng)
    p_laws, q_laws = draft.laws(), target.laws()
    T = target.T
    tokens = np.empty((runs, T), dtype=token_dtype(target.V))
    rejected = np.zeros((runs, T), dtype=bool)
    bonus = np.zeros((runs, T), dtype=bool)
    calls = np.zeros(runs, dtype=np.int64)
    drafts = np.zeros(runs, dtype=np.int64)
    prev = np.zeros(runs, dtype=np.int64)
    j = np.zeros(runs, dtype=np.int64)
    for n in range(T):
        p, q = p_laws[n], q_laws[n]
        starts = j == 0
        calls += starts
        drafts += starts * min(K, T - n)
        free = j == K
        x = np.empty(runs, dtype=np.int64)
        if free.any():
            x[free] = sample_rows(cumulative(q), prev[free], gen.random(int(free.sum())))
        d = np.flatnonzero(~free)
        if d.size:
            cdf_residual = cumulative(residual(p, q, check=False))
            x[d], rejected[d, n] = verify_step(gen, cumulative(p), acceptance(p, q, check=False), cdf_residual, prev[d])
        bonus[:, n] = free
        tokens[:, n] = x
        j = np.where(free | rejected[:, n], 0, j + 1)
        prev = x
    return LookaheadResult(tokens, rejected, calls, bonus, drafts, K)


def lookahead_joint_law(
    draft: MarkovChain, target: MarkovChain, K: int, max_sequences: int = 2_000_000
) -> tuple[np.ndarray, int]:
    """Exact joint law of ``(x_n, j_{n+1})_{n=1..T}`` under lookahead ``K``, and the number of ``j`` states.

    The pair is a Markov chain on ``V J`` states ``x J + j`` (``J = min(K, T) + 1``);
    this is its ``theory.sequence_law``. Index a run with
    ``stats.sequence_index(J * tokens + result.next_round_position, V * J)``.
    """
    _check_pair(draft, target)
    K = check_lookahead(K)
    T, V = target.T, target.V
    J = min(K, T) + 1
    check_sequences(V * J, T, max_sequences, _("tokens and round positions"), "(V J)")
    p, q = draft.laws(), target.laws()
    keep, move = law_split(p, q, check=False)
    step = np.zeros((T, V, J, V, J))
    for j in range(J):
        if j < K:
            step[:, :, j, :, min(j + 1, J - 1)] += keep
            step[:, :, j, :, 0] += move
        else:
            step[:, :, j, :, 0] += q
    step = step.reshape(T, V * J, V * J)
    return sequence_law(MarkovChain(step[0, 0], step[1:]), max_sequences), J
