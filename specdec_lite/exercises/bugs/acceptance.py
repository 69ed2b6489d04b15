"""Section 4, the acceptance test: accept ``x`` when ``u < min(1, q(x) / p(x))`` with ``u`` uniform on
``[0, 1)``; ``u <= ...`` also accepts, when ``u = 0``, a token of target probability ``q(x) = 0``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._i18n import _
from ...stats import chi_square
from .. import feedback as _feedback
from .. import instances
from ..feedback import Feedback, correct, fmt, wrong
from .common import _failure, _guard, _repeat


def buggy_accept(p, q, x, u):
    return u <= min(1.0, q[x] / p[x])  # accept the draft token x with probability min(1, q/p)


def grid_acceptance(accept: Callable[..., Any], p: np.ndarray, q: np.ndarray, N: int = 64) -> tuple[Any, str | None]:
    """Accepted mass per token with ``u`` uniform on the grid ``0, 1/N, ..., (N-1)/N`` (a float RNG's values).

    Returns integer counts ``sum over u of [accept(p, q, x, u)] * (p(x) in units of 1/W)`` or an error message;
    with ``W`` chosen so that ``p * W`` are whole numbers (the lab's laws have two decimals).
    """
    W = 100
    counts = np.zeros(len(p), dtype=np.int64)
    grid = [(p, q, int(x), k / N) for x in np.flatnonzero(p > 0) for k in range(N)]
    outs, err = _repeat(accept, grid, convert=_verdict)
    if err:
        return None, err
    for (_p, _q, x, _u), out in zip(grid, outs, strict=True):
        if out:
            counts[x] += int(round(p[x] * W))
    return counts, None


def _verdict(out: Any) -> bool:
    """An acceptance test's answer as a plain ``bool``: only ``True``/``False`` (Python's or numpy's) pass."""
    if type(out) not in (bool, np.bool_):  # the type itself: an object may claim to be a bool through __class__
        if type(out) in (int, float, np.int64, np.float64):
            got = _("the number {out!r}").format(out=out)
        else:
            got = (
                _feedback.kind_of(out)
                if type(out).__module__ == "builtins"
                else _("a {type_name}").format(type_name=type(out).__name__)
            )
        raise _feedback._Refused(_("return True (accept) or False (reject), got {got}").format(got=got))
    return bool(out)


def _around(ratio: float) -> tuple[float, float]:
    b = min(1.0, ratio)
    return b / 2, (1 + b) / 2


@_guard("laws.acceptance", "laws.over_accept", "tradeoff.over_accept")
def check_accept(student_accept: Callable[..., Any]) -> Feedback:
    """Check ``accept(p, q, x, u)``: ``u < min(1, q(x)/p(x))``; never a token with ``q(x) = 0``, even at ``u = 0``."""
    p, q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.5, 0.3, 0.2, 0.0])
    tests = [(p, q, x, u) for x in range(len(p)) for u in (0.0, 0.25, 0.5, 0.75, 0.999, *_around(q[x] / p[x]))]
    rng = instances.fresh()  # and a pair drawn now, with a token the target cannot emit
    V = int(rng.integers(3, 7))
    p2, q2 = instances.law(rng, V, positive=True), instances.law(rng, V, zeros=1)
    drawn_u = [int(k) / 1000 for k in rng.integers(0, 1000, 3)]
    tests += [(p2, q2, x, u) for x in range(V) for u in (0.0, *drawn_u, *_around(q2[x] / p2[x]))]
    outs, err = _repeat(student_accept, tests, convert=_verdict)
    if err:
        return _failure(err)
    for (pt, qt, x, u), out in zip(tests, outs, strict=True):
        b = min(1.0, qt[x] / pt[x])
        if b == 0 and out:
            return wrong(
                _("at u = {u:.3f} you accept token {x} of p = {pt}, whose target probability is 0 in q = {qt}").format(
                    u=u, x=x, pt=fmt(pt), qt=fmt(qt)
                )
                + (
                    _(
                        ": `u <= b` is true for u = b = 0 (sglang #35771). The "
                        "output then has mass where the target has "
                        "none; accept on u < b, false for every u when b = 0."
                    )
                    if u == 0
                    else "."
                )
            )
        if u < b and not out:
            return wrong(
                _("token {x} (p = {pt}, q = {qt}) must be accepted at u = {u:.3f} < min(1, q/p) = {b:.3f}.").format(
                    x=x, pt=fmt(pt), qt=fmt(qt), u=u, b=b
                )
            )
        if u > b and out:
            return wrong(
                _("token {x} (p = {pt}, q = {qt}) must be rejected at u = {u:.3f} > min(1, q/p) = {b:.3f}.").format(
                    x=x, pt=fmt(pt), qt=fmt(qt), u=u, b=b
                )
            )
    counts, err = grid_acceptance(student_accept, p, q)
    if err:
        return _failure(err)
    if chi_square(counts, np.minimum(p, q) / np.minimum(p, q).sum()).pvalue == 0:
        return wrong(_("with u on a grid of 64 values, a token of target probability 0 is accepted."))
    return correct(_("the test is u < min(1, q/p): a token the target cannot emit is never accepted, whatever u."))


# Where the package has the labs' lock, a check module's names cannot be reassigned from a notebook.
_lock = getattr(_feedback, "_lock", None)
if _lock is not None and hasattr(_lock, "make_read_only"):
    _lock.make_read_only(__name__)
