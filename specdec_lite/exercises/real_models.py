"""Lab 8 check: one round of verification, the heart of the engine.

The student writes ``verify_round(p, q, drafts, u) -> (accepted, next_law)``:
``p`` (K, V) the draft's laws at the K drafted positions, ``q`` (K + 1, V) the
target's laws from its one call, ``drafts`` the K drafted tokens, ``u`` K uniform
numbers. Draft ``i`` is accepted when ``u[i] < min(1, q_i(x_i)/p_i(x_i))``, left to
right until the first rejection; ``accepted`` is the number kept and ``next_law``
the law of the token that ends the round: the residual ``[q_n - p_n]_+`` at the
first rejection ``n``, or the bonus law ``q_K`` when all K are kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _lock
from .._i18n import N_, _
from ..laws import acceptance, residual
from . import instances
from .feedback import Feedback, _Refused, checker, correct, integer, run, vector, wrong


@_lock.guarded("exercises.real_models.verify_round")
def verify_round(p: np.ndarray, q: np.ndarray, drafts: np.ndarray, u: np.ndarray) -> tuple[int, np.ndarray]:
    """Reference: accepted prefix length and the law of the round's last token."""
    K = len(drafts)
    b = acceptance(p, q[:K])[np.arange(K), drafts]
    ok = u < b
    n = int(np.cumprod(ok).sum())
    return n, (residual(p[n], q[n]) if n < K else q[K])


def _cases(seed: int = 0) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The public rounds: 40 random ones (every fourth with every draft accepted), and ``p == q``."""
    rng = np.random.default_rng(seed)
    cases = _random_rounds(rng, 40, N_("random"))
    V, K = 6, 4
    p = rng.dirichlet(np.ones(V), size=K)
    q = np.vstack([p, rng.dirichlet(np.ones(V))])
    u = np.full(K, np.nextafter(1.0, 0.0))  # the largest value a uniform draw in [0, 1) can take
    cases.append(("p == q", p, q, np.array([rng.choice(V, p=row) for row in p]), u))  # every draft is kept
    return cases


def _drawn_cases() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Rounds drawn while the check runs (no one knows them before), with their laws to two decimals."""
    rng = instances.fresh()
    return _random_rounds(rng, 2 * instances.DRAWN, N_("drawn"), round_laws=True)


def _random_rounds(
    rng: np.random.Generator, n: int, name: str, *, round_laws: bool = False
) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    V, K = 6, 4
    cases = []
    for i in range(n):
        p = rng.dirichlet(np.full(V, 0.7), size=K)
        q = rng.dirichlet(np.full(V, 0.7), size=K + 1)
        if round_laws:  # two decimals, so that a message states them exactly
            p, q = (np.array([instances.law(rng, V, positive=True) for _row in rows]) for rows in (p, q))
        drafts = np.array([rng.choice(V, p=row) for row in p])
        u = np.round(rng.random(K), 4) if round_laws else rng.random(K)
        if i % 4 == 0:  # every draft accepted: the bonus law
            u = np.zeros(K)
        cases.append((name, p, q, drafts, u))
    return cases


def _stated(p: np.ndarray, q: np.ndarray, drafts: np.ndarray, u: np.ndarray) -> str:
    """The round's inputs in full, for a message."""

    def full(x: np.ndarray) -> str:
        return " ".join(np.array2string(x, precision=4, suppress_small=True, threshold=10_000).split())

    return _("drafts = {drafts_tolist}, u = {full_u}, p = {full_p}, q = {full_q}").format(
        drafts_tolist=drafts.tolist(), full_u=full(u), full_p=full(p), full_q=full(q)
    )


def _round_output(V: int) -> Any:
    law = vector(V)

    def convert(out: Any) -> tuple[int, np.ndarray]:
        try:
            n, next_law = out
        except Exception:  # noqa: BLE001 - anything that is not a pair
            raise _Refused(_("return a pair (accepted, next_law)")) from None
        try:
            n = integer(n)
        except _Refused as e:
            raise _Refused(_("accepted must be a whole number: {e}").format(e=e)) from None
        try:
            return n, law(next_law)
        except _Refused as e:
            raise _Refused(_("next_law should be a law over the {V} tokens: {e}").format(V=V, e=e)) from None

    return convert


@checker("exercises.real_models.verify_round")
def check_verify_round(fn: Callable[..., Any]) -> Feedback:
    """Compare the student's ``verify_round`` with the reference on random rounds and edge cases."""
    for name, p, q, drafts, u in _cases() + _drawn_cases():
        fb = _round_feedback(fn, name, p, q, drafts, u)
        if not fb.ok:
            return Feedback(
                False,
                _("{fb_message} (The round: {stated_p_q_drafts_u}.)").format(
                    fb_message=fb.message, stated_p_q_drafts_u=_stated(p, q, drafts, u)
                ),
            )
    return correct(
        _(
            "your verification keeps the accepted prefix, resamples the first rejection from the residual "
            "and draws a bonus token from q[K] when every draft survives."
        )
    )


def _round_feedback(
    fn: Callable[..., Any], name: str, p: np.ndarray, q: np.ndarray, drafts: np.ndarray, u: np.ndarray
) -> Feedback:
    """The verdict of ``fn`` on one round."""
    out, err = run(fn, p, q, drafts, u, convert=_round_output(p.shape[1]))
    if err:
        return wrong(_("on a {name} round: {err}.").format(name=_(name), err=err))
    want_n, want_law = verify_round(p, q, drafts, u)  # after the student's code returned
    got_n, got_law = out
    K = len(drafts)
    if got_n != want_n:
        ratio = q[np.arange(K), drafts] / p[np.arange(K), drafts]
        kept_all = int((u < np.minimum(1, ratio)).sum())
        if got_n == kept_all:
            return wrong(
                _(
                    "you counted every accepted draft ({got_n}), but a round stops at the first rejection: only the "
                    "first {want_n} are kept."
                ).format(got_n=got_n, want_n=want_n)
            )
        flipped = int(np.cumprod(u < np.minimum(1, 1 / ratio)).sum())
        if got_n == flipped:
            return wrong(_("your acceptance uses p/q; the rule is min(1, q(x)/p(x)) with q the target."))
        return wrong(
            _("on a {name} round you accepted {got_n} drafts; {want_n} should be kept.").format(
                name=_(name), got_n=got_n, want_n=want_n
            )
        )
    if np.allclose(got_law, want_law, rtol=1e-6, atol=1e-6):
        return correct("")
    if want_n == K:
        if np.allclose(got_law, q[K - 1]):
            return wrong(
                _(
                    "after all drafts are accepted, the bonus token comes from q at the position after the last "
                    "draft, q[K], not q[K-1]."
                )
            )
        return wrong(
            _(
                "after all drafts are accepted the next token is a bonus token from q[K], the target's law after "
                "the last draft."
            )
        )
    n = want_n
    if np.allclose(got_law, q[n]):
        return wrong(
            _(
                "after the rejection of draft {n} you sample from q; the unbiased law is the residual [q - p]_+ "
                "(sampling q is Decoding-UNO, which is biased)."
            ).format(n=n)
        )
    if np.any(got_law < -1e-12):
        return wrong(_("your law has negative entries: take the positive part max(q - p, 0) before normalising."))
    if abs(got_law.sum() - 1) > 1e-6:
        return wrong(
            _("your residual is not normalised: it sums to {got_law_sum:.4f}.").format(got_law_sum=got_law.sum())
        )
    return wrong(
        _(
            "after the rejection of draft {n}, your law differs from [q - p]_+ by {n0_5_np_abs_got_law_want:.3f} in TV."
        ).format(n=n, n0_5_np_abs_got_law_want=0.5 * np.abs(got_law - want_law).sum())
    )


_lock.make_read_only(__name__)
