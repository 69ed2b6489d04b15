"""Section 1, the residual drawn up front: ``[q - p]_+ = max(q - p, 0) / TV(p, q)`` is a law only where
``TV(p, q) > 0``; a step that draws every run's fallback token before testing divides by zero when ``p = q``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._i18n import _
from ...laws import residual
from .. import feedback as _feedback
from .. import instances
from ..feedback import Feedback, correct, fmt, wrong
from .common import P, Q, _failure, _fits, _guard, _student


def buggy_residual(p, q):
    pos = np.maximum(q - p, 0)  # the target's excess over the draft
    return pos / pos.sum()  # normalised to a law


def buggy_step_all_at_once(p, q, runs, rng, residual=buggy_residual):
    drafts = rng.choice(len(p), size=runs, p=p)  # every run's draft token
    fallback = rng.choice(len(q), size=runs, p=residual(p, q))  # and its replacement, drawn up front
    accept = rng.random(runs) < np.minimum(1, q[drafts] / p[drafts])
    return np.where(accept, drafts, fallback), ~accept


def _residual_cases() -> list[tuple[str, np.ndarray, np.ndarray]]:
    near = np.array([0.2, 0.3, 0.5])
    return [
        (_("a generic pair"), P, Q),
        ("p = q", np.array([0.7, 0.2, 0.1]), np.array([0.7, 0.2, 0.1])),
        (_("two one-hot laws on the same token (both models sure, at temperature 0)"), np.eye(4)[2], np.eye(4)[2]),
        (_("p = q up to rounding"), near, (near * 3) / 3),
        (_("disjoint supports"), np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.5, 0.5])),
    ]


@_guard("laws.residual", "laws.rejected_mass", "tradeoff.optimal_rejection_law")
def check_residual_guard(student_residual: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Feedback:
    """Check a residual ``[q - p]_+`` that returns a law for every pair, ``p = q`` included."""
    rng = instances.fresh()
    same = instances.law(rng, int(rng.integers(3, 7)))
    drawn = [(_("a pair drawn for this check"), p, q) for p, q in instances.pairs(rng, 2)]
    drawn.append((_("p = q drawn for this check"), same, same.copy()))
    for name, p, q in _residual_cases() + drawn:
        with np.errstate(divide="ignore", invalid="ignore"):
            got, err = _student(student_residual, p, q, convert=_feedback.vector(p.shape))  # read inside the lock
        if err:
            return _failure(_("{err} (one probability per token) on {name}").format(err=err, name=name))
        where = _("On {name} (p = {p}, q = {q}) you returned {got}: ").format(
            name=name, p=fmt(p), q=fmt(q), got=fmt(got)
        )
        mass = np.maximum(q - p, 0).sum()
        if not np.all(np.isfinite(got)):
            return wrong(
                where
                + _(
                    "max(q - p, 0) has no mass, so normalising it is 0/0 = NaN, and drawing from it fails (the bug "
                    "of jaymody/speculative-sampling #5). Return a valid law when the mass is 0, e.g. q: it is never "
                    "used, because a rejection has probability TV(p, q) = 0."
                )
            )
        if np.any(got < 0) or not np.isclose(got.sum(), 1, atol=1e-9):
            if np.allclose(got, 0):
                return wrong(
                    where
                    + _(
                        "all zeros is not a law (replacing NaN by 0 leaves "
                        "nothing to draw from); return a law, e.g. q, "
                        "when max(q - p, 0) has no mass."
                    )
                )
            return wrong(
                where
                + _("not a law (sum {got_sum:.4f}, min {got_min:.3g}).").format(got_sum=got.sum(), got_min=got.min())
            )
        if mass > 1e-9 and not np.allclose(got, np.maximum(q - p, 0) / mass, atol=1e-9):
            return wrong(
                where
                + _("where the residual has mass it must be [q - p]+ = {residual_p_q}.").format(
                    residual_p_q=fmt(residual(p, q))
                )
            )
    counts, err = _all_at_once_counts(student_residual, np.array([0.7, 0.2, 0.1]), np.array([0.7, 0.2, 0.1]))
    if err:
        return _failure(err)
    return correct(
        _(
            "the residual is [q - p]+ where it has mass and a valid law otherwise, so a step that draws its "
            "fallback up front runs on p = q too, with output law q."
        )
    )


def _all_at_once_counts(student_residual: Callable, p: np.ndarray, q: np.ndarray) -> tuple[Any, str | None]:
    def guarded(a, b):
        out, err = _student(student_residual, a, b, convert=_feedback.vector(a.shape))
        if err:
            raise RuntimeError(err)
        return out

    try:
        tokens, _calls = buggy_step_all_at_once(p, q, 10_000, np.random.default_rng(0), residual=guarded)
    except Exception as e:  # noqa: BLE001 - the student's law may make the draw fail in any way
        return None, _("drawing the fallback tokens from your law failed ({type_e_name}: {e})").format(
            type_e_name=type(e).__name__, e=e
        )
    counts = np.bincount(tokens, minlength=len(q))
    if not _fits(counts, q):
        return None, _("on p = q the output frequencies {counts_counts_sum} do not follow q = {q}").format(
            counts_counts_sum=fmt(counts / counts.sum()), q=fmt(q)
        )
    return counts, None


# Where the package has the labs' lock, a check module's names cannot be reassigned from a notebook.
_lock = getattr(_feedback, "_lock", None)
if _lock is not None and hasattr(_lock, "make_read_only"):
    _lock.make_read_only(__name__)
