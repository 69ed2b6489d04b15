"""Checks for Lab 6 (batch speculative decoding), each naming the typical mistake.

* ``check_batch_improvement``: ``BI(p, q, M) = TV(q, p) - prod_{m=1}^M TV(q^m, p)``;
* ``check_expected_rejections_batch``: Theorem 3's forward pass on a first-order chain;
* ``check_tree_survivors``: the expected number of drafts the tree keeps after an acceptance.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import batch, theory
from ..chains import MarkovChain
from ..laws import tv
from .feedback import Feedback, as_number, call_student, correct, fmt, wrong


def _improvement_cases() -> list[tuple[np.ndarray, np.ndarray, int]]:
    """``(p, q, M)``: generic, a zero in p, p == q, a point-mass residual, one draft."""
    return [
        (np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5]), 3),
        (np.array([0.1, 0.6, 0.3, 0.0]), np.array([0.25, 0.25, 0.25, 0.25]), 4),
        (np.array([0.7, 0.2, 0.1]), np.array([0.7, 0.2, 0.1]), 5),
        (np.array([0.8, 0.2]), np.array([0.5, 0.5]), 6),
        (np.array([0.4, 0.4, 0.2]), np.array([0.1, 0.3, 0.6]), 1),
    ]


def _product_variants(p: np.ndarray, q: np.ndarray, M: int) -> dict[str, float]:
    """Products ``prod r_m`` that typical mistakes compute instead of the cascade's."""
    d = float(tv(p, q))
    unnormalised, qm = 1.0, q.copy()
    for _ in range(M):
        unnormalised *= float(np.maximum(qm - p, 0.0).sum())
        qm = np.maximum(qm - p, 0.0)
    reach, _ = batch.residual_cascade(p, q, M + 1)
    return {
        "power": d**M,
        "unnormalised": unnormalised,
        "M-1": float(reach[M - 1]),
        "M+1": float(reach[M + 1]),
    }


def check_batch_improvement(student_fn: Callable[[np.ndarray, np.ndarray, int], float]) -> Feedback:
    """Check ``student_fn(p, q, M)`` returning ``TV(q, p) - prod_{m=1}^M TV(q^m, p)``."""
    for p, q, M in _improvement_cases():
        got, err = call_student(student_fn, p, q, M)
        where = f"For p = {fmt(p)}, q = {fmt(q)}, M = {M}"
        nan_law = err is not None and "contains NaN" in err  # ``tv`` refused the NaN law the mistake builds
        if err and not nan_law:
            return wrong(f"{err} ({where}).")
        got = np.nan if nan_law else as_number(got)
        if got is None:
            return wrong(f"return one number ({where}).")
        want = float(batch.batch_improvement(p, q, M))
        if np.isclose(got, want, atol=1e-9):
            continue
        if not np.isfinite(got):
            return wrong(f"{where} you {'built a NaN law' if nan_law else f'returned {got}'}: q^m - p sums to 0, "
                         "so normalising it without the positive part divides by 0; the residual is "
                         "max(q^m - p, 0) / sum max(q^m - p, 0) (laws.residual).")
        d = float(tv(p, q))
        where += f" you returned {got:.4f} instead of {want:.4f}: "
        if np.isclose(got, d - want, atol=1e-9):
            return wrong(where + "that is the product r_1 ... r_M (the chance all M drafts are rejected); "
                         "the improvement is TV(q, p) minus it.")
        variants = _product_variants(p, q, M)
        hints = {
            "power": "you multiplied TV(q, p) by itself M times; each new draft is checked against the residual "
                     "q^{m+1} = [q^m - p]_+, whose distance to p changes with m.",
            "unnormalised": "your residuals are not normalised: max(q^m - p, 0) has mass r_m, not 1; divide by it "
                            "before the next stage.",
            "M-1": "the product has one factor too few: with M drafts there are M stages, r_1 ... r_M.",
            "M+1": "the product has one factor too many: with M drafts there are M stages, r_1 ... r_M.",
        }
        for name, prod in variants.items():
            if np.isclose(got, d - prod, atol=1e-9):
                return wrong(where + hints[name])
        if got < -1e-12 or got > d + 1e-12:
            return wrong(where + f"the improvement lies between 0 and TV(q, p) = {d:.4f}.")
        return wrong(where + "start from q^1 = q, set r_m = TV(q^m, p) and q^{m+1} = [q^m - p]_+ "
                     "(laws.residual), and return TV(q, p) - r_1 ... r_M.")
    return correct("each extra draft faces what is left of q after the earlier ones, so the product of the r_m "
                   "shrinks and the improvement climbs towards TV(q, p).")


def _wrong_batch_values(draft: MarkovChain, target: MarkovChain, M: int) -> dict[str, float]:
    """Expected rejections that typical mistakes in Theorem 3's forward pass produce."""
    p, q = draft.laws(), target.laws()
    reach, _ = batch.residual_cascade(p, q, M)
    mu = target.marginals()
    start_everywhere = float(reach[-1][0, 0] + np.einsum("nu,nu->", mu[:-1], reach[-1][1:]))
    return {
        "theorem1": theory.expected_rejections(draft, target),
        "everywhere": start_everywhere,
        "first only": float(theory.rejection_profile(draft, target)[1:].sum() + reach[-1][0, 0]),
        "M-1": batch.expected_rejections_batch(draft, target, M - 1) if M > 1 else np.nan,
        "tree": batch.expected_rejections_tree(draft, target, M),
    }


def check_expected_rejections_batch(student_fn: Callable[[MarkovChain, MarkovChain, int], float]) -> Feedback:
    """Check ``student_fn(draft, target, M)`` returning Theorem 3's ``E[N_rej]`` of Algorithm 4."""
    cases = [
        (MarkovChain.random(3, 6, rng=1, uniform_init=False), MarkovChain.random(3, 6, rng=2), 3),
        (MarkovChain.random(5, 12, rng=3, uniform_init=False), MarkovChain.random(5, 12, rng=4), 4),
        (MarkovChain.random(4, 8, rng=5), MarkovChain.random(4, 8, rng=6), 1),
    ]
    for draft, target, M in cases:
        got, err = call_student(student_fn, draft, target, M)
        where = f"On a V = {target.V}, T = {target.T} pair with M = {M}"
        if err:
            return wrong(f"{err} ({where}).")
        got = as_number(got)
        if got is None:
            return wrong(f"return one number ({where}).")
        want = batch.expected_rejections_batch(draft, target, M)
        if np.isclose(got, want, rtol=1e-8, atol=1e-10):
            continue
        where += f" you returned {got:.4f} instead of {want:.4f}: "
        hints = {
            "theorem1": "that is Theorem 1, as if every position used one draft; positions that start a round "
                        "(the first, and every one after a rejection) reject only with r_1 ... r_M.",
            "everywhere": "you used r_1 ... r_M at every position; only a round's first position uses the M "
                          "drafts, the chosen draft then continues with the plain rule (TV).",
            "first only": "only the first position got the batch; every position right after a rejection also "
                          "starts a round: weigh it with f_{n-1}, the mass of a rejection at n - 1.",
            "M-1": "that is Algorithm 4 with M - 1 drafts: the product has M factors r_1 ... r_M.",
            "tree": "that is the draft tree (every matching draft kept); Algorithm 4 keeps the accepted draft alone.",
        }
        for name, value in _wrong_batch_values(draft, target, M).items():
            if np.isclose(got, value, rtol=1e-8, atol=1e-10):
                return wrong(where + hints[name])
        if got < 0 or got > target.T:
            return wrong(where + f"an expected count of rejections lies in [0, T] = [0, {target.T}].")
        return wrong(where + "carry f_n(x) = P(x_n = x, R_n = 1): position n rejects w.p. sum_u (mu - f)(u) TV(u) "
                     "+ f(u) r_1...r_M(u), and f_n = (mu - f) max(q - p, 0) + f r_1...r_M q^{M+1}.")
    return correct("a rejection buys the next position a fresh batch of M drafts; the measure f tracks exactly "
                   "how often that happens.")


def check_tree_survivors(student_fn: Callable[[int, int, float], float]) -> Feedback:
    """Check ``student_fn(k, m, p_x)``: expected survivors after candidate m of k is accepted as token x.

    The answer is ``1 + (k - m) p_x``: the accepted draft, plus each untested candidate
    m+1..k that happens to carry x (earlier candidates were rejected, so none carries x).
    """
    cases = [(5, 2, 0.3), (8, 1, 0.5), (3, 3, 0.9), (10, 4, 0.0), (1, 1, 0.25)]
    for k, m, px in cases:
        got, err = call_student(student_fn, k, m, px)
        where = f"For k = {k}, m = {m}, p(x) = {px}"
        if err:
            return wrong(f"{err} ({where}).")
        got = as_number(got)
        if got is None:
            return wrong(f"return one number ({where}).")
        want = 1 + (k - m) * px
        if np.isclose(got, want):
            continue
        where += f" you returned {got:.4f} instead of {want:.4f}: "
        if np.isclose(got, (k - m) * px):
            return wrong(where + "you forgot the accepted draft itself: it always survives.")
        if np.isclose(got, 1 + (k - 1) * px):
            return wrong(where + "candidates 1..m-1 were rejected, and a rejected token can never be accepted later "
                         "(its residual mass is 0), so none of them carries x; only the k - m untested ones can.")
        if np.isclose(got, k * px) or np.isclose(got, 1 + k * px):
            return wrong(where + "count only the untested candidates m+1..k: k - m of them, each matching w.p. p(x).")
        return wrong(where + "the survivors are the accepted draft plus Binomial(k - m, p(x)) untested matches.")
    return correct("the survivors are 1 + Binomial(k - m, p(x)); that random count is the tree's extra state.")
