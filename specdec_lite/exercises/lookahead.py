"""Checks for Lab 7 (finite lookahead, cost ratio, best K), with feedback that names the mistake.

Each check compares the student's answer with ``specdec_lite.lookahead`` and
recognises the typical slips: forgetting the bonus token, counting only accepted
drafts, dividing 0 by 0 at alpha = 1, charging the target call or the bonus token
wrongly, a round-length sampler that never emits the bonus. While a check runs the
student's code, the package functions that compute the exercise's answer are
switched off (``specdec_lite._lock``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _lock
from .. import lookahead as la
from .._i18n import _
from ..stats import chi_square, mean_and_se
from . import instances
from .feedback import Feedback, checker, convert_answer, correct, integer, number, run, vector, wrong

#: Relative tolerance for a student's numbers: float32 rounding passes, every typical mistake is far off.
TOL = 1e-6


def _drawn_cases() -> list[tuple[float, int]]:
    """``(alpha, K)`` drawn now: alpha with two decimals in (0, 1), K in 1..8."""
    rng = instances.fresh()
    return [(int(rng.integers(1, 100)) / 100, int(rng.integers(1, 9))) for _draw in range(instances.DRAWN)]


def _close(a: float, b: float) -> bool:
    return bool(np.isclose(a, b, rtol=TOL, atol=1e-12))


#: The (alpha, K) cases every formula check runs on, edges included.
CASES = [(0.6, 3), (0.9, 1), (0.3, 6), (0.0, 4), (0.75, 0), (1.0, 5)]


@checker("lookahead.expected_tokens_per_call", "lookahead.iid_speedup")
def check_tokens_per_call(student: Callable[[float, int], float]) -> Feedback:
    """Check ``student(alpha, K)``: the expected number of tokens one round emits, with i.i.d. acceptances."""
    for alpha, K in CASES + _drawn_cases():
        got, err = run(student, alpha, K, convert=number)
        where = _("For alpha = {alpha}, K = {K}").format(alpha=alpha, K=K)
        if err:
            hint = _(
                " At alpha = 1 a closed form may divide 0 by 0; what does a round emit when every draft is accepted?"
            ) * (alpha == 1.0)
            return wrong(_("{where}: {err}.").format(where=where, err=err) + hint)
        want = la.expected_tokens_per_call(alpha, K)
        if not np.isfinite(got):
            if alpha == 1.0:
                return wrong(
                    _(
                        "{where} you returned {got}: a closed form is 0/0 there; every draft is accepted, so count the "
                        "tokens of that round directly."
                    ).format(where=where, got=got)
                )
            return wrong(_("{where} you returned {got}.").format(where=where, got=got))
        if _close(got, want):
            continue
        geo = sum(alpha**i for i in range(K))  # 1 + ... + alpha^(K-1)
        msg = _("{where} you returned {got:.4f} instead of {want:.4f}: ").format(where=where, got=got, want=want)
        if _close(got, geo):
            return wrong(
                msg
                + _(
                    "that is 1 + alpha + ... + alpha^(K-1). You forgot the token the target call always adds: the "
                    "residual draw after a rejection, or the bonus token after K acceptances."
                )
            )
        if _close(got, want - 1):
            return wrong(
                msg
                + _(
                    "that counts accepted drafts only; every round also emits one token from the target (after a "
                    "rejection, or as the bonus)."
                )
            )
        if alpha < 1 and _close(got, 1 / (1 - alpha)):
            return wrong(msg + _("that is the K = infinity value 1/(1 - alpha); a round stops after K drafts."))
        if _close(got, 1 + K * alpha) or _close(got, K * alpha):
            return wrong(
                msg
                + _(
                    "acceptances are not counted independently: draft t only counts if drafts 1..t-1 were all "
                    "accepted, which has probability alpha^t."
                )
            )
        return wrong(
            msg
            + _("add up P(the round emits more than i tokens) over i; the hint of the exercise says when that happens.")
        )
    return correct(
        _(
            "A round emits 1 + alpha + ... + alpha^K tokens on average: (1 - alpha^(K+1)) / (1 - alpha), and "
            "K + 1 when alpha = 1."
        )
    )


@checker("lookahead.iid_speedup")
def check_wallclock_speedup(student: Callable[[float, int, float], float]) -> Feedback:
    """Check ``student(alpha, K, c)``: the predicted wall-clock speed-up of the i.i.d. model."""
    public = list(zip(CASES, [0.05, 0.2, 0.1, 0.3, 0.5, 0.02], strict=True))
    drawn = [(case, int(instances.fresh().integers(1, 51)) / 100) for case in _drawn_cases()]
    for (alpha, K), c in public + drawn:
        got, err = run(student, alpha, K, c, convert=number)
        where = _("For alpha = {alpha}, K = {K}, c = {c}").format(alpha=alpha, K=K, c=c)
        if err:
            return wrong(_("{where}: {err}.").format(where=where, err=err))
        if not np.isfinite(got):
            return wrong(_("{where}: return one finite number, got {got!r}.").format(where=where, got=got))
        want = la.iid_speedup(alpha, K, c)
        if _close(got, want):
            continue
        tokens = la.expected_tokens_per_call(alpha, K)
        msg = _("{where} you returned {got:.4f} instead of {want:.4f}: ").format(where=where, got=got, want=want)
        if _close(got, tokens):
            return wrong(msg + _("that is tokens per round; a round also takes K c + 1 units of time, not 1."))
        if K > 0 and _close(got, tokens / (K * c)):
            return wrong(msg + _("you left out the target call: a round costs K c (drafts) + 1 (one target call)."))
        if _close(got, tokens / ((K + 1) * c + 1)):
            return wrong(msg + _("the bonus token comes from the target call already paid for; only K drafts cost c."))
        if _close(got, tokens / (1 + c)):
            return wrong(msg + _("each round drafts K tokens, so drafting costs K c per round, not c."))
        return wrong(
            msg
            + _(
                "speed-up = (tokens per round) / (time per round) with time K c + 1 against 1 token per unit of "
                "time for autoregressive decoding."
            )
        )
    return correct(_("Speed-up = (tokens per round) / (K c + 1), Leviathan et al.'s formula."))


@checker()
def check_round_lengths(
    student: Callable[[float, int, int, np.random.Generator], Any], *, runs: int = 20_000, seed: int = 0
) -> Feedback:
    """Check a sampler ``student(alpha, K, runs, rng)`` of tokens emitted by ``runs`` rounds.

    Tested with a chi-square test (level 1e-3) against the exact law of a round's length.
    """
    lengths = vector(runs)
    for alpha, K in [(0.7, 4), (0.4, 2), (0.95, 3)]:
        g, err = run(
            student,
            alpha,
            K,
            runs,
            np.random.default_rng(seed),
            convert=lambda x: lengths(x.ravel() if isinstance(x, np.ndarray) else x),
        )
        where = _("For alpha = {alpha}, K = {K}").format(alpha=alpha, K=K)
        if err:
            return wrong(_("{where}: {err} (one length per round).").format(where=where, err=err))
        if not np.all(np.isfinite(g)) or np.any(g != np.round(g)):
            return wrong(_("{where}: round lengths are whole numbers of tokens.").format(where=where))
        if g.min() < 1:
            return wrong(
                _(
                    "{where}: you returned a round with {int_g_min} tokens; every round emits at least one (after a "
                    "rejection the target's residual draw is kept)."
                ).format(where=where, int_g_min=int(g.min()))
            )
        if g.max() > K + 1:
            return wrong(
                _("{where}: a round emitted {int_g_max} tokens; with K drafts it emits at most K + 1.").format(
                    where=where, int_g_max=int(g.max())
                )
            )
        law = np.array([alpha ** (k - 1) * (1 - alpha) for k in range(1, K + 1)] + [alpha**K])
        counts = np.bincount(g.astype(np.int64) - 1, minlength=K + 1)
        if counts[K] == 0 and alpha > 0:
            return wrong(
                _(
                    "{where}: no round ever emitted K + 1 = {K_1} tokens; when all K drafts are accepted the target "
                    "call adds a bonus token."
                ).format(where=where, K_1=K + 1)
            )
        fit = chi_square(counts, law)
        if fit.pvalue < 1e-3:
            m, se = mean_and_se(g)
            return wrong(
                _(
                    "{where}: the lengths do not follow min(Geometric, K + 1) (chi-square p = {fit_pvalue:.1e}); "
                    "your mean is {m:.3f} ± {se:.3f}, the formula gives {la_expected_tokens_per_c:.3f}."
                ).format(
                    where=where,
                    fit_pvalue=fit.pvalue,
                    m=m,
                    se=se,
                    la_expected_tokens_per_c=la.expected_tokens_per_call(alpha, K),
                )
            )
    return correct(_("Your rounds follow min(Geometric(1 - alpha), K + 1), and so does their mean."))


@checker()
def check_best_lookahead(K: Any, alpha: float, c: float) -> Feedback:
    """Check a proposed best lookahead ``K`` for acceptance rate ``alpha`` and cost ratio ``c`` (i.i.d. model).

    Exact for every ``alpha`` in [0, 1] and ``c >= 0``: the optimum comes from
    ``lookahead.best_lookahead_iid``'s closed form; where no finite ``K`` is best
    (``c = 0``, or ``alpha = 1`` with ``c < 1``) every ``K`` is told so.
    """
    try:
        a, c = la._check_rate(alpha), la.check_cost(c)
    except (TypeError, ValueError) as e:
        return wrong(_("alpha must lie in [0, 1] and c be >= 0 ({e}).").format(e=e))
    K, err = convert_answer(K, integer)
    if err:
        return wrong(_("a lookahead is a whole number >= 0: {err}.").format(err=err))
    if K < 0:
        return wrong(_("a lookahead is a whole number >= 0, got {K}.").format(K=K))
    best = la.best_lookahead_iid(a, c)
    mine = float(la.iid_speedup(a, K, c))
    if best == math.inf:
        why = (
            _("every draft is accepted, so each longer round is worth its cost")
            if a == 1.0
            else _("drafts cost nothing, so a longer lookahead never hurts")
        )
        return wrong(
            _(
                "K = {K} gives {mine:.3f}×, but here no K is best: {why}, and the speed-up grows with K without "
                "ever reaching its supremum. The answer to 'which K' is: none; as large as you can."
            ).format(K=K, mine=mine, why=why)
        )
    top = float(la.iid_speedup(a, best, c))
    if mine >= top * (1 - 1e-12):
        return correct(_("K = {K} gives the largest speed-up, {top:.3f}×.").format(K=K, top=top))
    direction = _("larger") if best > K else _("smaller")
    return wrong(
        _("K = {K} gives {mine:.3f}×, but some {direction} K does better (up to {top:.3f}×).").format(
            K=K, mine=mine, direction=direction, top=top
        )
    )


_lock.make_read_only(__name__)
