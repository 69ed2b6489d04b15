"""Checks for the Part II labs (chapters 4-5), each with feedback that names the mistake.

Every check compares the student's answer with ``optimality`` and ``tradeoff``
and recognises the typical wrong answers (the speculative residual where another
law is needed, a missing normalisation, a missing term, a missing clip, ...).
While a check runs the student's code, the package functions that compute the
exercise's answer are switched off (``specdec_lite._lock``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _lock
from .._i18n import _
from ..laws import acceptance, residual, tv
from ..optimality import unbiased_rejection_law
from ..tradeoff import over_accept, tv_loss
from . import instances
from .feedback import Feedback, checker, convert_answer, correct, fmt, number, run, vector, wrong

#: Below this rejected mass nothing is ever rejected (every rejection law is then right).
ATOL = 1e-9

#: Tolerance for a student's laws and numbers: float32 rounding passes, every typical mistake is far off.
TOL = 1e-6

#: How close a rule built by hand must come to the rejection probability asked for (Lab 4, exercise 2).
REJECT_ATOL = 1e-3


def _cases() -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``(p, q, b)`` triples with ``b <= min(1, q/p)``: generic, a zero in p, p == q, a one-hot target."""
    return [
        (np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5]), np.array([0.2, 0.5, 1.0])),
        (np.array([0.1, 0.6, 0.3, 0.0]), np.full(4, 0.25), np.array([1.0, 0.2, 0.5, 1.0])),
        (np.array([0.7, 0.2, 0.1]), np.array([0.7, 0.2, 0.1]), np.array([0.5, 0.5, 0.5])),
        (np.array([0.6, 0.4, 0.0]), np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, 1.0])),
    ]


def _biased_cases() -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``(p, q, b)`` with ``b`` above the speculative rule on some tokens (and below on others)."""
    return [
        (np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5]), np.array([0.8, 0.5, 1.0])),
        (np.array([0.1, 0.6, 0.3, 0.0]), np.full(4, 0.25), np.array([1.0, 0.9, 0.1, 1.0])),
        (np.array([0.7, 0.2, 0.1]), np.array([0.1, 0.2, 0.7]), np.array([1.0, 1.0, 1.0])),
        (np.array([0.25, 0.25, 0.5]), np.array([0.5, 0.3, 0.2]), np.array([0.0, 0.0, 0.0])),
    ]


def _drawn(*, biased: bool) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``(p, q, b)`` drawn now, with two decimals: ``b <= min(1, q/p)`` unless ``biased`` (then any ``b`` in [0, 1])."""
    rng = instances.fresh()
    out = []
    for p, q in instances.pairs(rng):
        b = rng.integers(0, 101, p.size) / 100
        if not biased:
            top = np.minimum(1.0, np.divide(q, p, out=np.ones_like(p), where=p > 0))
            b = np.floor(b * top * 100 + 1e-9) / 100
            b = np.where(b > top, top, b)  # a last rounding never lifts b above the speculative rule
        out.append((p, q, b))
    return out


def _close(a: Any, b: Any) -> bool:
    return bool(np.allclose(a, b, rtol=TOL, atol=TOL))


# --- Chapter 4 ------------------------------------------------------------------


@checker("optimality.unbiased_rejection_law", "tradeoff.optimal_rejection_law", "laws.residual")
def check_unbiased_rejection_law(student: Callable[[np.ndarray, np.ndarray, np.ndarray], Any]) -> Feedback:
    """Check ``student(p, q, b)`` returning Corollary 1's rejection law for a rule ``b <= min(1, q/p)``."""
    for p, q, b in _cases() + _drawn(biased=False):
        if ((1 - b) * p).sum() <= ATOL:
            continue  # nothing is ever rejected: every law is fine
        where = _("For p = {p}, q = {q}, b = {b}").format(p=fmt(p), q=fmt(q), b=fmt(b))
        P, err = run(student, p, q, b, convert=vector(p.size))
        if err:
            return wrong(_("{where}: {err}.").format(where=where, err=err))
        want = unbiased_rejection_law(p, q, b)
        if _close(P, want):
            continue
        where += _(" you returned {P} instead of {want}: ").format(P=fmt(P), want=fmt(want))
        r = ((1 - b) * p).sum()
        if not np.all(np.isfinite(P)):
            return wrong(where + _("it has NaN or inf; divide by sum_x (1 - b(x)) p(x), which is > 0 here."))
        if _close(P, q - b * p):
            return wrong(
                where
                + _("it sums to {P_sum:.3f}, not 1. Divide by sum_x (1 - b(x)) p(x) = {r:.3f}.").format(
                    P_sum=P.sum(), r=r
                )
            )
        if _close(P, residual(p, q)):
            return wrong(
                where
                + _(
                    "that is speculative decoding's residual [q - p]_+, the right law only when b = min(1, q/p). "
                    "Whatever b keeps, P must supply q - b p."
                )
            )
        if _close(P, q):
            return wrong(where + _("sampling q after a rejection double counts the mass b p already accepted."))
        if np.any(P < -TOL):
            return wrong(where + _("it has negative entries; check the sign: the mass still missing is q - b p."))
        if abs(P.sum() - 1) > TOL:
            return wrong(where + _("it sums to {P_sum:.3f}; a rejection law must sum to 1.").format(P_sum=P.sum()))
        return wrong(where + _("the output b p + (sum (1 - b) p) P must equal q; solve that for P."))
    return correct(
        _(
            "your law supplies exactly the mass q - b p still missing, scaled by the rejected mass: the only "
            "law that makes b unbiased (Corollary 1)."
        )
    )


@checker()
def check_unbiased_member(p: Any, q: Any, accept: Any, rejection: Any, target_reject: float | None = None) -> Feedback:
    """Check that the student's algorithm ``(b, P)`` is unbiased for ``(p, q)`` (and rejects ``target_reject``)."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    b, err = convert_answer(accept, vector(p.size))
    if err:
        return wrong(_("b: {err}.").format(err=err))
    P, err = convert_answer(rejection, vector(p.size))
    if err:
        return wrong(_("P: {err}.").format(err=err))
    if not np.all(np.isfinite(b)) or np.any(b < -TOL) or np.any(b > 1 + TOL):
        return wrong(_("b must be a probability for every token; yours is {b}.").format(b=fmt(b)))
    scale = max(1.0, float(np.abs(P).max()))  # rounding of a law's entries is relative to its size
    if not np.all(np.isfinite(P)) or np.any(P < -TOL * scale) or abs(P.sum() - 1) > TOL * scale:
        return wrong(
            _("P must be a probability law (nonnegative, summing to 1); yours is {P}, summing to {P_sum:.3f}.").format(
                P=fmt(P), P_sum=P.sum()
            )
        )
    b, P = np.clip(b, 0.0, 1.0), np.clip(P, 0.0, None)  # rounding-level excursions, accepted above
    spec = acceptance(p, q)
    over = (b > spec + TOL) & (p > 0)
    if np.any(over):
        k = int(np.argmax(over))
        return wrong(
            _(
                "b(x={k}) = {b_k:.3f} exceeds min(1, q/p) = {spec_k:.3f}: token {k} already comes out with "
                "probability at least b p = {b_k_p_k:.3f} > q = {q_k:.3f}, and no rejection law can take mass "
                "away. Lower b there."
            ).format(k=k, b_k=b[k], spec_k=spec[k], b_k_p_k=b[k] * p[k], q_k=q[k])
        )
    r = float(((1 - b) * p).sum())
    out = b * p + r * P
    if not _close(out, q):
        k = int(np.argmax(np.abs(out - q)))
        return wrong(
            _(
                "your output law is {out}, not q = {q} (worst at x={k}); with this b the only unbiased P is "
                "{unbiased_rejection_law_p}. The output law must equal q to within {TOL:g}: compute P from b "
                "rather than typing rounded values."
            ).format(
                out=fmt(out), q=fmt(q), k=k, unbiased_rejection_law_p=fmt(unbiased_rejection_law(p, q, b)), TOL=TOL
            )
        )
    if target_reject is not None and abs(r - target_reject) > REJECT_ATOL:
        return wrong(
            _(
                "unbiased, but it rejects with probability {r:.4f}, not {target_reject:.3f} (within "
                "{REJECT_ATOL:g}). Lowering b on a token p proposes raises the rejection probability by p(x) "
                "times the drop."
            ).format(r=r, target_reject=target_reject, REJECT_ATOL=REJECT_ATOL)
        )
    return correct(
        _(
            "unbiased, rejecting with probability {r:.3f} ≥ TV(p, q) = {float_tv_p_q:.3f}, as Theorem 2 says "
            "every unbiased rule must."
        ).format(r=r, float_tv_p_q=float(tv(p, q)))
    )


# --- Chapter 5 ------------------------------------------------------------------


@checker("tradeoff.tv_loss", "llm.verify.position_stats")
def check_tv_loss(student: Callable[[np.ndarray, np.ndarray, np.ndarray], Any]) -> Feedback:
    """Check ``student(p, q, b)`` returning Theorem 4's smallest loss ``Loss*_TV(b)`` of the rule ``b``."""
    for p, q, b in _biased_cases() + _cases() + _drawn(biased=True) + _drawn(biased=False):
        where = _("For p = {p}, q = {q}, b = {b}").format(p=fmt(p), q=fmt(q), b=fmt(b))
        got, err = run(student, p, q, b, convert=number)
        if err:
            return wrong(_("{where}: {err}.").format(where=where, err=err))
        want = float(tv_loss(p, q, b))
        if _close(got, want):
            continue
        if not np.isfinite(got):
            return wrong(_("{where} you returned {got}; the loss is a finite number.").format(where=where, got=got))
        where += _(" you returned {got:.4f} instead of {want:.4f}: ").format(got=got, want=want)
        r = float(((1 - b) * p).sum())
        half = 0.5 * float(np.abs(q - b * p).sum())
        if _close(got, half):
            return wrong(
                where
                + _(
                    "that is 1/2 sum|q - b p| alone; the rejected mass {r:.3f} can be placed optimally, which "
                    "removes 1/2 sum (1 - b) p."
                ).format(r=r)
            )
        if _close(got, half - r):
            return wrong(where + _("the rejected mass enters with a factor 1/2: subtract 1/2 sum (1 - b) p."))
        if _close(got, float(tv(p, q))):
            return wrong(where + _("that is TV(p, q), the loss of always accepting; the loss depends on b."))
        if _close(got, float(np.maximum(q - b * p, 0).sum())):
            return wrong(
                where
                + _(
                    "that is the mass still missing, sum max(0, q - b p); the loss is the mass over-accepted, sum "
                    "max(0, b p - q)."
                )
            )
        return wrong(where + _("Theorem 4 states Loss*_TV(b); write it out and simplify it token by token."))
    return correct(_("the loss is the mass over-accepted, sum_x max(0, b p - q): what no rejection law can undo."))


@checker("tradeoff.optimal_rejection_law", "optimality.unbiased_rejection_law", "laws.residual")
def check_optimal_rejection_law(student: Callable[[np.ndarray, np.ndarray, np.ndarray], Any]) -> Feedback:
    """Check ``student(p, q, b)`` returns *an* optimal law of Theorem 4 (any member of the optimal set)."""
    for p, q, b in _biased_cases() + _cases() + _drawn(biased=True) + _drawn(biased=False):
        r = float(((1 - b) * p).sum())
        if r <= ATOL:
            continue  # nothing is rejected: every law is optimal
        where = _("For p = {p}, q = {q}, b = {b}").format(p=fmt(p), q=fmt(q), b=fmt(b))
        P, err = run(student, p, q, b, convert=vector(p.size))
        if err:
            return wrong(_("{where}: {err}.").format(where=where, err=err))
        if not np.all(np.isfinite(P)):
            return wrong(_("{where} your P = {P} has NaN or inf entries.").format(where=where, P=fmt(P)))
        if np.any(P < -TOL) or abs(P.sum() - 1) > TOL:
            return wrong(
                _(
                    "{where} your P = {P} is not a law (it sums to {P_sum:.3f}, min {P_min:.3f}). If you used A = (q "
                    "- b p) / sum (1 - b) p, keep only its positive part and renormalise."
                ).format(where=where, P=fmt(P), P_sum=P.sum(), P_min=P.min())
            )
        P = np.clip(P, 0.0, None)  # entries down to -TOL are rounding, accepted above
        A = (q - b * p) / r
        out = b * p + r * P
        loss, best = float(tv(out, q)), float(tv_loss(p, q, b))
        if loss <= best + TOL:
            continue
        bad = np.flatnonzero((A < -TOL) & (P > TOL))
        if bad.size:
            k = int(bad[0])
            return wrong(
                _(
                    "{where} your P puts {P_k:.3f} on x={k}, where b p already exceeds q (A = {A_k:.3f} < 0): that "
                    "mass only adds bias. Loss {loss:.4f} > optimum {best:.4f}."
                ).format(where=where, P_k=P[k], k=k, A_k=A[k], loss=loss, best=best)
            )
        k = int(np.argmax(P - A))
        return wrong(
            _(
                "{where} your P({k}) = {P_k:.3f} exceeds A({k}) = {A_k:.3f}, overshooting q there. Loss "
                "{loss:.4f} > optimum {best:.4f}."
            ).format(where=where, k=k, P_k=P[k], A_k=A[k], loss=loss, best=best)
        )
    return correct(_("your law is optimal: zero where b p exceeds q, and nowhere overshooting q."))


@checker("tradeoff.over_accept", "laws.over_accept", "laws.acceptance")
def check_over_accept(student: Callable[[np.ndarray, np.ndarray, float], Any]) -> Feedback:
    """Check ``student(p, q, eps)`` returning the over-acceptance rule of the lab (any value where ``p = 0``)."""
    public = list(zip(_cases() + _biased_cases(), [0.0, 0.05, 0.1, 0.3, 0.02, 0.0, 0.2, 1.0], strict=True))
    drawn = [(case, int(instances.fresh().integers(0, 31)) / 100) for case in _drawn(biased=True)]
    for (p, q, _k), eps in public + drawn:
        where = _("For p = {p}, q = {q}, eps = {eps}").format(p=fmt(p), q=fmt(q), eps=eps)
        b, err = run(student, p, q, eps, convert=vector(p.size))
        if err:
            return wrong(_("{where}: {err}.").format(where=where, err=err))
        seen = p > 0
        want = over_accept(p, q, eps)
        if _close(b[seen], want[seen]):
            continue
        where += _(" you returned {b} instead of {want}: ").format(b=fmt(b), want=fmt(want))
        with np.errstate(all="ignore"):
            unclipped = (q + eps) / p
            if _close(b[seen], unclipped[seen]):
                return wrong(where + _("some values exceed 1; an acceptance probability needs the min(1, ...)."))
            if _close(b[seen], np.minimum(1, q / p + eps)[seen]):
                return wrong(where + _("eps is added to the probability q(x), before dividing by p(x)."))
        if _close(b[seen], acceptance(p, q)[seen]):
            return wrong(where + _("that is speculative decoding's min(1, q/p); add eps to q first."))
        if np.any(~np.isfinite(b[seen])):
            return wrong(where + _("it has NaN or inf where p(x) > 0."))
        return wrong(where + _("b(x) = min(1, (q(x) + eps) / p(x))."))
    return correct(_("b = min(1, (q + eps)/p): eps = 0 is speculative decoding, eps >= max(p - q) accepts everything."))


_lock.make_read_only(__name__)
