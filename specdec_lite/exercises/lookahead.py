"""Checks for Lab 7 (finite lookahead, cost ratio, best K), with feedback that names the mistake.

Each check compares the student's answer with ``specdec_lite.lookahead`` and
recognises the typical slips: forgetting the bonus token, counting only accepted
drafts, dividing 0 by 0 at alpha = 1, charging the target call or the bonus token
wrongly, a round-length sampler that never emits the bonus.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lookahead as la
from ..stats import chi_square, mean_and_se
from .feedback import Feedback, as_number, call_student, correct, wrong

#: The (alpha, K) cases every formula check runs on, edges included.
CASES = [(0.6, 3), (0.9, 1), (0.3, 6), (0.0, 4), (0.75, 0), (1.0, 5)]


def check_tokens_per_call(student: Callable[[float, int], float]) -> Feedback:
    """Check ``student(alpha, K)`` = expected tokens per round with i.i.d. acceptances ``(1 - a^(K+1))/(1 - a)``."""
    for alpha, K in CASES:
        got, err = call_student(student, alpha, K)
        where = f"For alpha = {alpha}, K = {K}"
        if err:
            hint = " At alpha = 1 the closed form is 0/0; every draft is accepted, so the round emits K + 1." * (
                alpha == 1.0
            )
            return wrong(f"{where}: {err}.{hint}")
        got = as_number(got)
        want = la.expected_tokens_per_call(alpha, K)
        if got is None:
            return wrong(f"{where}: return one number.")
        if not np.isfinite(got):
            if alpha == 1.0:
                return wrong(f"{where} you returned {got}: the closed form is 0/0 there; the limit is K + 1 = {K + 1}.")
            return wrong(f"{where} you returned {got}.")
        if np.isclose(got, want, rtol=1e-9, atol=1e-12):
            continue
        geo = sum(alpha**i for i in range(K))  # 1 + ... + alpha^(K-1)
        msg = f"{where} you returned {got:.4f} instead of {want:.4f}: "
        if np.isclose(got, geo):
            return wrong(msg + "that is 1 + alpha + ... + alpha^(K-1). You forgot the token the target call "
                         "always adds: the residual draw after a rejection, or the bonus token after K acceptances.")
        if np.isclose(got, want - 1):
            return wrong(msg + "that counts accepted drafts only; every round also emits one token from the target "
                         "(after a rejection, or as the bonus).")
        if alpha < 1 and np.isclose(got, 1 / (1 - alpha)):
            return wrong(msg + "that is the K = infinity value 1/(1 - alpha); a round stops after K drafts.")
        if np.isclose(got, 1 + K * alpha) or np.isclose(got, K * alpha):
            return wrong(msg + "acceptances are not counted independently: draft t only counts if drafts 1..t-1 "
                         "were all accepted, which has probability alpha^t.")
        return wrong(msg + "a round emits min(G, K + 1) tokens, where G is the position of the first rejection.")
    return correct("A round emits 1 + alpha + ... + alpha^K tokens on average: (1 - alpha^(K+1)) / (1 - alpha), "
                   "and K + 1 when alpha = 1.")


def check_wallclock_speedup(student: Callable[[float, int, float], float]) -> Feedback:
    """Check ``student(alpha, K, c)`` = ``(1 - a^(K+1)) / ((1 - a)(K c + 1))``."""
    for (alpha, K), c in zip(CASES, [0.05, 0.2, 0.1, 0.3, 0.5, 0.02], strict=True):
        got, err = call_student(student, alpha, K, c)
        where = f"For alpha = {alpha}, K = {K}, c = {c}"
        if err:
            return wrong(f"{where}: {err}.")
        got = as_number(got)
        if got is None or not np.isfinite(got):
            return wrong(f"{where}: return one finite number, got {got!r}.")
        want = la.iid_speedup(alpha, K, c)
        if np.isclose(got, want, rtol=1e-9):
            continue
        tokens = la.expected_tokens_per_call(alpha, K)
        msg = f"{where} you returned {got:.4f} instead of {want:.4f}: "
        if np.isclose(got, tokens):
            return wrong(msg + "that is tokens per round; a round also takes K c + 1 units of time, not 1.")
        if K > 0 and np.isclose(got, tokens / (K * c)):
            return wrong(msg + "you left out the target call: a round costs K c (drafts) + 1 (one target call).")
        if np.isclose(got, tokens / ((K + 1) * c + 1)):
            return wrong(msg + "the bonus token comes from the target call already paid for; only K drafts cost c.")
        if np.isclose(got, tokens / (1 + c)):
            return wrong(msg + "each round drafts K tokens, so drafting costs K c per round, not c.")
        return wrong(msg + "speed-up = (tokens per round) / (time per round) with time K c + 1 "
                     "against 1 token per unit of time for autoregressive decoding.")
    return correct("Speed-up = (1 - alpha^(K+1)) / ((1 - alpha)(K c + 1)), Leviathan et al.'s formula.")


def check_round_lengths(
    student: Callable[[float, int, int, np.random.Generator], Any], *, runs: int = 20_000, seed: int = 0
) -> Feedback:
    """Check a sampler ``student(alpha, K, runs, rng)`` of tokens emitted by ``runs`` rounds.

    The law to match: ``P(g) = alpha^(g-1) (1 - alpha)`` for ``g = 1..K`` and ``alpha^K`` for ``g = K + 1``.
    """
    for alpha, K in [(0.7, 4), (0.4, 2), (0.95, 3)]:
        got, err = call_student(student, alpha, K, runs, np.random.default_rng(seed))
        where = f"For alpha = {alpha}, K = {K}"
        if err:
            return wrong(f"{where}: {err}.")
        try:
            g = np.asarray(got, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            return wrong(f"{where}: return an array of {runs} round lengths.")
        if g.size != runs:
            return wrong(f"{where}: expected {runs} round lengths, got {g.size}.")
        if not np.all(np.isfinite(g)) or np.any(g != np.round(g)):
            return wrong(f"{where}: round lengths are whole numbers of tokens.")
        if g.min() < 1:
            return wrong(f"{where}: you returned a round with {int(g.min())} tokens; every round emits at least one "
                         "(after a rejection the target's residual draw is kept).")
        if g.max() > K + 1:
            return wrong(f"{where}: a round emitted {int(g.max())} tokens; with K drafts it emits at most K + 1.")
        law = np.array([alpha ** (k - 1) * (1 - alpha) for k in range(1, K + 1)] + [alpha**K])
        counts = np.bincount(g.astype(np.int64) - 1, minlength=K + 1)
        if counts[K] == 0 and alpha > 0:
            return wrong(f"{where}: no round ever emitted K + 1 = {K + 1} tokens; when all K drafts are accepted "
                         "the target call adds a bonus token.")
        fit = chi_square(counts, law)
        if fit.pvalue < 1e-3:
            m, se = mean_and_se(g)
            return wrong(f"{where}: the lengths do not follow min(Geometric, K + 1) (chi-square p = {fit.pvalue:.1e}); "
                         f"your mean is {m:.3f} ± {se:.3f}, the formula gives "
                         f"{la.expected_tokens_per_call(alpha, K):.3f}.")
    return correct("Your rounds follow min(Geometric(1 - alpha), K + 1), and their mean matches "
                   "(1 - alpha^(K+1)) / (1 - alpha).")


def check_best_lookahead(K: Any, alpha: float, c: float) -> Feedback:
    """Check a proposed best lookahead ``K`` for acceptance rate ``alpha`` and cost ratio ``c`` (i.i.d. model)."""
    try:
        la.check_lookahead(K)
    except ValueError:
        return wrong(f"a lookahead is a whole number >= 0, got {K!r}.")
    best = la.best_lookahead_iid(alpha, c, K_max=10_000)
    mine, top = la.iid_speedup(alpha, int(K), c), la.iid_speedup(alpha, int(best), c)
    if np.isclose(mine, top, rtol=1e-12):
        return correct(f"K = {K} gives the largest speed-up, {top:.3f}×.")
    direction = "larger" if best > K else "smaller"
    return wrong(f"K = {K} gives {mine:.3f}×, but some {direction} K does better (up to {top:.3f}×).")
