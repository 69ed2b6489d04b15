"""What the checks of Lab 9's sections share: the laws ``p``, ``q`` of the single-law checks, the one door to
student code (``_student``, ``_repeat``), the chi-square fit at false-alarm rate ``ALPHA`` and ``softmax``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._i18n import _
from ...stats import chi_square
from .. import feedback as _feedback
from ..feedback import Feedback, wrong

#: Chi-square false-alarm rate of every check (as in the tests: a correct fix fails once in 1000 seeds).
ALPHA = 1e-3
#: Standard errors a Monte Carlo mean may stray from its exact value.
Z = 5.0

#: The draft p and target q of the single-law checks (one token q(x) = 0 that p can propose).
P = np.array([0.45, 0.3, 0.15, 0.1, 0.0])
Q = np.array([0.1, 0.2, 0.2, 0.3, 0.2])


def _student(fn: Callable[..., Any], *args: Any, convert: Callable[[Any], Any] | None = None) -> tuple[Any, str | None]:
    """Call student code (arguments copied); ``(result, None)`` or ``(None, what failed)``.

    The one door to student code: with the grading lock of ``feedback.run`` where the
    package has it (the names a ``@_guard`` holds refuse to run meanwhile), else
    ``feedback.call_student``.
    """
    if not callable(fn):
        return None, _("expected a function, got {type_fn_name}").format(type_fn_name=type(fn).__name__)
    runner = getattr(_feedback, "run", None)
    if runner is not None:
        return runner(fn, *args, convert=convert)
    return _feedback.call_student(fn, *args)


def _repeat(
    fn: Callable[..., Any], calls: list[tuple], convert: Callable[[Any], Any] | None = None
) -> tuple[Any, str | None]:
    """``[convert(fn(*args)) for args in calls]`` in one call of student code (arguments copied); or what failed.

    ``convert`` runs inside the lock too: a lazy answer or an array subclass is read before the lock is released.
    """
    if not callable(fn):
        return None, _("expected a function, got {type_fn_name}").format(type_fn_name=type(fn).__name__)

    def all_calls() -> list[Any]:
        outs = []
        for args in calls:
            out = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
            outs.append(out if convert is None else convert(out))
        return outs

    return _student(all_calls)


def _guard(*names: str) -> Callable[[Callable[..., Feedback]], Callable[..., Feedback]]:
    """``feedback.checker(*names)`` where the package has the lock: those functions refuse student calls."""
    checker = getattr(_feedback, "checker", None)
    return checker(*names) if checker is not None else (lambda check: check)


def _failure(err: str) -> Feedback:
    if "NotImplementedError" in err or _feedback.is_stub(err):
        return wrong(
            _(
                "not attempted yet: your function still raises NotImplementedError (replace the stub's `raise` "
                "with your fix)."
            )
        )
    return wrong(_("{err}.").format(err=err))


def softmax(z: np.ndarray) -> np.ndarray:
    """``exp(z) / sum exp(z)``, shifted by the maximum (numpy, float64)."""
    e = np.exp(z - z.max())
    return e / e.sum()


def _step_counts(step: Callable[..., Any], args: tuple, V: int, runs: int, seed: int) -> tuple[Any, str | None]:
    """Run ``step(*args, rng)`` ``runs`` times: ``(counts per token, rejection flags)`` or an error message."""
    gen = np.random.default_rng(seed)
    outs, err = _repeat(step, [(*args, gen)] * runs, convert=_token_and_flag)
    if err:
        return None, err
    tokens, rejected = np.empty(runs, dtype=int), np.empty(runs, dtype=bool)
    for i, out in enumerate(outs):
        tokens[i], rejected[i] = out
        if not 0 <= tokens[i] < V:
            return None, _("token {tokens_i} is outside the vocabulary 0..{V_1}").format(tokens_i=tokens[i], V_1=V - 1)
    return (np.bincount(tokens, minlength=V), rejected), None


def _token_and_flag(out: Any) -> tuple[int, bool]:
    """A step's ``(token, rejected)`` as plain Python values (the token an integer id: ``2`` or ``2.0``)."""
    try:
        token, flag = out
    except (TypeError, ValueError):
        raise _feedback._Refused(
            _("return a pair (token, rejected), got {feedback_kind_of_out}").format(
                feedback_kind_of_out=_feedback.kind_of(out)
            )
        ) from None
    try:
        token = _feedback.integer(token)
    except _feedback._Refused as e:
        raise _feedback._Refused(_("the token must be an integer id: {e}").format(e=e)) from None
    if not isinstance(flag, bool | np.bool_ | int | np.integer):
        raise _feedback._Refused(
            _("rejected must be True or False, got {feedback_kind_of_flag}").format(
                feedback_kind_of_flag=_feedback.kind_of(flag)
            )
        )
    return token, bool(flag)


def _tokens_and_calls(T: int, V: int) -> Callable[[Any], tuple[np.ndarray, float]]:
    """A decoder's ``(tokens, calls)``: an int64 array of ``T`` ids in ``0..V-1`` (whole floats pass), a float."""

    def convert(out: Any) -> tuple[np.ndarray, float]:
        try:
            tokens, calls = out
        except (TypeError, ValueError):
            raise _feedback._Refused(
                _("return a pair (tokens, oracle_calls), got {feedback_kind_of_out}").format(
                    feedback_kind_of_out=_feedback.kind_of(out)
                )
            ) from None
        wanted = _("T = {T} integer token ids in 0..{V_1} (ints, or floats holding whole numbers)").format(
            T=T, V_1=V - 1
        )
        try:
            arr = np.array(np.asarray(tokens), dtype=np.float64)
        except (TypeError, ValueError):
            raise _feedback._Refused(
                _("return {wanted}, got {feedback_kind_of_tokens}").format(
                    wanted=wanted, feedback_kind_of_tokens=_feedback.kind_of(tokens)
                )
            ) from None
        if arr.shape != (T,) or not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise _feedback._Refused(
                _("return {wanted}, got {np_asarray_tokens!r}").format(
                    wanted=wanted, np_asarray_tokens=np.asarray(tokens)
                )
            )
        if arr.min() < 0 or arr.max() >= V:
            raise _feedback._Refused(
                _("return {wanted}; got ids {arr_astype_np_int64!r} outside that range").format(
                    wanted=wanted, arr_astype_np_int64=arr.astype(np.int64)
                )
            )
        return arr.astype(np.int64), _feedback.number(calls)

    return convert


def _fits(counts: np.ndarray, law: np.ndarray) -> bool:
    law = np.asarray(law, dtype=float)
    return chi_square(counts, law / law.sum()).pvalue >= ALPHA


# Where the package has the labs' lock, a check module's names cannot be reassigned from a notebook.
_lock = getattr(_feedback, "_lock", None)
if _lock is not None and hasattr(_lock, "make_read_only"):
    _lock.make_read_only(__name__)
