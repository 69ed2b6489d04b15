"""Section 3, the requested temperature ``T``: both laws are tempered, ``p = softmax(d / T)`` and
``q = softmax(t / T)``; tempering the draft's logits only makes the output follow ``softmax(t)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._i18n import _
from ...laws import residual, tv
from .. import feedback as _feedback
from ..feedback import Feedback, correct, fmt, wrong
from .common import Z, _failure, _fits, _guard, _step_counts, softmax


def buggy_step_temperature(draft_logits, target_logits, temperature, rng):
    p = softmax(draft_logits / temperature)  # the draft samples at the requested temperature
    q = softmax(target_logits)  # the target's law, straight from its logits
    x = int(rng.choice(len(p), p=p))
    if rng.random() < min(1.0, q[x] / p[x]):
        return x, False
    return int(rng.choice(len(q), p=residual(p, q))), True


#: Logits of the temperature check (draft, target).
LOGITS = (np.array([2.0, 1.0, 0.5, 0.0, -1.0]), np.array([0.5, 1.5, 1.0, 0.8, -0.5]))


@_guard(*_feedback.DECODERS, "llm.verify.probs_from_logits")
def check_temperature(step: Callable[..., Any], runs: int = 4000, seed: int = 0) -> Feedback:
    """Check ``step(draft_logits, target_logits, temperature, rng)``: output law ``softmax(target_logits / T)``."""
    d, t = LOGITS
    for k, T in enumerate((0.5, 2.0)):
        got, err = _step_counts(step, (d, t, T), len(d), runs, seed + k)
        if err:
            return _failure(_("{err} (temperature τ = {tau})").format(err=err, tau=T))
        counts, rejected = got
        want = softmax(t / T)
        freq = fmt(counts / runs)
        if not _fits(counts, want):
            if _fits(counts, softmax(t)):
                return wrong(
                    _(
                        "at temperature τ = {tau} your output frequencies {freq} follow "
                        "softmax(target_logits) = {softmax_t}, "
                        "the target at temperature 1: unbiased, for the wrong target. Apply the temperature to both "
                        "models' logits (jaymody/speculative-sampling #9)."
                    ).format(tau=T, freq=freq, softmax_t=fmt(softmax(t)))
                )
            return wrong(
                _(
                    "at temperature τ = {tau} your output frequencies {freq} do not follow "
                    "softmax(target_logits / τ) = {want}."
                ).format(tau=T, freq=freq, want=fmt(want))
            )
        pT = softmax(d / T)
        rate, r = rejected.mean(), float(tv(pT, want))
        if abs(rate - r) > Z * np.sqrt(r * (1 - r) / runs):
            return wrong(
                _(
                    "at temperature τ = {tau} the output law is right, but the rejection rate {rate:.3f} is not "
                    "TV(p_τ, q_τ) = {r:.3f}: does the draft sample at the same temperature as its ratio?"
                ).format(tau=T, rate=rate, r=r)
            )
    return correct(
        _(
            "both laws are taken at the same temperature: the output follows the tempered target at τ = 0.5 "
            "and τ = 2, and each step rejects with probability TV(p_τ, q_τ)."
        )
    )


# Where the package has the labs' lock, a check module's names cannot be reassigned from a notebook.
_lock = getattr(_feedback, "_lock", None)
if _lock is not None and hasattr(_lock, "make_read_only"):
    _lock.make_read_only(__name__)
