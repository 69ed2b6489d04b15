"""The bottom floor every sampler shares: the result type, row sampling and Algorithm 1's verify step.

Nothing here knows about chains or chapters; ``laws`` (the formulas on laws) and
``_rng`` (the ``rng`` argument) sit beside it. Every module above imports from
here, never the other way round.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _lock
from ._i18n import _


def check_int(value: Any, name: str, *, low: int = 1, high: int | None = None, what: str = "") -> int:
    """``value`` as an ``int`` after checking it is an integer in ``[low, high]``.

    Python and numpy integers pass; a bool, a float (even ``2.0``), a string or an
    array does not. The error names the argument: ``"{name}: {what}must be an integer >= {low}, got ..."``.
    """
    integral = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if not integral or value < low or (high is not None and value > high):
        message = (
            _("{name}: {what}must be an integer >= {low}, got {got}")
            if high is None
            else _("{name}: {what}must be an integer in [{low}, {high}], got {got}")
        )
        raise ValueError(message.format(name=name, what=what, low=low, high=high, got=describe(value)))
    return int(value)


def check_ints(values: Any, name: str, *, low: int = 1, high: int | None = None, what: str = "") -> list[int]:
    """``values``, a sequence of integers (a list, a range, a 1-D array), as a list of ``int`` in ``[low, high]``.

    A single number, a string or a 2-D array is refused; each entry is checked by
    ``check_int`` under the same ``name`` (so nested lists fail there). The list may be empty.
    """
    if isinstance(values, np.ndarray):
        sequence = values.ndim == 1
    else:
        sequence = isinstance(values, Iterable) and not isinstance(values, (str, bytes))
    if not sequence:
        raise ValueError(
            _("{name}: expected a sequence of integers (list, range, 1-D array), got {got}").format(
                name=name, got=describe(values)
            )
        )
    return [check_int(v, name, low=low, high=high, what=what) for v in values]


def _interval(low: float | None, high: float | None, open_low: bool, open_high: bool) -> str:
    if high is None:
        return "" if low is None else f" {'>' if open_low else '>='} {low:g}"
    if low is None:
        return f" {'<' if open_high else '<='} {high:g}"
    interval = f"{'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
    return _(" in {interval}").format(interval=interval)


def _outside(x: Any, low: float | None, high: float | None, open_low: bool, open_high: bool) -> Any:
    """Where ``x`` lies outside the interval (elementwise for arrays)."""
    out = np.zeros(np.shape(x), dtype=bool)
    if low is not None:
        out |= (x <= low) if open_low else (x < low)
    if high is not None:
        out |= (x >= high) if open_high else (x > high)
    return out


def check_real(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    open_low: bool = False,
    open_high: bool = False,
    what: str = "",
) -> float:
    """``value`` as a ``float`` after checking it is one finite real number in ``[low, high]``.

    ``open_low`` / ``open_high`` exclude a bound (``(0, inf)`` is ``low=0, open_low=True``).
    Python and numpy reals and 0-d real arrays pass; a bool, a string, NaN, inf or an
    array of several values does not. The error names the argument:
    ``"{name}: {what}must be a finite number > 0, got ..."``.
    """
    real = (isinstance(value, numbers.Real) and not isinstance(value, bool)) or (
        isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf"
    )
    x = float(value) if real else math.nan
    if not math.isfinite(x) or _outside(x, low, high, open_low, open_high):
        bound = _interval(low, high, open_low, open_high)
        raise ValueError(
            _("{name}: {what}must be a finite number{bound}, got {got}").format(
                name=name, what=what, bound=bound, got=describe(value)
            )
        )
    return x


def as_real_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array after checking it holds real numbers.

    Refused: booleans (also inside a list of numbers), strings, objects, ragged lists
    and ``None``. Finiteness and ranges are the caller's (``check_reals``).
    """
    arr = None
    if value is not None and not isinstance(value, (str, bytes)):
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):  # ragged nested sequences, tensors numpy cannot read
            arr = None
    mixed = (
        isinstance(value, (list, tuple))
        and arr is not None
        and arr.dtype.kind in "iuf"
        and any(isinstance(v, (bool, np.bool_)) for v in np.asarray(value, dtype=object).ravel())
    )
    if arr is None or arr.dtype.kind not in "iuf" or mixed:
        raise ValueError(
            _("{name}: expected a number or an array of numbers, got {got}").format(name=name, got=describe(value))
        )
    return arr.astype(np.float64, copy=False)


def check_reals(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    open_low: bool = False,
    open_high: bool = False,
    what: str = "",
) -> np.ndarray:
    """``value`` (a number or an array of numbers) as a float64 array of finite reals in ``[low, high]``.

    The array form of ``check_real``: bools, strings, NaN and inf are refused, and
    the error names the argument and the range of the values it got.
    """
    arr = as_real_array(value, name)
    if not np.all(np.isfinite(arr)):
        raise ValueError(_("{name}: {what}contains NaN or inf").format(name=name, what=what))
    if np.any(_outside(arr, low, high, open_low, open_high)):
        bound = _interval(low, high, open_low, open_high)
        got = (
            describe(value)
            if arr.ndim == 0
            else _("values in [{low:.3g}, {high:.3g}]").format(low=arr.min(), high=arr.max())
        )
        raise ValueError(
            _("{name}: {what}must lie{bound}, got {got}").format(name=name, what=what, bound=bound, got=got)
        )
    return arr


def check_flag(value: Any, name: str) -> bool:
    """``value`` as a ``bool`` after checking it is ``True`` or ``False`` (numpy's too), not a number or a string."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(_("{name}: must be True or False, got {got}").format(name=name, got=describe(value)))
    return bool(value)


def clip_rounding(x: np.ndarray, name: str, *, scale: float = 1.0, ulps: int = 16) -> np.ndarray:
    """``x``, nonnegative in exact arithmetic, with its rounding-level negatives set to 0.

    Entries down to ``-ulps * eps * scale`` (``eps`` the float64 machine epsilon,
    ``scale`` the size of the terms subtracted, 1 for laws) are rounding and become
    0; anything more negative is a real error and raises, naming ``name``.
    """
    tol = ulps * float(np.finfo(np.float64).eps) * scale
    if x.size and np.nanmin(x) < -tol:
        raise ValueError(
            _("{name}: has negative entries beyond rounding (min {low:.3g}, tolerance {tol:.3g})").format(
                name=name, low=np.nanmin(x), tol=tol
            )
        )
    return np.maximum(x, 0.0)


def describe(value: Any) -> str:
    """A short description of a bad argument for error messages: the value, and its type where the type is the fault."""
    if isinstance(value, (bool, np.bool_)):
        return _("{value!r} (a bool)").format(value=value)
    if isinstance(value, (str, bytes)):
        text = repr(value)
        return _("{text} (a string)").format(text=text if len(text) <= 40 else text[:37] + "...")
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return _("an array of shape {shape} and dtype {dtype}").format(shape=value.shape, dtype=value.dtype)
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    if value is None or isinstance(value, (int, float, np.integer, np.floating)):
        return text
    return _("{text} (a {type_name})").format(text=text, type_name=type(value).__name__)


@dataclass(frozen=True)
class DecodeResult:
    """Output of a decoding engine for ``runs`` independent runs.

    ``tokens`` (runs, T): the generated sequences. ``rejected`` (runs, T): ``R_n``.
    ``oracle_calls`` (runs,): target evaluations (each scores a whole block).
    """

    tokens: np.ndarray
    rejected: np.ndarray
    oracle_calls: np.ndarray

    @property
    def rejections(self) -> np.ndarray:
        """``N_rej`` per run."""
        return self.rejected.sum(axis=1)

    @property
    def runs(self) -> int:
        return self.tokens.shape[0]


def token_dtype(V: int) -> type:
    """The smallest integer type the samplers store tokens of a ``V``-token vocabulary in."""
    return np.int16 if V <= np.iinfo(np.int16).max else np.int32


def cumulative(laws: np.ndarray) -> np.ndarray:
    """Row-wise CDF ``F(x) = sum_{y <= x} w(y) / sum_y w(y)``, ending at exactly 1 (``sample_rows`` needs that).

    A zero-probability token repeats the previous value, so it is never drawn. Rows
    with a negative entry or without positive finite mass raise ``ValueError``.
    """
    cdf = np.cumsum(laws, axis=-1)
    total = cdf[..., -1:]
    if not np.all((total > 0) & (total < np.inf)) or np.any(np.asarray(laws) < 0):
        raise ValueError(_("laws: every row needs nonnegative entries and positive finite mass to have a CDF"))
    return cdf / total


def sample_rows(cdf: np.ndarray, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draw of one token per run: the ``x`` with ``F(x - 1) <= u[i] < F(x)``, ``F = cdf[rows[i]]``.

    ``cdf`` has shape (R, V), each row nondecreasing and ending at exactly 1
    (``cumulative``), and ``u`` lies in [0, 1). Offsetting row ``r`` by ``r`` makes the
    flattened array nondecreasing, so one ``searchsorted`` serves every run at once:
    O(runs log RV) instead of O(runs V). The target ``r + u`` is held below ``r + 1``
    (``r + u`` rounds up to ``r + 1`` for ``u`` within half an ulp of ``r`` of 1), so
    the draw stays in row ``r`` on a token where the flattened CDF steps up: a
    zero-probability token is never drawn.
    """
    V = cdf.shape[-1]
    rows = np.asarray(rows, dtype=np.intp)
    flat = (cdf + np.arange(cdf.shape[0])[:, None]).ravel()
    start = rows.astype(np.float64)
    target = np.minimum(start + u, np.nextafter(start + 1.0, start))
    return np.searchsorted(flat, target, side="right") - rows * V


def draft_and_test(
    gen: np.random.Generator, cdf_p: np.ndarray, accept: np.ndarray, prev: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Draw a draft token ``x ~ p(. | prev)`` per run and test it: rejected where ``U >= b(x | prev)``.

    ``cdf_p`` is the draft's CDF table ``(V, V)`` and ``accept`` the rule's table ``b``
    ``(V, V)`` at this position; uses two uniforms per run. Returns ``(x, rejected)``.
    """
    x = sample_rows(cdf_p, prev, gen.random(prev.shape[0]))
    rejected = gen.random(prev.shape[0]) >= accept[prev, x]
    return x, rejected


@_lock.guarded("primitives.verify_step")
def verify_step(
    gen: np.random.Generator, cdf_p: np.ndarray, accept: np.ndarray, cdf_rejection: np.ndarray, prev: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """One position of Algorithm 1 (or Algorithm 2 with any rule ``(b, P)``) for every run.

    Draw ``x ~ p(. | prev)``, keep it with probability ``b(x | prev)``, else replace
    it by a draw from the rejection law ``P(. | prev)`` (``[q - p]_+`` for Algorithm 1)
    whose CDF table is ``cdf_rejection``. Returns ``(x, rejected)``.
    """
    x, rejected = draft_and_test(gen, cdf_p, accept, prev)
    if rejected.any():
        x[rejected] = sample_rows(cdf_rejection, prev[rejected], gen.random(int(rejected.sum())))
    return x, rejected
