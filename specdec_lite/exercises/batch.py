"""Checks for Lab 6 (batch speculative decoding), each naming the typical mistake.

* ``check_batch_improvement``: the batch improvement of one token with ``M`` drafts;
* ``check_expected_rejections_batch``: Theorem 3's forward pass on a first-order chain;
* ``check_tree_survivors``: the expected number of drafts the tree keeps after an acceptance.

While a check runs the student's code, the package functions that compute the
exercise's answer are switched off (``specdec_lite._lock``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import _lock, batch, theory
from .._i18n import _
from ..chains import MarkovChain
from ..laws import tv
from . import instances
from .feedback import Feedback, checker, correct, fmt, number, run, wrong

#: Tolerance for a student's numbers: float32 rounding passes, every typical mistake is far off.
TOL = 1e-6


def _close(a: float, b: float) -> bool:
    return bool(np.isclose(a, b, rtol=TOL, atol=TOL))


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
    for _i in range(M):
        unnormalised *= float(np.maximum(qm - p, 0.0).sum())
        qm = np.maximum(qm - p, 0.0)
    reach, _reached = batch.residual_cascade(p, q, M + 1)
    return {
        "power": d**M,
        "unnormalised": unnormalised,
        "M-1": float(reach[M - 1]),
        "M+1": float(reach[M + 1]),
    }


@checker("batch.batch_improvement", "batch.residual_cascade")
def check_batch_improvement(student_fn: Callable[[np.ndarray, np.ndarray, int], float]) -> Feedback:
    """Check ``student_fn(p, q, M)`` returning the batch improvement of one token with ``M`` drafts."""
    rng = instances.fresh()
    drawn = [(p, q, int(rng.integers(1, 7))) for p, q in instances.pairs(rng)]
    for p, q, M in _improvement_cases() + drawn:
        got, err = run(student_fn, p, q, M, convert=number)
        where = _("For p = {p}, q = {q}, M = {M}").format(p=fmt(p), q=fmt(q), M=M)
        nan_law = err is not None and "NaN" in err  # ``tv`` refused the NaN law the mistake builds (either language)
        if err and not nan_law:
            return wrong(_("{where}: {err}.").format(where=where, err=err))
        got = np.nan if nan_law else got
        want = float(batch.batch_improvement(p, q, M))
        if _close(got, want):
            continue
        if not np.isfinite(got):
            return wrong(
                _(
                    "{where} {what}: q^m - p sums to 0, so normalising it without the "
                    "positive part divides by 0; the residual is max(q^m - p, 0) / sum max(q^m - p, 0) "
                    "(laws.residual)."
                ).format(
                    where=where, what=_("you built a NaN law") if nan_law else _("you returned {got}").format(got=got)
                )
            )
        d = float(tv(p, q))
        where += _(" you returned {got:.4f} instead of {want:.4f}: ").format(got=got, want=want)
        if _close(got, d - want):
            return wrong(
                where
                + _(
                    "that is the product r_1 ... r_M (the chance all M drafts are rejected); the improvement is "
                    "TV(q, p) minus it."
                )
            )
        variants = _product_variants(p, q, M)
        hints = {
            "power": _(
                "you multiplied TV(q, p) by itself M times; each new draft is checked against the residual "
                "q^{m+1} = [q^m - p]_+, whose distance to p changes with m."
            ),
            "unnormalised": _(
                "your residuals are not normalised: max(q^m - p, 0) has mass r_m, not 1; divide by it before the "
                "next stage."
            ),
            "M-1": _("the product has one factor too few: with M drafts there are M stages, r_1 ... r_M."),
            "M+1": _("the product has one factor too many: with M drafts there are M stages, r_1 ... r_M."),
        }
        for name, prod in variants.items():
            if _close(got, d - prod):
                return wrong(where + hints[name])
        if got < -TOL or got > d + TOL:
            return wrong(where + _("the improvement lies between 0 and TV(q, p) = {d:.4f}.").format(d=d))
        return wrong(
            where
            + _(
                "start from q^1 = q, and let each stage's law be the residual of the previous one against p "
                "(laws.residual); the product runs over the M stages."
            )
        )
    return correct(
        _(
            "each extra draft faces what is left of q after the earlier ones, so the product of the r_m "
            "shrinks and the improvement climbs towards TV(q, p)."
        )
    )


def _wrong_batch_values(draft: MarkovChain, target: MarkovChain, M: int) -> dict[str, float]:
    """Expected rejections that typical mistakes in Theorem 3's forward pass produce."""
    p, q = draft.laws(), target.laws()
    reach, _reached = batch.residual_cascade(p, q, M)
    mu = target.marginals()
    start_everywhere = float(reach[-1][0, 0] + np.einsum("nu,nu->", mu[:-1], reach[-1][1:]))
    return {
        "theorem1": theory.expected_rejections(draft, target),
        "everywhere": start_everywhere,
        "first only": float(theory.rejection_profile(draft, target)[1:].sum() + reach[-1][0, 0]),
        "M-1": batch.expected_rejections_batch(draft, target, M - 1) if M > 1 else np.nan,
        "tree": batch.expected_rejections_tree(draft, target, M),
    }


@checker("batch.expected_rejections_batch", "batch.batch_rejection_profile", "batch.batch_forward")
def check_expected_rejections_batch(student_fn: Callable[[MarkovChain, MarkovChain, int], float]) -> Feedback:
    """Check ``student_fn(draft, target, M)`` returning Theorem 3's ``E[N_rej]`` of Algorithm 4."""
    cases = [
        (MarkovChain.random(3, 6, rng=1, uniform_init=False), MarkovChain.random(3, 6, rng=2), 3),
        (MarkovChain.random(5, 12, rng=3, uniform_init=False), MarkovChain.random(5, 12, rng=4), 4),
        (MarkovChain.random(4, 8, rng=5), MarkovChain.random(4, 8, rng=6), 1),
    ]
    rng = instances.fresh()
    T, V = int(rng.integers(3, 6)), int(rng.integers(2, 4))
    cases.append((instances.chain(rng, T, V), instances.chain(rng, T, V), int(rng.integers(2, 5))))
    for i, (draft, target, M) in enumerate(cases):
        got, err = run(student_fn, draft, target, M, convert=number)
        where = _("On a V = {target_V}, T = {target_T} pair with M = {M}").format(
            target_V=target.V, target_T=target.T, M=M
        )
        if i == 3:
            where = _(
                "On a pair drawn for this check (draft: {instances_describe_chain}; target: "
                "{instances_describe_chain2}) with M = {M}"
            ).format(
                instances_describe_chain=instances.describe_chain(draft),
                instances_describe_chain2=instances.describe_chain(target),
                M=M,
            )
        if err:
            return wrong(_("{where}: {err}.").format(where=where, err=err))
        want = batch.expected_rejections_batch(draft, target, M)
        if _close(got, want):
            continue
        if not np.isfinite(got):
            return wrong(
                _("{where} you returned {got}; an expected count of rejections is finite.").format(where=where, got=got)
            )
        where += _(" you returned {got:.4f} instead of {want:.4f}: ").format(got=got, want=want)
        hints = {
            "theorem1": _(
                "that is Theorem 1, as if every position used one draft; positions that start a round (the "
                "first, and every one after a rejection) reject only with r_1 ... r_M."
            ),
            "everywhere": _(
                "you used r_1 ... r_M at every position; only a round's first position uses the M drafts, the "
                "chosen draft then continues with the plain rule (TV)."
            ),
            "first only": _(
                "only the first position got the batch; every position right after a rejection also starts a "
                "round: weigh it with f_{n-1}, the mass of a rejection at n - 1."
            ),
            "M-1": _("that is Algorithm 4 with M - 1 drafts: the product has M factors r_1 ... r_M."),
            "tree": _(
                "that is the draft tree (every matching draft kept); Algorithm 4 keeps the accepted draft alone."
            ),
        }
        for name, value in _wrong_batch_values(draft, target, M).items():
            if _close(got, value):
                return wrong(where + hints[name])
        if got < 0 or got > target.T:
            return wrong(
                where + _("an expected count of rejections lies in [0, T] = [0, {target_T}].").format(target_T=target.T)
            )
        return wrong(
            where
            + _(
                "carry f_n(x) = P(x_n = x, R_n = 1) next to the target's marginal: a position right after a "
                "rejection starts a round (M drafts), any other one continues a round (one draft)."
            )
        )
    return correct(
        _(
            "a rejection buys the next position a fresh batch of M drafts; the measure f tracks exactly how "
            "often that happens."
        )
    )


@checker()
def check_tree_survivors(student_fn: Callable[[int, int, float], float]) -> Feedback:
    """Check ``student_fn(k, m, p_x)``: expected survivors after candidate m of k is accepted as token x."""
    cases = [(5, 2, 0.3), (8, 1, 0.5), (3, 3, 0.9), (10, 4, 0.0), (1, 1, 0.25)]
    rng = instances.fresh()
    for _i in range(instances.DRAWN):
        k = int(rng.integers(2, 13))
        cases.append((k, int(rng.integers(1, k)), int(rng.integers(1, 100)) / 100))
    for k, m, px in cases:
        got, err = run(student_fn, k, m, px, convert=number)
        where = _("For k = {k}, m = {m}, p(x) = {px}").format(k=k, m=m, px=px)
        if err:
            return wrong(_("{where}: {err}.").format(where=where, err=err))
        want = 1 + (k - m) * px
        if _close(got, want):
            continue
        if not np.isfinite(got):
            return wrong(
                _("{where} you returned {got}; an expected number of drafts is finite.").format(where=where, got=got)
            )
        where += _(" you returned {got:.4f} instead of {want:.4f}: ").format(got=got, want=want)
        if _close(got, (k - m) * px):
            return wrong(where + _("you forgot the accepted draft itself: it always survives."))
        if _close(got, 1 + (k - 1) * px):
            return wrong(
                where
                + _(
                    "candidates 1..m-1 were rejected, and a rejected token can never be accepted later (its residual "
                    "mass is 0), so none of them carries x."
                )
            )
        if _close(got, k * px) or _close(got, 1 + k * px):
            return wrong(where + _("not every candidate can still carry x: think about which ones were tested."))
        return wrong(
            where
            + _(
                "count the accepted draft, then ask which of the other candidates can carry x, and with what "
                "probability each."
            )
        )
    return correct(_("the survivors are 1 + Binomial(k - m, p(x)); that random count is the tree's extra state."))


_lock.make_read_only(__name__)
