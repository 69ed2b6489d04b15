"""Section 2, proposing a token: the draft's token is a draw ``x ~ p``; tested with ``min(1, q(x) / p(x))``
and completed from ``[q - p]_+``, the output follows ``q`` (Chapter 2), which a draft's argmax does not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._i18n import _
from ...laws import residual, tv
from .. import feedback as _feedback
from ..feedback import Feedback, correct, fmt, wrong
from .common import P, Q, Z, _failure, _fits, _guard, _step_counts


def buggy_step_argmax(p, q, rng):
    x = int(np.argmax(p))  # the draft proposes its most likely token
    if rng.random() < min(1.0, q[x] / p[x]):
        return x, False
    return int(rng.choice(len(q), p=residual(p, q))), True


def _law_of_proposal(r: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Output law when the draft token is drawn from ``r`` but tested with ``min(1, q/p)`` and ``[q - p]_+``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(p > 0, np.minimum(1, q / p), 0.0)
    kept = r * b
    return kept + (1 - kept.sum()) * residual(p, q)


@_guard(*_feedback.DECODERS)
def check_draft_sampling(step: Callable[..., Any], runs: int = 4000, seed: int = 0) -> Feedback:
    """Check ``step(p, q, rng) -> (token, rejected)``: output law q and rejection rate TV(p, q)."""
    got, err = _step_counts(step, (P, Q), len(P), runs, seed)
    if err:
        return _failure(err)
    counts, rejected = got
    freq = fmt(counts / runs)
    if not _fits(counts, Q):
        argmax = _law_of_proposal(np.eye(len(P))[np.argmax(P)], P, Q)
        top2 = np.where(P >= np.sort(P)[-2], P, 0)
        if _fits(counts, argmax):
            return wrong(
                _(
                    "your output frequencies {freq} follow {argmax}, not q = {Q}: the draft token is still the "
                    "argmax of p while the ratio uses p (jaymody/speculative-sampling #3). Draw it from p, or test "
                    "the argmax against the one-hot law it was drawn from."
                ).format(freq=freq, argmax=fmt(argmax), Q=fmt(Q))
            )
        if _fits(counts, _law_of_proposal(top2 / top2.sum(), P, Q)):
            return wrong(
                _(
                    "your output frequencies {freq} do not follow q = {Q}: the token is drawn from a truncated "
                    "(top-k) draft law but tested with the full p (huggingface/transformers #47932). Use the law you "
                    "drew from in the ratio and in the residual."
                ).format(freq=freq, Q=fmt(Q))
            )
        return wrong(
            _(
                "your output frequencies {freq} do not follow q = {Q} (chi-square test): the ratio min(1, q/p) "
                "and the residual are exact only for a token drawn from p."
            ).format(freq=freq, Q=fmt(Q))
        )
    rate, t = rejected.mean(), float(tv(P, Q))
    one_hot = float(tv(np.eye(len(P))[np.argmax(P)], Q))
    if abs(rate - one_hot) <= Z * np.sqrt(one_hot * (1 - one_hot) / runs):
        return correct(
            _(
                "output frequencies {freq} match q: the argmax tested against its own one-hot law is unbiased, "
                "but it rejects {rate:.3f} of the time, TV(one-hot, q) = {one_hot:.3f}, against TV(p, q) = "
                "{t:.3f} for a token drawn from p (Theorem 1 with the one-hot law as the draft)."
            ).format(freq=freq, rate=rate, one_hot=one_hot, t=t)
        )
    se = np.sqrt(t * (1 - t) / runs)
    if abs(rate - t) > Z * se:
        return wrong(
            _(
                "the output law is right, but you report a rejection rate {rate:.3f}; Theorem 1 says one step "
                "rejects with probability TV(p, q) = {t:.3f} when the token is drawn from p."
            ).format(rate=rate, t=t)
        )
    return correct(
        _("output frequencies {freq} match q, and the rejection rate {rate:.3f} matches TV(p, q) = {t:.3f}.").format(
            freq=freq, rate=rate, t=t
        )
    )


# Where the package has the labs' lock, a check module's names cannot be reassigned from a notebook.
_lock = getattr(_feedback, "_lock", None)
if _lock is not None and hasattr(_lock, "make_read_only"):
    _lock.make_read_only(__name__)
