"""Batch speculative decoding: Algorithm 4 (Theorem 3, Proposition 1) and the draft tree.

Each round drafts ``M`` i.i.d. sequences from ``p``; one oracle call scores them all.

* **Algorithm 4** (the paper): only the round's first position uses the batch. Draft
  ``m``'s first token is tried against ``q^m`` (``q^1 = q``, ``q^{m+1} = [q^m - p]_+``);
  all ``M`` rejected means one rejection and a token from ``q^{M+1}``. The accepted
  draft alone continues with the plain rule against ``q``.
* **Draft tree** (the book's own variant): every draft whose prefix equals the
  accepted prefix survives, and the same cascade runs over the survivors at every
  position. With ``k`` candidates the position rejects with probability
  ``r_1 ... r_k``; after accepting ``x`` from candidate ``m``, the survivors are the
  accepted draft plus the untested candidates ``m+1..k`` whose token is ``x``:
  ``1 + Binomial(k - m, p(x))`` of them.

On first-order chains both are Markov in a small state: (last token, round start?)
for Algorithm 4 and (last token, number of candidates k) for the tree, so their
expected rejections are forward passes, polynomial in T, V and M.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _lock
from ._i18n import _
from ._rng import RNGLike, as_generator, check_runs
from .chains import MarkovChain, _check_pair, check_sequences, sequence_law
from .laws import SUM_ATOL, acceptance, accepted_mass, check_pair, law_split, rejected_mass, residual, tv
from .primitives import (
    DecodeResult,
    as_real_array,
    check_flag,
    check_int,
    check_ints,
    check_real,
    clip_rounding,
    cumulative,
    draft_and_test,
    sample_rows,
    token_dtype,
)


def _check_M(M: Any, name: str = "M") -> int:
    return check_int(M, name, what=_("number of drafts "))


# --- one token: the residual cascade ------------------------------------------


@_lock.guarded("batch.residual_cascade")
def residual_cascade(p: Any, q: Any, M: int, *, check: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The laws ``q^1 = q, q^{m+1} = [q^m - p]_+`` and the chance of reaching each stage.

    Returns ``(reach, laws)`` with ``reach[m] = r_1 ... r_m`` (``r_m = TV(q^m, p)``,
    ``reach[0] = 1``): the probability that the first ``m`` drafts are all rejected;
    and ``laws[m] = q^{m+1}``. Shapes ``(M+1, ...)`` and ``(M+1, ..., V)``; works on
    stacks of laws. When ``q^m = p`` then ``r_m = 0`` and ``residual`` falls back to
    ``q^{m+1} = q^m``: the stage is never reached, so any law would do. ``check=False``
    skips validating ``p`` and ``q`` (for a chain's laws, already checked).
    """
    M = _check_M(M)
    if check_flag(check, "check"):
        p, q = check_pair(p, q)
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    shape = np.broadcast_shapes(p.shape, q.shape)
    reach = np.empty((M + 1,) + shape[:-1])
    laws = np.empty((M + 1,) + shape)
    reach[0], laws[0] = 1.0, q
    for m in range(M):
        reach[m + 1] = reach[m] * tv(laws[m], p, check=False)
        laws[m + 1] = residual(p, laws[m], check=False)
    return reach, laws


@_lock.guarded("batch.batch_improvement")
def batch_improvement(p: Any, q: Any, M: int) -> Any:
    """Batch improvement of one token: ``TV(q, p) - prod_{m=1}^M TV(q^m, p)`` (>= 0)."""
    p, q = check_pair(p, q)
    reach, _ = residual_cascade(p, q, M, check=False)
    return tv(q, p, check=False) - reach[-1]


def batch_improvement_bernoulli(u: float, v: float, M: int) -> float:
    """Closed form for ``p = Ber(u)``, ``q = Ber(v)`` (probabilities of token 1).

    ``|u - v| (1 - u^{M-1})`` when ``u >= v`` and ``|u - v| (1 - (1-u)^{M-1})``
    otherwise: after the first rejection ``q^2`` is a point mass, and every later
    draft misses it with probability ``u`` (or ``1 - u``).
    """
    M = _check_M(M)
    u, v = (check_real(x, name, low=0, high=1, what="a probability ") for name, x in (("u", u), ("v", v)))
    miss = u if u >= v else 1.0 - u
    return float(abs(u - v) * (1.0 - miss ** (M - 1)))


def batch_improvement_uniform(r: float, M: int) -> float:
    """Closed form for ``p = Unif(V)``, ``q`` uniform on ``V' <= V`` states, ``r = V/V'``.

    ``(1 - 1/r) - (1 - 1/r)^M``: every residual is ``q`` again, so ``r_m = 1 - 1/r``.
    """
    M = _check_M(M)
    r = check_real(r, "r", low=1, what="V/V' ")
    a = 1.0 - 1.0 / r
    return float(a - a**M)


# --- Algorithm 4 on first-order chains: Theorem 3 and Proposition 1 -----------


@_lock.guarded("batch.batch_forward")
def batch_forward(draft: MarkovChain, target: MarkovChain, rho: np.ndarray, rho_q: np.ndarray) -> np.ndarray:
    """Theorem 3's forward pass: per-position ``E[R_n]``, shape ``(T,)``, on first-order chains.

    ``rho`` (T, V) is the rejection probability ``rho_n`` of a round start after each
    previous token, and ``rho_q`` (T, V, V) the mass ``rho_n q_n^{M+1}`` it sends to
    each token (from ``residual_cascade``; Proposition 1 passes their limits).
    With ``h_n = max(q_n - p_n, 0)``, the target's marginals ``mu`` and
    ``f_n(x) = P(x_n = x, R_n = 1)`` (a position after a rejection starts a round):
    ``E[R_n] = sum_u (mu - f)(u) TV_n(u) + f(u) rho_n(u)`` and
    ``f_n(x) = sum_u (mu - f)(u) h_n(u, x) + f(u) rho_q_n(u, x)``
    (``check_round_start`` checks ``rho`` and ``rho_q`` first).
    """
    _check_pair(draft, target)
    p, q = draft.laws(), target.laws()
    rho, rho_q = check_round_start(q, rho, rho_q)
    h = rejected_mass(p, q, check=False)  # the chains hold checked laws
    row_tv = h.sum(axis=-1)  # TV(p_n, q_n) after each previous token
    mu = target.marginals()
    profile = np.empty(target.T)
    profile[0], f = rho[0, 0], rho_q[0, 0]  # the first position starts a round
    for n in range(1, target.T):
        rest = mu[n - 1] - f
        profile[n] = rest @ row_tv[n] + f @ rho[n]
        f = rest @ h[n] + f @ rho_q[n]
    return profile


def check_round_start(q: np.ndarray, rho: Any, rho_q: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(rho, rho_q)`` of ``batch_forward`` after checking them against the target's laws ``q`` (T, V, V).

    ``rho`` (T, V) is a probability and ``rho_q`` (T, V, V) a measure of total mass
    ``rho`` that sends at most ``q`` to each token (``q - rho_q`` is the accepted mass
    of an unbiased round start), all within ``laws.SUM_ATOL``.
    """
    rho, rho_q = as_real_array(rho, "rho"), as_real_array(rho_q, "rho_q")
    for name, arr, axes, shape in (("rho", rho, "(T, V)", q.shape[:-1]), ("rho_q", rho_q, "(T, V, V)", q.shape)):
        if arr.shape != shape:
            raise ValueError(
                _("{name}: must have shape {axes} = {shape}, got {arr_shape}").format(
                    name=name, axes=axes, shape=shape, arr_shape=arr.shape
                )
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(_("{name}: contains NaN or inf").format(name=name))
    if np.any(rho < -SUM_ATOL) or np.any(rho > 1 + SUM_ATOL):
        raise ValueError(
            _("rho: rejection probabilities must lie in [0, 1], got [{rho_min:.3g}, {rho_max:.3g}]").format(
                rho_min=rho.min(), rho_max=rho.max()
            )
        )
    if np.any(rho_q < -SUM_ATOL):
        raise ValueError(_("rho_q: has negative entries (min {rho_q_min:.3g})").format(rho_q_min=rho_q.min()))
    excess = float((rho_q - q).max())
    if excess > SUM_ATOL:
        raise ValueError(
            _(
                "rho_q: exceeds the target's law q by up to {excess:.3g}; a round start outputs q, "
                "so it sends at most q(x) to each token"
            ).format(excess=excess)
        )
    off = float(np.abs(rho_q.sum(axis=-1) - rho).max())
    if off > SUM_ATOL:
        raise ValueError(
            _("rho_q: each row must sum to rho (the mass it spreads), worst row is off by {off:.3g}").format(off=off)
        )
    return rho, rho_q


@_lock.guarded("batch.batch_rejection_profile")
def batch_rejection_profile(draft: MarkovChain, target: MarkovChain, M: int) -> np.ndarray:
    """Theorem 3 per position: ``E[R_n]`` under Algorithm 4 with ``M`` drafts, shape ``(T,)``."""
    _check_pair(draft, target)
    reach, laws = residual_cascade(draft.laws(), target.laws(), M, check=False)
    return batch_forward(draft, target, reach[-1], reach[-1][..., None] * laws[-1])


@_lock.guarded("batch.expected_rejections_batch")
def expected_rejections_batch(draft: MarkovChain, target: MarkovChain, M: int) -> float:
    """Theorem 3: ``E[N_rej]`` of Algorithm 4, O(T V^2 M). Equals Theorem 1 at ``M = 1``."""
    return float(batch_rejection_profile(draft, target, M).sum())


def batch_rejection_limit(draft: MarkovChain, target: MarkovChain) -> float:
    """Proposition 1: ``lim_{M -> inf} E[N_rej]`` of Algorithm 4.

    As M grows, ``r_1 ... r_M`` falls to ``q(p = 0)``, the target mass no draft can
    propose, and the rejected mass to ``q 1[p = 0]`` (0 when ``p`` has full support, the
    paper's case). Positions inside a round keep rejecting with ``TV(p_n, q_n)``.
    """
    _check_pair(draft, target)
    p, q = draft.laws(), target.laws()
    g = np.where(p > 0, 0.0, q)
    return float(batch_forward(draft, target, g.sum(axis=-1), g).sum())


def batch_joint_law(draft: MarkovChain, target: MarkovChain, M: int, max_sequences: int = 2_000_000) -> np.ndarray:
    """Exact joint law of tokens and rejection marks under Algorithm 4.

    ``(x_n, R_n)`` is a Markov chain on ``2V`` states ``2 x + r``: after ``r = 1`` the
    round starts (``x`` unrejected w.p. ``q - g``, rejected w.p. ``g``), after ``r = 0``
    the plain rule applies (``min(p, q)`` and ``max(q - p, 0)``). Index a run with
    ``stats.sequence_index(2 * tokens + rejected, 2 * V)``.
    """
    _check_pair(draft, target)
    M = _check_M(M)
    check_sequences(2 * target.V, target.T, max_sequences, _("tokens and marks"), "(2V)")
    p, q = draft.laws(), target.laws()
    reach, laws = residual_cascade(p, q, M, check=False)
    g = reach[-1][..., None] * laws[-1]
    T, V = target.T, target.V
    start = np.stack([clip_rounding(q - g, "q - g"), g], axis=-1).reshape(T, V, 2 * V)  # g <= q exactly
    inside = np.stack(law_split(p, q, check=False), axis=-1).reshape(T, V, 2 * V)
    trans = np.stack([inside[1:], start[1:]], axis=2).reshape(T - 1, 2 * V, 2 * V)  # row 2u + r
    return sequence_law(MarkovChain(start[0, 0], trans), max_sequences)


# --- the draft tree on first-order chains --------------------------------------


def _thin(A: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``out[i] = sum_d A[d] P(Binomial(d, p) = i)`` along the first axis, by Horner's rule.

    ``sum_d A_d (b * ... * b)`` with ``d`` convolutions by ``b = (1 - p, p)``: each
    step is a convex combination, so no binomial coefficient or power is formed.
    """
    M = A.shape[0]
    out = np.zeros(A.shape)
    for d in range(M - 1, -1, -1):
        s = M - 1 - d  # entries that can be nonzero so far
        if s:
            tail = p * out[:s]
            out[:s] *= 1.0 - p
            out[1 : s + 1] += tail
        out[0] += A[d]
    return out


def _tree_forward(p: np.ndarray, reach: np.ndarray, laws: np.ndarray, Ms: list[int]) -> np.ndarray:
    """Per-position ``E[R_n]`` of the tree for each number of drafts in ``Ms``, shape ``(len(Ms), T)``.

    Needs a cascade of at least ``max(Ms)`` stages. The runs for different M share
    every table and differ only in where a rejection sends the mass (k = M), so they
    advance together along a leading axis.
    """
    T, V = p.shape[0], p.shape[-1]
    K, rows = max(Ms), np.arange(len(Ms))
    top = np.asarray(Ms) - 1  # index k - 1 of a fresh round's M candidates
    G = reach[1 : K + 1, ..., None] * laws[1 : K + 1]  # (k, T, u, x): mass rejected by k candidates
    acc = reach[:K, ..., None] * accepted_mass(p, laws[:K], check=False)  # (stage, T, u, x): accepted at that stage
    ii = np.arange(K)
    kidx = ii[:, None] + ii[None, :]  # (d, stage m-1) -> k - 1 = d + m - 1: d untested candidates left
    inside = kidx < K
    kidx = np.minimum(kidx, K - 1)
    profile = np.empty((len(Ms), T))
    state = np.zeros((len(Ms), V, K))  # state[., u, k-1]
    state[rows, 0, top] = 1.0  # position 0: every row is init; a round starts with M drafts
    for n in range(T):
        profile[:, n] = (state * reach[1 : K + 1, n].T).sum(axis=(1, 2))
        rejected = np.tensordot(state, G[:, n], axes=([1, 2], [1, 0]))  # (., x)
        by_d = np.where(inside, state[:, :, kidx], 0.0)  # (., u, d, stage)
        A = np.matmul(by_d, acc[:, n].transpose(1, 0, 2)).transpose(2, 0, 1, 3)  # (d, ., u, x)
        state = _thin(A, p[n]).sum(axis=2).transpose(1, 2, 0)  # 1 + Binomial(d, p(x)) survivors
        state[rows, :, top] += rejected
    return profile


def tree_rejection_profile(draft: MarkovChain, target: MarkovChain, M: int) -> np.ndarray:
    """Per-position ``E[R_n]`` of the draft tree with ``M`` drafts, shape ``(T,)``; O(T V^2 M^2).

    State before position n: last token u and k candidates (k = M at a round start).
    With ``reach`` and ``q^m`` from ``residual_cascade``: reject w.p. ``reach[k]`` into
    ``x ~ q^{k+1}`` (next state (x, M)); accept x at stage m w.p.
    ``reach[m-1] min(p, q^m)(x)``, next state (x, 1 + Binomial(k - m, p(x))).
    """
    _check_pair(draft, target)
    M = _check_M(M)
    p = draft.laws()
    reach, laws = residual_cascade(p, target.laws(), M, check=False)
    return _tree_forward(p, reach, laws, [M])[0]


def expected_rejections_tree(draft: MarkovChain, target: MarkovChain, M: int) -> float:
    """``E[N_rej]`` of the draft tree with ``M`` drafts (the book's own analysis, not the paper's)."""
    return float(tree_rejection_profile(draft, target, M).sum())


def rejections_by_M(draft: MarkovChain, target: MarkovChain, Ms: Any, *, tree: bool = False) -> np.ndarray:
    """``E[N_rej]`` of Algorithm 4 (or the tree) for each number of drafts in ``Ms``, sharing one cascade."""
    _check_pair(draft, target)
    tree = check_flag(tree, "tree")
    Ms = check_ints([Ms] if isinstance(Ms, (int, np.integer)) else Ms, "Ms", what=_("number of drafts "))
    if not Ms:
        raise ValueError(_("Ms: need at least one number of drafts, got none"))
    p = draft.laws()
    reach, laws = residual_cascade(p, target.laws(), max(Ms), check=False)
    if tree:
        # One joint pass costs like len(Ms) runs of the largest M: worth it when the Ms are alike.
        together = len(Ms) * max(Ms) ** 2 <= 4 * sum(M * M for M in Ms)
        groups = [Ms] if together else [[M] for M in Ms]
        return np.concatenate([_tree_forward(p, reach, laws, g).sum(axis=1) for g in groups])
    return np.array([batch_forward(draft, target, reach[M], reach[M][..., None] * laws[M]).sum() for M in Ms])


# --- samplers, vectorised over runs --------------------------------------------


def _cascade_position(
    gen: np.random.Generator,
    cdf_p: np.ndarray,
    cdfs: np.ndarray,
    accept: np.ndarray,
    prev: np.ndarray,
    k: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One position of the cascade for runs with ``k`` i.i.d. candidates from ``p[prev]``.

    ``cdf_p`` (V, V) is the draft's CDF, ``cdfs[m]`` that of ``q^{m+1}`` and
    ``accept[m] = min(1, q^{m+1}/p)``. Returns the tokens, the rejection marks and the
    0-based stage at which each run accepted (``k`` where all were rejected).
    """
    runs = prev.shape[0]
    x = np.empty(runs, dtype=np.int64)
    stage = k.copy()
    active = np.arange(runs)
    for m in range(int(k.max()) + 1):
        done = active[k[active] == m]  # all k candidates rejected: draw from q^{k+1}
        if done.size:
            x[done] = sample_rows(cdfs[m], prev[done], gen.random(done.size))
            active = active[k[active] > m]
        if active.size == 0:
            break
        xt, rej = draft_and_test(gen, cdf_p, accept[m], prev[active])
        ok = ~rej
        x[active[ok]], stage[active[ok]] = xt[ok], m
        active = active[~ok]
    return x, stage == k, stage


def _cascade_tables(draft: MarkovChain, target: MarkovChain, M: int) -> tuple[np.ndarray, ...]:
    """Draft laws, their CDFs, and CDFs and acceptance tables of every ``q^m``, for all positions."""
    p = draft.laws()
    _, laws = residual_cascade(p, target.laws(), M, check=False)
    return p, cumulative(p), cumulative(laws), acceptance(p, laws, check=False)


@_lock.guarded("batch.batch_speculative")
def batch_speculative(draft: MarkovChain, target: MarkovChain, M: int, runs: int, rng: RNGLike = None) -> DecodeResult:
    """Algorithm 4 with ``M`` drafts, all runs at once (loop over positions).

    A run starts a round at position 1 and after each rejection; there it has ``M``
    candidates, elsewhere the single chosen draft (``k = 1``, the plain rule).
    """
    _check_pair(draft, target)
    M, runs, gen = _check_M(M), check_runs(runs), as_generator(rng)
    _, cdf_p, cdfs, accept = _cascade_tables(draft, target, M)
    T = target.T
    tokens = np.empty((runs, T), dtype=token_dtype(target.V))
    rejected = np.zeros((runs, T), dtype=bool)
    prev = np.zeros(runs, dtype=np.int64)
    start = np.ones(runs, dtype=bool)
    for n in range(T):
        k = np.where(start, M, 1)
        prev, start, _ = _cascade_position(gen, cdf_p[n], cdfs[:, n], accept[:, n], prev, k)
        tokens[:, n], rejected[:, n] = prev, start
    return DecodeResult(tokens, rejected, 1 + rejected[:, :-1].sum(axis=1))


@_lock.guarded("batch.tree_speculative")
def tree_speculative(draft: MarkovChain, target: MarkovChain, M: int, runs: int, rng: RNGLike = None) -> DecodeResult:
    """The draft tree with ``M`` drafts, all runs at once (loop over positions).

    Tracks the number of candidates ``k`` per run; the untested candidates after the
    accepted one match it independently with probability ``p(x)``, so the survivors
    are ``1 + Binomial(k - m, p(x))`` (``reference.tree_speculative`` draws them all).
    """
    _check_pair(draft, target)
    M, runs, gen = _check_M(M), check_runs(runs), as_generator(rng)
    p_laws, cdf_p, cdfs, accept = _cascade_tables(draft, target, M)
    T = target.T
    tokens = np.empty((runs, T), dtype=token_dtype(target.V))
    rejected = np.zeros((runs, T), dtype=bool)
    prev = np.zeros(runs, dtype=np.int64)
    k = np.full(runs, M)
    for n in range(T):
        x, rej, stage = _cascade_position(gen, cdf_p[n], cdfs[:, n], accept[:, n], prev, k)
        untested = np.where(rej, 0, k - stage - 1)
        k = np.where(rej, M, 1 + gen.binomial(untested, p_laws[n][prev, x]))
        tokens[:, n], rejected[:, n], prev = x, rej, x
    return DecodeResult(tokens, rejected, 1 + rejected[:, :-1].sum(axis=1))
