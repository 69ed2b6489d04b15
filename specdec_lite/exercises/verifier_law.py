"""Lab 9: the verifier's law is not the law the user asked for, and the check of its fix.

Speculative decoding outputs exactly the law ``q`` its verifier tests against (Theorem 1).
An engine whose verifier builds ``q`` from the logits differently from its normal sampler
outputs the verifier's law: turning speculation on changes what the user gets, and every
test that compares the output with the verifier's own ``q`` passes. The bug of this
section is sgl-project/sglang PR #36173's: normal sampling takes the top-p cutoff from
the law before top-k and keeps the tokens both filters keep, while the verifier applied
top-k, renormalised, and took top-p from what was left.

``check_target_law`` compares the student's verifier law with normal sampling's law
(``sampling.sampling_law(..., top_p_from="original")``) exactly, on the lab's logits and
on ``instances.DRAWN`` configurations drawn while it runs. Nothing is sampled, so a right
answer never fails: a drawn configuration with two equal logits (a sort may drop either), or
whose top-p boundary lies within ``MARGIN`` of a cumulative mass, is drawn again, so neither
a tie nor the rounding of a correct implementation, in float64 or in float32, can move a token
across it; the law must then keep exactly normal sampling's tokens and lie within ``TOLERANCE``
of it in TV, some 50 times float32's rounding (at most 2.2e-7 over 20,000 drawn configurations, in torch
and in numpy) and far below any wrong law's distance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._i18n import _
from ..laws import tv
from ..sampling import sampling_law
from . import feedback as _feedback
from . import instances
from .bugs import _failure, _guard, _student, softmax
from .feedback import Feedback, correct, wrong

#: How close to a top-p boundary a drawn configuration may put a cumulative mass (then it is drawn again):
#: well above float32's rounding of a cumulative sum of at most 12 probabilities (under 1e-6).
MARGIN = 1e-5
#: How far in TV a right law, with normal sampling's tokens, may sit from normal sampling's law (float32 rounding).
TOLERANCE = 1e-5

#: The lab's case (sglang PR #36173's probabilities): logits, temperature, top-k, top-p.
LOGITS = np.log(np.array([0.35, 0.25, 0.20, 0.05, 0.03, 0.04, 0.03, 0.02, 0.02, 0.01]))
CASE = (LOGITS, 1.0, 4, 0.82)


def buggy_target_law(logits, temperature, top_k, top_p):
    z = np.asarray(logits, dtype=float) / temperature
    z = np.where(z < np.sort(z)[-top_k], -np.inf, z)  # top-k
    q = softmax(z)  # the k tokens left, renormalised
    order = np.argsort(q)
    drop = np.cumsum(q[order]) <= 1 - top_p  # top-p on what top-k left
    drop[-1] = False
    q[order[drop]] = 0.0
    return q / q.sum()


def user_law(logits: np.ndarray, temperature: float, top_k: int, top_p: float) -> np.ndarray:
    """The law normal sampling draws from: top-p's cutoff from the law before top-k, intersected with top-k."""
    return sampling_law(logits, temperature=temperature, top_k=top_k, top_p=top_p, top_p_from="original")


def _near_boundary(logits: np.ndarray, temperature: float, top_p: float) -> bool:
    """Whether a cumulative mass of top-p's sort, before or after top-k, lies within ``MARGIN`` of ``1 - top_p``."""
    law = softmax(np.asarray(logits) / temperature)
    masses = np.cumsum(np.sort(law))
    return bool(np.any(np.abs(masses - (1 - top_p)) < MARGIN))


def _drawn_cases(rng: np.random.Generator, n: int = instances.DRAWN) -> list[tuple[np.ndarray, float, int, float]]:
    """``n`` configurations: distinct logits with two decimals on 6 to 12 tokens, temperature (never the lab's 1, so
    that a law without it fails), top-k, top-p."""
    out: list[tuple[np.ndarray, float, int, float]] = []
    while len(out) < n:
        V = int(rng.integers(6, 13))
        logits = np.round(rng.normal(scale=2.0, size=V), 2)
        T, k, p = float(rng.choice([0.7, 1.3])), int(rng.integers(2, V)), float(rng.choice([0.6, 0.75, 0.9]))
        kept = np.where(logits < np.sort(logits)[-k], -np.inf, logits)
        ties = len(np.unique(logits)) < V  # two equal logits: which one a sort drops first is arbitrary
        if not (ties or _near_boundary(logits, T, p) or _near_boundary(kept, T, p)):
            out.append((logits, T, k, p))
    return out


def _plain(x: Any) -> np.ndarray:
    """The student's law as a float64 array, read inside the lock."""
    try:
        return np.array(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise _feedback._Refused(
            _("return the law as an array, got {kind}").format(kind=_feedback.kind_of(x))
        ) from None


def _describe(logits: np.ndarray, temperature: float, top_k: int, top_p: float) -> str:
    return _("logits {logits}, temperature {T:g}, top_k = {k}, top_p = {p:g}").format(
        logits=np.array2string(logits, precision=2, separator=", "), T=temperature, k=top_k, p=top_p
    )


@_guard("sampling.sampling_law")
def check_target_law(target_law: Callable[..., Any]) -> Feedback:
    """Check ``target_law(logits, T, top_k, top_p)``: the verifier's law equals normal sampling's law."""
    for case in [CASE, *_drawn_cases(instances.fresh())]:
        logits, T, k, p = case
        got, err = _student(target_law, logits.copy(), T, k, p, convert=_plain)
        if err:
            return _failure(_("{err} ({case})").format(err=err, case=_describe(*case)))
        want = user_law(logits, T, k, p)
        where = _("with {case}: ").format(case=_describe(*case))
        if got.shape != want.shape:
            return wrong(
                where
                + _("return one probability per token (shape {want}), got {got}.").format(
                    want=want.shape, got=got.shape
                )
            )
        if not (np.all(np.isfinite(got)) and np.all(got >= 0) and abs(got.sum() - 1) < 1e-6):
            return wrong(where + _("your answer is not a law (its entries must be >= 0 and sum to 1)."))
        gap = float(tv(got, want, check=False))
        if gap <= TOLERANCE and np.array_equal(got > 0, want > 0):
            continue
        if tv(got, buggy_target_law(logits, T, k, p), check=False) <= TOLERANCE:
            return wrong(
                where
                + _(
                    "your law still takes top-p's cutoff from what top-k left, renormalised; normal sampling takes "
                    "it from the law before top-k and keeps the tokens both filters keep (sglang PR #36173)."
                )
            )
        kept = (got > 0) == (want > 0)
        if kept.all():
            return wrong(
                where
                + _(
                    "your law keeps the right tokens but is {gap:.3g} from normal sampling's law in TV: renormalise "
                    "softmax(logits / T) over the tokens kept."
                ).format(gap=gap)
            )
        return wrong(
            where
            + _("your law keeps tokens {got} where normal sampling keeps tokens {want} ({gap:.3g} in TV).").format(
                got=np.flatnonzero(got > 0).tolist(), want=np.flatnonzero(want > 0).tolist(), gap=gap
            )
        )
    return correct(
        _(
            "the verifier tests the drafts against the law normal sampling draws from, on the lab's case and on "
            "{drawn} configurations drawn now: with speculation on, the user gets the law they asked for."
        ).format(drawn=instances.DRAWN)
    )


# Where the package has the labs' lock, a check module's names cannot be reassigned from a notebook.
_lock = getattr(_feedback, "_lock", None)
if _lock is not None and hasattr(_lock, "make_read_only"):
    _lock.make_read_only(__name__)
