"""Probability laws over a finite vocabulary: validation, TV distance, residual, acceptance.

Every function works on the last axis and broadcasts over leading axes, so one
call handles a single law, a transition matrix, or a stack of them. ``tv``,
``residual``, ``acceptance``, ``law_split``, ``over_accept`` and ``rejection_law``
also accept ``torch`` tensors (the real-model chapter uses them on logits' softmax),
returning tensors on the inputs' device.

Precision: numpy inputs are computed and returned in float64. Torch tensors are
computed in ``w = promote(dtype, float32)``: ``tv``, ``residual`` and ``rejection_law``
return ``w`` (float32 for float16 and bfloat16 laws), the elementwise
``accepted_mass``, ``rejected_mass``, ``law_split`` and ``over_accept`` keep the dtype.

``tv``, ``residual``, ``acceptance``, ``law_split``, ``accepted_mass`` and
``rejected_mass`` check their inputs (real numbers, finite, nonnegative, rows summing
to 1 within ``sum_tolerance`` of the dtype, one vocabulary) unless called with
``check=False``: the samplers validate their chains once and then call them per
position unchecked. ``over_accept`` and ``rejection_law`` are the unchecked formulas
(``tradeoff.over_accept`` and ``tradeoff.rejection_law`` check).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _lock
from ._i18n import N_, _

#: How far a law's total may sit from 1 before ``check_law`` refuses it (the floor of ``sum_tolerance``).
SUM_ATOL = 1e-6

#: The two rejection laws of over-acceptance: Decoding-OPT's ``[q - p]_+`` and Decoding-UNO's ``q``.
REJECTION_LAWS = ("opt", "uno")

_F32_EPS = float(np.finfo(np.float32).eps)
_KIND_NAMES = {"iuf": N_("real numbers"), "biuf": N_("real numbers or booleans"), "iu": N_("integers")}
_KIND_FOUND = {
    "b": N_("booleans"),
    "U": N_("strings"),
    "S": N_("bytes"),
    "O": N_("objects"),
    "c": N_("complex numbers"),
    "f": N_("floats"),
    "M": N_("datetimes"),
    "m": N_("timedeltas"),
    "V": N_("records"),
}


# The validators' messages, shared by the numpy and the torch checks.
_VALUES = N_("values")
_NO_TOKEN = N_("{name}: needs a last axis with at least one token, got shape {shape}")
_NAN = N_("{name}: contains NaN or inf")
_NEGATIVE = N_("{name}: has negative entries (min {low:.3g})")
_SUM = N_("{name}: rows must sum to 1 (within {atol:g}); worst row is off by {worst:.3g}")


def _is_torch(x: Any) -> bool:
    return type(x) is not np.ndarray and type(x).__module__.startswith("torch")


def _float_info(dtype: Any) -> tuple[float, float]:
    """``(eps, smallest subnormal)`` of a numpy or torch dtype; non-float dtypes count as float64."""
    if _is_torch(dtype):
        import torch

        info = torch.finfo(dtype if dtype.is_floating_point else torch.float64)
        return float(info.eps), float(info.tiny) * float(info.eps)
    dt = np.dtype(dtype)
    info = np.finfo(dt if dt.kind == "f" else np.float64)
    return float(info.eps), float(info.smallest_subnormal)


def _rounding(dtype: Any, V: int, k: int) -> float:
    """``max(k eps_w, eps + V s)``: ``eps_w`` of ``promote(dtype, float32)``, ``eps`` and ``s`` of ``dtype``."""
    if isinstance(V, bool) or not isinstance(V, (int, np.integer)) or V < 0:
        raise ValueError(_("V: must be an integer >= 0 (the number of tokens), got {V!r}").format(V=V))
    eps, sub = _float_info(dtype)
    return max(k * min(eps, _F32_EPS), eps + V * sub)


def sum_tolerance(dtype: Any, V: int = 1) -> float:
    """How far a row of ``V`` entries of ``dtype`` may sum from 1: ``max(SUM_ATOL, 32 eps_w, eps + V s)``.

    A law computed in the working precision ``w = promote(dtype, float32)`` sums to 1
    within a few ``eps_w`` (``32 eps_w`` allows for long sums). Rounding each entry to
    ``dtype`` moves it by at most ``eps/2`` relative or half the smallest subnormal
    ``s``, so the exact sum of the stored row moves by at most ``eps/2 + V s/2``;
    twice that also covers a normalisation done in ``dtype``. Rows are summed in
    float64 (numpy) or ``w`` (torch). float64 gets ``1e-6``, float32 ``3.8e-6``,
    float16 ``9.8e-4 + V 6e-8``, bfloat16 ``7.8e-3``.
    """
    return max(SUM_ATOL, _rounding(dtype, V, 32))


def residual_tolerance(dtype: Any, V: int = 1) -> float:
    """Mass of ``max(q - p, 0)`` at or below which it is rounding noise: ``max(16 eps_w, eps + V s)``.

    Two laws that agree up to rounding in the working precision ``w = promote(dtype, float32)``
    leave a positive part of a few ``eps_w``; rounded entry by entry to ``dtype`` they
    differ by at most ``(eps/2) sum_x (p + q)(x) + V s = eps + V s``. float64 gets
    ``3.6e-15``, float32 ``1.9e-6``, float16 ``9.8e-4 + V 6e-8``, bfloat16 ``7.8e-3``.
    """
    return _rounding(dtype, V, 16)


_REMEMBERED: dict[tuple[Any, np.dtype, int], float] = {}


def _remembered(tolerance: Any, dtype: np.dtype, V: int) -> float:
    """``tolerance(dtype, V)`` for a numpy dtype, computed once: the checks ask it for every law."""
    key = (tolerance, dtype, V)
    if key not in _REMEMBERED:
        _REMEMBERED[key] = tolerance(dtype, V)
    return _REMEMBERED[key]


def _numbers(x: Any, name: str, kinds: str = "iuf") -> np.ndarray:
    """``x`` as a numpy array after checking it holds numbers of a dtype kind in ``kinds``.

    Booleans (unless ``"b"`` is in ``kinds``), strings, objects, complex numbers, ragged
    lists and lists mixing booleans into numbers raise ``ValueError`` naming ``name``.
    Torch tensors are copied to the host (floats as float64).
    """
    if _is_torch(x):
        x = x.detach().cpu()
        x = x.double().numpy() if x.dtype.is_floating_point else x.numpy()
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as err:
        raise ValueError(
            _("{name}: expected an array of {wanted}, got {type_name} ({err})").format(
                name=name, wanted=_(_KIND_NAMES[kinds]), type_name=type(x).__name__, err=err
            )
        ) from None
    if arr.dtype.kind not in kinds:
        found = _(_KIND_FOUND.get(arr.dtype.kind, _VALUES))
        raise ValueError(
            _("{name}: expected an array of {wanted}, got {found} (dtype {dtype})").format(
                name=name, wanted=_(_KIND_NAMES[kinds]), found=found, dtype=arr.dtype
            )
        )
    if "b" not in kinds and isinstance(x, (list, tuple)) and arr.dtype.kind != "b":
        if any(isinstance(v, (bool, np.bool_)) for v in np.asarray(x, dtype=object).ravel()):
            raise ValueError(
                _("{name}: expected an array of {wanted}, got booleans among them").format(
                    name=name, wanted=_(_KIND_NAMES[kinds])
                )
            )
    return arr


def _check_tolerance(atol: Any) -> float:
    if isinstance(atol, bool) or not isinstance(atol, (int, float, np.integer, np.floating)) or not atol >= 0:
        raise ValueError(_("atol: must be a real number >= 0, got {atol!r}").format(atol=atol))
    return float(atol)


def check_law(x: Any, name: str, *, atol: float | None = None) -> np.ndarray:
    """Return ``x`` as a float64 array after checking it is a law on the last axis.

    Raises ``ValueError`` naming ``name`` for booleans, strings or other non-numbers,
    NaN/inf, negative entries, an empty vocabulary, or rows whose sum differs from 1
    by more than ``atol`` (default ``sum_tolerance`` of ``x``'s dtype and vocabulary).
    Torch tensors are checked on their device, then copied to the host.
    """
    if _is_torch(x):
        _check_torch_law(x, name, atol)
        return x.detach().to("cpu", dtype=_torch().float64).numpy()
    raw = _numbers(x, name)
    if raw.ndim == 0 or raw.shape[-1] < 1:
        raise ValueError(_(_NO_TOKEN).format(name=name, shape=raw.shape))
    atol = _remembered(sum_tolerance, raw.dtype, raw.shape[-1]) if atol is None else _check_tolerance(atol)
    arr = raw.astype(np.float64)
    if arr.size == 0:
        return arr
    # min and max carry any NaN, and any inf shows in one of them.
    low, high = float(arr.min()), float(arr.max())
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(_(_NAN).format(name=name))
    if low < 0:
        raise ValueError(_(_NEGATIVE).format(name=name, low=low))
    worst = float(np.abs(arr.sum(axis=-1) - 1.0).max())
    if worst > atol:
        raise ValueError(_(_SUM).format(name=name, atol=atol, worst=worst))
    return arr


def _torch() -> Any:
    import torch

    return torch


def _work_dtype(*xs: Any) -> Any:
    """``promote(dtypes, float32)`` of the tensors ``xs``: where torch computes on laws."""
    torch = _torch()
    out = torch.float32
    for x in xs:
        out = torch.promote_types(out, x.dtype)
    return out


def _check_torch_law(x: Any, name: str, atol: float | None = None) -> None:
    torch = _torch()
    if not torch.is_floating_point(x):
        raise ValueError(_("{name}: expected a floating-point tensor, got {dtype}").format(name=name, dtype=x.dtype))
    if x.ndim == 0 or x.shape[-1] < 1:
        raise ValueError(_(_NO_TOKEN).format(name=name, shape=tuple(x.shape)))
    atol = sum_tolerance(x.dtype, x.shape[-1]) if atol is None else _check_tolerance(atol)
    if x.numel() == 0:
        return
    # One device-to-host transfer for all three checks; rows are summed in promote(dtype, float32).
    sums = x.to(_work_dtype(x)).sum(-1)
    finite, nonneg, worst = torch.stack(
        [torch.isfinite(x).all().to(sums.dtype), (x >= 0).all().to(sums.dtype), (sums - 1).abs().max()]
    ).tolist()
    if not finite:
        raise ValueError(_(_NAN).format(name=name))
    if not nonneg:
        raise ValueError(_(_NEGATIVE).format(name=name, low=float(x.min())))
    if worst > atol:
        raise ValueError(_(_SUM).format(name=name, atol=atol, worst=worst))


def check_pair(p: Any, q: Any, a: str = "p", b: str = "q") -> tuple[Any, Any]:
    """``p`` and ``q`` after checking they are laws over one vocabulary whose leading axes broadcast.

    Numpy inputs come back as float64 arrays, torch tensors unchanged (both must be
    tensors, or neither). Each row must sum to 1 within ``sum_tolerance`` of the
    input's dtype and vocabulary; errors name the argument.
    """
    if _is_torch(p) != _is_torch(q):
        kinds = {True: _("a torch tensor"), False: _("a numpy array")}
        raise ValueError(
            _("{a} and {b}: both torch tensors or neither, got {kind_a} and {kind_b}").format(
                a=a, b=b, kind_a=kinds[_is_torch(p)], kind_b=kinds[_is_torch(q)]
            )
        )
    out = []
    for name, x in ((a, p), (b, q)):
        if _is_torch(x):
            _check_torch_law(x, name)
            out.append(x)
        else:
            out.append(check_law(x, name))
    sp, sq = tuple(np.shape(out[0])), tuple(np.shape(out[1]))
    if sp[-1] != sq[-1]:
        raise ValueError(
            _("{a} and {b} must share the vocabulary (last axis): got shapes {sp} and {sq}").format(
                a=a, b=b, sp=sp, sq=sq
            )
        )
    try:
        if sp != sq:
            np.broadcast_shapes(sp, sq)
    except ValueError:
        raise ValueError(
            _("{a} and {b}: shapes {sp} and {sq} do not broadcast").format(a=a, b=b, sp=sp, sq=sq)
        ) from None
    return out[0], out[1]


@_lock.guarded("laws.tv")
def tv(p: Any, q: Any, *, check: bool = True) -> Any:
    """Total variation ``TV(p, q) = 1/2 sum_x |p(x) - q(x)|`` over the last axis."""
    if check:
        check_pair(p, q)
    if _is_torch(p) or _is_torch(q):
        work = _work_dtype(p, q)
        return 0.5 * (p.to(work) - q.to(work)).abs().sum(dim=-1)
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    return 0.5 * np.abs(p - q).sum(axis=-1)


@_lock.guarded("laws.accepted_mass")
def accepted_mass(p: Any, q: Any, *, check: bool = True) -> Any:
    """``min(p, q)``: the probability that Algorithm 1 outputs ``x`` as an accepted draft, ``p min(1, q/p)``."""
    if check:
        p, q = check_pair(p, q)
    if _is_torch(p) or _is_torch(q):
        return p.minimum(q)
    return np.minimum(p, q)


@_lock.guarded("laws.rejected_mass")
def rejected_mass(p: Any, q: Any, *, check: bool = True) -> Any:
    """``max(q - p, 0)``: the probability that Algorithm 1 outputs ``x`` after a rejection, ``TV(p, q) [q - p]_+(x)``.

    It sums to ``TV(p, q)``, the rejection probability, when ``p`` and ``q`` are laws
    (``check=False`` takes any measures).
    """
    if check:
        p, q = check_pair(p, q)
    if _is_torch(p) or _is_torch(q):
        return (q - p).clamp(min=0)
    return np.maximum(q - p, 0.0)


def law_split(p: Any, q: Any, *, check: bool = True) -> tuple[Any, Any]:
    """Algorithm 1's two ways to output ``x``: ``(accepted_mass, rejected_mass) = (min(p, q), max(q - p, 0))``.

    The two add up to ``q(x)`` (Theorem 1(a)), and the second sums to ``TV(p, q)``.
    """
    if check:
        p, q = check_pair(p, q)
    return accepted_mass(p, q, check=False), rejected_mass(p, q, check=False)


@_lock.guarded("laws.residual")
def residual(p: Any, q: Any, *, check: bool = True) -> Any:
    """The residual law ``[q - p]_+ = max(q - p, 0) / sum_x max(q - p, 0)``.

    Guard: where the positive part has no mass beyond rounding (at most
    ``residual_tolerance`` of the inputs' dtype and vocabulary, e.g. when ``p == q``)
    the ratio is 0/0 and we return ``q`` instead. That choice is correct, not just
    finite: the residual is only sampled after a rejection, whose probability is
    exactly that mass, so in exact arithmetic the branch is never taken; under
    rounding, falling back to ``q`` moves the output law by at most that mass.

    Computed in float64 (numpy) or ``promote(dtype, float32)`` (torch, on the inputs'
    device) and returned in it: float16 and bfloat16 laws give a float32 residual.
    With ``check=False`` ``p`` may be any nonnegative measure (Theorem 4's
    ``[q - b p]_+`` is ``residual(b * p, q, check=False)``).
    """
    if check:
        check_pair(p, q)
    if _is_torch(p) or _is_torch(q):
        tol = max(residual_tolerance(x.dtype, x.shape[-1] if x.ndim else 1) for x in (p, q))
        work = _work_dtype(p, q)
        p, q = p.to(work), q.to(work)
        pos = (q - p).clamp(min=0)
        mass = pos.sum(dim=-1, keepdim=True)
        ok = mass > tol
        return (pos / mass.where(ok, mass.new_ones(()))).where(ok, q)
    p, q = np.asarray(p), np.asarray(q)
    tol = max(_remembered(residual_tolerance, x.dtype, x.shape[-1] if x.ndim else 1) for x in (p, q))
    p, q = p.astype(np.float64, copy=False), q.astype(np.float64, copy=False)
    pos = np.maximum(q - p, 0.0)
    mass = pos.sum(axis=-1, keepdims=True)
    ok = mass > tol
    return np.where(ok, pos / np.where(ok, mass, 1.0), q)  # q broadcast to the residual's shape


@_lock.guarded("laws.over_accept")
def over_accept(p: Any, q: Any, eps: Any) -> Any:
    """The rule ``b(x) = min(1, max(0, (q(x) + eps)/p(x)))``: over-acceptance for ``eps >= 0``.

    ``eps = 0`` is speculative decoding's ``min(1, q/p)``, ``eps > 0`` over-accepts,
    and ``eps < 0`` under-accepts (the rewriting of any rule in Theorem 2's proof;
    for ``eps >= 0`` the ``max(0, .)`` never acts). Where ``p(x) = 0`` the token is
    never proposed and we return 1. Unchecked (``tradeoff.over_accept`` validates
    ``p``, ``q`` and ``eps >= 0``; ``acceptance`` validates the laws); numpy inputs
    give float64, torch tensors keep their dtype and device.
    """
    if _is_torch(p) or _is_torch(q):
        safe = p.where(p > 0, p.new_ones(()))
        return ((q + eps) / safe).clamp(min=0.0, max=1.0).where(p > 0, p.new_ones(()))
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    live = p > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        rule = np.minimum(np.maximum((q + eps) / np.where(live, p, 1.0), 0.0), 1.0)
    return np.where(live, rule, 1.0)


@_lock.guarded("laws.acceptance")
def acceptance(p: Any, q: Any, *, check: bool = True) -> Any:
    """Speculative acceptance probability ``min(1, q(x)/p(x))`` (``over_accept`` with ``eps = 0``).

    ``p`` and ``q`` are checked as laws like ``tv`` checks them (``check=False``
    skips it). Where ``p(x) = 0`` the token is never proposed; we return 1 there so
    the array stays finite (the value is never used).
    """
    if check:
        p, q = check_pair(p, q)
    return over_accept(p, q, 0.0)


def rejection_law(p: Any, q: Any, kind: str) -> Any:
    """The law sampled after a rejection: ``"opt"`` is ``[q - p]_+`` (Decoding-OPT), ``"uno"`` is ``q`` (Decoding-UNO).

    Unchecked apart from ``kind`` (``tradeoff.rejection_law`` validates the laws);
    numpy inputs give a new float64 array of the broadcast shape, torch tensors one
    in ``promote(dtype, float32)`` (``q`` itself when it already is that, for ``"uno"``).
    """
    if not isinstance(kind, str) or kind not in REJECTION_LAWS:
        raise ValueError(
            _("rejection_law: must be one of {choices}, got {got!r}").format(choices=REJECTION_LAWS, got=kind)
        )
    if kind == "opt":
        return residual(p, q, check=False)
    if _is_torch(p) or _is_torch(q):
        return q.to(_work_dtype(p, q))
    q = np.asarray(q, dtype=np.float64)
    return np.broadcast_to(q, np.broadcast_shapes(np.shape(p), q.shape)).copy()
